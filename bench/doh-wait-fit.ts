// Fits a browser's DoH wait (common/client-costs.ts dohDispatchMs) on pilot loads, lookup by lookup: each name's lookup
// in the browser's own log (median over the pilot's DoH loads) minus dnscost's replay of it (median over the Do53 loads'
// replays over DoH, same mode, the wait left out), against how many other names the replay asks in the W ms before it
// (its burst); least squares a + b·min(burst, cap), the document's own lookup left out. Prints per W and cap the
// constants and how many of the pilot's lookups the priced replay puts within max(10 %, 5 ms) of the browser's, beside
// the model's current wait. Then a second candidate, the backlog of the browser's shared thread when the lookup was
// asked, from the page's requests as the extension sees them (backlogAt below), fitted the same way and scored both
// in sample and leaving each profile × page out in turn (the fit that predicts a page never saw it). A matrix's loads
// judge the model frozen before it; they may feed the next model only, which a new matrix then judges.
//   node dist/bench/doh-wait-fit.js --raw FILE... [--browser chromium] [--smoke]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { dohDispatchMs, firstNeededOf } from '../common/client-costs.js';
import type { RecordingBrowser } from '../common/browser-queries.js';
import { percentile } from '../common/stats.js';
import type { Mode } from '../common/transports.js';
import { upgradeRun } from './validate/legacy.js';
import { browserLookups, lookupTolerance, replayLookups } from './validate/lookups.js';
import { SMOKE_OPTION } from './smoke.js';

const WINDOWS = [10, 25, 50, 100];
const CAPS = [5, 10, 20, 40, 80];
const median = (xs: readonly number[]) => percentile([...xs].sort((a, b) => a - b), 50)!;

/** One name of one page × mode: the browser's median lookup, the replay's, and its burst per window (median over loads). */
export interface Point { profile: string; page: string; mode: Mode; name: string; browser: number; replay: number; bursts: number[]; backlogs: number[] }

/** A page host as the extension's record has it: when first needed, when its last response ended, how many requests. */
type HostSpan = { firstNeededMs: number; completedMs: number | null; requests: number };

/**
 * The page's request events as the extension's page record has them, in time order: each host's first request starts
 * when it was first needed and its last ends when it completed; its other requests' starts and ends spread evenly in
 * between. What a browser's shared thread (Chromium's network thread, Firefox's main thread) handles beside the
 * lookups' own requests.
 */
export function pageEvents(hosts: readonly HostSpan[]): number[] {
  const out: number[] = [];
  for (const h of hosts) {
    if (h.completedMs === null || h.requests <= 0) continue;
    out.push(h.firstNeededMs, h.completedMs);
    for (let i = 1; i < h.requests; i++) {
      const at = h.firstNeededMs + ((h.completedMs - h.firstNeededMs) * i) / h.requests;
      out.push(at, at);
    }
  }
  return out.sort((a, b) => a - b);
}

/**
 * The backlog (ms) of a thread that spends `costMs` on each event of `events` (sorted) and works off 1 ms a ms, at time
 * `at`: a fluid queue. Many events in a few ms (a 100-host page at a fast RTT) pile up; the same events spread over
 * round trips six times as long (4G) are worked off as they come.
 */
export function backlogAt(events: readonly number[], costMs: number, at: number): number {
  let backlog = 0;
  let t = -Infinity;
  for (const e of events) {
    if (e > at) break;
    backlog = Math.max(0, backlog - (e - t)) + costMs;
    t = e;
  }
  return Math.max(0, backlog - (at - t));
}

/** The event costs (ms) the backlog is fitted over. */
const COSTS = [0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3];

/** The points of one raw validation file: its DoH loads of `browser` against its Do53 loads' replays over DoH. */
export function points(raw: unknown, browser: RecordingBrowser): Point[] {
  const run = upgradeRun(raw as Parameters<typeof upgradeRun>[0]);
  const out: Point[] = [];
  for (const p of run.profiles) for (const page of p.pages) for (const mode of ['cold', 'warm'] as const) {
    const of = (side: string) => p.visits.filter((v) => v.browser === browser && v.page === page.id && v.scenario === mode && v.transport === side && !v.error);
    const replays = new Map<string, number[]>();
    const bursts = new Map<string, number[][]>();
    const backlogs = new Map<string, number[][]>();
    const doc = new Set<string>();
    for (const v of of('do53')) {
      if (!v.records?.length) continue;
      if (v.pageRecord) doc.add(v.pageRecord.host);
      for (const [n, ms] of replayLookups(v.records, 'doh', mode)) replays.set(n, [...(replays.get(n) ?? []), ...ms]);
      const asked = firstNeededOf(v.records.filter((r) => r.transport === 'doh' && r.mode === mode));
      const events = v.pageRecord ? pageEvents(v.pageRecord.hosts) : null;
      for (const [n, at] of asked) {
        const k = WINDOWS.map((w) => [...asked].filter(([o, t]) => o !== n && t <= at && t >= at - w).length);
        bursts.set(n, [...(bursts.get(n) ?? []), k]);
        if (events) backlogs.set(n, [...(backlogs.get(n) ?? []), COSTS.map((c) => backlogAt(events, c, at))]);
      }
    }
    for (const [name, ms] of browserLookups(of('doh'))) {
      const r = replays.get(name);
      if (!r?.length || doc.has(name)) continue;
      const b = bursts.get(name) ?? [WINDOWS.map(() => 0)];
      const q = backlogs.get(name) ?? [COSTS.map(() => 0)];
      out.push({
        profile: p.profile.name, page: page.id, mode, name, browser: median(ms), replay: median(r),
        bursts: WINDOWS.map((_, i) => median(b.map((x) => x[i]!))), backlogs: COSTS.map((_, i) => median(q.map((x) => x[i]!))),
      });
    }
  }
  return out;
}

/** Least squares y = a + b·x. */
function line(x: readonly number[], y: readonly number[]): { a: number; b: number } {
  const n = x.length;
  const mx = x.reduce((s, v) => s + v, 0) / n;
  const my = y.reduce((s, v) => s + v, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (x[i]! - mx) * (y[i]! - my);
    sxx += (x[i]! - mx) ** 2;
  }
  const b = sxx ? sxy / sxx : 0;
  return { a: my - b * mx, b };
}

const within = (p: Point, wait: number) => Math.abs(p.browser - (p.replay + wait)) <= lookupTolerance(p.replay + wait);

function main(): void {
  const { values } = parseArgs({ options: { raw: { type: 'string', multiple: true }, browser: { type: 'string', default: 'chromium' }, ...SMOKE_OPTION } });
  const browser = values.browser === 'firefox' ? 'firefox' : 'chromium';
  const raws = values.raw ?? ['bench/results/validation/lookups/chromium-fiber-30-100-doh-pilot.raw.json.gz'];
  const pts = raws.flatMap((f) => points(JSON.parse(gunzipSync(readFileSync(f)).toString('utf8')), browser));
  if (!pts.length) throw new Error(`no ${browser} DoH lookups in ${raws.join(', ')}`);
  const current = pts.filter((p) => within(p, dohDispatchMs(browser, 'doh', p.bursts[0]!, false))).length;
  const lines = [
    `Command: \`node dist/bench/doh-wait-fit.js ${process.argv.slice(2).join(' ')}\``,
    `${pts.length} ${browser} DoH lookups (names × modes × pilots, not the document's); the current wait puts ${current} within target.`,
    '',
    '| window ms | burst cap | a ms | b ms per name | within target |',
    '| ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const [w, W] of WINDOWS.entries()) {
    for (const cap of CAPS) {
      const x = pts.map((p) => Math.min(p.bursts[w]!, cap));
      const { a, b } = line(x, pts.map((p) => p.browser - p.replay));
      lines.push(`| ${W} | ${cap} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${pts.filter((p, i) => within(p, a + b * x[i]!)).length} |`);
    }
  }
  // The page's backlog when the lookup was asked: fitted on all, and on all but each profile × page in turn (scored there).
  const groups = [...new Set(pts.map((p) => `${p.profile} ${p.page}`))];
  lines.push('', '| backlog, ms per event | a ms | b | within target in sample | within target, each page left out |', '| ---: | ---: | ---: | ---: | ---: |');
  for (const [i, cost] of COSTS.entries()) {
    const x = (p: Point) => p.backlogs[i]!;
    const { a, b } = line(pts.map(x), pts.map((p) => p.browser - p.replay));
    let held = 0;
    for (const g of groups) {
      const train = pts.filter((p) => `${p.profile} ${p.page}` !== g);
      const f = line(train.map(x), train.map((p) => p.browser - p.replay));
      held += pts.filter((p) => `${p.profile} ${p.page}` === g && within(p, f.a + f.b * x(p))).length;
    }
    lines.push(`| ${cost} | ${a.toFixed(2)} | ${b.toFixed(3)} | ${pts.filter((p) => within(p, a + b * x(p))).length} | ${held} |`);
  }
  const byPage = new Map<string, number[]>();
  for (const p of pts) byPage.set(`${p.profile} ${p.page} ${p.mode}`, [...(byPage.get(`${p.profile} ${p.page} ${p.mode}`) ?? []), p.browser - p.replay]);
  const show = COSTS.indexOf(0.5);
  const backlogByPage = new Map<string, number[]>();
  for (const p of pts) backlogByPage.set(`${p.profile} ${p.page} ${p.mode}`, [...(backlogByPage.get(`${p.profile} ${p.page} ${p.mode}`) ?? []), p.backlogs[show]!]);
  lines.push('', `| profile, page, mode | lookups | median excess over the replay ms | median backlog at ${COSTS[show]} ms per event |`, '| --- | ---: | ---: | ---: |');
  for (const [k, xs] of [...byPage].sort()) lines.push(`| ${k} | ${xs.length} | ${median(xs).toFixed(1)} | ${median(backlogByPage.get(k)!).toFixed(1)} |`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

main();
