// How long a browser's encrypted DNS connection stays open when idle, and when it handshakes again, measured with the
// real browsers and stubs (issue 11, item 2): Chromium's DoH, Firefox's TRR, and the DoT stubs unbound and stubby as
// Debian configures them (the browser asks the stub on 127.0.0.1 over Do53; the stub holds the TLS connection).
// common/connection-state.ts reads the figures this writes.
//   node dist/bench/idle-lifetimes.js [--cases chromium-doh,firefox-trr,unbound,stubby] [--gaps 5,12,30,65,130,300]
//        [--out bench/results/idle-lifetimes.md] [--smoke]          (as root, after scripts/setup; about 2 × the gaps' sum per case)
import { execFileSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { isolateDns, isolatedNetwork, LAB_SERVER, launchDnsBrowser, setSystemResolver, zoneWithProbe, type DnsBrowser } from '../lab/browser-dns.js';
import { distPath } from '../lab/paths.js';
import { startCoreDNS } from '../lab/resolver.js';
import { stop } from './validate/children.js';
import { startDotStub } from './validate/stubs.js';
import { reportPath, SMOKE_OPTION } from './smoke.js';

/** What holds the encrypted connection in each case. */
export const IDLE_CASES = ['chromium-doh', 'firefox-trr', 'unbound', 'stubby'] as const;
export type IdleCase = (typeof IDLE_CASES)[number];

/** One gap's outcome. */
export interface GapResult {
  gapS: number;
  /** New TCP connections to the resolver's encrypted port during the gap and the load after it. */
  newConnections: number;
  /** Queries the lab resolver received during the gap (over any scheme): the idle connection was not idle if any. */
  gapQueries: string[];
  error: string | null;
}

/** One case's outcomes, gap by gap, with the browser's version. */
export interface CaseResult {
  case: IdleCase;
  version: string;
  port: number;
  gaps: GapResult[];
}

const ZONE = 'idle.example';
/**
 * The lab resolver's own idle limit (it keeps idle connections for 30 minutes): far beyond every gap, so the client
 * is what closes a connection.
 */
const SERVER_IDLE_S = 1800;

/** SYNs the resolver's `port` has received so far (the counter of a rule this run added to INPUT). */
function syns(port: number): number {
  const out = execFileSync('iptables', ['-L', 'INPUT', '-v', '-x', '-n'], { encoding: 'utf8', timeout: 5000 });
  const line = out.split('\n').find((l) => l.includes(`dpt:${port}`) && l.includes('flags:0x17/0x02'));
  return line ? Number(line.trim().split(/\s+/)[0]) : 0;
}

/** The lab resolver's query log: each line `dnscost-query SCHEME TYPE NAME` with when it arrived. */
const queryLog: { at: number; line: string }[] = [];
function feedLog(text: string): void {
  for (const m of text.matchAll(/dnscost-query (\S+ \S+ \S+)/g)) queryLog.push({ at: Date.now(), line: m[1]! });
}

/**
 * For each gap G: a page load (a fresh name, so the browser must look it up), G seconds of nothing, another load of a
 * fresh name; the lab resolver's new TCP connections during the gap and the second load (a SYN counter in the
 * namespace's firewall) say whether the encrypted connection was still open.
 */
async function runCase(c: IdleCase, gaps: number[], work: string, caFile: string): Promise<CaseResult> {
  const port = c === 'chromium-doh' || c === 'firefox-trr' ? 443 : 853;
  const browserName = c === 'firefox-trr' ? 'firefox' : 'chromium';
  let stub: ChildProcess | null = null;
  if (c === 'unbound' || c === 'stubby') {
    setSystemResolver('127.0.0.1');
    stub = await startDotStub({ work, dotStub: c, caFile });
  } else setSystemResolver(LAB_SERVER);
  let b: DnsBrowser | null = null;
  const result: CaseResult = { case: c, version: '', port, gaps: [] };
  let n = 0;
  const load = async () => {
    const page = await b!.browser.newPage();
    try {
      await page.goto(`http://n${++n}-${Date.now()}.${ZONE}/`, { waitUntil: 'load', timeout: 30_000 });
    } finally {
      await page.close();
    }
  };
  try {
    b = await launchDnsBrowser(browserName, { path: c === 'chromium-doh' || c === 'firefox-trr' ? 'doh' : 'system', caFile, dohUrl: `https://${LAB_SERVER}/dns-query`, workDir: work });
    result.version = await b.browser.version();
    for (const gapS of gaps) {
      const g: GapResult = { gapS, newConnections: 0, gapQueries: [], error: null };
      try {
        await load();
        // Counted from the end of the first load: a connection closed and opened again during the gap (a lookup of
        // the browser's own while idle) counts as new too.
        const before = syns(port);
        const gapStart = Date.now();
        await new Promise((r) => setTimeout(r, gapS * 1000));
        const gapEnd = Date.now();
        await load();
        g.gapQueries = queryLog.filter((q) => q.at >= gapStart && q.at < gapEnd).map((q) => q.line);
        g.newConnections = syns(port) - before;
      } catch (e) {
        g.error = String(e).slice(0, 200);
      }
      result.gaps.push(g);
      process.stderr.write(`${c}: gap ${gapS} s → ${g.error ?? (g.newConnections ? `${g.newConnections} new connection(s)` : 'reused')}${g.gapQueries.length ? `; ${g.gapQueries.length} queries in the gap: ${[...new Set(g.gapQueries)].slice(0, 5).join(', ')}` : ''}\n`);
    }
  } finally {
    await b?.close();
    if (stub) await stop(stub);
  }
  return result;
}

async function inner(cases: IdleCase[], gaps: number[], out: string): Promise<void> {
  isolatedNetwork(false);
  const work = mkdtempSync(join(tmpdir(), 'dnscost-idle-'));
  isolateDns(work);
  const dns = await startCoreDNS({ address: LAB_SERVER, ports: { dns: 53, tls: 853, https: 443 }, siteZone: zoneWithProbe({ zone: ZONE, a: LAB_SERVER }), others: 'nxdomain', idleTimeoutS: SERVER_IDLE_S, logQueries: true, onOutput: feedLog });
  const site = createServer((_req, res) => res.end('<!doctype html><title>idle</title><p>ok'));
  site.listen(80, LAB_SERVER);
  await once(site, 'listening');
  for (const p of [443, 853]) execFileSync('iptables', ['-I', 'INPUT', '-p', 'tcp', '--syn', '-d', LAB_SERVER, '--dport', String(p), '-j', 'ACCEPT'], { timeout: 5000 });
  const results: CaseResult[] = [];
  try {
    for (const c of cases) results.push(await runCase(c, gaps, work, dns.certs.caFile));
  } finally {
    site.close();
    await dns.stop();
    rmSync(work, { recursive: true, force: true });
  }
  writeFileSync(out, JSON.stringify(results));
}

/** From a case's gaps: the longest gap after which the connection was reused, the shortest after which it was not. */
export function lifetimeBounds(r: CaseResult): { reusedUpToS: number | null; newFromS: number | null } {
  const ok = r.gaps.filter((g) => g.error === null);
  const reused = ok.filter((g) => g.newConnections === 0).map((g) => g.gapS);
  const fresh = ok.filter((g) => g.newConnections > 0).map((g) => g.gapS);
  return { reusedUpToS: reused.length ? Math.max(...reused) : null, newFromS: fresh.length ? Math.min(...fresh) : null };
}

function report(results: CaseResult[], command: string): string {
  const gaps = [...new Set(results.flatMap((r) => r.gaps.map((g) => g.gapS)))].sort((a, b) => a - b);
  const lines = [
    '# How long browsers keep their encrypted DNS connection when idle',
    '',
    `Command: \`${command}\` (as root, after \`scripts/setup\`), ${new Date().toISOString().slice(0, 10)}.`,
    '',
    'Per gap: a page load of a fresh name, the gap, another load of a fresh name; "reused" when the lab resolver saw no',
    `new TCP connection to its encrypted port during the gap and the second load, else the number of new ones. The lab resolver`,
    `(CoreDNS, \`timeouts { idle ${SERVER_IDLE_S}s }\`) outlasts every gap, so a new connection is the client's doing.`,
    'The stubs run as Debian configures them by default (unbound: tcp-reuse-timeout 60 s; stubby: idle_timeout 10 s),',
    'reached by Chromium over Do53 on 127.0.0.1.',
    '',
    `| case | version | ${gaps.map((g) => `${g} s`).join(' | ')} | kept at least | new from |`,
    `| --- | --- | ${gaps.map(() => '---').join(' | ')} | --- | --- |`,
  ];
  for (const r of results) {
    const cell = (g: number) => {
      const x = r.gaps.find((y) => y.gapS === g);
      const quiet = x && x.gapQueries.length ? ` (${x.gapQueries.length} queries in the gap)` : '';
      return !x ? '' : x.error ? 'error' : `${x.newConnections ? `new (${x.newConnections})` : 'reused'}${quiet}`;
    };
    const b = lifetimeBounds(r);
    lines.push(`| ${r.case} | ${r.version} | ${gaps.map(cell).join(' | ')} | ${b.reusedUpToS === null ? '—' : `${b.reusedUpToS} s`} | ${b.newFromS === null ? 'not seen' : `${b.newFromS} s`} |`);
  }
  const errors = results.flatMap((r) => r.gaps.filter((g) => g.error).map((g) => `- ${r.case}, gap ${g.gapS} s: ${g.error}`));
  return `${[...lines, ...(errors.length ? ['', 'Errors:', ...errors] : [])].join('\n')}\n`;
}

// Runs in a network and mount namespace of its own (re-running this file inside `unshare`), as browser-queries.ts.
if (process.env.DNSCOST_IDLE_INNER) {
  const { cases, gaps, out } = JSON.parse(process.env.DNSCOST_IDLE_INNER) as { cases: IdleCase[]; gaps: number[]; out: string };
  await inner(cases, gaps, out);
} else {
  const { values } = parseArgs({
    options: { cases: { type: 'string', default: IDLE_CASES.join(',') }, gaps: { type: 'string', default: '5,12,30,65,130,300' }, out: { type: 'string' }, ...SMOKE_OPTION },
  });
  // --smoke: every case with one gap of 1 s.
  const cases = values.cases!.split(',').filter((c): c is IdleCase => (IDLE_CASES as readonly string[]).includes(c));
  const gaps = values.smoke ? [1] : values.gaps!.split(',').map(Number).filter((g) => Number.isFinite(g) && g >= 0);
  const file = reportPath(values, 'bench/results/idle-lifetimes.md');
  const work = mkdtempSync(join(tmpdir(), 'dnscost-idle-out-'));
  const out = join(work, 'results.json');
  execFileSync('unshare', ['--net', '--mount', '--propagation', 'private', process.execPath, distPath('bench/idle-lifetimes.ts')], {
    env: { ...process.env, DNSCOST_IDLE_INNER: JSON.stringify({ cases, gaps, out }) }, stdio: 'inherit', timeout: (gaps.reduce((s, g) => s + g, 0) * 2 + 300) * 1000 * cases.length,
  });
  const results = JSON.parse(readFileSync(out, 'utf8')) as CaseResult[];
  const command = `node dist/bench/idle-lifetimes.js --cases ${cases.join(',')} --gaps ${gaps.join(',')}${file ? ` --out ${file}` : ''}`;
  if (file) {
    writeFileSync(file, report(results, command));
    writeFileSync(file.replace(/\.md$/, '.json'), `${JSON.stringify(results, null, 2)}\n`);
  }
  process.stdout.write(report(results, command));
  rmSync(work, { recursive: true, force: true });
  if (values.smoke && results.some((r) => r.gaps.some((g) => g.error))) process.exitCode = 1;
}
