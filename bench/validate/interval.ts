// The measured change's confidence interval: the distribution-free interval of the Hodges–Lehmann shift (Moses; the
// inverted Mann–Whitney test). Of the m·n differences b − a, sorted, it runs from the k-th smallest to the k-th
// largest, k chosen from the exact null distribution of the Mann–Whitney U, so its coverage is the level asked for
// whatever the onLoads' distribution, given a shift between the two sides (checked on A/A rows, where the true
// shift is 0). A percentile bootstrap at 5–20 loads a side is too narrow (about 0.86 of a t-interval's width at 5):
// this interval does not depend on resampling a handful of loads. Pure.

/**
 * P(U = u) for u = 0 … m·n under the null (no shift, no ties): the coefficients of the Gaussian binomial
 * [m+n choose m]_q, ∏ᵢ (1 − q^(n+i)) / (1 − q^i), divided by C(m+n, m).
 */
export function mannWhitneyNull(m: number, n: number): Float64Array {
  const size = m * n + 1;
  let poly = new Float64Array(size);
  poly[0] = 1;
  for (let i = 1; i <= m; i++) {
    // × (1 − q^(n+i)), then ÷ (1 − q^i): the quotient stays a polynomial with non-negative integer coefficients.
    const times = new Float64Array(size);
    for (let k = 0; k < size; k++) times[k] = poly[k]! - (k >= n + i ? poly[k - n - i]! : 0);
    const over = new Float64Array(size);
    for (let k = 0; k < size; k++) over[k] = times[k]! + (k >= i ? over[k - i]! : 0);
    poly = over;
  }
  let total = 0;
  for (const c of poly) total += c;
  return poly.map((c) => Math.max(0, c) / total);
}

/**
 * The rank k of the interval's ends for sizes m, n at `level` (0.95): the largest k with P(U ≤ k − 1) ≤ (1 − level)/2,
 * or 0 when even the widest interval (the smallest and largest difference) covers less than `level`.
 */
export function mosesRank(m: number, n: number, level = 0.95): number {
  const tail = (1 - level) / 2;
  const p = mannWhitneyNull(m, n);
  let cdf = 0;
  let k = 0;
  for (let u = 0; u < p.length; u++) {
    cdf += p[u]!;
    if (cdf > tail + 1e-12) break;
    k = u + 1;
  }
  return k;
}

/**
 * The `level` confidence interval of the shift of `b` against `a` (the Hodges–Lehmann estimate's): [D(k), D(mn+1−k)]
 * of the sorted differences b[j] − a[i]; null when either side has fewer than 2 loads or the sizes are too small for
 * the level (3 and 3 cannot give 95 %).
 */
export function shiftInterval(a: readonly number[], b: readonly number[], level = 0.95): [number, number] | null {
  if (a.length < 2 || b.length < 2) return null;
  const k = mosesRank(a.length, b.length, level);
  if (k < 1) return null;
  const diffs = b.flatMap((y) => a.map((x) => y - x)).sort((x, y) => x - y);
  return [diffs[k - 1]!, diffs[diffs.length - k]!];
}
