// Per-client rate limit: a token bucket per client, in memory only (addresses are never stored or logged). A client
// is an IPv4 address or an IPv6 /64 (one subscriber's prefix: rotating addresses inside it is free), behind a
// configured proxy the address it forwarded for (clientOf). The table is bounded: past maxClients the least recently
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

  /** Spends a token of `client`: ok, or the seconds until one is available. */
  take(client: string): { ok: true } | { ok: false; retryAfterS: number } {
    const t = this.now();
    const b = this.buckets.get(client) ?? { tokens: this.opts.burst, at: t };
    b.tokens = Math.min(this.opts.burst, b.tokens + ((t - b.at) / 1000) * this.opts.perSecond);
    b.at = t;
    // Re-insert so Map order is least recently seen first.
    this.buckets.delete(client);
    this.buckets.set(client, b);
    if (this.buckets.size > (this.opts.maxClients ?? 100_000)) this.buckets.delete(this.buckets.keys().next().value!);
    if (b.tokens < 1) return { ok: false, retryAfterS: Math.ceil((1 - b.tokens) / this.opts.perSecond) };
    b.tokens -= 1;
    return { ok: true };
  }
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
