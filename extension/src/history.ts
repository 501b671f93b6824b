// The person's history: one compact entry per finished measurement, kept long after the measurement's own records
// are gone (the background keeps those for only MEASURE_CAPS.pages pages). It is what the dashboard plots — the
// estimated onLoad change per resolver × transport (Hounsel et al., Fig. 2, for one person), lookup times (Fig. 1),
// failure rates (Table 2) — and what an upload aggregates from. It stays on the person's machine: it names the
// page's host. Pure: no DOM, no node: imports.
import * as v from 'valibot';
import type { CellCost } from '../../common/cost-model.js';
import type { StoredRecord } from '../../common/stored-record.js';
import type { MeasurementMeta } from './messages/measure.js';
import { measuredPageCost } from '../../common/page-cost.js';
import { FIREFOX_NOW_ID } from '../../common/default-resolvers.js';
import { PROFILES } from '../../common/network-profiles.js';
import { WHAT_IF_NETWORKS, whatIfCost, type WhatIfNetwork } from '../../common/what-if-network.js';
import { expectedModeOf } from '../../common/connection-state.js';
import { MAX_NETWORK_DESCRIPTION, NETWORK_ID, type NetworkInfo } from '../../common/schema.js';
import { percentile } from '../../common/stats.js';
import { MODES, TRANSPORT_IDS, type Mode, type TransportId } from '../../common/transports.js';

export const HISTORY_VERSION = 1;
/** At most this many entries, and this many characters of JSON; the oldest go first. */
export const HISTORY_CAPS = { entries: 5_000, chars: 8_000_000 } as const;
/**
 * Upper bounds (ms) of the lookup-time histogram's buckets; one more bucket counts what is slower. Roughly
 * logarithmic, so a CDF drawn from it keeps its shape from a loopback 0.3 ms to a 3G 2 s.
 */
export const LOOKUP_BUCKETS_MS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000] as const;

/** One resolver × transport × mode of a page. */
export interface HistoryCell {
  resolver: string;
  transport: TransportId;
  mode: Mode;
  /** Hosts compared and how many of their lookups failed, of all lookups made (every record type and repeat). */
  hosts: number;
  failures: number;
  lookups: number;
  /** Each host's lookup (median over repeats, ms) counted into LOOKUP_BUCKETS_MS, then the over-the-top bucket. */
  histogram: number[];
  p5Ms: number | null;
  medianMs: number | null;
  p95Ms: number | null;
  /** The cost model's estimated change of onLoad (ms): point and bounds; null when no host could be compared. */
  onLoad: { delta: number; lower: number; upper: number } | null;
  verdict: CellCost['verdict'];
  /** Bytes and packets on the wire per lookup, both directions, set-up included (a replay's median over its
   * queries); null when not counted. */
  bytesPerLookup: number | null;
  packetsPerLookup: number | null;
  /** This mode is the connection state the visit would have had (common/connection-state.ts); absent in older entries. */
  expected?: boolean;
  /** The estimated onLoad change on each named network (common/what-if-network.ts); absent in older entries. */
  whatIf?: Partial<Record<WhatIfNetwork, number | null>>;
}

/** One finished measurement. */
export interface HistoryEntry {
  version: typeof HISTORY_VERSION;
  /** The measured page's id (one entry per page measurement; measuring a page again replaces its entry). */
  id: string;
  /** When the measurement finished (ms since epoch). */
  at: number;
  /** The page's host (the person's own data: never uploaded as is). */
  host: string;
  trigger: 'manual' | 'auto';
  /** The page's onLoad (ms), when the browser reported it. */
  onLoadMs: number | null;
  /** Hosts the page needed, and how many of them were measured. */
  pageHosts: number;
  measuredHosts: number;
  /** The network it was measured on (the host's fingerprint); absent when the host could not tell. */
  network?: NetworkInfo;
  cells: HistoryCell[];
}

// `+ 0` turns a rounded -0 into 0 (JSON would anyway; comparisons in memory should not see it).
const round = (x: number | null, digits = 1): number | null => (x === null || !Number.isFinite(x) ? null : Number(x.toFixed(digits)) + 0);

/** The bucket counts of `values` over LOOKUP_BUCKETS_MS. */
export function lookupHistogram(values: readonly number[]): number[] {
  const counts = new Array<number>(LOOKUP_BUCKETS_MS.length + 1).fill(0);
  for (const x of values) {
    const i = LOOKUP_BUCKETS_MS.findIndex((b) => x <= b);
    counts[i === -1 ? LOOKUP_BUCKETS_MS.length : i]!++;
  }
  return counts;
}

/** The history entry of a finished measurement and its records. */
export function historyEntry(meta: MeasurementMeta, records: readonly StoredRecord[]): HistoryEntry {
  // Firefox's own path is not a resolver to compare or upload: the history keeps the resolvers' cells.
  // The same page on each named network (a model estimate, common/what-if-network.ts), for the dashboard's what-if.
  const elsewhere = WHAT_IF_NETWORKS.map((n) => [n, whatIfCost(meta.page, records, { rttMs: PROFILES[n]!.rttMs }, meta.plan.currentDns?.retryMs)] as const);
  const key = (c: { resolver: string; transport: string; mode: string }) => `${c.resolver} ${c.transport} ${c.mode}`;
  const there = elsewhere.map(([n, w]) => [n, new Map((w?.cells ?? []).map((c) => [key(c), c.onLoad.delta]))] as const);
  const cells = measuredPageCost(meta.page, records, meta.plan.currentDns?.retryMs).filter((c) => c.resolver !== FIREFOX_NOW_ID).map((c): HistoryCell => {
    const lookups = c.hosts.map((h) => h.lookup).filter((x): x is number => x !== null).sort((a, b) => a - b);
    const { delta, lower, upper } = c.onLoad;
    const pair = c.bytes.packets;
    const q = c.bytes.queries;
    return {
      resolver: c.resolver, transport: c.transport, mode: c.mode,
      hosts: c.hosts.length, failures: c.failures.failed, lookups: c.failures.total,
      histogram: lookupHistogram(lookups),
      p5Ms: round(percentile(lookups, 5)), medianMs: round(percentile(lookups, 50)), p95Ms: round(percentile(lookups, 95)),
      onLoad: delta !== null && lower !== null && upper !== null ? { delta: round(delta)!, lower: round(lower)!, upper: round(upper)! } : null,
      verdict: c.verdict,
      bytesPerLookup: q > 0 && c.bytes.sent !== null && c.bytes.received !== null ? round((c.bytes.sent + c.bytes.received) / q) : null,
      packetsPerLookup: q > 0 && pair ? round((pair.sent + pair.received) / q, 2) : null,
      expected: expectedModeOf(c.transport, meta.page, meta.plan.currentDns?.stub?.software ?? null) === c.mode,
      ...(elsewhere.some(([, w]) => w) ? { whatIf: Object.fromEntries(there.map(([n, m]) => [n, round(m.get(key(c)) ?? null)])) as HistoryCell['whatIf'] } : {}),
    };
  });
  return {
    version: HISTORY_VERSION, id: meta.pageId, at: meta.finishedAt ?? meta.updatedAt, host: meta.host, trigger: meta.trigger,
    onLoadMs: round(meta.page.onLoadMs), pageHosts: meta.page.hosts.length, measuredHosts: new Set(records.map((r) => r.host)).size,
    ...(meta.network ? { network: { id: meta.network.id, description: meta.network.description } } : {}), cells,
  };
}

const count = v.pipe(v.number(), v.integer(), v.minValue(0));
const ms = v.nullable(v.pipe(v.number(), v.finite()));
const historyCell = v.strictObject({
  resolver: v.pipe(v.string(), v.maxLength(64)),
  transport: v.picklist(TRANSPORT_IDS),
  mode: v.picklist(MODES),
  hosts: count, failures: count, lookups: count,
  histogram: v.pipe(v.array(count), v.length(LOOKUP_BUCKETS_MS.length + 1)),
  p5Ms: ms, medianMs: ms, p95Ms: ms,
  onLoad: v.nullable(v.strictObject({ delta: v.pipe(v.number(), v.finite()), lower: v.pipe(v.number(), v.finite()), upper: v.pipe(v.number(), v.finite()) })),
  verdict: v.picklist(['indistinguishable', 'slower', 'faster', 'fails', 'unknown']),
  bytesPerLookup: v.nullable(v.pipe(v.number(), v.finite(), v.minValue(0))), packetsPerLookup: v.nullable(v.pipe(v.number(), v.finite(), v.minValue(0))),
  expected: v.optional(v.boolean()),
  whatIf: v.optional(v.record(v.picklist(WHAT_IF_NETWORKS), ms)),
});
/** A stored entry, checked when read back (storage is the extension's, but an older version may have written it). */
export const historyEntrySchema = v.strictObject({
  version: v.literal(HISTORY_VERSION),
  id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
  at: v.pipe(v.number(), v.finite()),
  host: v.pipe(v.string(), v.maxLength(253)),
  trigger: v.picklist(['manual', 'auto']),
  onLoadMs: ms,
  pageHosts: count, measuredHosts: count,
  network: v.optional(v.strictObject({ id: v.pipe(v.string(), v.regex(NETWORK_ID)), description: v.pipe(v.string(), v.maxLength(MAX_NETWORK_DESCRIPTION)) })),
  cells: v.pipe(v.array(historyCell), v.maxLength(400)),
});

export function isHistoryEntry(x: unknown): x is HistoryEntry {
  return v.is(historyEntrySchema, x);
}

/**
 * Which entries a reader wants: a time window (ms since epoch, inclusive), a host (the page's, or a parent of it)
 * and a network (its id; UNKNOWN_NETWORK for entries measured where the host could not tell).
 */
export interface HistoryFilter {
  since?: number | undefined;
  until?: number | undefined;
  site?: string | undefined;
  network?: string | undefined;
}

/** The network filter's value for entries without a network. */
export const UNKNOWN_NETWORK = 'unknown';

export function matchesFilter(e: HistoryEntry, f: HistoryFilter): boolean {
  if (f.since !== undefined && e.at < f.since) return false;
  if (f.until !== undefined && e.at > f.until) return false;
  if (f.site && e.host !== f.site && !e.host.endsWith(`.${f.site}`)) return false;
  if (f.network && (e.network?.id ?? UNKNOWN_NETWORK) !== f.network) return false;
  return true;
}
