// Per-client rate limit: a token bucket per client, in memory only (addresses are never stored or logged). A client
// is an IPv4 address or an IPv6 /64 (one subscriber's prefix: rotating addresses inside it is free), behind a
// configured proxy the address it forwarded for (clientOf); an IPv6 client also spends from its /56's and /48's
// buckets, so many /64s of one holder share a bounded allowance. The table is bounded: past maxClients the least recently
// seen client is forgotten, which at worst gives it a fresh bucket.
import { canonicalIp, v6Groups } from '../common/ip-address.js';

/** Tuning of a RateLimiter. */
export interface RateOptions {
  /** Sustained requests per second per client. */
  perSecond: number;
  /** Requests a client may make at once after being idle. */
  burst: number;
  maxClients?: number;
}

/** Token buckets by client; take() spends one token or says how long to wait. */
export class RateLimiter {
  private buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly opts: RateOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Spends a token of `client` and of every wider prefix it belongs to (an IPv6 /64 also spends from its /56 and its
   * /48, which allow PREFIX_SCALE times more: one holder of a /48 cannot multiply its allowance by 65,536 /64s):
   * ok, or the seconds until every level has one.
   */
  take(client: string): { ok: true } | { ok: false; retryAfterS: number } {
    const t = this.now();
    const levels = [...prefixesOf(client).map((key, i) => ({ key, scale: PREFIX_SCALE ** i }))];
    const buckets = levels.map(({ key, scale }) => {
      const burst = this.opts.burst * scale;
      const rate = this.opts.perSecond * scale;
      const b = this.buckets.get(key) ?? { tokens: burst, at: t };
      b.tokens = Math.min(burst, b.tokens + ((t - b.at) / 1000) * rate);
      b.at = t;
      // Re-insert so Map order is least recently seen first.
      this.buckets.delete(key);
      this.buckets.set(key, b);
      return { b, rate };
    });
    while (this.buckets.size > (this.opts.maxClients ?? 100_000)) this.buckets.delete(this.buckets.keys().next().value!);
    const short = buckets.filter(({ b }) => b.tokens < 1);
    if (short.length) return { ok: false, retryAfterS: Math.max(...short.map(({ b, rate }) => Math.ceil((1 - b.tokens) / rate))) };
    for (const { b } of buckets) b.tokens -= 1;
    return { ok: true };
  }
}

/** How much more a wider IPv6 prefix may send than the one inside it: a /56 four /64s' worth, a /48 sixteen. */
export const PREFIX_SCALE = 4;

/** A client's keys, narrowest first: an IPv6 /64 with its /56 and /48; anything else alone. */
export function prefixesOf(client: string): string[] {
  const m = /^(.*)::\/64$/.exec(client);
  const g = m ? v6Groups(`${m[1]}::`) : null;
  if (!g) return [client];
  const prefix = (bits: 56 | 48) => {
    const groups = g.slice(0, 4).map((x, i) => (i * 16 + 16 <= bits ? x : i * 16 < bits ? x & (0xffff << (16 - (bits - i * 16))) & 0xffff : 0));
    return `${groups.slice(0, Math.ceil(bits / 16)).map((x) => x.toString(16)).join(':')}::/${bits}`;
  };
  return [client, prefix(56), prefix(48)];
}

/**
 * The client a request counts as: the socket's peer, or — when the peer is one of `trustedProxies` — the last address
 * in X-Forwarded-For that is not itself a trusted proxy (a client can prepend anything; only what the proxies appended
 * is true). IPv6 by its /64.
 */
export function clientOf(remoteAddress: string | undefined, forwardedFor: string | string[] | undefined, trustedProxies: ReadonlySet<string>): string {
  let address = canonicalIp(remoteAddress ?? '');
  if (trustedProxies.has(address) && forwardedFor !== undefined) {
    const hops = [forwardedFor].flat().join(',').split(',').map((h) => canonicalIp(h.trim())).filter(Boolean);
    while (hops.length && trustedProxies.has(hops.at(-1)!)) hops.pop();
    if (hops.length) address = hops.at(-1)!;
  }
  const g = v6Groups(address);
  return g && address.includes(':') ? `${g.slice(0, 4).map((x) => x.toString(16)).join(':')}::/64` : address;
}

/**
 * Amounts held per client (connections, bytes of bodies being received): `hold` adds to a client's, and gives back
 * what it added once, through the function it returns; a client holding nothing is forgotten.
 */
export class Holdings {
  private byClient = new Map<string, number>();

  /** What `client` holds now. */
  of(client: string): number {
    return this.byClient.get(client) ?? 0;
  }

  hold(client: string, amount: number): () => void {
    this.byClient.set(client, this.of(client) + amount);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const left = this.of(client) - amount;
      if (left > 0) this.byClient.set(client, left);
      else this.byClient.delete(client);
    };
  }
}
