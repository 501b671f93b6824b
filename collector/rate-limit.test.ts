import { test } from 'vitest';
import assert from 'node:assert/strict';
import { clientOf, PREFIX_SCALE, prefixesOf, RateLimiter } from './rate-limit.js';

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

test('IPv6: a /64 also spends from its /56 and /48, which allow PREFIX_SCALE and PREFIX_SCALE² times more: a thousand /64s of one /48 share its allowance', () => {
  assert.deepEqual(prefixesOf('2001:db8:ab:12ff::/64'), ['2001:db8:ab:12ff::/64', '2001:db8:ab:1200::/56', '2001:db8:ab::/48']);
  assert.deepEqual(prefixesOf('192.0.2.7'), ['192.0.2.7']);
  assert.equal(clientOf('2001:db8:ab:12ff::9', undefined, new Set()), '2001:db8:ab:12ff::/64');
  const now = 0;
  const rl = new RateLimiter({ perSecond: 1, burst: 2 }, () => now);
  // 1,000 /64s of one /48, each asking twice (its own burst): only the /48's burst goes through.
  let ok = 0;
  for (let i = 0; i < 1000; i++) for (let k = 0; k < 2; k++) if (rl.take(clientOf(`2001:db8:ab:${i.toString(16)}::1`, undefined, new Set())).ok) ok++;
  assert.equal(ok, 2 * PREFIX_SCALE ** 2, 'the /48 allows sixteen /64s\' worth');
  assert.equal(rl.take(clientOf('2001:db8:cd::1', undefined, new Set())).ok, true, 'another /48 is untouched');
  assert.equal(rl.take('198.51.100.1').ok, true, 'IPv4 as before');
});
