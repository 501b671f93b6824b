// Simulation (not a test): privacy per person (issue 26 item 3), with the real code on both sides. Writes a report.
//
//   node dist/bench/privacy-budget.js [--days 30] [--out bench/results/privacy-budget.md] [--smoke]
//
// 1. One person at the most dnscost measures (the sampler's ceiling, 96 pages a day, each page 20 results over a few
//    sites) for --days days through the extension's real Uploader (storage in memory, a fake clock, a collector that
//    accepts): what leaves per day, per page, and in any one cell.
// 2. The budget (common/privacy-budget.ts) that bound buys: ε per person per day and over the days, the threshold
//    against what one person can put in a cell, and δ checked by the collector's real publication: cells of one
//    person's pages published, measured against the stated chance (at a looser δ too, where a count can see it).
// 3. What a crowd gets: the collector's real publishEpoch over one day of N people (each at the cap), at the
//    default budget: cells published, and the published median lookup time against the true one.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { reportPath, SMOKE_OPTION } from './smoke.js';
import { Uploader } from '../extension/src/background/uploader.js';
import { defaultSettings, type Settings } from '../extension/src/settings.js';
import { HISTORY_VERSION, type HistoryCell, type HistoryEntry } from '../extension/src/history.js';
import { FakeArea } from '../extension/src/background/test-fixtures.js';
import { cellBudget, CONTRIBUTIONS_PER_DAY, PERSON_CAP } from '../common/privacy-budget.js';
import { cellRule, publishCell, tallyOf } from '../collector/publication.js';
import { publishEpoch, resultsSource } from '../collector/publisher.js';
import { POPULAR_SITES } from '../common/popular-sites.js';
import { coarse } from '../common/upload-batch.js';
import { seededRandom } from '../common/stats.js';
import type { EpochResult } from '../collector/store.js';

const { values } = parseArgs({ options: { days: { type: 'string', default: '30' }, out: { type: 'string' }, ...SMOKE_OPTION } });
const DAYS = values.smoke ? 2 : Number(values.days);
const DAY_MS = 86_400_000;
const T0 = Date.parse('2026-11-01T00:00:00Z');
const PAGES_PER_DAY = 96;
const RESOLVERS = ['system', 'cloudflare', 'google', 'quad9', 'custom'] as const;
const TRANSPORTS = ['dot', 'doh'] as const;
const MODES = ['cold', 'warm'] as const;

/** A seeded stream (common/stats.ts), so the report is the same every run. */
const random = seededRandom(2026);

function cell(resolver: string, transport: 'dot' | 'doh', mode: 'cold' | 'warm', ms: number): HistoryCell {
  return {
    resolver, transport, mode, hosts: 12, failures: 0, lookups: 24, histogram: [], p5Ms: ms / 2, medianMs: ms, p95Ms: ms * 3,
    onLoad: { delta: ms, lower: ms / 2, upper: ms * 2 }, verdict: 'slower', bytesPerLookup: 400, packetsPerLookup: 4,
  } as HistoryCell;
}

/** A page of one of the person's favourite sites, with 20 results (every resolver × transport × mode). */
function entry(at: number, i: number): HistoryEntry {
  const sites = ['www.wikipedia.org', 'github.com', 'www.bbc.co.uk', 'my-own-blog.example'];
  const cells = RESOLVERS.flatMap((r) => TRANSPORTS.flatMap((t) => MODES.map((m) => cell(r, t, m, 20 + (i % 7)))));
  return { version: HISTORY_VERSION, id: `p${i}`, at, host: sites[i % sites.length]!, trigger: 'auto', onLoadMs: 900, pageHosts: 12, measuredHosts: 12, cells };
}

// ---- 1. one heavy person through the real uploader ----
let now = T0;
const sent: Array<{ at: number; body: string }> = [];
const settings: Settings = { ...defaultSettings([]), upload: { enabled: true, paused: false, collector: 'http://127.0.0.1:9/', network: { type: 'ethernet' } } };
let tokens = 0;
// The uploader's timers, run in time order as the fake clock moves (its batches go when their timer fires).
const timers: Array<{ at: number; fn: () => void }> = [];
const settle = async () => {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
};
async function advanceTo(t: number): Promise<void> {
  for (;;) {
    timers.sort((a, b) => a.at - b.at);
    const next = timers[0];
    if (!next || next.at > t) break;
    timers.shift();
    now = Math.max(now, next.at);
    next.fn();
    await settle();
  }
  now = Math.max(now, t);
}
const uploader = new Uploader({
  area: new FakeArea(),
  loadSettings: async () => settings,
  fetch: async (_url, init) => {
    sent.push({ at: now, body: init.body! });
    return { status: 201, headers: { get: () => null }, text: async () => '{"ok":true}' };
  },
  randomToken: (bytes) => `t${String(++tokens).padStart(bytes, '0')}`,
  random,
  now: () => now,
  setTimer: (fn, ms) => {
    const timer = { at: now + ms, fn };
    timers.push(timer);
    return timer;
  },
  clearTimer: (timer) => {
    const i = timers.indexOf(timer as (typeof timers)[number]);
    if (i >= 0) timers.splice(i, 1);
  },
  log: () => {},
});
let measuredPages = 0;
for (let d = 0; d < DAYS; d++) {
  for (let i = 0; i < PAGES_PER_DAY; i++) {
    await advanceTo(T0 + d * DAY_MS + Math.floor(((i + random()) * DAY_MS) / PAGES_PER_DAY));
    await uploader.onHistory(entry(now, measuredPages++));
    await settle();
  }
}
// Past the last day, long enough for its wait and every gap.
await advanceTo(T0 + (DAYS + 1) * DAY_MS);
type Sent = { pages: Array<{ site: string; hour: string; results: Array<{ resolver: string; transport: string; mode: string }> }> };
const perDay = new Map<string, number>();
const perCell = new Map<string, number>();
let maxResults = 0;
const gaps: number[] = [];
for (const [i, s] of sent.entries()) {
  const page = (JSON.parse(s.body) as Sent).pages[0]!;
  const day = page.hour.slice(0, 10);
  perDay.set(day, (perDay.get(day) ?? 0) + 1);
  maxResults = Math.max(maxResults, page.results.length);
  for (const r of page.results) {
    const key = [day, r.resolver, r.transport, r.mode, 'ethernet', page.site].join('/');
    perCell.set(key, (perCell.get(key) ?? 0) + 1);
  }
  if (i > 0) gaps.push((s.at - sent[i - 1]!.at) / 1000);
}
const maxPerDay = Math.max(...perDay.values());
const maxPerCell = Math.max(...perCell.values());
const contributionsPerDay = Math.max(...[...perDay.keys()].map((d) => [...perCell.entries()].filter(([k]) => k.startsWith(d)).reduce((n, [, c]) => n + c, 0)));

// ---- 2. the budget, and δ checked by the real publication ----
const b = cellBudget();
const deltaTrial = (delta: number, cells: number): number => {
  const rule = cellRule(b.epsilonPerDay, undefined, delta);
  const pages = tallyOf(Array.from({ length: maxPerCell }, () => ({ medianMs: 20, onloadMs: 20, bytes: 400, packets: 4, failureShare: 0 })));
  let published = 0;
  for (let i = 0; i < cells; i++) if (publishCell(pages, randomBytes(32), `alone/${i}`, rule)) published++;
  return published;
};
const looseCells = values.smoke ? 2_000 : 200_000;
const loose = deltaTrial(0.01, looseCells);
const strictCells = values.smoke ? 2_000 : 1_000_000;
const strict = deltaTrial(b.delta, strictCells);

// ---- 3. a crowd's day at the default budget ----
const SITES = [...POPULAR_SITES];
/** A Zipf draw over the popular sites; 40 % of pages are "other". */
const zipfWeights = SITES.map((_, i) => 1 / (i + 1));
const zipfTotal = zipfWeights.reduce((a, x) => a + x, 0);
function site(): string {
  if (random() < 0.4) return 'other';
  let u = random() * zipfTotal;
  for (const [i, w] of zipfWeights.entries()) if ((u -= w) <= 0) return SITES[i]!;
  return SITES[0]!;
}
const NETWORKS = ['wifi', 'wifi', 'wifi', 'ethernet', 'cellular'];
/** Lookup time per resolver × transport × mode, so the published median can be set against the truth. */
const trueMs = (r: string, t: string, m: string) => 10 + RESOLVERS.indexOf(r as never) * 3 + (t === 'doh' ? 4 : 0) + (m === 'cold' ? 25 : 0);
async function crowdDay(people: number): Promise<{ rows: number; cells: number; named: number; covered: number; errors: number[]; bigErrors: number[] }> {
  const results: EpochResult[] = [];
  for (let p = 0; p < people; p++) {
    const network = NETWORKS[Math.floor(random() * NETWORKS.length)]!;
    for (let k = 0; k < PERSON_CAP.pagesPerDay; k++) {
      const s = site();
      const all = RESOLVERS.flatMap((r) => TRANSPORTS.flatMap((t) => MODES.map((m) => [r, t, m] as const)));
      for (let i = 0; i < PERSON_CAP.resultsPerPage; i++) {
        const [r, t, m] = all.splice(Math.floor(random() * all.length), 1)[0]!;
        // On the upload grid, as every upload's figures are (common/upload-batch.ts coarse).
        const ms = coarse(trueMs(r, t, m) * (0.7 + 0.6 * random()));
        results.push({ network, site: s, resolver: r, transport: t, mode: m, lookups: 24, failures: 0, median_ms: ms, onload_ms: ms, bytes: 400, packets: 4 });
      }
    }
  }
  const cells = await publishEpoch('2026-11-01', resultsSource(results), { secret: randomBytes(32), epsilon: b.epsilonPerDay, minPages: b.minPages });
  const error = (c: (typeof cells)[number]) => Math.abs(c.lookupMs!.p50 - coarse(trueMs(c.resolver, c.transport, c.mode))) / coarse(trueMs(c.resolver, c.transport, c.mode));
  const errors = cells.filter((c) => c.lookupMs).map(error);
  const bigErrors = cells.filter((c) => c.lookupMs && c.pages >= 2_000).map(error);
  return { rows: results.length, cells: cells.length, named: cells.filter((c) => c.site !== 'other').length, covered: cells.reduce((n, c) => n + c.pages, 0) / results.length, errors, bigErrors };
}
const crowds = [];
for (const n of values.smoke ? [1_000] : [1_000, 10_000, 100_000]) crowds.push({ n, ...(await crowdDay(n)) });
const errorCell = (xs: number[]) => (xs.length ? `${(100 * pct(xs, 0.5)).toFixed(0)} % (${(100 * pct(xs, 0.9)).toFixed(0)} %)` : '–');
const pct = (xs: number[], q: number) => (xs.length ? [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(q * xs.length))]! : NaN);

const report = `# Privacy per person: what one person adds, and what the crowd gets

Command: \`node dist/bench/privacy-budget.js --days ${DAYS}\` (after \`npm run build\`); seeded, the same every run
(δ's trials use fresh secrets). Date: ${new Date().toISOString()}.

The budget (\`common/privacy-budget.ts\`): at most ${PERSON_CAP.pagesPerDay} pages a UTC day per person, ${PERSON_CAP.resultsPerPage} results a page
(${CONTRIBUTIONS_PER_DAY} contributions a day); ε = ${b.epsilonPerDay} per person per day, δ = ${b.delta}; per contribution ε = ${b.cellEpsilon.toFixed(4)} (count ${b.countEpsilon.toFixed(4)}, Laplace scale
${b.countScale.toFixed(1)}; each of nine values ${b.valueEpsilon.toFixed(5)}); threshold ${b.minPages} noisy pages.

## 1. One person at dnscost's ceiling, through the extension's uploader

${PAGES_PER_DAY} measured pages a day for ${DAYS} days (${measuredPages} pages, each with 20 results over four sites), every page offered to
the real \`Uploader\` (storage in memory, a fake clock), a collector that accepts everything.

| | measured | allowed |
| --- | --- | --- |
| pages uploaded per UTC day, most | ${maxPerDay} | ${PERSON_CAP.pagesPerDay} |
| days with an upload | ${perDay.size} of ${DAYS} | |
| results per uploaded page, most | ${maxResults} | ${PERSON_CAP.resultsPerPage} |
| contributions (page × cell) per day, most | ${contributionsPerDay} | ${CONTRIBUTIONS_PER_DAY} |
| pages in any one cell per day, most | ${maxPerCell} | ${PERSON_CAP.pagesPerDay} |
| minutes between two uploads, least | ${(Math.min(...gaps) / 60).toFixed(1)} | over a front proxy's idle timeout (Caddy's 5 min) |

## 2. What the cap buys

- ε per person per day: **${b.epsilonPerDay}** (${CONTRIBUTIONS_PER_DAY} contributions × ${b.cellEpsilon.toFixed(4)} × 1.25, the 1.25 for a page whose
  site's count folded it into "other"); over ${DAYS} days by basic composition: ${b.epsilonPerDay * DAYS}.
- The most one person can put in one published cell in a day: ${maxPerCell} pages (measured above), against a threshold of
  ${b.minPages}: their cell alone is published with chance ½·exp(−(${b.minPages} − ${PERSON_CAP.pagesPerDay}) / ${b.countScale.toFixed(1)}) ≤ δ = ${b.delta}.
- δ by the collector's real \`publishCell\`, cells of one person's ${maxPerCell} pages and fresh secrets:
  at δ = 10⁻² (threshold ${cellRule(b.epsilonPerDay, undefined, 0.01).minPages}): ${loose} of ${looseCells} published (${((100 * loose) / looseCells).toFixed(2)} %, stated 1 %);
  at the default δ = ${b.delta} (threshold ${b.minPages}): ${strict} of ${strictCells} published.

## 3. What a crowd gets in a day (default budget, the collector's real publishEpoch)

Each person uploads the cap (${PERSON_CAP.pagesPerDay} pages, ${PERSON_CAP.resultsPerPage} results each drawn from 20 resolver × transport × mode), sites Zipf over
the ${SITES.length} popular sites with 40 % "other", networks wifi 3 : ethernet 1 : cellular 1.

The error is the published median lookup time's, relative to the true one, over every published cell and over the
cells of at least 2,000 noisy pages.

| people | results | cells published | of them named sites | results in published cells | p50 error: median (p90) | cells ≥ 2,000 pages: n, median error (p90) |
| --- | --- | --- | --- | --- | --- | --- |
${crowds.map((c) => `| ${c.n.toLocaleString('en')} | ${c.rows.toLocaleString('en')} | ${c.cells} | ${c.named} | ${(100 * c.covered).toFixed(0)} % | ${errorCell(c.errors)} | ${c.bigErrors.length}, ${errorCell(c.bigErrors)} |`).join('\n')}

Reading: the guarantee is per person and day, so the crowd pays for it in size: a cell needs about ${b.minPages} pages a day
before it appears, and a site is named only where that many of its pages land in one resolver × transport × mode ×
network. Each value release gets ε ${b.valueEpsilon.toFixed(4)}, so the exponential mechanism's median is the true grid value
in most cells of a few thousand pages (with a tail), and in a cell of a few hundred often a random grid value. A
collector with a small crowd publishes little, and little of it is accurate: the price of a bound that holds for the
heaviest user, not for an average page. Fewer releases per cell (no 5th and 95th percentiles) or values only in the
coarse cells (no site) would buy accuracy at the same ε.
`;
const out = reportPath(values, 'bench/results/privacy-budget.md');
if (out) writeFileSync(out, report);
process.stdout.write(report);
if (maxPerDay > PERSON_CAP.pagesPerDay || maxResults > PERSON_CAP.resultsPerPage || maxPerCell > PERSON_CAP.pagesPerDay) process.exitCode = 1;
