// A page priced on another network (common/what-if-network.ts): the person's round trip from their baseline's warm
// lookups, every time scaled, and the cost model over the result; unchanged at a factor of 1.
import assert from 'node:assert/strict';
import { test } from 'vitest';
import { measuredPageCost } from './page-cost.js';
import { measuredRttMs, scaledPage, scaledRecords, scaleFactor, whatIfCost } from './what-if-network.js';
import { pageLookupMs } from './stored-record.js';
import { measured } from '../extension/src/background/test-fixtures.js';

test("the person's round trip is the median of the baseline's warm query times; the factor is the target's over it", () => {
  const { records } = measured('p1', 5_000, 40);
  // The fixture's replays: 5 ms lookups over UDP, the baseline (the lab resolver's UDP).
  assert.equal(measuredRttMs(records), 5);
  assert.equal(scaleFactor(records, { rttMs: 50 }), 10);
  assert.equal(scaleFactor(records, { factor: 3 }), 3);
  assert.equal(scaleFactor(records, { factor: 0 }), null);
  assert.equal(scaleFactor(records.filter((r) => r.transport !== 'udp'), { rttMs: 50 }), null, 'no baseline: no round trip to scale from');
  // Only cold replays (the validation's cold loads): UDP has no connection to warm, its cold queries are the round trip.
  assert.equal(measuredRttMs(records.filter((r) => r.mode === 'cold')), 5);
  assert.equal(measuredRttMs(records.filter((r) => r.mode === 'cold' && r.transport === 'dot').map((r) => ({ ...r, resolver: 'x', transport: 'udp' as const, mode: 'cold' as const }))), 40, 'cold DoT replays relabelled UDP: their query time');
});

test('scaled by k: every lookup, first need and page time k times as long; k = 1 prices exactly as measured', () => {
  const { meta, records } = measured('p1', 5_000, 40);
  const twice = scaledRecords(records, 2);
  records.forEach((r, i) => {
    assert.equal(pageLookupMs(twice[i]!), 2 * pageLookupMs(r));
    assert.equal(twice[i]!.replay!.firstNeededMs, 2 * r.replay!.firstNeededMs);
  });
  const page = scaledPage(meta.page, 2);
  assert.equal(page.onLoadMs, 2 * meta.page.onLoadMs!);
  assert.equal(page.navigationTiming!.responseStart, 2 * (meta.page.navigationTiming!.responseStart as number));
  assert.deepEqual(page.hosts.map((h) => h.firstNeededMs), meta.page.hosts.map((h) => 2 * h.firstNeededMs));
  assert.deepEqual(whatIfCost(meta.page, records, { factor: 1 })!.cells, measuredPageCost(meta.page, records));
});

test('on a network with twice the round trip the cold DoT penalty of the fixture page doubles', () => {
  const { meta, records } = measured('p1', 5_000, 40);
  const here = measuredPageCost(meta.page, records).find((c) => c.transport === 'dot' && c.mode === 'cold')!;
  const there = whatIfCost(meta.page, records, { rttMs: 10 })!;
  assert.equal(there.k, 2);
  const dot = there.cells.find((c) => c.transport === 'dot' && c.mode === 'cold')!;
  assert.ok(here.onLoad.delta! > 0);
  assert.ok(Math.abs(dot.onLoad.delta! - 2 * here.onLoad.delta!) < 1e-9, `${dot.onLoad.delta} against 2 × ${here.onLoad.delta}`);
});
