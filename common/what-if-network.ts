// What a page would cost on another network (issue 29 item 8): the person's own recorded page and replay, priced by
// the cost model as if every round trip were `k` times as long. Where the page was measured the resolver answered in
// about `measuredRttMs` (the baseline's warm lookups); on the other network in the profile's round trip (or k times
// the person's own). Every time of the page (Navigation Timing, when each host was first needed, when it completed)
// and of the replay (each lookup and its phases) is scaled by k, and the frozen cost model prices the result: a model
// estimate, labelled so, never a measurement. Local work that does not grow with the round trip (the resolver's own
// time, the browser's) is scaled with the rest, which over-states it on a slower network and under-states it on a
// faster one; bench/validate/what-if.ts checks the estimate against the validation's rows measured on each network.
import { chooseBaseline, measuredPageCost, type PageForCost } from './page-cost.js';
import type { CellCost } from './cost-model.js';
import type { StoredRecord } from './stored-record.js';
import { median } from './stats.js';

/** The named networks (common/network-profiles.ts) a page is priced on, in the order the panel offers them. */
export const WHAT_IF_NETWORKS = ['fiber', 'cable', 'dsl', '4g', '3g'] as const;
export type WhatIfNetwork = (typeof WHAT_IF_NETWORKS)[number];

/** Where to price a page: a named network's round trip, or the person's own times a factor. */
export type WhatIfTarget = { rttMs: number } | { factor: number };

/**
 * The person's round trip to their baseline resolver: the median of its warm lookups' query times, or over UDP (which
 * has no connection to warm) of its cold ones when only those were replayed; null when there are none.
 */
export function measuredRttMs(records: readonly StoredRecord[]): number | null {
  const base = chooseBaseline(records);
  if (!base) return null;
  const mine = records.filter((r) => r.ok && r.resolver === base.resolver && r.transport === base.transport && r.timings.query !== null);
  const warm = mine.filter((r) => r.mode === 'warm');
  const rtt = median((warm.length || base.transport !== 'udp' ? warm : mine).map((r) => r.timings.query!));
  return rtt !== null && rtt > 0 ? rtt : null;
}

/** The factor by which every time grows on `target` (null when the person's round trip is unknown). */
export function scaleFactor(records: readonly StoredRecord[], target: WhatIfTarget): number | null {
  if ('factor' in target) return target.factor > 0 ? target.factor : null;
  const own = measuredRttMs(records);
  return own === null || !(target.rttMs > 0) ? null : target.rttMs / own;
}

const times = (x: number | null, k: number): number | null => (x === null ? null : x * k);

/** The replay's records with every lookup and phase k times as long, each host first needed k times as late. */
export function scaledRecords(records: readonly StoredRecord[], k: number): StoredRecord[] {
  return records.map((r) => ({
    ...r,
    timings: { connect: times(r.timings.connect, k), tls: times(r.timings.tls, k), query: times(r.timings.query, k), total: r.timings.total * k },
    ...(r.replay
      ? {
          replay: {
            ...r.replay,
            firstNeededMs: r.replay.firstNeededMs * k,
            endedAt: r.replay.pageStartedAt + (r.replay.endedAt - r.replay.pageStartedAt) * k,
            waitedForConnection: times(r.replay.waitedForConnection, k),
          },
        }
      : {}),
  }));
}

/** The page with every time k times as late: Navigation Timing, onLoad, each host's first need, lookup and completion. */
export function scaledPage<P extends PageForCost>(page: P, k: number): P {
  const nt = Object.fromEntries(Object.entries(page.navigationTiming ?? {}).map(([key, v]) => [key, typeof v === 'number' ? v * k : v]));
  return {
    ...page,
    navigationTiming: page.navigationTiming ? nt : page.navigationTiming,
    onLoadMs: page.onLoadMs === null ? null : page.onLoadMs * k,
    hosts: page.hosts.map((h) => ({
      ...h,
      firstNeededMs: h.firstNeededMs * k,
      completedMs: typeof h.completedMs === 'number' ? h.completedMs * k : h.completedMs,
      lookup: h.lookup ? { ...h.lookup, startMs: h.lookup.startMs * k, endMs: h.lookup.endMs * k, durationMs: h.lookup.durationMs * k } : h.lookup,
    })),
  };
}

/**
 * The page's cost on `target`: the factor, and the cost model's cells over the scaled page and replay (the system
 * stub's retry timer, measuredPageCost's `systemRetryMs`, does not scale); null when unknown.
 */
export function whatIfCost(page: PageForCost, records: readonly StoredRecord[], target: WhatIfTarget, systemRetryMs: number | null = null): { k: number; cells: CellCost[] } | null {
  const k = scaleFactor(records, target);
  if (k === null) return null;
  return { k, cells: measuredPageCost(scaledPage(page, k), scaledRecords(records, k), systemRetryMs) };
}
