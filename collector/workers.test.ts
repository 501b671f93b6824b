import assert from 'node:assert/strict';
import { test } from 'vitest';
import { role, shareOf } from './workers.js';

test('each worker keeps its share of a limit: whole numbers rounded up, never below the minimum', () => {
  assert.equal(shareOf(32, 2), 16);
  assert.equal(shareOf(4096, 3), 1366);
  assert.equal(shareOf(1, 4), 1);
  assert.equal(shareOf(5, 2, false, 0), 2.5);
  assert.equal(shareOf(20, 64, false, 1), 1);
});

test('a process that is no worker is the lead: it runs retention and says where it listens', () => {
  assert.deepEqual(role(), { worker: false, lead: true });
});
