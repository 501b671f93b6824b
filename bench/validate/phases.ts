// The loads of one page group, in two phases, driven by the inner half through the side workers (one load at a time,
// so each load has the machine and the emulated link to itself):
// - rounds (scenarios cold and warm): per round, per browser and per side (both in a seeded order), one browser
//   launched for the side's loads of the round (each page and scenario still needing one, in a seeded order), then
//   closed — so the sides of a row alternate, and only one browser runs at a time;
// - traces (scenario expected): every side's browser open at once, each browsing the group's pages in the same
//   seeded order with the same seeded gaps as the other sides of its browser (so a Do53 load and a candidate load
//   with the same number had the same idle time before them); the gaps straddle each holder's idle limit
//   (schedule.ts), and the next load is always the side whose gap ends first.
// Either phase stops adding a side's loads once every row it serves is done (schedule.ts rowDone).
import type { RecordingBrowser } from '../../common/browser-queries.js';
import { seededRandom, shuffled } from '../../common/stats.js';
import { pagePlan } from '../../lab/site/validation-site.js';
import { pageRecordOf } from './browser.js';
import { attachLookups } from './netlog.js';
import type { PageGroup } from './groups.js';
import type { VisitResult } from './side.js';
import type { SideHandle } from './sides.js';
import { gapRanges, gapSequence, idleLimitMs, needsLoad, pageSequence, type Budget, type LoadBook } from './schedule.js';
import type { DotStub, PageSpec, Scenario, Side, Visit } from './types.js';

/** What a phase works with. */
export interface PhaseContext {
  group: PageGroup;
  browsers: RecordingBrowser[];
  /** Do53 and the run's candidates. */
  sides: Side[];
  scenarios: Scenario[];
  budget: Budget;
  book: LoadBook;
  /** The side worker for a browser and side (started again if it died). */
  worker(browser: RecordingBrowser, side: Side): SideHandle;
  seed: number;
  serverIdleMs: number;
  dotStub: DotStub;
  /** Keeps a visit (and counts it in the book). */
  record(v: Visit): void;
  versions: Partial<Record<RecordingBrowser, string>>;
  progress(line: string): void;
}

let warmCounter = 0;

/** The visit a worker's result makes: the page record built from the page's timings, recorded by `browser`. */
export function toVisit(r: VisitResult, browser: RecordingBrowser, page: PageSpec, side: Side, scenario: Scenario, round: number, gapMs?: number): Visit {
  const v: Visit = {
    browser, page: page.id, transport: side, scenario, round, onLoad: r.onLoad, error: r.error, startedAt: r.startedAt, endedAt: r.endedAt,
    openBefore: r.openBefore, connIdleMs: r.connIdleMs, ...(r.retried ? { retried: true } : {}), ...(gapMs !== undefined ? { gapMs } : {}),
  };
  if (!r.timings || r.error) return v;
  v.pageRecord = { ...pageRecordOf(r.timings, browser), ...(scenario === 'expected' ? { idleBeforeMs: r.idleBeforeMs ?? null } : {}) };
  if (page.kind === 'synthetic') {
    // Every host of a synthetic page is needed before onLoad: a record without one means the page did not load whole.
    const missing = pagePlan(Number(page.id)).filter((h) => !v.pageRecord!.hosts.some((x) => x.name === h.name));
    if (missing.length) v.error = `page record lacks ${missing.length} host(s): ${missing[0]!.name}`;
  }
  return v;
}

function failed(e: unknown, started: number): VisitResult {
  return { onLoad: null, error: String(e).slice(0, 300), startedAt: started, endedAt: Date.now(), openBefore: null, connIdleMs: null };
}

/** The cold and warm loads of the group, in rounds, until every row is done. */
export async function runRounds(c: PhaseContext): Promise<void> {
  const scenarios = c.scenarios.filter((s): s is 'cold' | 'warm' => s !== 'expected');
  if (!scenarios.length) return;
  const random = seededRandom(c.seed);
  for (let round = 1; round <= c.budget.loads; round++) {
    let any = false;
    for (const browser of shuffled(c.browsers, random)) {
      for (const side of shuffled(c.sides, random)) {
        const todo = shuffled(c.group.pages, random).flatMap((p) => shuffled(scenarios, random)
          .filter((s) => needsLoad(c.book, c.budget, browser, p.id, side, s)).map((s) => [p, s] as const));
        if (!todo.length) continue;
        any = true;
        const w = c.worker(browser, side);
        const opened = await w.send({ op: 'open' });
        c.versions[browser] ||= opened.version;
        const session: Visit[] = [];
        try {
          for (const [page, scenario] of todo) {
            const started = Date.now();
            const warmName = `warm-${++warmCounter}-${c.seed}.${c.group.warmParent}`;
            const r = await w.send({ op: 'visit', url: page.url, state: scenario, warmName }).then((x) => x.visit!, (e: unknown) => failed(e, started));
            const v = toVisit(r, browser, page, side, scenario, c.book.get(browser, page.id, side, scenario).attempts + 1);
            c.record(v);
            session.push(v);
            c.progress(`round ${round} ${browser} ${side} ${scenario} ${page.id}: ${v.onLoad?.toFixed(0) ?? v.error}${v.openBefore !== null ? ` (open before: ${v.openBefore})` : ''}`);
          }
        } finally {
          attachLookups(session, (await w.send({ op: 'close' }).catch(() => undefined))?.lookups);
        }
      }
    }
    if (!any) break;
  }
}

interface TraceSide {
  browser: RecordingBrowser;
  side: Side;
  w: SideHandle;
  k: number;
  lastEnd: number;
  open: boolean;
  /** The side's loads in this browser session (they get its lookups when it closes). */
  visits: Visit[];
}

/** A trace's loads take about this long each (ms): with gaps shorter than this many times the sides at once, they queue. */
const TRACE_LOAD_MS = 3000;

/**
 * The expected scenario's traces for the group: the sides' browsers open at once — every side of every browser
 * when the gaps leave room for all their loads, else one browser's sides at a time — loads interleaved by their gaps.
 */
export async function runTraces(c: PhaseContext): Promise<void> {
  if (!c.scenarios.includes('expected')) return;
  const ids = c.group.pages.map((p) => p.id);
  const maxVisits = ids.length * c.budget.loads * 2;
  const gaps = new Map<RecordingBrowser, number[]>();
  const order = new Map<RecordingBrowser, string[]>();
  let shortest = Infinity;
  for (const [i, b] of c.browsers.entries()) {
    // A transport whose connection never idles out (dnsproxy pings) has no limit to straddle: the server's stands in.
    const limits = c.budget.transports.map((t) => idleLimitMs(t, b, c.dotStub, c.serverIdleMs)).filter(Number.isFinite);
    const ranges = gapRanges(limits.length ? limits : [c.serverIdleMs]);
    shortest = Math.min(shortest, ...ranges.map((r) => r.min));
    gaps.set(b, gapSequence(ranges, maxVisits, c.seed * 31 + i));
    order.set(b, pageSequence(ids, maxVisits, c.seed * 37 + i));
  }
  const together = shortest >= TRACE_LOAD_MS * (c.browsers.length * c.sides.length - 1);
  const waves = together ? [c.browsers] : c.browsers.map((b) => [b]);
  for (const wave of waves) await runWave(c, wave, ids, maxVisits, gaps, order);
}

async function runWave(c: PhaseContext, browsers: RecordingBrowser[], ids: string[], maxVisits: number, gaps: Map<RecordingBrowser, number[]>, order: Map<RecordingBrowser, string[]>): Promise<void> {
  const wanted = (s: TraceSide) => ids.some((p) => needsLoad(c.book, c.budget, s.browser, p, s.side, 'expected'));
  const sides: TraceSide[] = [];
  try {
    for (const browser of browsers) {
      for (const side of c.sides) {
        const s: TraceSide = { browser, side, w: c.worker(browser, side), k: 0, lastEnd: 0, open: false, visits: [] };
        if (!wanted(s)) continue;
        const opened = await s.w.send({ op: 'open' });
        c.versions[browser] ||= opened.version;
        s.open = true;
        sides.push(s);
      }
    }
    // Every browser is up before any trace starts, so no trace's first gap waits for another browser's start-up.
    for (const s of shuffled(sides, seededRandom(c.seed))) {
      await s.w.send({ op: 'trace-start', warmName: `warm-t${++warmCounter}-${c.seed}.${c.group.warmParent}` });
      s.lastEnd = Date.now();
    }
    c.progress(`traces of ${browsers.join(' and ')}: ${sides.length} sides, gaps ${browsers.map((b) => `${b} ${gaps.get(b)!.slice(0, 6).map((g) => (g / 1000).toFixed(0)).join(', ')}… s`).join('; ')}`);
    for (;;) {
      // Skip the pages a side no longer needs (the gap stays the one planned for the next load).
      for (const s of sides) while (s.open && s.k < maxVisits && !needsLoad(c.book, c.budget, s.browser, order.get(s.browser)![s.k]!, s.side, 'expected')) s.k++;
      for (const s of sides) {
        if (s.open && (s.k >= maxVisits || !wanted(s))) {
          s.open = false;
          await s.w.send({ op: 'trace-end' }).catch(() => undefined);
          attachLookups(s.visits, (await s.w.send({ op: 'close' }).catch(() => undefined))?.lookups);
        }
      }
      const live = sides.filter((s) => s.open);
      if (!live.length) break;
      const due = (s: TraceSide) => s.lastEnd + gaps.get(s.browser)![s.k]!;
      const next = live.reduce((a, b) => (due(b) < due(a) ? b : a));
      const wait = due(next) - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const page = c.group.pages.find((p) => p.id === order.get(next.browser)![next.k])!;
      const started = Date.now();
      const r = await next.w.send({ op: 'trace-visit', url: page.url }).then((x) => x.visit!, (e: unknown) => failed(e, started));
      const gapMs = gaps.get(next.browser)![next.k]!;
      const v = toVisit(r, next.browser, page, next.side, 'expected', c.book.get(next.browser, page.id, next.side, 'expected').attempts + 1, gapMs);
      c.record(v);
      next.visits.push(v);
      next.lastEnd = r.endedAt;
      next.k++;
      const idle = v.pageRecord?.idleBeforeMs;
      c.progress(`trace ${next.browser} ${next.side} ${page.id}: ${v.onLoad?.toFixed(0) ?? v.error} after ${((idle ?? gapMs) / 1000).toFixed(1)} s (planned ${(gapMs / 1000).toFixed(1)} s)` +
        `${v.openBefore !== null ? `, open before: ${v.openBefore}${v.connIdleMs != null ? ` (idle ${(v.connIdleMs / 1000).toFixed(1)} s)` : ''}` : ''}`);
    }
  } finally {
    for (const s of sides) {
      if (!s.open) continue;
      await s.w.send({ op: 'trace-end' }).catch(() => undefined);
      attachLookups(s.visits, (await s.w.send({ op: 'close' }).catch(() => undefined))?.lookups);
    }
  }
}
