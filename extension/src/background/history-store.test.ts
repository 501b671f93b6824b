// The history: a finished measurement's compact entry (extension/src/history.ts) — per resolver × transport × mode the
// cost model's estimate, lookup histogram, failures and bytes — and the background's store of entries (one key each,
// an index, the caps, filters, entries that do not read back skipped and counted).
import { test } from 'vitest';
import assert from 'node:assert/strict';
import { measuredPageCost } from '../../../common/page-cost.js';
import { HISTORY_CAPS, HISTORY_VERSION, historyEntry, isHistoryEntry, lookupHistogram, LOOKUP_BUCKETS_MS, type HistoryEntry } from '../history.js';
import { HISTORY_KEYS, HistoryStore } from './history-store.js';
import { FakeArea, measured } from './test-fixtures.js';

test('lookup histogram: bucket upper bounds are inclusive, the last bucket counts what is slower', () => {
  const h = lookupHistogram([0.3, 1, 1.5, 5, 49, 5000, 5001, 90_000]);
  assert.equal(h.length, LOOKUP_BUCKETS_MS.length + 1);
  assert.deepEqual(h, [2, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 2]);
  assert.equal(h.reduce((a, b) => a + b, 0), 8);
});

test('history entry of a measurement: one cell per resolver × transport × mode with the cost model\'s estimate', () => {
  const { meta, records } = measured('p1', 1_700_000_000_000, 80);
  const e = historyEntry(meta, records);
  assert.ok(isHistoryEntry(e), 'it passes its own schema');
  assert.equal(e.version, HISTORY_VERSION);
  assert.equal(e.host, 'www.example.org');
  assert.equal(e.at, 1_700_000_000_000);
  assert.equal(e.onLoadMs, 400);
  assert.deepEqual([e.pageHosts, e.measuredHosts], [3, 3]);
  assert.deepEqual(e.cells.map((c) => `${c.transport}/${c.mode}`).sort(), ['dot/cold', 'dot/warm', 'udp/cold', 'udp/warm']);
  const dotCold = e.cells.find((c) => c.transport === 'dot' && c.mode === 'cold')!;
  const udpCold = e.cells.find((c) => c.transport === 'udp' && c.mode === 'cold')!;
  // The entry carries the cost model's estimate for each cell, rounded to 0.1 ms.
  const model = measuredPageCost(meta.page, records);
  for (const c of e.cells) {
    const m = model.find((x) => x.resolver === c.resolver && x.transport === c.transport && x.mode === c.mode)!;
    assert.equal(c.verdict, m.verdict);
    assert.deepEqual(c.onLoad, { delta: Number(m.onLoad.delta!.toFixed(1)), lower: Number(m.onLoad.lower!.toFixed(1)), upper: Number(m.onLoad.upper!.toFixed(1)) });
  }
  // Whatever the model's version: 75 ms slower lookups over cold DoT move onLoad later than UDP's.
  assert.ok(dotCold.onLoad!.delta > udpCold.onLoad!.delta + 50, JSON.stringify([dotCold.onLoad, udpCold.onLoad]));
  assert.ok(dotCold.onLoad!.lower <= dotCold.onLoad!.delta && dotCold.onLoad!.delta <= dotCold.onLoad!.upper);
  // late.example.com failed every cold DoT lookup (6 of 18 lookups of the cell).
  assert.deepEqual([dotCold.failures, dotCold.lookups], [6, 18]);
  assert.deepEqual([udpCold.failures, udpCold.lookups], [0, 18]);
  assert.equal(dotCold.medianMs, 80);
  assert.equal(dotCold.histogram.reduce((a, b) => a + b, 0), 2, 'two hosts resolved');
  assert.equal(udpCold.histogram[2], 3, 'three hosts at 5 ms');
  // 2 lookups per host (A, AAAA) of 150 bytes and 2 packets each.
  assert.deepEqual([dotCold.bytesPerLookup, dotCold.packetsPerLookup], [150, 2]);
  assert.deepEqual([dotCold.p5Ms, dotCold.p95Ms], [80, 80]);
});

test('history entries that are not one are refused by the schema', () => {
  const { meta, records } = measured('p1', 1_700_000_000_000, 80);
  const good = historyEntry(meta, records);
  const bad: unknown[] = [
    null, {}, { ...good, version: 2 }, { ...good, extra: 1 }, { ...good, at: 'now' },
    { ...good, cells: [{ ...good.cells[0], transport: 'carrier-pigeon' }] },
    { ...good, cells: [{ ...good.cells[0], histogram: [1, 2] }] },
    { ...good, cells: [{ ...good.cells[0], failures: -1 }] },
  ];
  for (const b of bad) assert.equal(isHistoryEntry(b), false, JSON.stringify(b)?.slice(0, 120));
});

test('history store: add, replace by id, list by time and site, unreadable entries counted, clear', async () => {
  const area = new FakeArea();
  const store = new HistoryStore(area);
  const entries = [1000, 2000, 3000].map((at, i) => historyEntry(measured(`p${i}`, at, 80 + i).meta, measured(`p${i}`, at, 80 + i).records));
  for (const e of entries) await store.add(e);
  assert.equal((await store.list()).entries.length, 3);
  assert.deepEqual((await store.list({ since: 1500 })).entries.map((e) => e.id), ['p1', 'p2']);
  assert.deepEqual((await store.list({ until: 2000 })).entries.map((e) => e.id), ['p0', 'p1']);
  assert.equal((await store.list({ site: 'example.org' })).entries.length, 3, 'a parent domain matches');
  assert.equal((await store.list({ site: 'ample.org' })).entries.length, 0, 'a suffix that is not a parent does not');
  // Measuring a page again replaces its entry.
  await store.add({ ...entries[0]!, at: 4000 });
  const all = await store.list();
  assert.deepEqual(all.entries.map((e) => [e.id, e.at]), [['p1', 2000], ['p2', 3000], ['p0', 4000]]);
  // A damaged entry is skipped and counted, not thrown.
  area.data.set(HISTORY_KEYS.entry('p1'), { version: 1, nonsense: true });
  const after = await store.list();
  assert.deepEqual([after.entries.length, after.total, after.unreadable], [2, 3, 1]);
  await store.clear();
  assert.equal([...area.data.keys()].filter((k) => k.startsWith('history:')).length, 0);
  assert.equal((await store.list()).total, 0);
});

test('history store: an excluded site\'s entries are removed, the others kept', async () => {
  const area = new FakeArea();
  const store = new HistoryStore(area);
  for (const [i, host] of ['www.bank.example', 'bank.example', 'news.example.org'].entries()) {
    const m = measured(`p${i}`, 1000 + i, 80, host);
    await store.add(historyEntry(m.meta, m.records));
  }
  assert.equal(await store.remove((h) => h === 'bank.example' || h.endsWith('.bank.example')), 2);
  assert.deepEqual((await store.list()).entries.map((e) => e.host), ['news.example.org']);
  assert.deepEqual([...area.data.keys()].filter((k) => k.startsWith('history:e:')), [HISTORY_KEYS.entry('p2')]);
  assert.equal(await store.remove(() => false), 0);
});

test('history store: the oldest entries go beyond the caps', async () => {
  const area = new FakeArea();
  const store = new HistoryStore(area);
  const { meta, records } = measured('p', 1, 80);
  const base: HistoryEntry = historyEntry(meta, records);
  // Past the entry cap, each add drops the oldest.
  const index = Array.from({ length: HISTORY_CAPS.entries }, (_, i) => ({ id: `old${i}`, at: i, chars: 10 }));
  area.data.set(HISTORY_KEYS.index, index);
  for (const i of [0, 1]) area.data.set(HISTORY_KEYS.entry(`old${i}`), { ...base, id: `old${i}`, at: i });
  await store.add({ ...base, id: 'new', at: 10_000_000 });
  const idx = area.data.get(HISTORY_KEYS.index) as Array<{ id: string }>;
  assert.equal(idx.length, HISTORY_CAPS.entries);
  assert.equal(idx[0]!.id, 'old1');
  assert.equal(idx.at(-1)!.id, 'new');
  assert.equal(area.data.has(HISTORY_KEYS.entry('old0')), false, 'the dropped entry\'s key is removed');
  assert.equal(area.data.has(HISTORY_KEYS.entry('old1')), true);
});
