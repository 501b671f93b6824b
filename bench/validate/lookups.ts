// The validation's per-lookup layer, pure: for each name of a row's page, the browser's own lookup of it (Chromium's
// NetLog, netlog.ts; Firefox's MOZ_LOG, mozlog.ts: the median over the row's compared loads) beside dnscost's replay of it over the same transport in
// the same mode (the median over the replays of the row's Do53 loads), and whether the two agree within
// max(10 %, 5 ms) of the replay's.
import { pageLookupMs, type StoredRecord } from '../../common/stored-record.js';
import type { Mode, TransportId } from '../../common/transports.js';
import { percentile } from '../../common/stats.js';
import { burstsOf, dohDispatchMs, firstNeededOf, queuedLookups, resolverSlots } from '../../common/client-costs.js';
import { sequentialHttpsHost, sequentialHttpsMs } from '../../common/cost-model.js';
import type { RecordingBrowser } from '../../common/browser-queries.js';
import { pageCostInput } from '../../common/page-cost.js';
import { PATH_OF, type Side, type Visit } from './types.js';

/** The target: the browser's lookup within max(10 % of the replay's, 5 ms) of it. */
export function lookupTolerance(replayMs: number): number {
  return Math.max(0.1 * replayMs, 5);
}

/** One name in one mode: the browser's median lookup, the replay's, and whether they agree. */
export interface LookupPair {
  name: string;
  mode: Mode;
  browser: number;
  replay: number;
  /** How many of the compared loads looked the name up (of which the median is taken). */
  loads: number;
  within: boolean;
}

/** A row's per-lookup layer: names compared (× modes) and how many agree; null when the loads carry no lookups. */
export interface LookupLayer {
  n: number;
  within: number;
  pairs: LookupPair[];
}

const median = (xs: readonly number[]) => percentile([...xs].sort((a, b) => a - b), 50)!;

/**
 * A replayed page's lookup of each name: the time from when the replay started it (when the browser asked for it:
 * common/lookup-starts.ts) to its last record type's answer (the browser's job ends when all its transactions have),
 * per replay (transport × mode × repeat × start).
 * Chromium runs at most CHROMIUM_RESOLVER_JOBS lookups at once over its own Do53 client: each replay's lookups pass
 * through that many slots (common/client-costs.ts queuedLookups), as the browser's wait for one.
 * `sequentialHost`: the name whose addresses the browser asks only after one question more (Firefox's TRR asking an
 * http document's HTTPS record first: cost-model.ts), priced as the model prices it; `browser` (with the page's
 * `documentHost`): the wait its DoH requests have inside it (cost-model.ts dohDispatchMs), priced the same way.
 */
export function replayLookups(records: readonly StoredRecord[], transport: TransportId, mode: Mode, sequentialHost: string | null = null, browser: RecordingBrowser | null = null, documentHost: string | null = null): Map<string, number[]> {
  const bursts = burstsOf(firstNeededOf(records.filter((r) => r.transport === transport && r.mode === mode)));
  const perReplay = new Map<string, Map<string, { startMs: number; ms: number; addresses: StoredRecord[] }>>();
  for (const r of records) {
    if (r.transport !== transport || r.mode !== mode || !r.ok || !r.replay) continue;
    const key = `${r.repeat}|${r.replay.pageStartedAt}`;
    const hosts = perReplay.get(key) ?? perReplay.set(key, new Map()).get(key)!;
    const ms = pageLookupMs(r);
    const entry = hosts.get(r.host) ?? hosts.set(r.host, { startMs: r.replay.firstNeededMs, ms: -Infinity, addresses: [] }).get(r.host)!;
    entry.ms = Math.max(entry.ms, ms);
    if (r.qtype === 'A' || r.qtype === 'AAAA') entry.addresses.push(r);
  }
  const out = new Map<string, number[]>();
  const slots = resolverSlots(browser, transport);
  for (const hosts of perReplay.values()) {
    const list = [...hosts];
    const queued = queuedLookups(list.map(([, e]) => e), slots);
    for (const [i, [host, { addresses }]] of list.entries()) {
      const dispatch = dohDispatchMs(browser, transport, bursts.get(host) ?? 0, host === documentHost);
      (out.get(host) ?? out.set(host, []).get(host)!).push(queued[i]! + (host === sequentialHost ? sequentialHttpsMs(addresses) : 0) + dispatch);
    }
  }
  return out;
}

/**
 * The pairs outside the target, by sign: the browser slower than the replay (the replay under-predicts the lookup) or
 * faster (it over-predicts). A sign that holds across a row's names is a cost the replay misses, not noise.
 */
export function missesBySign(pairs: readonly LookupPair[]): { slower: number; faster: number } {
  const out = pairs.filter((p) => !p.within);
  return { slower: out.filter((p) => p.browser > p.replay).length, faster: out.filter((p) => p.browser < p.replay).length };
}

/**
 * The browser's own lookups of each name over `visits` (ms, one per load that resolved it), grouped by `key` (default:
 * the name): a load's first lookup of a name is the one that counts (a later one is a re-resolution, not the page's);
 * failed and unfinished ones do not.
 */
export function browserLookups<V extends Pick<Visit, 'lookups'>>(visits: readonly V[], key: (v: V, name: string) => string = (_, name) => name): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const v of visits) {
    const seen = new Set<string>();
    for (const l of [...(v.lookups ?? [])].sort((a, b) => a.atMs - b.atMs)) {
      if (seen.has(l.name) || l.ms === null || l.error !== null) continue;
      seen.add(l.name);
      const k = key(v, l.name);
      (out.get(k) ?? out.set(k, []).get(k)!).push(l.ms);
    }
  }
  return out;
}

/** The transport dnscost's replay measures for a side: Do53 (and its A/A control) over UDP, the others their own. */
export function replayTransport(side: Side): TransportId {
  const path = PATH_OF[side];
  return path === 'do53' ? 'udp' : path;
}

/**
 * The per-lookup layer of a row: `compared` loads (their lookups, each in its own mode: `modeOf`) against the replays of
 * the `base` Do53 loads over the compared side's transport. A name the page needed in every load is compared once per
 * mode; a load's first lookup of a name is the one that counts (a later one is a re-resolution, not the page's).
 */
export function lookupLayer(base: readonly Visit[], compared: readonly Visit[], side: Side, modeOf: (v: Visit) => Mode): LookupLayer | null {
  const withLookups = compared.filter((v) => v.lookups && !v.error);
  if (!withLookups.length) return null;
  const transport = replayTransport(side);
  // Each Do53 load's replays, with the name its browser would ask one question more for over this transport.
  const replaysOf = (mode: Mode): Map<string, number[]> => {
    const all = new Map<string, number[]>();
    for (const v of base) {
      if (!v.records?.length) continue;
      const page = v.pageRecord ? pageCostInput(v.pageRecord) : null;
      const sequential = page ? sequentialHttpsHost(page, transport) : null;
      for (const [name, ms] of replayLookups(v.records, transport, mode, sequential, page?.browser ?? v.browser, page?.documentHost ?? null)) all.set(name, [...(all.get(name) ?? []), ...ms]);
    }
    return all;
  };
  const browser = browserLookups(withLookups, (v, name) => `${modeOf(v)}|${name}`);
  const replays = new Map<Mode, Map<string, number[]>>();
  const pairs: LookupPair[] = [];
  for (const [key, ms] of browser) {
    const mode = key.slice(0, key.indexOf('|')) as Mode;
    const name = key.slice(key.indexOf('|') + 1);
    const byName = replays.get(mode) ?? replays.set(mode, replaysOf(mode)).get(mode)!;
    const r = byName.get(name);
    if (!r?.length) continue;
    const [b, rep] = [median(ms), median(r)];
    pairs.push({ name, mode, browser: b, replay: rep, loads: ms.length, within: Math.abs(b - rep) <= lookupTolerance(rep) });
  }
  pairs.sort((a, b) => a.name.localeCompare(b.name) || a.mode.localeCompare(b.mode));
  return { n: pairs.length, within: pairs.filter((p) => p.within).length, pairs };
}
