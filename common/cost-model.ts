// Cost model v1: what switching DNS transport and resolver would do to one page, from the page as the browser
// loaded it and the replay records of its hosts. Pure: no DOM, no node: imports; every input is an argument.
// The specification (inputs, definitions, the model's assumptions and what it cannot see) is docs/cost-model.md.
import type { RecordingBrowser } from './browser-queries.js';
import { modelBytes, type DotOverhead, type ModelBytes } from './bytes-model.js';
import type { PageHost } from './page-record.js';
import type { Pair } from './record.js';
import type { StoredRecord } from './stored-record.js';
import { clientCpuMs, DOH_TRANSPORTS } from './client-costs.js';
import { BROWSER_CACHE_MS, fetchedMs, likelyLostInLoad, lookups, medianLookup, RETRANSMISSION_MS, UDP_RETRY_MS } from './replay-lookups.js';
import { median } from './stats.js';
import type { Mode, TransportId } from './transports.js';

/** Differences smaller than this are "indistinguishable" (one frame at 30 Hz — Hounsel et al.). */
export const INDISTINGUISHABLE_MS = 30;

/** The Navigation Timing fields the model reads (ms since navigation start). */
export interface NavigationInput {
  /** The document's own lookup: `domainLookupEnd − domainLookupStart` is its observed lookup time. */
  domainLookupStart: number;
  domainLookupEnd: number;
  /** Carried for validation against real loads; v1 does not use them. */
  connectStart: number;
  responseStart: number;
  loadEventEnd: number;
  /**
   * The navigation was redirected (Navigation Timing's redirectEnd > 0). Its final request's lookup then reads 0 when
   * the first hop already looked the host up (http → https on the same host): that lookup was made, serially, at the
   * first hop — not served by the cache — so the document's zero is not taken as a cache hit.
   */
  redirected?: boolean;
  /** First paint (Paint Timing), when the browser exposes it: the critical-path mark. */
  firstPaint?: number | null;
  /** The critical-path mark when there is no first paint. */
  domContentLoadedEventEnd?: number | null;
}

/**
 * A host the page needed: the page record's host (its name, when it was first needed and when its last response before
 * onLoad ended: a lookup delays its host's fetch, so that end is what it can move; absent, first needed + lookup) with
 * what pageCostInput reads from the rest of the record.
 */
export interface PageHostInput extends Pick<PageHost, 'name' | 'firstNeededMs'>, Partial<Pick<PageHost, 'completedMs'>> {
  /** The lookup the browser observed (Resource Timing), where exposed; null or absent otherwise. */
  observedLookupMs?: number | null;
  /** True when a request to this host was render-blocking (Resource Timing `renderBlockingStatus`). */
  renderBlocking?: boolean;
  /** An earlier leg of the page's redirected navigation (its host is not the document's): serial, as the document. */
  navigationLeg?: boolean;
  /**
   * Every request to the host fetched a leaf (an image, a font, media, a beacon: LEAF_TYPES): nothing it served can
   * have named another host, so no host was discovered through it.
   */
  leaf?: boolean;
}

/** A page as the browser loaded it. */
export interface PageInput {
  /** The browser that loaded it: how long it waits for a host's record types beyond its addresses (chromiumHttpsWait). */
  browser?: RecordingBrowser | null;
  /** The document's host; its observed lookup comes from Navigation Timing. */
  documentHost: string;
  /** The document was fetched over http (Firefox's TRR then asks its HTTPS record before its addresses). */
  documentHttp?: boolean;
  navigation: NavigationInput;
  /** onLoad time (ms since navigation start); `navigation.loadEventEnd` when absent. */
  onLoad?: number;
  hosts: PageHostInput[];
}

/** Which replay is the baseline, which DoT overhead the bytes model uses, and the stub's UDP retransmission timeout. */
export interface CostOptions {
  baseline?: { resolver: string; transport: TransportId };
  dotOverhead?: DotOverhead;
  /** After how long a browser's stub asks again when a Do53 query over UDP got no answer (default UDP_RETRY_MS). */
  udpRetryMs?: number;
}

export { BROWSER_CACHE_MS, chromiumHttpsWait, RETRANSMISSION_MS, sequentialHttpsMs, UDP_RETRY_MS, udpRetryOf } from './replay-lookups.js';

/** Why a host is, or is not, on the critical path. */
export type CriticalReason = 'document' | 'redirect' | 'render-blocking' | 'before-first-paint' | 'before-dom-content-loaded' | 'before-onload' | 'off-path' | 'after-onload';

/** One host's part in a cell's estimate. */
export interface HostCost extends Pick<PageHost, 'name' | 'firstNeededMs' | 'completedMs'> {
  critical: boolean;
  reason: CriticalReason;
  /** Median lookup over the candidate's repeats (ms from the scheduled offset); null when it never resolved. */
  lookup: number | null;
  /** Baseline lookup; null when the browser's cache served it (`cache`) or nothing is known (`none`). */
  baseline: number | null;
  baselineSource: 'observed' | 'cache' | 'replay' | 'none';
  /** The lookup the browser observed (Resource Timing / Navigation Timing), where exposed: the page's own timeline. */
  observed: number | null;
  /**
   * lookup − baseline (0 for `cache`); null when either is unknown. The lookup less any time it waited in the replay
   * for the connection the document's lookup was opening, up to the document's own slowdown (see cellCost).
   */
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
  if (host.navigationLeg) return { critical: true, reason: 'redirect' };
  if (host.firstNeededMs >= onLoad) return { critical: false, reason: 'after-onload' };
  if (host.renderBlocking) return { critical: true, reason: 'render-blocking' };
  // A leaf (images, fonts) blocks neither the first paint nor another host: onLoad waits for it as for any off-path one.
  if (host.leaf === true) return { critical: false, reason: 'off-path' };
  const mark = criticalMark(page);
  if (host.firstNeededMs < mark.at) return { critical: true, reason: mark.reason };
  return { critical: false, reason: 'off-path' };
}

/** The page's hosts with the document's own from Navigation Timing (its values win over a duplicate entry). */
function hostsOf(page: PageInput): PageHostInput[] {
  const n = page.navigation;
  const observed = n.domainLookupEnd - n.domainLookupStart;
  const doc: PageHostInput = { name: page.documentHost, firstNeededMs: n.domainLookupStart, observedLookupMs: n.redirected && observed < BROWSER_CACHE_MS ? null : observed };
  return [doc, ...page.hosts.filter((h) => h.name !== page.documentHost)];
}

/**
 * The host whose lookup, in `records`' cells, has one more query round trip in front of it: Firefox resolving an
 * http document through its TRR asks the document's HTTPS record first and its addresses only after that answer
 * (whether the navigation is upgraded, or uses ECH, depends on it). In Navigation Timing the first round trip sits
 * before domainLookupStart (bench/results/validation-fiber.md: lookup start 20–35 ms after fetchStart on fiber, warm;
 * Do53 1–12 ms). Over its own resolver it asks no HTTPS record for an http document.
 */
export function sequentialHttpsHost(page: Pick<PageInput, 'browser' | 'documentHttp' | 'documentHost'>, transport: string | undefined): string | null {
  return page.browser === 'firefox' && page.documentHttp === true && DOH_TRANSPORTS.has(transport ?? '') ? page.documentHost : null;
}

/** How many records each repeat of a replay holds (one number per repeat). */
function countsPerRepeat(records: readonly StoredRecord[]): number[] {
  const n = new Map<number, number>();
  for (const r of records) n.set(r.repeat, (n.get(r.repeat) ?? 0) + 1);
  return [...n.values()];
}

const cellKey = (resolver: string, transport: string, mode: string) => `${resolver}|${transport}|${mode}`;

/**
 * The cost of `page` under every resolver × transport × mode the records cover (the baseline's own cell included,
 * where its difference is 0 by construction for hosts without an observed lookup).
 */
export function pageCost(page: PageInput, records: readonly StoredRecord[], options: CostOptions = {}): CellCost[] {
  const baselineSpec = options.baseline ?? { resolver: 'system', transport: 'udp' };
  const cells = new Map<string, StoredRecord[]>();
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
    const retry = options.udpRetryMs ?? UDP_RETRY_MS;
    return cellCost(page, list, base, base ? lookups(base, retry, page.browser ?? null, sequentialHttpsHost(page, base[0]?.transport), page.documentHost) : null, options.dotOverhead ?? 'formula', retry);
  });
}

function cellCost(
  page: PageInput,
  records: readonly StoredRecord[],
  baseRecords: readonly StoredRecord[] | null,
  baseline: ReturnType<typeof lookups> | null,
  dotOverhead: DotOverhead,
  udpRetryMs: number,
): CellCost {
  const first = records[0]!;
  const onLoad = page.onLoad ?? page.navigation.loadEventEnd;
  const measured = lookups(records, udpRetryMs, page.browser ?? null, sequentialHttpsHost(page, records[0]?.transport), page.documentHost);
  const lostInLoad = likelyLostInLoad(hostsOf(page), baseRecords, baseline, udpRetryMs);
  const costOf = (h: PageHostInput, credit: number): HostCost => {
    const m = measured.get(h.name);
    // `lookup` is the replay as measured; the difference uses it less any wait the document's slowdown absorbs.
    const lookup = medianLookup(m);
    const credited = medianLookup(m, credit);
    const { critical, reason } = classifyHost(page, h);
    let baselineMs: number | null = null;
    let source: HostCost['baselineSource'] = 'none';
    const observed = h.observedLookupMs ?? null;
    // The difference is taken between two replays, measured the same way, wherever the baseline was replayed: the
    // browser's own lookup carries its resolver's overhead (IPC, its stub, its scheduling), which it would carry
    // over any transport, so candidate replay − observed would count that overhead as a cost of the baseline.
    const asReplayed = medianLookup(baseline?.get(h.name), credit);
    // An unseen lookup cannot have outlasted its host's fetch: where the replay waited for a retransmission and the
    // host's response, completed sooner, shows the load did not, the replay's lookup counts as if nothing was lost.
    const fetched = fetchedMs(h);
    const lostInReplayOnly = observed === null && fetched !== null && asReplayed !== null && asReplayed - fetched >= RETRANSMISSION_MS;
    const clean = medianLookup(baseline?.get(h.name), credit, true);
    // And where the load most likely lost one itself (likelyLostInLoad), the baseline waited for its retry.
    const replayed = lostInLoad.has(h.name) && clean !== null ? clean + udpRetryMs : lostInReplayOnly ? clean : asReplayed;
    // Except where one of the two waited for a retransmission the other did not: the loss was the load's own.
    if (observed !== null && observed < BROWSER_CACHE_MS) source = 'cache';
    else if (replayed !== null && (observed === null || Math.abs(observed - replayed) < RETRANSMISSION_MS)) [baselineMs, source] = [replayed, 'replay'];
    else if (observed !== null) [baselineMs, source] = [observed, 'observed'];
    const delta = source === 'cache' ? 0 : credited !== null && baselineMs !== null ? credited - baselineMs : null;
    return { name: h.name, firstNeededMs: h.firstNeededMs, completedMs: h.completedMs ?? null, critical, reason, lookup, baseline: baselineMs, baselineSource: source, observed, delta, failed: m?.failed ?? 0, total: m?.total ?? 0 };
  };
  // The replay schedules every host at its offset on the baseline's timeline, but under the candidate nothing after
  // the document starts before the document's (slower) lookup ends: a lookup that waited in the replay for the
  // connection the document's lookup was opening would, in the page, have been needed that much later and waited
  // that much less. So the document goes first (after its navigation's earlier legs, each credited with the slowdowns
  // before it), and its slowdown is credited to the others' waits.
  const [docHost, ...rest] = hostsOf(page);
  const legHosts = rest.filter((h) => h.navigationLeg).sort((x, y) => x.firstNeededMs - y.firstNeededMs);
  let credit = 0;
  const legs = legHosts.map((h) => {
    const cost = costOf(h, credit);
    credit += Math.max(0, cost.delta ?? 0);
    return cost;
  });
  const docCost = costOf(docHost!, credit);
  credit += Math.max(0, docCost.delta ?? 0);
  const hosts: HostCost[] = [docCost, ...legs, ...rest.filter((h) => !h.navigationLeg).map((h) => costOf(h, credit))];
  const serial = (h: HostCost) => h.reason === 'document' || h.reason === 'redirect';

  // Completion times (first needed + lookup) under the candidate (c) and the baseline (b).
  const usable = hosts.filter((h) => h.delta !== null && h.reason !== 'after-onload');
  // On the page's own timeline: the lookup the browser observed where exposed, else the baseline replay's.
  const b = (h: HostCost) => h.firstNeededMs + (h.baselineSource === 'cache' ? 0 : (h.observed ?? h.baseline!));
  // What a lookup can move is its host's fetch: the host's last response end where known, else its lookup's end.
  const e = (h: HostCost) => Math.max(b(h), h.completedMs ?? -Infinity);
  // Chains: a host first needed after another host's response had completed (known completion times only) may have
  // been discovered through it (a script inserting it, a stylesheet importing it), so it is needed as much later as
  // that response came; its likeliest parent completed last before it was needed; shifts add up link by link.
  const inherited = new Map<HostCost, number>();
  // A leaf host (an image's, a font's) names no other host: never a parent, however close its response ended.
  const leaves = new Set(page.hosts.filter((h) => h.leaf === true).map((h) => h.name));
  const ended = usable.filter((h) => !serial(h) && h.completedMs != null && !leaves.has(h.name));
  const inOrder = usable.filter((x) => !serial(x)).sort((x, y) => x.firstNeededMs - y.firstNeededMs);
  for (const h of inOrder) {
    let parent: HostCost | null = null;
    for (const g of ended) if (g !== h && e(g) <= h.firstNeededMs && (!parent || e(g) > e(parent))) parent = g;
    inherited.set(h, parent ? (inherited.get(parent) ?? 0) + parent.delta! : 0);
  }
  // The most a host can have been pushed back: through the worst chain of responses that completed before it was
  // needed (any real dependency respects that order), each link adding its own slowdown. Known completion times only.
  const worst = new Map<HostCost, number>();
  for (const h of inOrder) {
    let w = 0;
    for (const g of ended) if (g !== h && e(g) <= h.firstNeededMs) w = Math.max(w, (worst.get(g) ?? 0) + Math.max(0, g.delta!));
    worst.set(h, w);
  }
  const c = (h: HostCost) => e(h) + (inherited.get(h) ?? 0) + h.delta!;
  const maxOf = (xs: number[]) => (xs.length ? Math.max(...xs) : null);
  const onSerialPath = usable.filter(serial);
  const others = usable.filter((h) => h.critical && !serial(h));
  // An off-path host onLoad did not wait for: none of its responses came before onLoad and its lookup, on the page's
  // own timeline, ended after onLoad (a beacon asked for as the page finished). However much later it resolves, onLoad
  // stays where it was (calibreapp at 4G: an analytics host needed at onLoad, its 94 ms lookup read as +94 ms).
  const awaited = (h: HostCost) => h.completedMs != null || b(h) <= onLoad;
  const off = usable.filter((h) => !h.critical && awaited(h));
  let point: number | null = null;
  let lower: number | null = null;
  let upper: number | null = null;
  if (usable.length > 0) {
    const dDoc = onSerialPath.reduce((sum, h) => sum + h.delta!, 0);
    const othersE = maxOf(others.map(e));
    const par = othersE !== null ? maxOf(others.map(c))! - othersE : 0;
    const chain = others.reduce((s, h) => s + h.delta!, 0);
    let late = 0;
    let early = 0;
    let floor = dDoc;
    let shiftOff = 0;
    if (off.length) {
      const offC = maxOf(off.map(c))!;
      const offE = maxOf(off.map(e))!;
      shiftOff = offC - offE;
      // Everything after the document shifts with it; onLoad has already moved by the critical path's change.
      late = Math.max(0, offC + dDoc - (onLoad + dDoc + par));
      // onLoad waited for the off-path response that came last, after every critical one: where that host's lookup
      // is faster (a lost Do53 query the candidate would not have waited for), onLoad comes as much sooner as the
      // responses it still waits for allow.
      const criticalEnd = Math.max(page.navigation.responseStart, othersE ?? -Infinity) + par;
      if (offE > criticalEnd) early = Math.min(0, Math.max(offC, criticalEnd) - offE);
      // However the critical path went, onLoad cannot come before the last lookup it waits for.
      floor = dDoc + Math.max(0, offC - onLoad);
    }
    // The DNS client's CPU (a DoQ stub's, Chromium's own DoH) for the queries asked before onLoad, beyond the baseline's.
    const beforeOnLoad = new Set(usable.map((h) => h.name));
    const queriesOf = (rs: readonly StoredRecord[]) => median(countsPerRepeat(rs.filter((r) => beforeOnLoad.has(r.host)))) ?? 0;
    const cpu = clientCpuMs(page.browser ?? null, first.transport, queriesOf(records)) - (baseRecords?.length ? clientCpuMs(page.browser ?? null, baseRecords[0]!.transport, queriesOf(baseRecords)) : 0);
    point = dDoc + par + late + early + cpu;
    lower = Math.min(point, Math.max(dDoc + Math.min(par, chain) + Math.min(0, shiftOff), floor) + cpu);
    // The chain extreme: with completion times, the worst chain of responses the order of the page allows; without
    // them, every critical lookup in one chain.
    const chained = ended.length
      ? Math.max(0, ...[...worst].map(([h, w]) => w + Math.max(0, h.delta!)))
      : Math.max(par, chain) + Math.max(0, shiftOff);
    upper = Math.max(point, dDoc + chained + cpu);
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
    .map((h) => ({ c: h.lookup, b: baseline ? medianLookup(baseline.get(h.name)) : null }))
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
