// When should the replay start each lookup? (issue 24, the per-lookup layer.) A validation row's Do53 loads are
// replayed three ways over the row's transport and mode, and each name's replayed lookup is set against the browser's
// own lookup of it in the row's loads (its NetLog or MOZ_LOG: median over loads), within max(10 %, 5 ms) as the
// validation counts (bench/validate/lookups.ts):
//   first need      every name when the page first needed it (webRequest), as the replay did before lookup-starts.ts;
//   lookup-starts   when the browser asked, as the page record shows it (common/lookup-starts.ts: Resource Timing's
//                   lookup start where exposed, between the exposed ones where hidden): what the replay does now;
//   browser's log   when the browser's own log says it asked (known only in the lab): the ceiling.
// Lab: two namespaces with the row's network profile, the lab's CoreDNS answering every name of the page, dnscost's
// engine in the client namespace (one process per replay, as the validation's).
//   node dist/bench/replay-schedule.js [--raw FILE]... [--page ID] [--scenario warm,cold] [--transport dot,doh] [--reps 5]
//        [--out bench/results/validation/replay-schedule.md] [--smoke]      (as root, after scripts/setup)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { lookupStarts, replayAt, type LookupStartsInput } from '../common/lookup-starts.js';
import { pageHostQtypes } from '../common/browser-queries.js';
import type { PageForCost } from '../common/page-cost.js';
import { pageLookupMs } from '../common/stored-record.js';
import type { MeasureRequest } from '../common/schema.js';
import { percentile } from '../common/stats.js';
import type { Mode } from '../common/transports.js';
import { createLabNet } from '../lab/netns.js';
import { distPath } from '../lab/paths.js';
import { startCoreDNS } from '../lab/resolver.js';
import { measure } from '../native-host/src/engine/measure.js';
import { upgradeRun } from './validate/legacy.js';
import { browserLookups, lookupTolerance } from './validate/lookups.js';
import type { Visit } from './validate/types.js';
import { reportPath, SMOKE_OPTION } from './smoke.js';

const SCHEDULES = ['first need', 'lookup-starts', "browser's log"] as const;
type Schedule = (typeof SCHEDULES)[number];
type Host = { name: string; firstNeededMs: number; qtypes: string[] };

/** One replay's hosts under `schedule`: the page record's names (document first), or the browser's log of a load. */
export function scheduleOf(schedule: Schedule, page: PageForCost & LookupStartsInput, log: Visit | null, qtypes: (name: string) => string[]): Host[] {
  const names = page.hosts.filter((h) => h.kind === 'name');
  if (schedule === "browser's log") {
    const first = new Map<string, number>();
    for (const l of log?.lookups ?? []) first.set(l.name, Math.min(first.get(l.name) ?? Infinity, l.atMs));
    const t0 = first.get(page.host) ?? Math.min(...first.values());
    return names.filter((h) => first.has(h.name)).map((h) => ({ name: h.name, firstNeededMs: replayAt(first.get(h.name)! - t0), qtypes: qtypes(h.name) }));
  }
  const starts = schedule === 'lookup-starts' ? lookupStarts(page) : null;
  return names.map((h) => ({ name: h.name, firstNeededMs: h.name === page.host ? 0 : (starts?.get(h.name) ?? replayAt(h.firstNeededMs)), qtypes: qtypes(h.name) }));
}

const median = (xs: readonly number[]) => percentile([...xs].sort((a, b) => a - b), 50)!;

/** Inside the client namespace: replays each job's hosts, prints name → lookup ms per replay as JSON. */
async function inner(jobFile: string): Promise<void> {
  const job = JSON.parse(readFileSync(jobFile, 'utf8')) as { requests: MeasureRequest[] };
  const out: Array<Record<string, number>> = [];
  for (const req of job.requests) {
    const res = await measure(req);
    const per: Record<string, number> = {};
    for (const r of res.records) if (r.ok && r.replay) per[r.host] = Math.max(per[r.host] ?? -Infinity, pageLookupMs(r));
    out.push(per);
    await new Promise((r) => setTimeout(r, 300));
  }
  process.stdout.write(JSON.stringify(out));
}

interface CaseResult { label: string; rows: Array<{ schedule: Schedule; n: number; within: number; slower: number; faster: number; replayMs: number; browserMs: number }> }

async function runCase(raw: string, pageId: string, scenario: string, transport: 'dot' | 'doh', reps: number): Promise<CaseResult> {
  const run = upgradeRun(JSON.parse(gunzipSync(readFileSync(raw)).toString('utf8')));
  const p = run.profiles[0]!;
  const of = (side: string) => p.visits.filter((v) => v.page === pageId && v.scenario === scenario && v.transport === side && !v.error);
  const logs = of(transport).filter((v) => v.lookups?.length);
  const base = of('do53').filter((v) => v.pageRecord);
  if (!logs.length || !base.length) throw new Error(`${raw}: no ${scenario} ${transport} loads of page ${pageId} with the browser's lookups`);
  const browserOf = logs[0]!.browser;
  const browser = browserLookups(logs);
  const net = await createLabNet({ profile: p.profile, seed: 1 });
  const work = mkdtempSync(join(tmpdir(), 'dnscost-schedule-'));
  try {
    const zone = [...new Set(base.flatMap((v) => v.pageRecord!.hosts.filter((h) => h.kind === 'name').map((h) => h.name)))];
    const resolver = await startCoreDNS({ netns: net.server.ns, address: net.server.addr4, siteZone: { zone, a: '192.0.2.80' }, idleTimeoutS: 60 });
    try {
      const mode = (scenario === 'expected' ? 'cold' : scenario) as Mode;
      const endpoint = transport === 'dot'
        ? { transport: 'dot' as const, address: net.server.addr4, port: 853, serverName: 'dns.test' }
        : { transport: 'doh' as const, address: net.server.addr4, port: 443, serverName: 'dns.test', path: '/dns-query', method: browserOf === 'firefox' ? 'POST' as const : 'GET' as const };
      const rows: CaseResult['rows'] = [];
      for (const schedule of SCHEDULES) {
        const requests = Array.from({ length: reps }, (_, i): MeasureRequest => {
          const page = base[i % base.length]!.pageRecord!;
          const qtypes = (name: string) => pageHostQtypes(browserOf, page, name, { ipv6: false, httpsFirst: false });
          return {
            id: 1, type: 'measure', hosts: scheduleOf(schedule, page, logs[i % logs.length]!, qtypes) as MeasureRequest['hosts'],
            resolvers: [{ id: 'lab', name: 'lab', ca: resolver.certs.caPem, endpoints: [endpoint] }], modes: [mode], repeat: 1, prime: false, schedule: 'replay', seed: i + 1,
          };
        });
        const jobFile = join(work, 'job.json');
        writeFileSync(jobFile, JSON.stringify({ requests }));
        const { stdout } = await net.execIn('client', process.execPath, [distPath('bench/replay-schedule.ts'), '--inner', jobFile], { timeoutMs: 120_000 * reps });
        const replays = JSON.parse(stdout) as Array<Record<string, number>>;
        let within = 0, slower = 0, faster = 0, n = 0;
        const replayMedians: number[] = [];
        for (const [name, ms] of browser) {
          const r = replays.map((x) => x[name]).filter((x): x is number => x !== undefined);
          if (!r.length) continue;
          n++;
          const [b, rep] = [median(ms), median(r)];
          replayMedians.push(rep);
          if (Math.abs(b - rep) <= lookupTolerance(rep)) within++;
          else if (b > rep) slower++;
          else faster++;
        }
        rows.push({ schedule, n, within, slower, faster, replayMs: median(replayMedians), browserMs: median([...browser.values()].map(median)) });
      }
      return { label: `${browserOf} ${p.profile.name} page ${pageId} ${transport} ${scenario}`, rows };
    } finally {
      await resolver.stop();
    }
  } finally {
    await net.destroy();
    rmSync(work, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      inner: { type: 'string' }, raw: { type: 'string', multiple: true }, page: { type: 'string', default: '100' },
      scenario: { type: 'string', default: 'warm' }, transport: { type: 'string', default: 'dot' }, reps: { type: 'string', default: '5' },
      out: { type: 'string' }, ...SMOKE_OPTION,
    },
  });
  if (values.inner) return inner(values.inner);
  const transports = values.transport!.split(',').map((t) => (t === 'doh' ? 'doh' : 'dot'));
  const raws = values.raw ?? ['bench/results/validation/final/fiber-30-100-chromium.raw.json.gz'];
  const reps = values.smoke ? 1 : Math.max(1, Number(values.reps));
  const started = Date.now();
  const results: CaseResult[] = [];
  const scenarios = values.scenario!.split(',');
  for (const raw of values.smoke ? raws.slice(0, 1) : raws) {
    for (const transport of values.smoke ? transports.slice(0, 1) : transports) {
      for (const scenario of values.smoke ? scenarios.slice(0, 1) : scenarios) results.push(await runCase(raw, values.page!, scenario, transport, reps));
    }
  }
  const lines = [
    `Command: \`node dist/bench/replay-schedule.js ${process.argv.slice(2).join(' ')}\``,
    `Date: ${new Date().toISOString()}; took ${((Date.now() - started) / 60_000).toFixed(1)} min; ${reps} replays per schedule; repository ${execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()}.`,
    '',
    '| case | schedule | names | within max(10 %, 5 ms) | browser slower | browser faster | replay median ms | browser median ms |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...results.flatMap((c) => c.rows.map((r) => `| ${c.label} | ${r.schedule} | ${r.n} | ${r.within} | ${r.slower} | ${r.faster} | ${r.replayMs.toFixed(1)} | ${r.browserMs.toFixed(1)} |`)),
  ];
  const text = `${lines.join('\n')}\n`;
  process.stdout.write(text);
  const out = reportPath(values);
  if (out) writeFileSync(out, text);
}

main().then(() => process.exit(0), (err: unknown) => {
  process.stderr.write(`replay-schedule: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
