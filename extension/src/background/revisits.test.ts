import assert from 'node:assert/strict';
import { test } from 'vitest';
import { storedRecord } from '../../../common/stored-record.js';
import { defaultSettings } from '../settings.js';
import { REVISIT_BUCKETS_S } from '../cache-savings.js';
import { RevisitStore, REVISITS_KEY } from './revisits.js';
import { exchange, FakeArea, host, pageRecord } from './test-fixtures.js';

function store(o: { consent?: boolean; complete?: boolean; refused?: boolean } = {}) {
  const local = new FakeArea();
  let startedAt = 1_000_000;
  const s = new RevisitStore({
    local,
    loadSettings: async () => ({ ...defaultSettings([]), consent: { ...defaultSettings([]).consent, given: o.consent ?? true } }),
    pageReport: async () => (o.refused
      ? { ok: false, code: 'excluded', message: 'excluded' } as never
      : { ok: true, record: { ...pageRecord('p', [host('a.example', 0), host('b.example', 250), host('intranet', 5, { measurable: false })]), startedAt, complete: o.complete ?? true } }),
    selfSender: {},
  });
  return { s, local, at: (t: number) => (startedAt = t) };
}

test('each page notes its measurable hosts\' needs; a measurement their TTLs per resolver (the smallest)', async () => {
  const { s, at } = store();
  await s.notePage(1);
  at(1_000_000 + 45_000);
  await s.notePage(1);
  const a = exchange('a.example', 'doh', 'cold', 1, 'A', 5);
  const w = exchange('a.example', 'doh', 'warm', 1, 'A', 7);
  await s.noteMeasurement([
    storedRecord({ ...a, ttl: 300 }), storedRecord({ ...a, qtype: 'AAAA', ttl: 120 }), storedRecord({ ...a, resolver: 'cf', ttl: 60 }),
    storedRecord({ ...w, ttl: 300 }), storedRecord({ ...w, repeat: 2, ttl: 300, timings: { ...w.timings, total: 11 }, replay: { ...w.replay!, endedAt: w.replay!.pageStartedAt + 11 } }),
    storedRecord({ ...a, host: 'nowhere.example', ttl: 5 }), storedRecord({ ...a, ok: false, ttl: null }),
  ]);
  const all = await s.all();
  assert.deepEqual([...all.keys()].sort(), ['a.example', 'b.example']);
  const h = all.get('a.example')!;
  assert.equal(h.needs, 2);
  assert.equal(h.intervals[REVISIT_BUCKETS_S.indexOf(60)], 1);
  assert.deepEqual(h.ttls, { lab: 120, cf: 60 });
  // Its warm lookups with the lab resolver, 7 and 11 ms: the median; cf was measured cold only.
  assert.deepEqual(h.ms, { lab: 9 });
  assert.deepEqual(all.get('b.example')!.ttls, {});
  await s.purge((name) => name === 'a.example');
  assert.deepEqual([...(await s.all()).keys()], ['b.example']);
});

test('nothing is noted without consent, for a page still loading, or one the gate refuses (private window, excluded)', async () => {
  for (const o of [{ consent: false }, { complete: false }, { refused: true }]) {
    const { s, local } = store(o);
    await s.notePage(1);
    assert.equal(local.data.has(REVISITS_KEY), false, JSON.stringify(o));
  }
});

test('a stored host that does not check is dropped when read', async () => {
  const { s, local } = store();
  await local.set({ [REVISITS_KEY]: { 'x.example': { last: 'yesterday' }, 'y.example': { last: 1, needs: 1, intervals: new Array(REVISIT_BUCKETS_S.length + 1).fill(0), ttls: {} } } });
  assert.deepEqual([...(await s.all()).keys()], ['y.example']);
});
