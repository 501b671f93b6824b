// The publisher over a store in memory: only closed days past the delay are published, each once (later pages, other
// filters and a new publisher on the same store change nothing), a site under the threshold is folded into "other",
// and filters select among what was published.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { dueEpochs, publishEpoch, Publisher, resultsSource } from './publisher.js';
import { cellRule } from './publication.js';
import type { CellKey, EpochResult, Store, StoredPublication } from './store.js';

const NOW = Date.parse('2026-11-25T09:00:00Z');

function row(over: Partial<EpochResult> = {}): EpochResult {
  return { network: 'wifi', site: 'github.com', resolver: 'cloudflare', transport: 'doh', mode: 'cold', lookups: 11, failures: 1, median_ms: 19, onload_ms: 11.3, bytes: 4870, packets: 11.3, ...over };
}

/** A Store holding results per epoch and publications in memory, counting what publication asked of it. */
function memoryStore(data: Map<string, EpochResult[]>) {
  const stored = new Map<string, StoredPublication>();
  const calls = { epochCounts: 0, publish: 0 };
  const store = {
    kind: 'pglite', concurrency: 1,
    putMany: async () => [], delete: async () => false, ping: async () => {}, close: async () => {}, count: async () => 0, prune: async () => 0,
    epochCounts: async (e: string) => (calls.epochCounts++, resultsSource(data.get(e) ?? []).epochCounts(e)),
    epochValues: async (e: string, named: readonly CellKey[], cells: readonly CellKey[]) => resultsSource(data.get(e) ?? []).epochValues(e, named, cells),
    epochsWithData: async (es: readonly string[]) => es.filter((e) => (data.get(e) ?? []).length > 0),
    publications: async (es: readonly string[]) => es.flatMap((e) => (stored.has(e) ? [stored.get(e)!] : [])),
    publishedEpochs: async () => [...stored.keys()].sort(),
    publish: async (p: Omit<StoredPublication, 'publishedAt'>) => {
      calls.publish++;
      if (!stored.has(p.epoch)) stored.set(p.epoch, { ...p, publishedAt: new Date(NOW).toISOString() });
      return stored.get(p.epoch)!;
    },
  } satisfies Store;
  return { store, calls };
}

test('due epochs: days whose end plus the delay has passed, within the accepted age', () => {
  assert.deepEqual(dueEpochs(NOW, 6 * 3_600_000).slice(-2), ['2026-11-23', '2026-11-24']);
  assert.deepEqual(dueEpochs(NOW, 10 * 3_600_000).slice(-1), ['2026-11-23'], '2026-11-24 is due at 10:00 the next day');
  assert.equal(dueEpochs(NOW, 0, 90).length, 91);
});

test('an epoch is published once: not before it is due, then the same figures whatever comes later', async () => {
  const data = new Map([['2026-11-24', Array.from({ length: 40 }, () => row())]]);
  const { store, calls } = memoryStore(data);
  let now = Date.parse('2026-11-25T05:00:00Z');
  const p = new Publisher(store, { now: () => now, delayMs: 6 * 3_600_000, epsilon: 100_000 });
  assert.deepEqual((await p.answer({})).cells, [], 'before the delay: nothing');
  now = Date.parse('2026-11-25T06:00:00Z');
  const first = await p.answer({});
  assert.deepEqual(first.epochs.map((e) => e.epoch), ['2026-11-24']);
  assert.deepEqual(first.cells.map((c) => [c.epoch, c.site, c.pages]), [['2026-11-24', 'github.com', 40]]);
  assert.deepEqual([first.epsilon, first.minPages, first.delayHours], [100_000, cellRule(100_000).minPages, 6], 'the threshold from ε and δ');
  // More pages of that day, more requests and filters, a new publisher on the same store: the same figures.
  data.get('2026-11-24')!.push(...Array.from({ length: 40 }, () => row({ median_ms: 90.5 })));
  p.noteStored('2026-11-24T13Z');
  for (let i = 0; i < 20; i++) await p.answer({ resolver: 'cloudflare' });
  const again = new Publisher(store, { now: () => now, delayMs: 6 * 3_600_000, epsilon: 100_000 });
  assert.deepEqual((await again.answer({})).cells, first.cells);
  assert.deepEqual(calls, { epochCounts: 1, publish: 1 });
  assert.deepEqual((await p.answer({ transport: 'dot' })).cells, []);
  assert.deepEqual((await p.answer({ epoch: '2026-11-23' })).cells, []);
});

test('a day that gets its first page after it was due is published at the next answer (noticed at once here)', async () => {
  const data = new Map<string, EpochResult[]>();
  const { store } = memoryStore(data);
  const p = new Publisher(store, { now: () => NOW, delayMs: 0, epsilon: 100_000, recheckMs: 3_600_000 });
  assert.deepEqual((await p.answer({})).epochs, []);
  data.set('2026-11-20', Array.from({ length: 30 }, () => row()));
  p.noteStored('2026-11-20T01Z');
  assert.deepEqual((await p.answer({})).epochs.map((e) => e.epoch), ['2026-11-20']);
});

test('a slow rollup does not hold requests: after the first update, an answer waits for a new day at most answerWaitMs', async () => {
  const data = new Map([['2026-11-23', Array.from({ length: 30 }, () => row())], ['2026-11-24', Array.from({ length: 30 }, () => row())]]);
  const { store } = memoryStore(data);
  let release = () => {};
  const gate = new Promise<void>((r) => (release = r));
  const slow = { ...store, epochCounts: async (e: string) => (e === '2026-11-24' ? gate.then(() => store.epochCounts(e)) : store.epochCounts(e)) };
  let now = Date.parse('2026-11-24T12:00:00Z');
  const p = new Publisher(slow, { now: () => now, delayMs: 0, epsilon: 100_000, answerWaitMs: 50 });
  assert.deepEqual((await p.answer({})).epochs.map((e) => e.epoch), ['2026-11-23'], 'the first update is waited for');
  now = Date.parse('2026-11-25T00:30:00Z');
  const t0 = performance.now();
  const during = await p.answer({});
  const waited = performance.now() - t0;
  assert.deepEqual(during.epochs.map((e) => e.epoch), ['2026-11-23'], 'answered with what was published');
  assert.ok(waited >= 40 && waited < 1_000, `waited ${waited} ms`);
  assert.equal(await p.answer({}), during, 'the same answer object while nothing new is published (its JSON is kept)');
  release();
  await p.ready();
  const after = await p.answer({});
  assert.deepEqual(after.epochs.map((e) => e.epoch), ['2026-11-23', '2026-11-24']);
  assert.notEqual(after, during);
  assert.notEqual(await p.answer({ network: 'wifi' }), after);
});

test('a site under the threshold is folded into its cell\'s "other"; the noise is keyed by the secret', async () => {
  const results = [
    ...Array.from({ length: 25 }, () => row()),
    ...Array.from({ length: 12 }, () => row({ site: 'wikipedia.org' })),
    ...Array.from({ length: 12 }, () => row({ site: 'other' })),
  ];
  const secret = randomBytes(32);
  // ε 100,000 per person and day: the noise is far below a page, so the counts are exact.
  const source = resultsSource(results);
  const cells = await publishEpoch('2026-11-24', source, { secret, epsilon: 100_000, minPages: 20 });
  assert.deepEqual(cells.map((c) => [c.site, c.pages]), [['github.com', 25], ['other', 24]]);
  assert.deepEqual(await publishEpoch('2026-11-24', source, { secret, epsilon: 2, minPages: 20 }), await publishEpoch('2026-11-24', source, { secret, epsilon: 2, minPages: 20 }));
  // Every cell published (no threshold), so the counts' noise shows whatever it draws.
  const noisy = await Promise.all(Array.from({ length: 20 }, async () => (await publishEpoch('2026-11-24', source, { secret: randomBytes(32), epsilon: 2, minPages: -Infinity }))[0]!.pages));
  assert.ok(new Set(noisy).size > 3, `counts vary with the secret at ε = 2: ${noisy.join(' ')}`);
});
