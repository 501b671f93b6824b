// Per-client rate limit: a token bucket per client address, in memory only (addresses are never stored or
// logged). The table is bounded: past maxClients the least recently seen client is forgotten, which at worst
// gives it a fresh bucket.

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
