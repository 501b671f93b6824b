// What a cache would save (Hounsel et al. §5.2, for one person): per host, how often the person's pages needed it
// again and after how long (a histogram of revisit intervals, no list of visits), and the TTL each resolver answered
// it with; a cache that honours the TTL answers every need that came back sooner. Pure: no DOM, no node: imports.
import * as v from 'valibot';
import { percentile } from '../../common/stats.js';

/**
 * Upper bounds (s) of the revisit-interval buckets, roughly logarithmic from 1 s to a week; one more bucket counts
 * longer gaps. TTLs are compared with these bounds, so a count is a range: the needs surely within the TTL (their
 * bucket ends at or below it) and those perhaps within it (their bucket starts below it).
 */
export const REVISIT_BUCKETS_S = [1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14_400, 28_800, 43_200, 86_400, 172_800, 604_800] as const;
/** At most this many hosts are kept; the ones needed longest ago go first. */
export const MAX_REVISIT_HOSTS = 3000;
/** TTLs kept per host: the resolvers of the latest measurement of it (at most the request's 16). */
const MAX_TTLS = 16;

/** One host: when the person's pages last needed it, how many times, the gaps between needs, each resolver's TTL. */
export interface HostRevisits {
  last: number;
  needs: number;
  /** Counts per REVISIT_BUCKETS_S bucket, then the longer-than-a-week bucket. */
  intervals: number[];
  /** Resolver id → the TTL (s) it answered the host with when last measured (the smallest over record types). */
  ttls: Record<string, number>;
  /** Resolver id → the host's median warm lookup (ms) with it when last measured, over its transports; absent before. */
  ms?: Record<string, number>;
}

const count = v.pipe(v.number(), v.integer(), v.minValue(0));
/** A stored host's revisits, checked when read back. */
export const hostRevisitsSchema = v.strictObject({
  last: v.pipe(v.number(), v.finite()),
  needs: count,
  intervals: v.pipe(v.array(count), v.length(REVISIT_BUCKETS_S.length + 1)),
  ttls: v.pipe(v.record(v.pipe(v.string(), v.maxLength(64)), count), v.check((t) => Object.keys(t).length <= MAX_TTLS, 'at most 16 TTLs')),
  ms: v.optional(v.pipe(
    v.record(v.pipe(v.string(), v.maxLength(64)), v.pipe(v.number(), v.finite(), v.minValue(0))),
    v.check((t) => Object.keys(t).length <= MAX_TTLS, 'at most 16 lookup times'),
  )),
});

/** `r` after a page needed its host at `at` (ms since epoch); a need no later than the last adds no interval. */
export function noteNeed(r: HostRevisits | undefined, at: number): HostRevisits {
  if (!r) return { last: at, needs: 1, intervals: new Array<number>(REVISIT_BUCKETS_S.length + 1).fill(0), ttls: {} };
  if (at <= r.last) return r;
  const gapS = (at - r.last) / 1000;
  const i = REVISIT_BUCKETS_S.findIndex((b) => gapS <= b);
  const intervals = [...r.intervals];
  intervals[i === -1 ? REVISIT_BUCKETS_S.length : i]!++;
  return { ...r, last: at, needs: r.needs + 1, intervals };
}

/** `r` with the TTLs (resolver id → seconds) and lookup times (resolver id → ms) of its latest measurement. */
export function noteTtls(r: HostRevisits, ttls: Record<string, number>, ms: Record<string, number> = {}): HostRevisits {
  const kept = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).slice(-MAX_TTLS));
  const times = kept({ ...r.ms, ...ms });
  return { ...r, ttls: kept({ ...r.ttls, ...ttls }), ...(Object.keys(times).length ? { ms: times } : {}) };
}

/** What a cache honouring one resolver's TTLs would have answered of the person's needs. */
export interface CacheSaving {
  resolver: string;
  /** Hosts with a TTL from this resolver, and every time they were needed. */
  hosts: number;
  needs: number;
  /** Needs a cache would surely have answered, and at most (the histogram's bucket bounds around each TTL). */
  servedAtLeast: number;
  servedAtMost: number;
  /** The resolver's median TTL over those hosts (s). */
  medianTtlS: number | null;
  /**
   * The lookup time those served needs would not have spent (ms; each at its host's lookup time with this resolver),
   * over the `timedHosts` hosts whose lookup time was kept (hosts noted before it was kept count for none).
   */
  savedMsAtLeast: number;
  savedMsAtMost: number;
  timedHosts: number;
}

/** Per resolver, over every host it answered with a TTL: the needs a cache honouring that TTL would have served. */
export function cacheSavings(hosts: Iterable<HostRevisits>): CacheSaving[] {
  const by = new Map<string, { hosts: number; needs: number; least: number; most: number; ttls: number[]; msLeast: number; msMost: number; timed: number }>();
  for (const h of hosts) {
    for (const [resolver, ttl] of Object.entries(h.ttls)) {
      const s = by.get(resolver) ?? { hosts: 0, needs: 0, least: 0, most: 0, ttls: [], msLeast: 0, msMost: 0, timed: 0 };
      s.hosts++;
      s.needs += h.needs;
      s.ttls.push(ttl);
      let least = 0;
      let most = 0;
      h.intervals.forEach((n, i) => {
        const upper = REVISIT_BUCKETS_S[i] ?? Infinity;
        const lower = i === 0 ? 0 : REVISIT_BUCKETS_S[i - 1]!;
        if (upper <= ttl) least += n;
        if (lower < ttl) most += n;
      });
      s.least += least;
      s.most += most;
      const ms = h.ms?.[resolver];
      if (ms !== undefined) {
        s.timed++;
        s.msLeast += least * ms;
        s.msMost += most * ms;
      }
      by.set(resolver, s);
    }
  }
  return [...by].map(([resolver, s]) => ({
    resolver, hosts: s.hosts, needs: s.needs, servedAtLeast: s.least, servedAtMost: s.most,
    medianTtlS: percentile(s.ttls.sort((a, b) => a - b), 50), savedMsAtLeast: s.msLeast, savedMsAtMost: s.msMost, timedHosts: s.timed,
  }));
}
