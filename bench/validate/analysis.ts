// The validation experiment's analysis, pure: dnscost's prediction for every Do53 visit (the current cost model,
// common/page-cost.ts measuredPageCost over the visit's page record and replay, in the mode its scenario says; in a
// trace, in each mode its candidate loads were in, from their own gaps), the
// measured change of onLoad between sides (the Hodges–Lehmann shift) with its distribution-free interval (interval.ts), whether a row
// is resolved (the interval's half-width within the tolerance), and the rows themselves (one per browser × profile × page ×
// transport × scenario) with the target's verdict and the query log's check.
import type { RecordingBrowser } from '../../common/browser-queries.js';
import { expectedMode, holderOf } from '../../common/connection-state.js';
import type { CellCost } from '../../common/cost-model.js';
import { measuredPageCost, pageCostInput, type PageForCost } from '../../common/page-cost.js';
import { median, percentile } from '../../common/stats.js';
import { GLIBC_RETRY_MS } from '../../native-host/src/current-dns/parse.js';
import { shiftInterval } from './interval.js';
import { lookupLayer, missesBySign, type LookupPair } from './lookups.js';
import type { StoredRecord } from '../../common/stored-record.js';
import type { Mode } from '../../common/transports.js';
import { BASELINE_OF, CANDIDATES, isControl, PATH_OF, SCHEME_OF, type Candidate, type Compared, type DotStub, type Scenario, type Side, type ValidationRun, type Visit } from './types.js';

/** One model estimate: the change of onLoad with its bounds (ms). */
export interface Estimate {
  delta: number;
  lower: number;
  upper: number;
}

/** Anything carrying a page record and its replay (a Visit, or a test's stand-in for one). */
export interface VisitLike {
  pageRecord?: PageForCost | undefined;
  records?: readonly StoredRecord[] | undefined;
}

/** The document's own lookup as the browser observed it (Navigation Timing), ms. */
export function documentLookup(page: PageForCost): number {
  const n = pageCostInput(page).navigation;
  return n.domainLookupEnd - n.domainLookupStart;
}

function estimateOf(cells: readonly CellCost[], transport: Candidate, mode: Mode): Estimate | null {
  const cell = cells.find((c) => c.transport === transport && c.mode === mode);
  if (!cell || cell.onLoad.delta === null) return null;
  return { delta: cell.onLoad.delta, lower: cell.onLoad.lower!, upper: cell.onLoad.upper! };
}

/**
 * The lab's browsers resolve Do53 through glibc on a resolv.conf without options (lab/browser-dns.ts isolateDns): the
 * retry timer the host reports there as the person's (CurrentDns.retryMs), which Firefox pays for a lost query.
 */
export const LAB_SYSTEM_RETRY_MS = GLIBC_RETRY_MS;

/** The model's estimate for one Do53 visit, per candidate, in `mode` (null where it could not compare). */
export function predict<V extends VisitLike>(visit: V, mode: Mode = 'cold'): Record<Candidate, Estimate | null> {
  const out = { dot: null, doh: null, doq: null } as Record<Candidate, Estimate | null>;
  if (!visit.pageRecord || !visit.records) return out;
  const cells = measuredPageCost(visit.pageRecord, visit.records, LAB_SYSTEM_RETRY_MS);
  for (const t of CANDIDATES) out[t] = estimateOf(cells, t, mode);
  return out;
}

/** What decides a trace's expected mode beside the visit: the DoT stub run, and the lab resolver's idle limit. */
export interface ExpectedContext {
  dotStub: DotStub;
  serverIdleMs: number;
}

/** The mode the model prices a Do53 visit in for `transport` under `scenario` (expected: its idle time and the holder's lifetime). */
export function modeFor(visit: Pick<Visit, 'browser' | 'pageRecord'>, transport: Candidate, scenario: Scenario, ctx: ExpectedContext): Mode {
  if (scenario !== 'expected') return scenario;
  return expectedMode(visit.pageRecord?.idleBeforeMs, holderOf(transport, visit.browser, ctx.dotStub), ctx.serverIdleMs);
}

/** The document's first byte (Navigation Timing responseStart), ms: every serial lookup (a redirect's legs, the
 * document's) is paid before it. */
export function documentFirstByte(page: PageForCost): number {
  return pageCostInput(page).navigation.responseStart;
}

/** A Do53 visit's prediction in `mode`: the estimate, the document lookup's predicted change, and the serial hosts'
 * (the document and a redirect's earlier legs: what moves the document's first byte). */
export function visitPrediction(visit: VisitLike, transport: Candidate, mode: Mode): { estimate: Estimate | null; document: number | null; serial: number | null } | null {
  if (!visit.pageRecord || !visit.records) return null;
  const cells = measuredPageCost(visit.pageRecord, visit.records, LAB_SYSTEM_RETRY_MS);
  const hosts = cells.find((c) => c.transport === transport && c.mode === mode)?.hosts ?? [];
  const doc = hosts.find((h) => h.reason === 'document')?.delta;
  const serial = hosts.filter((h) => h.reason === 'document' || h.reason === 'redirect').map((h) => h.delta);
  return {
    estimate: estimateOf(cells, transport, mode),
    document: typeof doc === 'number' ? doc : null,
    serial: serial.length && serial.every((d) => typeof d === 'number') ? (serial as number[]).reduce((a, b) => a + b, 0) : null,
  };
}

/**
 * What a row's prediction is made of: every priced Do53 load in each mode of `modes` (with repeats), the modes the
 * candidate loads were in. A trace's candidate loads each have their own gap, so their own mode: pricing the Do53
 * loads in those modes mixes cold and warm as the measured candidate side did, even where the two sides ran a
 * different number of loads (a side stops once its rows are resolved) and so a different share of long gaps.
 */
export function pricedPairs<T>(base: readonly { onLoad: number; byMode: Partial<Record<Mode, T | null>> }[], modes: readonly Mode[]): { onLoad: number; value: T }[] {
  return modes.flatMap((m) => base.flatMap((b) => (b.byMode[m] != null ? [{ onLoad: b.onLoad, value: b.byMode[m]! }] : [])));
}

const sorted = (xs: readonly number[]) => [...xs].sort((a, b) => a - b);
/** The median of `xs` (null when empty). */
export const med = median;

/**
 * The Hodges–Lehmann shift of `b` against `a`: the median of every difference b[j] − a[i]. For onLoads (noisy,
 * sometimes with a slow tail) it estimates the change as robustly as the difference of medians but needs about a
 * third fewer loads for the same interval (its efficiency is ≈ 95 % of the mean's on normal data, the median's 64 %).
 */
export function shift(a: readonly number[], b: readonly number[]): number | null {
  if (!a.length || !b.length) return null;
  return med(b.flatMap((y) => a.map((x) => y - x)));
}

/**
 * The predicted change in the measured change's own terms: the priced Do53 loads, each moved by its own predicted
 * change (`of` picks the point, the lower or the upper bound), shifted against themselves as `shift` does. Where every
 * load has the same prediction this is that prediction exactly; where the loads mix states (a trace: some cold, some
 * warm) it is the shift such a mixture shows, not the median of the loads' predictions.
 */
export function predictedShift(priced: readonly { onLoad: number; estimate: Estimate }[], of: (e: Estimate) => number): number | null {
  return shift(priced.map((x) => x.onLoad), priced.map((x) => x.onLoad + of(x.estimate)));
}

/**
 * The naive rule the model must beat: against Do53, a cold DoT or DoH lookup costs 2 round trips more (TCP and TLS
 * 1.3 before the query), a cold DoQ lookup 1 (QUIC's handshake), a warm one nothing.
 */
export function naiveDelta(transport: Candidate, mode: Mode, rttMs: number): number {
  if (mode === 'warm') return 0;
  return (transport === 'doq' ? 1 : 2) * rttMs;
}

/** The target's tolerance for a measured change: 10 % of it, at least 10 ms. */
export function tolerance(measured: number): number {
  return Math.max(0.1 * Math.abs(measured), 10);
}

/** A measured change of onLoad and whether it is resolved. */
export interface Change {
  measured: number;
  interval: [number, number] | null;
  halfWidth: number | null;
  tolerance: number;
  /** The interval's half-width is within the tolerance. */
  resolved: boolean;
}

/** The shift of `other` against `base` (shift) with its distribution-free 95 % interval; null without loads on both sides. */
export function measuredChange(base: readonly number[], other: readonly number[]): Change | null {
  if (!base.length || !other.length) return null;
  const measured = shift(base, other)!;
  const interval = shiftInterval(base, other);
  const halfWidth = interval ? (interval[1] - interval[0]) / 2 : null;
  const tol = tolerance(measured);
  return { measured, interval, halfWidth, tolerance: tol, resolved: halfWidth !== null && halfWidth <= tol };
}

/** The key of a row (browser × profile × page × transport × scenario). */
export function rowKey(r: { browser: string; profile: string; page: string; transport: string; scenario: string }): string {
  return `${r.browser}|${r.profile}|${r.page}|${r.transport}|${r.scenario}`;
}

/** What the query log says about a set of visits on one side. */
export interface QueryCheck {
  /** Visits with a page record, checked. */
  visits: number;
  /** Of them, those where every name the page needed was asked over the side's own scheme. */
  complete: number;
  /** Other schemes the page's names were asked over in those visits' windows. */
  otherSchemes: string[];
}

/** The names a visit's page needed (the document and every host of its record that is a name). */
export function namesOf(page: PageForCost): string[] {
  return [...new Set([page.host, ...page.hosts.filter((h) => h.kind === 'name').map((h) => h.name)])];
}

/** Checks `visits` of `side` against their query-log windows. */
export function queryCheck(visits: readonly Visit[], side: Side): QueryCheck | null {
  const checked = visits.filter((v) => v.pageRecord && v.asked);
  if (!checked.length) return null;
  const scheme = SCHEME_OF[side];
  const other = new Set<string>();
  let complete = 0;
  for (const v of checked) {
    const names = namesOf(v.pageRecord!);
    if (names.every((n) => Object.keys(v.asked![scheme]?.[n] ?? {}).length > 0)) complete++;
    for (const [s, per] of Object.entries(v.asked!)) if (s !== scheme && names.some((n) => per[n])) other.add(s);
  }
  return { visits: checked.length, complete, otherSchemes: [...other].sort() };
}

/** One row: a browser × profile × page × transport × scenario. */
export interface Row {
  browser: RecordingBrowser;
  profile: string;
  rttMs: number;
  page: string;
  pageKind: 'synthetic' | 'har';
  /** The candidate, or an A/A control (`do53-aa`, `dot-aa`: its true change is 0). */
  transport: Compared;
  /** An A/A control row: its baseline is its own path's series, its prediction 0. */
  control: boolean;
  scenario: Scenario;
  /** Loads per side: the baseline's (Do53, or DoT for the DoT control) under `do53`, the compared side's under `candidate`. */
  loads: { do53: number; candidate: number; failed: number };
  /** onLoad medians [median, p25, p75] per side (ms). */
  onLoad: { do53: [number, number, number]; candidate: [number, number, number] } | null;
  measured: number | null;
  interval: [number, number] | null;
  halfWidth: number | null;
  tolerance: number | null;
  resolved: boolean;
  /** The Do53 visits' predictions as a shift of onLoad (predictedShift: point, lower, upper). */
  predicted: Estimate | null;
  /** predicted − measured. */
  error: number | null;
  within: boolean | null;
  /** The predicted change lies inside the measured change's 95 % interval (calibration; null without both). */
  inside: boolean | null;
  /** The naive rule's prediction (naiveDelta), shifted as the model's is; its error and whether it is within target. */
  naive: { delta: number; error: number | null; within: boolean | null } | null;
  /** The modes priced: the scenario's with the Do53 visits priced in it; in a trace, the candidate loads' own modes with how many loads were in each. */
  modes: Partial<Record<Mode, number>>;
  /** Candidate loads whose side already had a connection to the resolver open as the navigation started (TCP transports). */
  openBefore: { open: number; closed: number } | null;
  /** The document's lookup (Navigation Timing): measured change of the medians, and the model's median. */
  document: { measured: number | null; predicted: number | null };
  /** The document's first byte (Navigation Timing responseStart): measured change of the medians, and the model's
   * median of its serial hosts' changes (the document's lookup and a redirect's legs). */
  firstByte: { measured: number | null; predicted: number | null };
  queries: { do53: QueryCheck | null; candidate: QueryCheck | null };
  /**
   * Per lookup (lookups.ts; Chromium's NetLog, Firefox's MOZ_LOG): names × modes compared, how many of the browser's lookups lie within
   * max(10 %, 5 ms) of the replay's, how many outside it the browser was slower (the replay under-predicts) and faster
   * (it over-predicts), and the three furthest outside; null where the loads carry no browser lookups.
   */
  lookups: { n: number; within: number; slower: number; faster: number; worst: LookupPair[] } | null;
  /**
   * An expected row split by the state each candidate load had (its mode, from its own gap): per state, its loads
   * against every baseline load, the measured change and interval, the prediction for those loads, and whether it lies
   * inside. Absent on cold and warm rows and on controls.
   */
  byState?: Partial<Record<Mode, StateSplit>>;
}

/** One state's share of an expected row (Row.byState). */
export interface StateSplit {
  loads: number;
  measured: number | null;
  interval: [number, number] | null;
  predicted: number | null;
  inside: boolean | null;
}

const quartiles = (xs: readonly number[]): [number, number, number] => [percentile(sorted(xs), 50)!, percentile(sorted(xs), 25)!, percentile(sorted(xs), 75)!];

/** What a row's prediction side is: the model's, the naive rule's, the modes priced, the serial hosts' predictions. */
interface Priced {
  predicted: Estimate | null;
  naive: number | null;
  modes: Partial<Record<Mode, number>>;
  document: number | null;
  firstByte: number | null;
}

/** An A/A control's: every prediction 0 (the same path against itself). */
function controlPrediction(base: readonly number[]): Priced {
  const zero = base.length ? 0 : null;
  return { predicted: zero === null ? null : { delta: 0, lower: 0, upper: 0 }, naive: zero, modes: {}, document: zero, firstByte: zero };
}

/** A candidate's: the model's prediction from the priced Do53 loads, and the naive rule's on the same loads. */
function candidatePrediction(base: readonly Visit[], cand: readonly Visit[], transport: Candidate, scenario: Scenario, ctx: ExpectedContext, rttMs: number): Priced {
  // The modes priced: in a trace each candidate load's own (from its own gap), else the scenario's.
  const candModes = scenario === 'expected' ? cand.map((v) => modeFor(v, transport, scenario, ctx)) : [scenario];
  const byVisit = base.map((v) => {
    const byMode: Partial<Record<Mode, ReturnType<typeof visitPrediction>>> = {};
    for (const m of new Set(candModes)) byMode[m] = visitPrediction(v, transport, m);
    return { onLoad: v.onLoad!, byMode };
  });
  const pairs = pricedPairs(byVisit, candModes);
  const withEstimate = pairs.flatMap((x) => (x.value.estimate ? [{ onLoad: x.onLoad, estimate: x.value.estimate }] : []));
  const predictedOf = (f: (e: Estimate) => number) => predictedShift(withEstimate, f)!;
  const predicted = withEstimate.length ? { delta: predictedOf((e) => e.delta), lower: predictedOf((e) => e.lower), upper: predictedOf((e) => e.upper) } : null;
  // The naive rule on every Do53 load (it needs no replay), in the same modes, shifted the same way.
  const naiveByMode = (): Partial<Record<Mode, number>> => Object.fromEntries(candModes.map((m) => [m, naiveDelta(transport, m, rttMs)]));
  const naivePairs = pricedPairs(base.map((v) => ({ onLoad: v.onLoad!, byMode: naiveByMode() })), candModes);
  const naive = naivePairs.length ? shift(naivePairs.map((x) => x.onLoad), naivePairs.map((x) => x.onLoad + x.value)) : null;
  const modes: Partial<Record<Mode, number>> = {};
  const pricedVisits = byVisit.filter((b) => Object.values(b.byMode).some((x) => x?.estimate)).length;
  if (pricedVisits) {
    if (scenario === 'expected') for (const m of candModes) modes[m] = (modes[m] ?? 0) + 1;
    else modes[scenario] = pricedVisits;
  }
  const docPred = pairs.map((x) => x.value.document).filter((x): x is number => x !== null);
  const fbPred = pairs.map((x) => x.value.serial).filter((x): x is number => x !== null);
  return { predicted, naive, modes, document: docPred.length ? med(docPred) : null, firstByte: fbPred.length ? med(fbPred) : null };
}

/** An expected row's candidate loads grouped by the state each had, each group against every baseline load. */
function byState(base: readonly Visit[], cand: readonly Visit[], a: readonly number[], transport: Candidate, ctx: ExpectedContext, rttMs: number): Partial<Record<Mode, StateSplit>> {
  const usable = (vs: readonly Visit[]) => vs.filter((v) => v.onLoad !== null && !v.error);
  const out: Partial<Record<Mode, StateSplit>> = {};
  for (const mode of ['cold', 'warm'] as const) {
    const group = usable(cand).filter((v) => modeFor(v, transport, 'expected', ctx) === mode);
    if (!group.length) continue;
    const change = measuredChange(a, group.map((v) => v.onLoad!));
    const predicted = candidatePrediction(usable(base), group, transport, 'expected', ctx, rttMs).predicted?.delta ?? null;
    out[mode] = {
      loads: group.length, measured: change?.measured ?? null, interval: change?.interval ?? null, predicted,
      inside: predicted !== null && change?.interval ? change.interval[0] <= predicted && predicted <= change.interval[1] : null,
    };
  }
  return out;
}

/** The rows of a run, with the current model. */
export function analyse(run: ValidationRun): Row[] {
  const rows: Row[] = [];
  for (const p of run.profiles) {
    const ctx: ExpectedContext = { dotStub: run.options.dotStub, serverIdleMs: p.serverIdleS * 1000 };
    for (const page of p.pages) {
      for (const browser of run.options.browsers) {
        for (const scenario of run.options.scenarios) {
          const of = (side: Side) => p.visits.filter((v) => v.browser === browser && v.page === page.id && v.scenario === scenario && v.transport === side);
          const ok = (vs: Visit[]) => vs.filter((v) => v.onLoad !== null && !v.error);
          for (const transport of [...run.options.transports, ...(run.options.controls ?? [])] as Compared[]) {
            const base = of(BASELINE_OF[transport]);
            const cand = of(transport);
            if (!base.length || !cand.length) continue;
            const [a, b] = [ok(base).map((v) => v.onLoad!), ok(cand).map((v) => v.onLoad!)];
            const change = measuredChange(a, b);
            const docs = (vs: Visit[]) => ok(vs).filter((v) => v.pageRecord).map((v) => documentLookup(v.pageRecord!));
            const firstBytes = (vs: Visit[]) => ok(vs).filter((v) => v.pageRecord).map((v) => documentFirstByte(v.pageRecord!));
            const [docA, docB, fbA, fbB] = [docs(base), docs(cand), firstBytes(base), firstBytes(cand)];
            // An A/A control's true change is 0, and so is every prediction of it, the naive rule's too.
            const priced = isControl(transport) ? controlPrediction(a) : candidatePrediction(base.filter((v) => v.onLoad !== null && !v.error), cand.filter((v) => v.onLoad !== null && !v.error), transport, scenario, ctx, p.profile.rttMs);
            const { predicted } = priced;
            const error = predicted && change ? predicted.delta - change.measured : null;
            const naiveError = priced.naive !== null && change ? priced.naive - change.measured : null;
            const watched = ok(cand).filter((v) => v.openBefore !== null);
            const path = PATH_OF[transport];
            const layer = lookupLayer(ok(of('do53')), ok(cand), transport, (v) => (path === 'do53' ? (scenario === 'expected' ? 'cold' : scenario) : modeFor(v, path, scenario, ctx)));
            const worst = layer ? layer.pairs.filter((x) => !x.within).sort((x, y) => Math.abs(y.browser - y.replay) - Math.abs(x.browser - x.replay)).slice(0, 3) : [];
            rows.push({
              browser, profile: p.profile.name, rttMs: p.profile.rttMs, page: page.id, pageKind: page.kind, transport, control: isControl(transport), scenario,
              loads: { do53: a.length, candidate: b.length, failed: base.length - a.length + cand.length - b.length },
              onLoad: a.length && b.length ? { do53: quartiles(a), candidate: quartiles(b) } : null,
              measured: change?.measured ?? null, interval: change?.interval ?? null, halfWidth: change?.halfWidth ?? null,
              tolerance: change?.tolerance ?? null, resolved: change?.resolved ?? false,
              predicted, error, within: error !== null && change ? Math.abs(error) <= change.tolerance : null,
              inside: predicted && change?.interval ? change.interval[0] <= predicted.delta && predicted.delta <= change.interval[1] : null,
              naive: priced.naive === null ? null : { delta: priced.naive, error: naiveError, within: naiveError !== null && change ? Math.abs(naiveError) <= change.tolerance : null },
              modes: priced.modes,
              openBefore: watched.length ? { open: watched.filter((v) => v.openBefore! > 0).length, closed: watched.filter((v) => v.openBefore === 0).length } : null,
              document: { measured: docA.length && docB.length ? med(docB)! - med(docA)! : null, predicted: priced.document },
              firstByte: { measured: fbA.length && fbB.length ? med(fbB)! - med(fbA)! : null, predicted: priced.firstByte },
              queries: { do53: queryCheck(base, BASELINE_OF[transport]), candidate: queryCheck(cand, transport) },
              lookups: layer ? { n: layer.n, within: layer.within, ...missesBySign(layer.pairs), worst } : null,
              ...(scenario === 'expected' && !isControl(transport) ? { byState: byState(base, cand, a, transport, ctx, p.profile.rttMs) } : {}),
            });
          }
        }
      }
    }
  }
  return rows;
}
