// Forged uploads against the published figures: an attacker who fills a cell with 1,000 pages of known values (so
// that the real page's value decides the published median exactly) recovers it no better than ε allows; without the
// noise the same attack always succeeds, so the test can fail.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { addTally, cellRule, emptyTally, gridValues, noisyCount, privateQuantile, publishCell, tallyOf, uniforms, type CellRule, type PageValues } from './publication.js';
import { PERSON_CAP } from '../common/privacy-budget.js';

const page = (medianMs: number): PageValues => ({ medianMs, onloadMs: null, bytes: null, packets: null, failureShare: 0 });
const [A, B] = [8, 76.1];
const FORGED = [...Array.from({ length: 500 }, () => page(A)), ...Array.from({ length: 500 }, () => page(B))];

/** The attacker's success rate over `trials` cells: guess the real page's value from the published median. */
function attack(trials: number, rule: CellRule): number {
  let right = 0;
  for (let i = 0; i < trials; i++) {
    const real = Math.random() < 0.5 ? A : B;
    const published = publishCell(tallyOf([...FORGED, page(real)]), randomBytes(32), `2026-11-21/cloudflare/doh/cold/wifi/other/${i}`, rule);
    assert.ok(published, 'a 1,001-page cell is published');
    const guess = published.lookupMs!.p50 <= A ? A : B;
    if (guess === real) right++;
  }
  return right / trials;
}

test('1,000 forged uploads do not recover a real upload\'s value beyond ε (the median\'s share of it)', () => {
  const trials = 3000;
  // At 25 times the default ε per person and day, so the bound is far enough from a coin's 50 % to be checked.
  const rule = cellRule(100);
  const success = attack(trials, rule);
  // The median is one of the nine value releases: valueEpsilon for it; an ε-DP release lets a test tell two values
  // apart with probability at most e^ε / (1 + e^ε).
  const eps = rule.valueEpsilon;
  const bound = Math.exp(eps) / (1 + Math.exp(eps));
  const slack = 3 * Math.sqrt(0.25 / trials);
  console.log(`forgery attack on the median: ${(success * 100).toFixed(1)} % right over ${trials} cells (bound ${(bound * 100).toFixed(1)} % + ${(slack * 100).toFixed(1)} % sampling)`);
  assert.ok(success <= bound + slack, `success ${success} over the bound ${bound}`);
  // Without noise the attack works every time: the test would catch noise that went missing.
  assert.ok(attack(200, { countEpsilon: 1e6, valueEpsilon: 1e6, minPages: 20 }) >= 0.99);
});

test('the same question gets the same figures (noise cannot be averaged away); other cells get other noise', () => {
  // A fixed secret: with a random one the noisy count of 40 pages falls below the threshold now and then (Laplace
  // noise has tails), and the cell is, rightly, not published; this test is about determinism, not that chance.
  const secret = Buffer.alloc(32, 7);
  const pages = Array.from({ length: 40 }, (_, i) => ({ ...page(i % 2 ? A : B), onloadMs: 13.5, bytes: 4870, packets: 11.3, failureShare: i % 4 ? 0 : 0.5 }));
  const rule = cellRule(100, 20);
  const once = publishCell(tallyOf(pages), secret, 'e/c1', rule);
  assert.deepEqual(publishCell(tallyOf(pages), secret, 'e/c1', rule), once);
  // A tally is the sum of its parts' (the store adds sites folded into "other"): the same figures.
  const halves = addTally(addTally(emptyTally(), tallyOf(pages.slice(0, 13))), tallyOf(pages.slice(13)));
  assert.deepEqual(publishCell(halves, secret, 'e/c1', rule), once);
  assert.notDeepEqual([noisyCount(40, secret, 'e/c1'), noisyCount(40, secret, 'e/c2')], [40, 40]);
  assert.notEqual(noisyCount(40, secret, 'e/c1'), noisyCount(40, secret, 'e/c2'));
  assert.ok(once && once.failureShare >= 0 && once.failureShare <= 1);
  assert.equal(once.failureShare, Math.round(once.failureShare * 100) / 100, 'published to a hundredth');
  assert.ok(once.lookupMs!.p5 <= once.lookupMs!.p50 && once.lookupMs!.p50 <= once.lookupMs!.p95);
});

test('one person alone, with every page a day allows in one cell, makes it published with chance at most δ', () => {
  // δ = 1 % so that 20,000 cells can tell: the threshold from the budget, P(3 + Laplace ≥ T) = δ exactly at the cap.
  const rule = cellRule(4, undefined, 0.01);
  const cells = 20_000;
  let published = 0;
  for (let i = 0; i < cells; i++) if (publishCell(tallyOf(Array.from({ length: PERSON_CAP.pagesPerDay }, () => page(A))), randomBytes(32), `c${i}`, rule)) published++;
  const sd = Math.sqrt((0.01 * 0.99) / cells);
  assert.ok(Math.abs(published / cells - 0.01) < 4 * sd, `${published} of ${cells} one-person cells published (δ 1 %)`);
  // At the default δ (10⁻⁶) the threshold is far above what one person can upload in a day.
  assert.ok(cellRule().minPages > 50 * PERSON_CAP.pagesPerDay, `threshold ${cellRule().minPages}`);
});

test('quantiles: on the grid, near the truth for a large cell, null for no values', () => {
  const domain = gridValues(0, 1000);
  assert.ok(domain.includes(0) && domain.includes(8) && domain.includes(76.1) && domain.includes(1000) === false);
  const values = Array.from({ length: 2000 }, (_, i) => domain[20 + (i % 10)]!);
  const u = uniforms(randomBytes(32), 'q');
  const median = privateQuantile(tallyOf(values.map(page)).counts.medianMs, 0.5, domain, 0.2, u)!;
  assert.ok(Math.abs(domain.indexOf(median) - 25) <= 2, `median ${median}`);
  assert.equal(privateQuantile(new Map(), 0.5, domain, 0.2, u), null);
});
