import assert from 'node:assert/strict';
import { test } from 'vitest';
import { percentile, seededRandom, shuffled, summarize } from './stats.js';

test('percentile interpolates between ranks (type 7)', () => {
  const cases: Array<[number[], number, number | null]> = [
    [[], 50, null],
    [[7], 5, 7],
    [[1, 2, 3, 4], 50, 2.5],
    [[1, 2, 3, 4, 5], 50, 3],
    [[10, 20, 30, 40, 50, 60, 70, 80, 90, 100], 95, 95.5],
    [[10, 20, 30, 40, 50, 60, 70, 80, 90, 100], 5, 14.5],
  ];
  for (const [xs, p, want] of cases) {
    const got = percentile(xs, p);
    if (want === null) assert.equal(got, null);
    else assert.ok(Math.abs(got! - want) < 1e-9, `${p}th of ${xs}: ${got}`);
  }
});

test('summarize gives median, p5, p95, mean, rsd and n; ignores non-finite samples', () => {
  const s = summarize([4, 2, NaN, 6, Infinity, 8]);
  assert.equal(s.n, 4);
  assert.equal(s.median, 5);
  assert.equal(s.mean, 5);
  assert.equal(s.min, 2);
  assert.equal(s.max, 8);
  // sample sd of 2,4,6,8 is sqrt(20/3)
  assert.ok(Math.abs(s.rsd! - (Math.sqrt(20 / 3) / 5) * 100) < 1e-9);
  assert.deepEqual(summarize([]), { n: 0, median: null, p5: null, p95: null, mean: null, rsd: null, min: null, max: null });
});

test('the same seed gives the same shuffle, another seed another one', () => {
  const items = Array.from({ length: 20 }, (_, i) => i);
  const a = shuffled(items, seededRandom(42));
  assert.deepEqual(shuffled(items, seededRandom(42)), a);
  assert.notDeepEqual(shuffled(items, seededRandom(43)), a);
  assert.deepEqual([...a].sort((x, y) => x - y), items);
});
