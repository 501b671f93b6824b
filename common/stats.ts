// Summary statistics for repeated exchanges, as the papers report them.

/** Median, spread and count of a set of samples; null fields when there are no samples. */
export interface Summary {
  n: number;
  median: number | null;
  p5: number | null;
  p95: number | null;
  mean: number | null;
  /** Relative standard deviation in percent (sample standard deviation / mean × 100). */
  rsd: number | null;
  min: number | null;
  max: number | null;
}

/** Percentile by linear interpolation between closest ranks (Hyndman–Fan type 7, as numpy's default). */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  const a = sorted[lo]!;
  const b = sorted[hi]!;
  return a + (b - a) * (rank - lo);
}

/** The median of samples in any order (null when there are none). */
export function median(samples: readonly number[]): number | null {
  return percentile([...samples].sort((a, b) => a - b), 50);
}

/** Summarises samples; non-finite values are ignored. */
export function summarize(samples: readonly number[]): Summary {
  const xs = samples.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  const n = xs.length;
  if (n === 0) return { n: 0, median: null, p5: null, p95: null, mean: null, rsd: null, min: null, max: null };
  const mean = xs.reduce((s, x) => s + x, 0) / n;
  const variance = n > 1 ? xs.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1) : 0;
  const rsd = mean === 0 ? null : (Math.sqrt(variance) / mean) * 100;
  return {
    n,
    median: percentile(xs, 50),
    p5: percentile(xs, 5),
    p95: percentile(xs, 95),
    mean,
    rsd,
    min: xs[0]!,
    max: xs[n - 1]!,
  };
}

/** A small seeded PRNG (mulberry32): the same seed gives the same shuffle on every machine. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fisher–Yates shuffle of a copy of `items`, driven by `random`. */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
