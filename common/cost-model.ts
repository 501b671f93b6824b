// Cost model v1: what switching DNS transport and resolver would do to one page, from the page as the browser
// loaded it and the replay records of its hosts. Pure: no DOM, no node: imports; every input is an argument.
//
// Inputs. A page record: Navigation Timing (ms since navigation start), the onLoad time, and every host the page
// needed with the time it first needed it and, where Resource Timing exposed it (same origin or Timing-Allow-Origin),
// the lookup the browser observed. And replay records (schedule `replay`): every host × qtype re-resolved at its
// offset, per resolver × transport × mode, over repeats.
//
// Definitions.
// - A host's lookup time in one replay is from its scheduled offset until its LAST record type arrived (a browser
//   waits for A and AAAA together), so waiting for a connection and head-of-line blocking count. Per cell: the
//   median over repeats. A host resolves in a replay when at least one of its record types answered.
// - Baseline, per host: the browser's observed lookup where Resource Timing exposed it (the document's from
//   `domainLookupEnd − domainLookupStart`); an observed lookup under BROWSER_CACHE_MS means the browser's own cache
//   (or a reused connection) served it, which it would under any transport, so the host's difference is 0.
//   Elsewhere: the baseline replay (default the `system` resolver's Do53 over UDP), measured the same way.
// - Critical path: the document's host; hosts whose requests were render-blocking (as the extension reports from
//   Resource Timing `renderBlockingStatus`); and hosts first needed before the first paint, else before
//   DOMContentLoaded, else (neither known) before onLoad — the last fallback makes every host critical, the
//   conservative choice. Hosts first needed at or after onLoad cannot move it and are left out of the change.
//
// Model (assumptions, stated plainly).
// - The document's lookup is serial: nothing of the page starts before it, so its difference d_doc moves onLoad
//   one for one.
// - Other critical lookups run in parallel with one another after it: onLoad moves by how much later the last of
//   them completes, max(c_h) − max(b_h) over completion times (first needed + lookup), not by the sum; so a slower
//   lookup needed early can hide behind one needed later. The other extreme, a chain where each gates the next
//   (the sum of their differences), is the other end of the bounds.
// - Off-path lookups have slack: onLoad came after them, so each had until onLoad to finish. They move onLoad only
//   by how much later than onLoad (after the shifts above) they now finish, onLoad being the last event they are
//   known to overlap; as a fetch still follows the lookup, this is the least they move it. Bounds: from 0 (or their
//   gain, if faster) to their full parallel shift max(c_h) − max(b_h) (no slack: the lookup was what onLoad waited
//   for). The lower bound is never below what the slack allows: onLoad cannot come before a lookup it waits for.
// - Lookups do not change anything else the page does (connections, caching, the order of requests). Hosts that
//   never resolved over a transport are left out of the change and listed; if one is critical, the verdict is
//   `fails`: the page would not load as it did.
// - |Δ| < 30 ms is "indistinguishable" (one frame at 30 Hz, after Hounsel et al.).
// The model is v1: a later issue validates it against pages loaded with each transport in a real browser.
import { modelBytes, type DotOverhead, type ModelBytes } from './bytes-model.js';
import type { ExchangeRecord, Pair } from './record.js';
import { percentile } from './stats.js';
import type { Mode, TransportId } from './transports.js';

/** Differences smaller than this are "indistinguishable" (one frame at 30 Hz — Hounsel et al.). */
export const INDISTINGUISHABLE_MS = 30;
/** An observed lookup shorter than this was served by the browser's cache or a reused connection. */
export const BROWSER_CACHE_MS = 1;

/** The Navigation Timing fields the model reads (ms since navigation start). */
export interface NavigationInput {
  /** The document's own lookup: `domainLookupEnd − domainLookupStart` is its observed lookup time. */
  domainLookupStart: number;
  domainLookupEnd: number;
  /** Carried for validation against real loads; v1 does not use them. */
  connectStart: number;
  responseStart: number;
  loadEventEnd: number;
  /** First paint (Paint Timing), when the browser exposes it: the critical-path mark. */
  firstPaint?: number | null;
  /** The critical-path mark when there is no first paint. */
  domContentLoadedEventEnd?: number | null;
}

/** A host the page needed. */
export interface PageHostInput {
  name: string;
  /** When the page first needed the host (ms since navigation start); replay's `at`. */
  firstNeededAt: number;
  /** The lookup the browser observed (Resource Timing), where exposed; null or absent otherwise. */
  observedLookupMs?: number | null;
  /** True when a request to this host was render-blocking (Resource Timing `renderBlockingStatus`). */
  renderBlocking?: boolean;
}

/** A page as the browser loaded it. */
export interface PageInput {
  /** The document's host; its observed lookup comes from Navigation Timing. */
  documentHost: string;
  navigation: NavigationInput;
  /** onLoad time (ms since navigation start); `navigation.loadEventEnd` when absent. */
  onLoad?: number;
  hosts: PageHostInput[];
}

/** The fields of a replay record the model reads. */
export type ReplayRecordInput = Pick<ExchangeRecord, 'host' | 'qtype' | 'resolver' | 'transport' | 'mode' | 'repeat' | 'ok' | 'bytes' | 'packets' | 'timings' | 'replay'>;

/** Which replay is the baseline where the browser exposed no lookup, and which DoT overhead the bytes model uses. */
export interface CostOptions {
  baseline?: { resolver: string; transport: TransportId };
  dotOverhead?: DotOverhead;
}

/** Why a host is, or is not, on the critical path. */
export type CriticalReason = 'document' | 'render-blocking' | 'before-first-paint' | 'before-dom-content-loaded' | 'before-onload' | 'off-path' | 'after-onload';

/** One host's part in a cell's estimate. */
export interface HostCost {
  name: string;
  firstNeededAt: number;
  critical: boolean;
  reason: CriticalReason;
  /** Median lookup over the candidate's repeats (ms from the scheduled offset); null when it never resolved. */
  lookup: number | null;
  /** Baseline lookup; null when the browser's cache served it (`cache`) or nothing is known (`none`). */
  baseline: number | null;
  baselineSource: 'observed' | 'cache' | 'replay' | 'none';
  /** lookup − baseline (0 for `cache`); null when either is unknown. */
  delta: number | null;
  failed: number;
  total: number;
}

/** The cost of one page under one resolver × transport × mode. */
export interface CellCost {
  resolver: string;
  transport: TransportId;
  mode: Mode;
  /** Replays (repeats) the cell had. */
  repeats: number;
  /** Estimated change of onLoad in ms: point and bounds; null when no host could be compared. */
  onLoad: { delta: number | null; lower: number | null; upper: number | null; relative: number | null };
  verdict: 'indistinguishable' | 'slower' | 'faster' | 'fails' | 'unknown';
  /**
   * Böttger's cumulative view: the sum of the hosts' lookup times without parallelism, candidate and baseline both
   * replayed, over the `hosts` both resolved (every resolved host when there is no baseline replay).
   */
  dnsTime: { hosts: number; candidate: number | null; baseline: number | null; delta: number | null };
  /** Median per replay of the page, counted; beside the papers' model of the bytes a client sends. */
  bytes: { sent: number | null; received: number | null; packets: Pair | null; queries: number; model: ModelBytes | null; modelAlternative: ModelBytes | null };
  failures: { failed: number; total: number; probability: number | null };
  /** Hosts that never resolved over this cell. */
  unresolved: string[];
  hosts: HostCost[];
}

const median = (xs: readonly number[]): number | null => percentile([...xs].sort((a, b) => a - b), 50);

/** Where the critical path ends for the model: first paint, else DOMContentLoaded, else onLoad; and which one. */
export function criticalMark(page: PageInput): { at: number; reason: CriticalReason } {
  const n = page.navigation;
  if (n.firstPaint != null) return { at: n.firstPaint, reason: 'before-first-paint' };
  if (n.domContentLoadedEventEnd != null) return { at: n.domContentLoadedEventEnd, reason: 'before-dom-content-loaded' };
  return { at: page.onLoad ?? n.loadEventEnd, reason: 'before-onload' };
}

/** Classifies a host: on the critical path (and why) or not. */
export function classifyHost(page: PageInput, host: PageHostInput): { critical: boolean; reason: CriticalReason } {
  const onLoad = page.onLoad ?? page.navigation.loadEventEnd;
  if (host.name === page.documentHost) return { critical: true, reason: 'document' };
  if (host.firstNeededAt >= onLoad) return { critical: false, reason: 'after-onload' };
  if (host.renderBlocking) return { critical: true, reason: 'render-blocking' };
  const mark = criticalMark(page);
  if (host.firstNeededAt < mark.at) return { critical: true, reason: mark.reason };
  return { critical: false, reason: 'off-path' };
}

/** The page's hosts with the document's own from Navigation Timing (its values win over a duplicate entry). */
function hostsOf(page: PageInput): PageHostInput[] {
  const n = page.navigation;
  const doc: PageHostInput = { name: page.documentHost, firstNeededAt: n.domainLookupStart, observedLookupMs: n.domainLookupEnd - n.domainLookupStart };
  return [doc, ...page.hosts.filter((h) => h.name !== page.documentHost)];
}

/** Per host of one cell: lookup per repeat (null when it did not resolve), failures and totals. */
function lookups(records: readonly ReplayRecordInput[]): Map<string, { perRepeat: Map<number, number | null>; failed: number; total: number }> {
  const out = new Map<string, { perRepeat: Map<number, number | null>; failed: number; total: number; ok: Map<number, boolean> }>();
  for (const r of records) {
    // From the scheduled offset to the answer; a sequential record (no replay info) counts its own duration.
    const l = r.replay ? r.replay.endedAt - r.replay.pageStartedAt - r.replay.scheduledAt : r.timings.total;
    const h = out.get(r.host) ?? { perRepeat: new Map(), failed: 0, total: 0, ok: new Map() };
    out.set(r.host, h);
    h.total += 1;
    if (!r.ok) h.failed += 1;
    h.perRepeat.set(r.repeat, Math.max(h.perRepeat.get(r.repeat) ?? -Infinity, l));
    h.ok.set(r.repeat, (h.ok.get(r.repeat) ?? false) || r.ok);
  }
  for (const h of out.values()) for (const [repeat, ok] of h.ok) if (!ok) h.perRepeat.set(repeat, null);
  return out;
}

function medianLookup(perRepeat: Map<number, number | null> | undefined): number | null {
  const xs = [...(perRepeat?.values() ?? [])].filter((x): x is number => x !== null);
  return xs.length ? median(xs) : null;
}

const cellKey = (resolver: string, transport: string, mode: string) => `${resolver}|${transport}|${mode}`;

/**
 * The cost of `page` under every resolver × transport × mode the records cover (the baseline's own cell included,
 * where its difference is 0 by construction for hosts without an observed lookup).
 */
export function pageCost(page: PageInput, records: readonly ReplayRecordInput[], options: CostOptions = {}): CellCost[] {
  const baselineSpec = options.baseline ?? { resolver: 'system', transport: 'udp' };
  const cells = new Map<string, ReplayRecordInput[]>();
  for (const r of records) {
    const key = cellKey(r.resolver, r.transport, r.mode);
    const list = cells.get(key);
    if (list) list.push(r);
    else cells.set(key, [r]);
  }
  const baselineFor = (mode: Mode) =>
    cells.get(cellKey(baselineSpec.resolver, baselineSpec.transport, mode)) ??
    [...cells.entries()].find(([k]) => k.startsWith(`${baselineSpec.resolver}|${baselineSpec.transport}|`))?.[1] ??
    null;
  return [...cells.values()].map((list) => {
    const first = list[0]!;
    const base = baselineFor(first.mode);
    return cellCost(page, list, base ? lookups(base) : null, options.dotOverhead ?? 'formula');
  });
}

function cellCost(
  page: PageInput,
  records: readonly ReplayRecordInput[],
  baseline: ReturnType<typeof lookups> | null,
  dotOverhead: DotOverhead,
): CellCost {
  const first = records[0]!;
  const onLoad = page.onLoad ?? page.navigation.loadEventEnd;
  const measured = lookups(records);
  const hosts: HostCost[] = hostsOf(page).map((h) => {
    const m = measured.get(h.name);
    const lookup = medianLookup(m?.perRepeat);
    const { critical, reason } = classifyHost(page, h);
    let baselineMs: number | null = null;
    let source: HostCost['baselineSource'] = 'none';
    if (h.observedLookupMs != null && h.observedLookupMs < BROWSER_CACHE_MS) source = 'cache';
    else if (h.observedLookupMs != null) [baselineMs, source] = [h.observedLookupMs, 'observed'];
    else {
      baselineMs = medianLookup(baseline?.get(h.name)?.perRepeat);
      if (baselineMs !== null) source = 'replay';
    }
    const delta = source === 'cache' ? 0 : lookup !== null && baselineMs !== null ? lookup - baselineMs : null;
    return { name: h.name, firstNeededAt: h.firstNeededAt, critical, reason, lookup, baseline: baselineMs, baselineSource: source, delta, failed: m?.failed ?? 0, total: m?.total ?? 0 };
  });

  // Completion times (first needed + lookup) under the candidate (c) and the baseline (b).
  const usable = hosts.filter((h) => h.delta !== null && h.reason !== 'after-onload');
  const b = (h: HostCost) => h.firstNeededAt + (h.baselineSource === 'cache' ? 0 : h.baseline!);
  const c = (h: HostCost) => b(h) + h.delta!;
  const maxOf = (xs: number[]) => (xs.length ? Math.max(...xs) : null);
  const doc = usable.find((h) => h.reason === 'document');
  const others = usable.filter((h) => h.critical && h.reason !== 'document');
  const off = usable.filter((h) => !h.critical);
  let point: number | null = null;
  let lower: number | null = null;
  let upper: number | null = null;
  if (usable.length > 0) {
    const dDoc = doc?.delta ?? 0;
    const par = others.length ? maxOf(others.map(c))! - maxOf(others.map(b))! : 0;
    const chain = others.reduce((s, h) => s + h.delta!, 0);
    let late = 0;
    let floor = dDoc;
    let shiftOff = 0;
    if (off.length) {
      const offC = maxOf(off.map(c))!;
      shiftOff = offC - maxOf(off.map(b))!;
      // Everything after the document shifts with it; onLoad has already moved by the critical path's change.
      late = Math.max(0, offC + dDoc - (onLoad + dDoc + par));
      // However the critical path went, onLoad cannot come before the last lookup it waits for.
      floor = dDoc + Math.max(0, offC - onLoad);
    }
    point = dDoc + par + late;
    lower = Math.min(point, Math.max(dDoc + Math.min(par, chain) + Math.min(0, shiftOff), floor));
    upper = Math.max(point, dDoc + Math.max(par, chain) + Math.max(0, shiftOff));
  }

  const unresolved = hosts.filter((h) => h.total > 0 && h.lookup === null).map((h) => h.name);
  const criticalUnresolved = hosts.some((h) => h.critical && h.total > 0 && h.lookup === null);
  const verdict: CellCost['verdict'] = criticalUnresolved
    ? 'fails'
    : point === null
      ? 'unknown'
      : Math.abs(point) < INDISTINGUISHABLE_MS
        ? 'indistinguishable'
        : point > 0
          ? 'slower'
          : 'faster';

  // Böttger's cumulative view, both sides replayed the same way, over the hosts both resolved.
  const pairs = hosts
    .map((h) => ({ c: h.lookup, b: baseline ? medianLookup(baseline.get(h.name)?.perRepeat) : null }))
    .filter((x) => x.c !== null && (!baseline || x.b !== null));
  const candidateSum = pairs.length ? pairs.reduce((s, x) => s + x.c!, 0) : null;
  const baselineSum = baseline && pairs.length ? pairs.reduce((s, x) => s + x.b!, 0) : null;

  // Bytes per replay of the page: sums per repeat, median over repeats.
  const perRepeat = new Map<number, { sent: number; received: number; ps: number; pr: number; n: number }>();
  for (const r of records) {
    const t = perRepeat.get(r.repeat) ?? { sent: 0, received: 0, ps: 0, pr: 0, n: 0 };
    perRepeat.set(r.repeat, t);
    t.sent += r.bytes.sent;
    t.received += r.bytes.received;
    t.ps += r.packets.sent;
    t.pr += r.packets.received;
    t.n += 1;
  }
  const reps = [...perRepeat.values()];
  const queries = median(reps.map((t) => t.n)) ?? 0;
  const failed = records.filter((r) => !r.ok).length;
  const ps = median(reps.map((t) => t.ps));
  const pr = median(reps.map((t) => t.pr));

  return {
    resolver: first.resolver,
    transport: first.transport,
    mode: first.mode,
    repeats: perRepeat.size,
    onLoad: { delta: point, lower, upper, relative: point !== null && onLoad > 0 ? point / onLoad : null },
    verdict,
    dnsTime: { hosts: pairs.length, candidate: candidateSum, baseline: baselineSum, delta: candidateSum !== null && baselineSum !== null ? candidateSum - baselineSum : null },
    bytes: {
      sent: median(reps.map((t) => t.sent)),
      received: median(reps.map((t) => t.received)),
      packets: ps !== null && pr !== null ? { sent: ps, received: pr } : null,
      queries,
      model: modelBytes(first.transport, queries, dotOverhead),
      modelAlternative: first.transport === 'dot' ? modelBytes('dot', queries, dotOverhead === 'formula' ? 'text' : 'formula') : null,
    },
    failures: { failed, total: records.length, probability: records.length ? failed / records.length : null },
    unresolved,
    hosts,
  };
}
