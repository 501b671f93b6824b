// Forged uploads against the published figures: an attacker who fills a cell with 1,000 pages of known values (so
// that the real page's value decides the published median exactly) recovers it no better than ε allows; without the
// noise the same attack always succeeds, so the test can fail.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { gridValues, noisyCount, privateQuantile, PUBLICATION, publishCell, uniforms, type PageValues } from './publication.js';

const page = (medianMs: number): PageValues => ({ medianMs, onloadMs: null, bytes: null, packets: null, failureShare: 0 });
const [A, B] = [8, 76.1];
const FORGED = [...Array.from({ length: 500 }, () => page(A)), ...Array.from({ length: 500 }, () => page(B))];

/** The attacker's success rate over `trials` cells: guess the real page's value from the published median. */
function attack(trials: number, epsilon: number): number {
  let right = 0;
  for (let i = 0; i < trials; i++) {
    const real = Math.random() < 0.5 ? A : B;
    const published = publishCell([...FORGED, page(real)], randomBytes(32), `2026-11-21/cloudflare/doh/cold/wifi/other/${i}`, epsilon);
    assert.ok(published, 'a 1,001-page cell is published');
    const guess = published.lookupMs!.p50 <= A ? A : B;
    if (guess === real) right++;
  }
  return right / trials;
}

test('1,000 forged uploads do not recover a real upload\'s value beyond ε (the median\'s share of it)', () => {
  const trials = 3000;
  const success = attack(trials, PUBLICATION.epsilon);
  // The median is one of ten releases: ε/10 for it; an ε-DP release lets a test tell two values apart with
  // probability at most e^ε / (1 + e^ε).
  const eps = PUBLICATION.epsilon / 10;
  const bound = Math.exp(eps) / (1 + Math.exp(eps));
  const slack = 3 * Math.sqrt(0.25 / trials);
  console.log(`forgery attack on the median: ${(success * 100).toFixed(1)} % right over ${trials} cells (bound ${(bound * 100).toFixed(1)} % + ${(slack * 100).toFixed(1)} % sampling)`);
  assert.ok(success <= bound + slack, `success ${success} over the bound ${bound}`);
  // Without noise the attack works every time: the test would catch noise that went missing.
  assert.ok(attack(200, 1e6) >= 0.99);
});

test('the same question gets the same figures (noise cannot be averaged away); other cells get other noise', () => {
  // A fixed secret: with a random one the noisy count of 40 pages falls below the threshold now and then (Laplace
  // noise has tails), and the cell is, rightly, not published; this test is about determinism, not that chance.
  const secret = Buffer.alloc(32, 7);
  const pages = Array.from({ length: 40 }, (_, i) => ({ ...page(i % 2 ? A : B), onloadMs: 13.5, bytes: 4870, packets: 11.3, failureShare: i % 4 ? 0 : 0.5 }));
  const once = publishCell(pages, secret, 'e/c1');
  assert.deepEqual(publishCell(pages, secret, 'e/c1'), once);
  assert.notDeepEqual([noisyCount(40, secret, 'e/c1'), noisyCount(40, secret, 'e/c2')], [40, 40]);
  assert.notEqual(noisyCount(40, secret, 'e/c1'), noisyCount(40, secret, 'e/c2'));
  assert.ok(once && once.failureShare >= 0 && once.failureShare <= 1);
  assert.equal(once.failureShare, Math.round(once.failureShare * 100) / 100, 'published to a hundredth');
  assert.ok(once.lookupMs!.p5 <= once.lookupMs!.p50 && once.lookupMs!.p50 <= once.lookupMs!.p95);
});

test('a small cell is rarely published: the threshold applies to the noisy count', () => {
  let published = 0;
  for (let i = 0; i < 2000; i++) if (publishCell(Array.from({ length: 5 }, () => page(A)), randomBytes(32), `c${i}`)) published++;
  // P(5 + Laplace(10/ε) ≥ 20) = ½ e^{−15ε/10} ≈ 2.5 % at ε = 2.
  assert.ok(published / 2000 < 0.05, `${published} of 2000 five-page cells published`);
});

test('quantiles: on the grid, near the truth for a large cell, null for no values', () => {
  const domain = gridValues(0, 1000);
  assert.ok(domain.includes(0) && domain.includes(8) && domain.includes(76.1) && domain.includes(1000) === false);
  const values = Array.from({ length: 2000 }, (_, i) => domain[20 + (i % 10)]!);
  const u = uniforms(randomBytes(32), 'q');
  const median = privateQuantile(values, 0.5, domain, 0.2, u)!;
  assert.ok(Math.abs(domain.indexOf(median) - 25) <= 2, `median ${median}`);
  assert.equal(privateQuantile([], 0.5, domain, 0.2, u), null);
});
