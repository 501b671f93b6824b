// Publication that resists forgery (issue 13, item 3): what the collector publishes of one cell (resolver ×
// transport × mode × network type × site) of one epoch (a UTC day), with ε-differential privacy, so that an attacker
// who uploads many forged pages of known values into the same cell still cannot tell a real upload's values from the
// published figures beyond the stated noise.
import { createHmac } from 'node:crypto';
import { coarse, UPLOAD_LIMITS } from '../common/upload-batch.js';
import { cellBudget, DEFAULT_BUDGET, type CellBudget } from '../common/privacy-budget.js';

/**
 * Epochs are disjoint in data (a page belongs to the epoch of its hour), so each epoch is its own release; a person's
 * uploads of one day are bounded on their machine and the ε below is per person per day (common/privacy-budget.ts).
 */
export const PUBLICATION = {
  /** ε per person per UTC day, over every cell. */
  epsilon: DEFAULT_BUDGET.epsilonPerDay,
  /** Chance that one person alone makes a cell published. */
  delta: DEFAULT_BUDGET.delta,
  /** A cell (and a site's name in it) is published only when its noisy page count reaches this. */
  minPages: cellBudget().minPages,
} as const;

/** How one cell is released: ε of its noisy count and of each of its nine value releases, and its threshold. */
export type CellRule = Pick<CellBudget, 'countEpsilon' | 'valueEpsilon' | 'minPages'>;

/** The cell rule for `epsilonPerDay` per person and `delta` (common/privacy-budget.ts); `minPages` overrides the threshold. */
export function cellRule(epsilonPerDay: number = PUBLICATION.epsilon, minPages?: number, delta: number = PUBLICATION.delta): CellRule {
  const b = cellBudget(epsilonPerDay, delta);
  return { countEpsilon: b.countEpsilon, valueEpsilon: b.valueEpsilon, minPages: minPages ?? b.minPages };
}

const DEFAULT_RULE = cellRule();

/** One page's values in one cell (null where the page had none). */
export interface PageValues {
  medianMs: number | null;
  onloadMs: number | null;
  bytes: number | null;
  packets: number | null;
  /** failures / lookups, in [0, 1]. */
  failureShare: number;
}

/** The values a cell publishes a quantile of. */
export const TALLIED = ['medianMs', 'onloadMs', 'bytes', 'packets'] as const;
export type Tallied = (typeof TALLIED)[number];

/**
 * A cell's pages as publication reads them (its rollup): how many, the sum of their failure shares (each clipped to
 * [0, 1]) and, per value, how many pages had each value (values are on the upload grid, so these stay small). The
 * store computes it in SQL (collector/store.ts); tallyOf computes the same from pages.
 */
export interface CellTally {
  pages: number;
  failureSum: number;
  counts: Record<Tallied, Map<number, number>>;
}

/** An empty tally. */
export function emptyTally(): CellTally {
  return { pages: 0, failureSum: 0, counts: { medianMs: new Map(), onloadMs: new Map(), bytes: new Map(), packets: new Map() } };
}

/** Adds `b` into `a` (a page set's tally is the sum of its parts' tallies). */
export function addTally(a: CellTally, b: CellTally): CellTally {
  a.pages += b.pages;
  a.failureSum += b.failureSum;
  for (const key of TALLIED) for (const [v, n] of b.counts[key]) a.counts[key].set(v, (a.counts[key].get(v) ?? 0) + n);
  return a;
}

/** The tally of `pages`. */
export function tallyOf(pages: readonly PageValues[]): CellTally {
  const t = emptyTally();
  for (const p of pages) {
    t.pages++;
    t.failureSum += Math.max(0, Math.min(1, p.failureShare));
    for (const key of TALLIED) {
      const v = p[key];
      if (v !== null) t.counts[key].set(v, (t.counts[key].get(v) ?? 0) + 1);
    }
  }
  return t;
}

export interface Spread {
  p5: number;
  p50: number;
  p95: number;
}

/** What is published of one cell of one epoch. */
export interface PublishedCell {
  /** Noisy page count (rounded). */
  pages: number;
  failureShare: number;
  lookupMs: Spread | null;
  onloadMs: Spread | null;
  bytesPerLookup: number | null;
  packetsPerLookup: number | null;
}

/**
 * A deterministic stream of uniforms in (0, 1) keyed by the secret and a label. Noise is drawn from a keyed stream
 * (HMAC-SHA-256 of the collector's secret and the cell's name), so asking again returns the same figures: repeating
 * a question cannot average the noise away.
 */
export function uniforms(secret: Buffer, label: string): () => number {
  let counter = 0;
  let block = Buffer.alloc(0);
  let at = 0;
  return () => {
    if (at + 6 > block.length) {
      block = createHmac('sha256', secret).update(`${label}\u0000${counter++}`).digest();
      at = 0;
    }
    const x = block.readUIntBE(at, 6); // 48 bits
    at += 6;
    return (x + 0.5) / 2 ** 48;
  };
}

/** A Laplace(0, scale) draw from a uniform in (0, 1). */
export function laplace(u: number, scale: number): number {
  const c = u - 0.5;
  return -scale * Math.sign(c) * Math.log(1 - 2 * Math.abs(c));
}

/** Every value the grid has between lo and hi (inclusive), ascending: the domain a percentile is chosen from. */
export function gridValues(lo: number, hi: number): number[] {
  const out = new Set<number>();
  for (let k = 0; ; k++) {
    const v = coarse(2 ** (k / 4));
    if (v > Math.max(Math.abs(lo), Math.abs(hi))) break;
    if (v >= lo && v <= hi) out.add(v);
    if (-v >= lo && -v <= hi) out.add(-v);
  }
  if (lo <= 0 && hi >= 0) out.add(0);
  return [...out].sort((a, b) => a - b);
}

const DOMAIN = {
  ms: gridValues(0, UPLOAD_LIMITS.ms),
  onload: gridValues(-UPLOAD_LIMITS.ms, UPLOAD_LIMITS.ms),
  bytes: gridValues(0, UPLOAD_LIMITS.bytesPerLookup),
  packets: gridValues(0, UPLOAD_LIMITS.packetsPerLookup),
};

/**
 * The q-quantile of the values counted in `counts` (value → how many; on the grid of `domain`), chosen by the
 * exponential mechanism with budget `epsilon`: value k is picked with probability ∝ exp(ε · u_k / (2 · 2)), u_k =
 * −(distance of the rank q·n from the ranks the values equal to domain[k] occupy). Null when there are no values.
 */
export function privateQuantile(counts: ReadonlyMap<number, number>, q: number, domain: readonly number[], epsilon: number, u: () => number): number | null {
  let n = 0;
  for (const c of counts.values()) n += c;
  if (n === 0) return null;
  const rank = q * n;
  const logWeights: number[] = [];
  let below = 0;
  for (const v of domain) {
    const c = counts.get(v) ?? 0;
    const distance = rank < below ? below - rank : rank > below + c ? rank - below - c : 0;
    logWeights.push((-epsilon * distance) / 4);
    below += c;
  }
  const top = Math.max(...logWeights);
  const weights = logWeights.map((w) => Math.exp(w - top));
  let pick = u() * weights.reduce((a, b) => a + b, 0);
  for (let i = 0; i < weights.length; i++) {
    pick -= weights[i]!;
    if (pick <= 0) return domain[i]!;
  }
  return domain[domain.length - 1]!;
}

/** The noisy page count of a cell: the one release that decides whether it (or its site's name) is published. */
export function noisyCount(pages: number, secret: Buffer, cell: string, rule: CellRule = DEFAULT_RULE): number {
  return pages + laplace(uniforms(secret, `${cell}\u0000count`)(), 1 / rule.countEpsilon);
}

/**
 * The published figures of one cell of one epoch from its pages' tally, or null when its noisy count is under the
 * threshold. `cell` names it (epoch and every coordinate): it keys the noise.
 *
 * Per cell and epoch, every released statistic gets a share of the contribution's ε (sequential composition; the
 * rule's countEpsilon and valueEpsilon, common/privacy-budget.ts):
 * - the page count, with Laplace noise (sensitivity 1: one upload is one page); the cell, and a site's name, are
 *   published only when the noisy count reaches the rule's minPages (the count's release decides it, no extra cost);
 * - the failure share (the sum of per-page failure fractions in [0, 1], Laplace noise, over the noisy count);
 * - the 5th, 50th and 95th percentiles of the pages' median lookup time and of their estimated onLoad change, and
 *   the medians of bytes and packets per lookup: each chosen by the exponential mechanism over the upload grid's
 *   values (common/upload-batch.ts coarse), with the distance of the wanted rank from a value's rank interval as the
 *   utility (sensitivity 2: one page moves the ranks by one and the wanted rank by at most one).
 */
export function publishCell(tally: CellTally, secret: Buffer, cell: string, rule: CellRule = DEFAULT_RULE): PublishedCell | null {
  const count = noisyCount(tally.pages, secret, cell, rule);
  if (count < rule.minPages) return null;
  const share = rule.valueEpsilon;
  const u = uniforms(secret, `${cell}\u0000values`);
  const failures = tally.failureSum + laplace(u(), 1 / share);
  const spread = (counts: ReadonlyMap<number, number>, domain: readonly number[]): Spread | null => {
    const [p5, p50, p95] = [0.05, 0.5, 0.95].map((q) => privateQuantile(counts, q, domain, share, u));
    if (p5 == null || p50 == null || p95 == null) return null;
    return { p5: Math.min(p5, p50), p50, p95: Math.max(p95, p50) };
  };
  return {
    pages: Math.round(count),
    // Published to a hundredth: the noise's own digits say nothing, and an unrounded float looks more exact than it is.
    failureShare: Math.round(Math.max(0, Math.min(1, failures / count)) * 100) / 100,
    lookupMs: spread(tally.counts.medianMs, DOMAIN.ms),
    onloadMs: spread(tally.counts.onloadMs, DOMAIN.onload),
    bytesPerLookup: privateQuantile(tally.counts.bytes, 0.5, DOMAIN.bytes, share, u),
    packetsPerLookup: privateQuantile(tally.counts.packets, 0.5, DOMAIN.packets, share, u),
  };
}
