// How many loads, and when, pure: the book of loads per side of a row, when a row is done (its fixed number of loads
// reached), which side still needs a load (alternating sides until every row of theirs is done), the lab resolver's
// idle timeout, each holder's effective idle limit, and a trace's gaps, drawn so they straddle those limits.
import { HOLDERS, holderOf, pings } from '../../common/connection-state.js';
import type { RecordingBrowser } from '../../common/browser-queries.js';
import { seededRandom, shuffled } from '../../common/stats.js';
import { BASELINE_OF, SIDES, type Candidate, type Compared, type DotStub, type Scenario, type Side, type ValidationOptions, type Visit } from './types.js';

/** The loads made so far on one side of a row: attempts (failed ones included) and the onLoads of those that finished. */
export interface SideLoads {
  attempts: number;
  ok: number[];
}

/** Every side's loads of one profile, by browser × page × side × scenario. */
export class LoadBook {
  private readonly m = new Map<string, SideLoads>();
  private static key(browser: string, page: string, side: Side, scenario: Scenario): string {
    return `${browser}|${page}|${side}|${scenario}`;
  }
  /** Counts one load (onLoad null when it failed). */
  add(browser: string, page: string, side: Side, scenario: Scenario, onLoad: number | null): void {
    const k = LoadBook.key(browser, page, side, scenario);
    const s = this.m.get(k) ?? this.m.set(k, { attempts: 0, ok: [] }).get(k)!;
    s.attempts++;
    if (onLoad !== null) s.ok.push(onLoad);
  }
  /** The loads on one side (none yet: zero attempts). */
  get(browser: string, page: string, side: Side, scenario: Scenario): SideLoads {
    return this.m.get(LoadBook.key(browser, page, side, scenario)) ?? { attempts: 0, ok: [] };
  }
}

/** What decides which sides load and how often. */
export type Budget = Pick<ValidationOptions, 'loads' | 'transports' | 'controls'>;

/** The sides a run loads: Do53, its candidates, its controls and their baselines, in SIDES order. */
export function sidesOf(b: Pick<Budget, 'transports' | 'controls'>): Side[] {
  const compared: Compared[] = [...b.transports, ...(b.controls ?? [])];
  return SIDES.filter((s) => s === 'do53' || compared.some((c) => c === s || BASELINE_OF[c] === s));
}

/**
 * A row is done when both its sides have had their loads: the number is fixed before the run and never depends on the
 * result (stopping a row once its interval looked narrow enough made the resolved rows' intervals too narrow).
 */
export function rowDone(book: LoadBook, b: Budget, browser: string, page: string, compared: Compared, scenario: Scenario): boolean {
  return book.get(browser, page, BASELINE_OF[compared], scenario).attempts >= b.loads && book.get(browser, page, compared, scenario).attempts >= b.loads;
}

/** Whether `side` needs another load for this page and scenario: every side of the run gets its loads, no more. */
export function needsLoad(book: LoadBook, b: Budget, browser: string, page: string, side: Side, scenario: Scenario): boolean {
  return sidesOf(b).includes(side) && book.get(browser, page, side, scenario).attempts < b.loads;
}

/**
 * The lab resolver's idle timeout for encrypted connections (s): as given, else — when a trace runs DoT — 1.5 × the
 * DoT stub's own limit (unbound 60 s → 90 s; stubby 10 s → 15 s), so the stub, not the server, ends its connection;
 * else 20 s. Holders without a limit of their own (Chromium's DoH, dnsproxy) and Firefox's TRR (3,400 s, longer
 * than any trace) are then ended by this server limit.
 */
export function serverIdleFor(o: Pick<ValidationOptions, 'scenarios' | 'transports' | 'dotStub' | 'serverIdleS'>): number {
  if (o.serverIdleS) return o.serverIdleS;
  const stub = HOLDERS[o.dotStub].idleMs / 1000;
  return o.scenarios.includes('expected') && o.transports.includes('dot') ? Math.max(15, 1.5 * stub) : 20;
}

/**
 * How long `transport`'s connection stays open when idle in the lab (ms): the holder's own limit or the server's, the
 * shorter; for a holder that pings (dnsproxy) its own only, which may be none (Infinity).
 */
export function idleLimitMs(transport: Candidate, browser: RecordingBrowser, stub: DotStub, serverIdleMs: number): number {
  const holder = holderOf(transport, browser, stub);
  const own = holder ? HOLDERS[holder].idleMs : null;
  return Math.min(own ?? Infinity, holder && pings(holder) ? Infinity : serverIdleMs);
}

/** A range of gaps (ms). */
export interface GapRange {
  min: number;
  max: number;
}

/**
 * The gap ranges that straddle `limits` (ms): below the shortest, between each two (where there is room), above the
 * longest — each clear of every limit by 13 % or more, so a few seconds' lateness does not change which side of a
 * limit a gap falls on. With one limit the range below comes twice, so two loads in three find the connection open.
 */
export function gapRanges(limits: readonly number[]): GapRange[] {
  const ls = [...new Set(limits.filter(Number.isFinite))].sort((a, b) => a - b);
  if (!ls.length) throw new Error('a trace needs at least one finite idle limit');
  const out: GapRange[] = [{ min: 0.4 * ls[0]!, max: 0.7 * ls[0]! }];
  for (let i = 0; i + 1 < ls.length; i++) {
    const r = { min: 1.15 * ls[i]!, max: 0.87 * ls[i + 1]! };
    if (r.min < r.max) out.push(r);
  }
  if (ls.length === 1) out.push(out[0]!);
  out.push({ min: 1.15 * ls.at(-1)!, max: 1.35 * ls.at(-1)! });
  return out;
}

/** `n` gaps (ms) from `ranges`, in seeded blocks that hold every range once (so any block has the same mix). */
export function gapSequence(ranges: readonly GapRange[], n: number, seed: number): number[] {
  const random = seededRandom(seed);
  const out: number[] = [];
  while (out.length < n) for (const r of shuffled(ranges, random)) out.push(Math.round(r.min + random() * (r.max - r.min)));
  return out.slice(0, n);
}

/** `n` page ids in seeded cycles: every page once per cycle, in a fresh order each time. */
export function pageSequence(pages: readonly string[], n: number, seed: number): string[] {
  const random = seededRandom(seed);
  const out: string[] = [];
  while (out.length < n) out.push(...shuffled(pages, random));
  return out.slice(0, n);
}

/**
 * Do53 visits replayed per browser × page × scenario, at most: a row's prediction is built from its replayed visits
 * (analysis.ts predictedShift), and replays are the slow part of a chunk (about 5 s each on 4G).
 */
export const REPLAYS_PER_ROW = 8;

/** The Do53 visits to replay: per browser × page × scenario, REPLAYS_PER_ROW spread evenly over its loads. */
export function replayed(base: readonly Visit[]): Visit[] {
  const groups = new Map<string, Visit[]>();
  for (const v of base) {
    const k = `${v.browser}|${v.page}|${v.scenario}`;
    (groups.get(k) ?? groups.set(k, []).get(k)!).push(v);
  }
  return [...groups.values()].flatMap((vs) => (vs.length <= REPLAYS_PER_ROW ? vs : Array.from({ length: REPLAYS_PER_ROW }, (_, i) => vs[Math.floor((i * vs.length) / REPLAYS_PER_ROW)]!)));
}
