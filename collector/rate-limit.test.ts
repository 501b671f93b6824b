import { test } from 'vitest';
import assert from 'node:assert/strict';
import { RateLimiter } from './rate-limit.js';

test('RateLimiter: burst, refill, per client, bounded table', () => {
  let now = 0;
  const rl = new RateLimiter({ perSecond: 2, burst: 3, maxClients: 2 }, () => now);
  assert.deepEqual([1, 2, 3, 4].map(() => rl.take('a').ok), [true, true, true, false]);
  assert.deepEqual(rl.take('a'), { ok: false, retryAfterS: 1 });
  assert.equal(rl.take('b').ok, true, 'another client has its own bucket');
  now = 500; // one token back at 2/s
  assert.deepEqual([rl.take('a').ok, rl.take('a').ok], [true, false]);
  rl.take('c'); // forgets the least recently seen (b)
  now = 600;
  assert.deepEqual([1, 2, 3].map(() => rl.take('b').ok), [true, true, true], 'a forgotten client starts full');
});
