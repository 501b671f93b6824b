import assert from 'node:assert/strict';
import { test } from 'vitest';
import { do53Bytes, dohBytes, dotBytes, modelBytes } from './bytes-model.js';

test('the paper\'s equations, case by case', () => {
  const cases: Array<[string, number, number]> = [
    ['Do53 r=1', do53Bytes(1), 56],
    ['Do53 r=10', do53Bytes(10), 560],
    // The paper's worked example (r = 10 → 876 B over DoT) holds with the text's 506 B, not the formula's 285 B.
    ['DoT r=10 text', dotBytes(10, 'text'), 876],
    ['DoT r=10 formula', dotBytes(10), 40 + 330 + 285],
    ['DoT r=44 fills one segment', dotBytes(44), 40 + 33 * 44 + 285],
    ['DoT r=45 needs a second', dotBytes(45), 80 + 33 * 45 + 285],
    ['DoH r=1', dohBytes(1), 40 + 55 + 872],
    ['DoH r=26 fills one segment', dohBytes(26), 40 + 55 * 26 + 872],
    ['DoH r=27 needs a second', dohBytes(27), 80 + 55 * 27 + 872],
    ['no queries, no bytes', dotBytes(0) + dohBytes(0) + do53Bytes(0), 0],
  ];
  for (const [label, got, want] of cases) assert.equal(got, want, label);
});

test('DoT amortises past 24 queries with the text\'s overhead (15 with the formula\'s); DoH never does', () => {
  const firstCheaper = (f: (r: number) => number) => Array.from({ length: 1000 }, (_, i) => i + 1).find((r) => f(r) < do53Bytes(r));
  assert.equal(firstCheaper((r) => dotBytes(r, 'text')), 24);
  assert.equal(firstCheaper((r) => dotBytes(r, 'formula')), 15);
  assert.equal(firstCheaper(dohBytes), undefined);
});

test('modelBytes names its formula and has none for Do53/TCP or DoH over HTTP/1.1', () => {
  assert.deepEqual(modelBytes('udp', 3), { sent: 168, formula: 'Do53 = 56·r' });
  assert.equal(modelBytes('dot', 10, 'text')!.sent, 876);
  assert.match(modelBytes('dot', 10)!.formula, /285/);
  assert.match(modelBytes('dot', 10, 'text')!.formula, /506/);
  assert.equal(modelBytes('doh', 10)!.sent, 1462);
  assert.equal(modelBytes('tcp', 10), null);
  assert.equal(modelBytes('doh1', 10), null);
});
