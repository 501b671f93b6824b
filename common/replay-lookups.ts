// Each host's lookup in one cell of replay records, as the recording browser would have had it: the record types it
// waits for, a lost Do53 query's retry, the HTTPS question Firefox asks first, its DoH thread's wait, Chromium's
// resolver slots; and which lost queries belong to the load and which to the replay. The cost model (cost-model.ts)
// prices the page from these.
// Pure: no DOM, no node: imports.
import type { RecordingBrowser } from './browser-queries.js';
import { CODES } from './errors.js';
import { pageLookupMs, type StoredRecord } from './stored-record.js';
import { median } from './stats.js';
import { burstsOf, dohDispatchMs, firstNeededOf, queuedLookups, resolverSlots } from './client-costs.js';

/** An observed lookup shorter than this was served by the browser's cache or a reused connection. */
export const BROWSER_CACHE_MS = 1;

/**
 * A Do53 query lost over UDP costs this much before the stub asks again: Chromium's built-in resolver starts from a
 * 1 s fallback period (net/dns `kDnsDefaultFallbackPeriod`; it adapts to the server's measured RTT afterwards).
 */
export const UDP_RETRY_MS = 1000;

/**
 * How long the recording browser waits before it asks a lost Do53 query again: Chromium's own resolver starts from
 * its 1 s fallback period on every system; Firefox resolves through the system, so it pays the system stub's timer
 * (`systemRetryMs`: glibc's 5 s on Linux without a stub, the Windows DNS Client's 1 s) where that is known, else 1 s.
 */
export function udpRetryOf(browser: RecordingBrowser | null | undefined, systemRetryMs: number | null | undefined): number {
  return browser === 'firefox' && systemRetryMs != null ? systemRetryMs : UDP_RETRY_MS;
}

/**
 * An observed lookup this much longer or shorter than the baseline replay's waited for a retransmission the other did
 * not (the shortest stub timer, Chromium's 1 s, less a margin): a lost datagram belongs to one load, so that lookup is
 * priced from what the browser saw in it.
 */
export const RETRANSMISSION_MS = 900;

/** The record types that give a host its addresses: a host resolves when one of them answered. */
const ADDRESS_TYPES: ReadonlySet<string> = new Set(['A', 'AAAA']);

/**
 * How much longer than its address lookups Chromium waits for a host's HTTPS record before it goes on without it
 * (net/base/features.cc kUseDnsHttpsSvcb…ExtraTime: 20 % of the time the addresses took, at least 5 ms, at most 50 ms).
 */
export function chromiumHttpsWait(addressMs: number): number {
  return Math.min(50, Math.max(5, 0.2 * addressMs));
}

/** Per host of one cell: lookup per repeat (null when it did not resolve), failures and totals. */
export type HostLookups = {
  perRepeat: Map<number, number | null>;
  /** The same lookups as if no UDP query of theirs had been lost (each lost one answered as its retry was). */
  clean: Map<number, number | null>;
  waited: Map<number, number>;
  failed: number;
  total: number;
};

/** That first question's price: one more query on the connection the addresses went over (its round trip, no set-up). */
export function sequentialHttpsMs(addresses: readonly StoredRecord[]): number {
  return Math.max(0, ...addresses.filter((r) => r.ok).map((r) => r.timings.query ?? 0));
}

export function lookups(records: readonly StoredRecord[], udpRetryMs: number, browser: RecordingBrowser | null, sequentialHttps: string | null = null, documentHost: string | null = null): Map<string, HostLookups> {
  const okUdp = records.filter((r) => r.ok && r.transport === 'udp').map(pageLookupMs);
  const typicalUdp = okUdp.length ? median(okUdp) : null;
  const byHostRepeat = new Map<string, Map<number, StoredRecord[]>>();
  for (const r of records) {
    const perHost = byHostRepeat.get(r.host) ?? new Map<number, StoredRecord[]>();
    byHostRepeat.set(r.host, perHost);
    perHost.set(r.repeat, [...(perHost.get(r.repeat) ?? []), r]);
  }
  const bursts = burstsOf(firstNeededOf(records));
  const out = new Map<string, HostLookups>();
  for (const [host, perHost] of byHostRepeat) {
    const dispatch = dohDispatchMs(browser, records[0]?.transport, bursts.get(host) ?? 0, host === documentHost);
    const h: HostLookups = { perRepeat: new Map(), clean: new Map(), waited: new Map(), failed: 0, total: 0 };
    out.set(host, h);
    for (const [repeat, rs] of perHost) {
      h.total += rs.length;
      h.failed += rs.filter((r) => !r.ok).length;
      // From the scheduled offset to the answer (a sequential record, without replay info, counts its own duration).
      const ok = rs.filter((r) => r.ok).map(pageLookupMs);
      // The retry is answered as the host's other record types were in this replay, else as a typical UDP lookup.
      const retry = ok.length ? Math.max(...ok) : typicalUdp;
      // When each record type was done for the browser: a failure that is not retried still counts the time until it
      // arrived (the browser waited for it); a lost UDP query, its retry (`clean`: as if it had not been lost).
      const finishOf = (clean: boolean) => (r: StoredRecord): number | null => (lostUdp(r) ? (retry === null ? null : (clean ? 0 : udpRetryMs) + retry) : pageLookupMs(r));
      const answered = (r: StoredRecord) => r.ok || (lostUdp(r) && retry !== null);
      // A host resolves when an address record type answered (A or AAAA; any type where no address type was asked).
      const addresses = rs.some((r) => ADDRESS_TYPES.has(r.qtype)) ? rs.filter((r) => ADDRESS_TYPES.has(r.qtype)) : rs;
      // The HTTPS question asked first: one more query on the connection (its own round trip, no set-up).
      const first = host === sequentialHttps ? sequentialHttpsMs(addresses) : 0;
      const doneWith = (finish: (r: StoredRecord) => number | null): number => {
        const times = (xs: readonly StoredRecord[]) => xs.map(finish).filter((x): x is number => x !== null);
        const addressDone = Math.max(...times(addresses));
        const rest = times(rs.filter((r) => !addresses.includes(r)));
        // The browser waits for its other types too: Chromium for an HTTPS record only a bounded extra time after the
        // addresses (then goes on without it); Firefox for all of them.
        const parallel = rest.length === 0 ? addressDone : browser === 'chromium' ? Math.max(addressDone, Math.min(Math.max(...rest), addressDone + chromiumHttpsWait(addressDone))) : Math.max(addressDone, ...rest);
        // The browser's DoH request waits for its thread before it leaves (dohDispatchMs).
        return parallel + first + dispatch;
      };
      const resolved = addresses.some(answered);
      h.perRepeat.set(repeat, resolved ? doneWith(finishOf(false)) : null);
      h.clean.set(repeat, resolved ? doneWith(finishOf(true)) : null);
      h.waited.set(repeat, Math.max(0, ...rs.map((r) => r.replay?.waitedForConnection ?? 0)));
    }
  }
  queueForSlots(out, firstNeededOf(records), resolverSlots(browser, records[0]?.transport));
  return out;
}

/**
 * Each repeat's lookups through the browser's resolver slots (client-costs.ts queuedLookups), in the order the
 * replay asked them (`starts`): a name asked while every slot is taken waits for the first to end. In place.
 */
function queueForSlots(out: Map<string, HostLookups>, starts: Map<string, number>, slots: number | null): void {
  if (slots === null) return;
  const repeats = new Set([...out.values()].flatMap((h) => [...h.perRepeat.keys()]));
  for (const key of ['perRepeat', 'clean'] as const) {
    for (const repeat of repeats) {
      const asked = [...out].flatMap(([host, h]) => {
        const ms = h[key].get(repeat);
        return ms === null || ms === undefined || !starts.has(host) ? [] : [{ h, startMs: starts.get(host)!, ms }];
      });
      const queued = queuedLookups(asked, slots);
      for (const [i, a] of asked.entries()) a.h[key].set(repeat, queued[i]!);
    }
  }
}

/** What likelyLostInLoad reads of a page's host (the cost model's PageHostInput). */
export interface FetchedHost {
  name: string;
  firstNeededMs: number;
  /** Its last response's end before onLoad, where known. */
  completedMs?: number | null;
  /** The lookup the browser exposed, where it did. */
  observedLookupMs?: number | null;
}

/** How long after it was first needed the host's last response ended (null where unknown). */
export function fetchedMs(h: FetchedHost): number | null {
  return h.completedMs != null ? h.completedMs - h.firstNeededMs : null;
}

/** A Do53 query lost over UDP, which is not the end for a browser: its stub asks again after its retransmission timer. */
const lostUdp = (r: StoredRecord): boolean => !r.ok && r.transport === 'udp' && r.error === CODES.TIMEOUT;

/**
 * The hosts without an observed lookup whose Do53 query the load most likely lost (and waited its retry for). Which
 * of them lost one is unseen, but two things are known: how often the baseline replay lost a query on this network
 * (p per query; none lost, none guessed), and how long each host's fetch took after it was needed, which a lost
 * query stretches past its lookup plus the retry timer. A long fetch has other causes too (a slow download, a busy
 * link): how often is read from the hosts whose lookups were seen and lost nothing (q, their share of fetches that
 * long). A host whose fetch took that long lost a query with probability p_h / (p_h + (1 − p_h) q), p_h the chance
 * one of its queries was lost; it counts as lost where that is at least one half. Without such seen hosts, none.
 */
export function likelyLostInLoad(hosts: readonly FetchedHost[], baseRecords: readonly StoredRecord[] | null, baseline: Map<string, HostLookups> | null, udpRetryMs: number): Set<string> {
  const out = new Set<string>();
  const udp = (baseRecords ?? []).filter((r) => r.transport === 'udp');
  const p = udp.length ? udp.filter(lostUdp).length / udp.length : 0;
  if (p === 0 || !baseline) return out;
  const repeats = new Set(udp.map((r) => r.repeat)).size;
  // Each host's fetch and replayed lookup as if nothing was lost, where both are known.
  const known = hosts.flatMap((h) => {
    const fetched = fetchedMs(h);
    const clean = medianLookup(baseline.get(h.name), 0, true);
    return fetched === null || clean === null ? [] : [{ h, fetched, clean }];
  });
  // A fetch at least this long has room for the lookup and a lost query's retry.
  const long = (x: { fetched: number; clean: number }) => x.fetched >= x.clean + udpRetryMs;
  // Seen hosts that lost nothing: their observed lookup is within a retransmission of the replay's, as if answered.
  const seenClean = known.filter(({ h, clean }) => h.observedLookupMs != null && h.observedLookupMs >= BROWSER_CACHE_MS && h.observedLookupMs < clean + RETRANSMISSION_MS);
  if (seenClean.length === 0) return out;
  const q = seenClean.filter(long).length / seenClean.length;
  for (const x of known) {
    const { h } = x;
    if (h.observedLookupMs != null || !long(x)) continue;
    const queries = (baseline.get(h.name)?.total ?? 0) / Math.max(1, repeats);
    const ph = 1 - (1 - p) ** Math.max(1, queries);
    if (ph / (ph + (1 - ph) * q) >= 0.5) out.add(h.name);
  }
  return out;
}

/**
 * Median lookup over repeats. `credit`: how much later than scheduled the page would really need the host (the
 * document's own slowdown); a lookup that waited for a connection being opened waits that much less.
 */
export function medianLookup(entry: HostLookups | undefined, credit = 0, clean = false): number | null {
  const xs: number[] = [];
  for (const [repeat, l] of (clean ? entry?.clean : entry?.perRepeat) ?? []) if (l !== null) xs.push(l - Math.min(entry!.waited.get(repeat) ?? 0, credit));
  return xs.length ? median(xs) : null;
}
