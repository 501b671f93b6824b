import assert from 'node:assert/strict';
import { test } from 'vitest';
import * as v from 'valibot';
import { cacheSavings, hostRevisitsSchema, noteNeed, noteTtls, REVISIT_BUCKETS_S } from './cache-savings.js';

const S = 1000;

test('needs become revisit intervals in their buckets; a need no later than the last adds nothing', () => {
  let r = noteNeed(undefined, 1_000_000);
  assert.equal(r.needs, 1);
  r = noteNeed(r, 1_000_000 + 30 * S); // 30 s: the bucket ending at 30
  r = noteNeed(r, 1_000_000 + 31 * S); // 1 s
  r = noteNeed(r, 1_000_000 + 31 * S); // the same moment: nothing
  r = noteNeed(r, 1_000_000 + 31 * S + 8 * 86_400 * S); // over a week: the last bucket
  assert.equal(r.needs, 4);
  assert.equal(r.intervals[REVISIT_BUCKETS_S.indexOf(30)], 1);
  assert.equal(r.intervals[0], 1);
  assert.equal(r.intervals[REVISIT_BUCKETS_S.length], 1);
  assert.equal(r.intervals.reduce((a, b) => a + b, 0), 3);
  assert.ok(v.is(hostRevisitsSchema, noteTtls(r, { cf: 300 })));
});

test('a cache honouring a TTL serves the needs that came back sooner: surely those whose bucket ends within it, at most those whose bucket starts below it', () => {
  let a = noteNeed(undefined, 0);
  for (const gapS of [10, 10, 50, 250, 4000]) a = noteNeed(a, a.last + gapS * S);
  a = noteTtls(a, { cf: 60, g: 300 });
  let b = noteNeed(undefined, 0);
  b = noteNeed(b, 20 * S);
  b = noteTtls(b, { cf: 3600 });
  const savings = new Map(cacheSavings([a, b]).map((s) => [s.resolver, s]));
  // cf: host a (TTL 60): gaps 10, 10 (bucket ≤10) and 50 (bucket 30–60) surely; host b (TTL 3600): 20 surely.
  assert.deepEqual(savings.get('cf'), { resolver: 'cf', hosts: 2, needs: 8, servedAtLeast: 4, servedAtMost: 4, medianTtlS: 1830, savedMsAtLeast: 0, savedMsAtMost: 0, timedHosts: 0 });
  // g (TTL 300): 10, 10, 50 and 250 (bucket 120–300) surely; 4000 (bucket 3600–7200) not.
  assert.deepEqual(savings.get('g'), { resolver: 'g', hosts: 1, needs: 6, servedAtLeast: 4, servedAtMost: 4, medianTtlS: 300, savedMsAtLeast: 0, savedMsAtMost: 0, timedHosts: 0 });
  // A TTL inside a bucket makes a range: TTL 40 surely serves the two 10 s gaps, and perhaps the one in (30, 60] s.
  const c = cacheSavings([noteTtls(a, { cf: 40 })])[0]!;
  assert.deepEqual([c.servedAtLeast, c.servedAtMost], [2, 3]);
  // Each served need saves its host's lookup with that resolver: a at 30 ms (3 needs surely), b's time not kept.
  const timed = new Map(cacheSavings([noteTtls(a, {}, { cf: 30 }), b]).map((s) => [s.resolver, s]));
  assert.deepEqual([timed.get('cf')!.savedMsAtLeast, timed.get('cf')!.savedMsAtMost, timed.get('cf')!.timedHosts], [90, 90, 1]);
  const range = cacheSavings([noteTtls(a, { cf: 40 }, { cf: 30 })])[0]!;
  assert.deepEqual([range.savedMsAtLeast, range.savedMsAtMost], [60, 90]);
  assert.ok(v.is(hostRevisitsSchema, noteTtls(a, {}, { cf: 30 })));
  assert.equal(v.is(hostRevisitsSchema, { ...a, ms: { cf: -1 } }), false);
  assert.deepEqual(cacheSavings([noteNeed(undefined, 0)]), []);
});
