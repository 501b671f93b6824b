import assert from 'node:assert/strict';
import { test } from 'vitest';
import { measuredRttMs, outsideValidated, VALIDATED } from './validated-range.js';

const warm = (query: number, ok = true) => ({ mode: 'warm' as const, ok, timings: { connect: null, tls: null, query, total: query } });
const cold = (query: number) => ({ mode: 'cold' as const, ok: true, timings: { connect: 30, tls: 30, query, total: 90 + query } });

test('the round trip is the median warm query that answered; cold set-ups and failures do not count', () => {
  assert.equal(measuredRttMs([warm(20), warm(22), warm(400, false), cold(300), warm(24)]), 22);
  assert.equal(measuredRttMs([cold(30)]), null);
});

test('outside the validated range: more names than any validated page, a round trip far from the validated ones', () => {
  const typical = [warm(25), warm(30)];
  assert.deepEqual(outsideValidated(40, 'chromium', typical), [], 'a 40-name page at 25–30 ms: inside');
  assert.deepEqual(outsideValidated(VALIDATED.maxNames + 20, 'firefox', typical), [{ kind: 'names', names: 120, max: 100 }]);
  assert.deepEqual(outsideValidated(10, 'chromium', [warm(600), warm(640)]).map((r) => r.kind), ['rtt'], 'a satellite link');
  assert.deepEqual(outsideValidated(10, 'chromium', [warm(2), warm(3)]).map((r) => r.kind), ['rtt'], 'a resolver on the LAN');
  assert.deepEqual(outsideValidated(10, 'chromium', [warm(12)]), [], '12 ms is within the slack of fiber\'s 15');
  assert.deepEqual(outsideValidated(10, 'safari', typical).map((r) => r.kind), ['browser']);
  assert.deepEqual(outsideValidated(10, null, []), [], 'nothing known: nothing said');
});
