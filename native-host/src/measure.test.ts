import assert from 'node:assert/strict';
import test from 'node:test';
import dnsPacket from 'dns-packet';
import type { MeasureRequest } from '../../common/schema.js';
import type { TransportId } from '../../common/transports.js';
import { zeroTotals } from './dial.js';
import { measure, summarizeRecords } from './measure.js';
import { TRANSPORTS } from './transports/registry.js';
import type { Session, Transport } from './transports/transport.js';

/** A fake transport: answers every query after `delay` ms of a fake clock; counts opened sessions. */
function fakeTransports(clock: { now: number }, delay: Record<string, number>) {
  const opened: string[] = [];
  const make = (id: TransportId): Transport => ({
    id,
    zeroId: id === 'doh' || id === 'doh1',
    pad: false,
    async open(endpoint) {
      opened.push(`${id}:${endpoint.port}`);
      clock.now += id === 'udp' ? 0 : 2;
      let alive = true;
      const session: Session = {
        setup: { connect: id === 'udp' ? null : 1, tls: id === 'udp' || id === 'tcp' ? null : 1 },
        tls: null,
        get usable() {
          return alive;
        },
        async exchange(query) {
          clock.now += delay[id] ?? 1;
          const q = dnsPacket.decode(query);
          return dnsPacket.encode({ type: 'response', id: q.id, questions: q.questions, answers: [{ type: 'A', name: q.questions![0]!.name, ttl: 5, data: '192.0.2.1' }] });
        },
        wire: () => zeroTotals(),
        drainEvents: () => [],
        resumable: () => null,
        close: () => {
          alive = false;
        },
      };
      return session;
    },
  });
  const transports = Object.fromEntries(Object.keys(TRANSPORTS).map((id) => [id, make(id as TransportId)])) as Record<TransportId, Transport>;
  return { transports, opened };
}

const request = (over: Partial<MeasureRequest> = {}): MeasureRequest => ({
  id: 1,
  type: 'measure',
  hosts: ['a.test', 'b.test'],
  resolvers: [
    {
      id: 'r',
      name: 'r',
      endpoints: [
        { transport: 'udp', address: '127.0.0.1', port: 1 },
        { transport: 'tcp', address: '127.0.0.1', port: 2 },
        { transport: 'dot', address: '127.0.0.1', port: 3, serverName: 'x.test' },
        { transport: 'doh', address: '127.0.0.1', port: 4, serverName: 'x.test' },
      ],
    },
  ],
  warmup: false,
  ...over,
});

async function run(req: MeasureRequest) {
  const clock = { now: 0 };
  const fake = fakeTransports(clock, { udp: 1, tcp: 2, dot: 3, doh: 4 });
  const result = await measure(req, {}, undefined, { clock: () => clock.now, transports: fake.transports });
  return { ...result, opened: fake.opened };
}

test('the same seed gives the same order of exchanges; another seed another order', async () => {
  const order = (r: Awaited<ReturnType<typeof run>>) => r.records.map((x) => `${x.host} ${x.transport}`).join(',');
  const a = await run(request({ seed: 1, repeat: 3 }));
  const b = await run(request({ seed: 1, repeat: 3 }));
  const c = await run(request({ seed: 2, repeat: 3 }));
  assert.equal(a.seed, 1);
  assert.equal(order(a), order(b));
  assert.notEqual(order(a), order(c));
  assert.equal(a.records.length, 2 * 4 * 3);
});

test('cold opens a connection per exchange; warm one per endpoint, and its set-up is not timed', async () => {
  const cold = await run(request({ modes: ['cold'], seed: 5 }));
  assert.equal(cold.opened.length, 8);
  for (const r of cold.records.filter((x) => x.transport === 'dot')) {
    assert.deepEqual([r.timings.connect, r.timings.tls, r.timings.query, r.timings.total], [1, 1, 3, 5]);
    assert.equal(r.reused, false);
  }
  const warm = await run(request({ modes: ['warm'], seed: 5 }));
  assert.equal(warm.opened.length, 4);
  const dot = warm.records.filter((x) => x.transport === 'dot');
  assert.deepEqual(dot.map((r) => [r.timings.connect, r.timings.tls, r.timings.total, r.reused]), [
    [null, null, 3, false],
    [null, null, 3, true],
  ]);
  assert.equal(dot[0]!.connection, dot[1]!.connection);
});

test('warm-up and priming run before the clock and report no records', async () => {
  const r = await run(request({ warmup: true, prime: true, modes: ['cold'], seed: 3 }));
  assert.equal(r.records.length, 8);
  assert.equal(r.warmedUp, true);
  assert.equal(r.primed, true);
  // 8 measured + 4 warm-up cold connections + 1 priming connection (the resolver's first endpoint, udp, opens one per query)
  assert.ok(r.opened.length >= 12, String(r.opened.length));
});

test('summaries group by resolver, endpoint, mode and qtype, with failures counted apart', async () => {
  const r = await run(request({ modes: ['cold', 'warm'], repeat: 4, qtypes: ['A', 'AAAA'], seed: 9 }));
  const rows = summarizeRecords(r.records);
  assert.equal(rows.length, 4 * 2 * 2);
  for (const row of rows) {
    assert.equal(row.total.n, 2 * 4);
    assert.equal(row.failed, 0);
  }
  const udp = rows.find((x) => x.transport === 'udp' && x.mode === 'cold' && x.qtype === 'A')!;
  assert.equal(udp.total.median, 1);
  assert.equal(udp.total.rsd, 0);
});
