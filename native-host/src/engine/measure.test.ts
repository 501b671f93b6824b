import assert from 'node:assert/strict';
import { test } from 'vitest';
import dnsPacket from 'dns-packet';
import { CODES, DnscostError } from '../../../common/errors.js';
import type { MeasureRequest } from '../../../common/schema.js';
import type { TransportId } from '../../../common/transports.js';
import { monotonic, zeroTotals } from '../dial.js';
import { REGISTRY } from '../transports/registry.js';
import type { Session, Transport } from '../transports/transport.js';
import { measure, splitEvenly, summarizeRecords } from './measure.js';

/** What the real transport `id` is (framing, idle time, socket per query, layers); the fakes keep it. */
function traitsOf(id: TransportId): Pick<Transport, 'lengthPrefix' | 'idleMs' | 'socketPerQuery' | 'splits'> {
  const { lengthPrefix, idleMs, socketPerQuery, splits } = REGISTRY[id];
  return { lengthPrefix, idleMs, socketPerQuery, splits };
}

/** A fake transport: answers every query after `delay` ms of a fake clock; counts opened sessions. */
function fakeTransports(clock: { now: number }, delay: Record<string, number>) {
  const opened: string[] = [];
  const make = (id: TransportId): Transport => ({
    id,
    zeroId: id === 'doh' || id === 'doh1',
    pad: false,
    ...traitsOf(id),
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
  const transports = Object.fromEntries(Object.keys(REGISTRY).map((id) => [id, make(id as TransportId)])) as Record<TransportId, Transport>;
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

test('a transport with its own clock (the QUIC companion): the pipe to it is left out of the total, the rest is kept, replayed too', async () => {
  // The fake companion: an open takes 7 ms of the host's clock, 4 of them the handshake it timed itself; an exchange
  // 6 ms, 4 of them the query it timed itself. What remains (2 + 2 ms) is the pipe between the two processes.
  const clock = { now: 0 };
  const own = new WeakMap<Buffer, number>();
  const doq: Transport = {
    id: 'doq',
    zeroId: true,
    pad: false,
    ...traitsOf('doq'),
    async open() {
      clock.now += 7;
      const session: Session = {
        setup: { connect: null, tls: 4 },
        tls: null,
        usable: true,
        queryMs: (answer) => own.get(answer) ?? null,
        async exchange(query) {
          clock.now += 6;
          const q = dnsPacket.decode(query);
          const answer = dnsPacket.encode({ type: 'response', id: q.id, questions: q.questions, answers: [] });
          own.set(answer, 4);
          return answer;
        },
        wire: () => zeroTotals(),
        drainEvents: () => [],
        resumable: () => null,
        close: () => {},
      };
      return session;
    },
  };
  const transports = { ...fakeTransports(clock, {}).transports, doq };
  const req = request({ resolvers: [{ id: 'r', name: 'r', endpoints: [{ transport: 'doq', address: '127.0.0.1', port: 5, serverName: 'x.test' }] }] });
  const timed = async (mode: 'cold' | 'warm') => (await measure({ ...req, modes: [mode] }, {}, undefined, { clock: () => clock.now, transports })).records;
  for (const r of await timed('cold')) assert.deepEqual([r.timings.tls, r.timings.query, r.timings.total], [4, 4, 8]);
  for (const r of await timed('warm')) assert.deepEqual([r.timings.tls, r.timings.query, r.timings.total], [null, 4, 4]);
  // A replayed page leaves the exchange's pipe out of each lookup's end the same way (the open's stays with the set-up).
  const replayed = async (mode: 'cold' | 'warm') =>
    (await measure({ ...req, modes: [mode], schedule: 'replay', hosts: ['a.test'], qtypes: ['A'] }, {}, undefined, { clock: () => clock.now, transports })).records;
  for (const r of await replayed('cold')) assert.deepEqual([r.timings.query, r.timings.total], [4, 11]);
  for (const r of await replayed('warm')) assert.deepEqual([r.timings.query, r.timings.total], [4, 4]);
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

// ── replay ──────────────────────────────────────────────────────────────────────────────────────────────────────

/**
 * A fake connection transport on real timers: opening takes `openMs` and costs 300 bytes in 3 packets each way;
 * every exchange answers after `delay(name)` ms, concurrently (pipelined), and costs its DNS bytes plus 40 bytes of
 * "framing" and one packet each way. It keeps every session so the test can read the totals the engine split.
 */
function timedTransports(openMs: number, delay: (name: string) => number) {
  const sessions: Array<{ transport: TransportId; wire: () => ReturnType<typeof zeroTotals>; inFlightMax: number; ids: number[] }> = [];
  const make = (id: TransportId): Transport => ({
    id,
    zeroId: id === 'doh' || id === 'doh1',
    pad: false,
    ...traitsOf(id),
    async open() {
      const udp = id === 'udp';
      if (!udp) await new Promise((r) => setTimeout(r, openMs));
      const totals = zeroTotals();
      const add = (bytes: number, packets: number, dir: 'sent' | 'received', dns = 0) => {
        totals.bytes[dir] += bytes;
        totals.payload[dir] += bytes - 40 * packets;
        totals.packets[dir] += packets;
        totals.dns[dir] += dns;
      };
      if (!udp) {
        add(300, 3, 'sent');
        add(300, 3, 'received');
      }
      let inFlight = 0;
      const record = { transport: id, wire: () => structuredClone(totals), inFlightMax: 0, ids: [] as number[] };
      sessions.push(record);
      const session: Session = {
        setup: { connect: udp ? null : openMs / 2, tls: udp ? null : openMs / 2 },
        tls: null,
        usable: true,
        async exchange(query, qid) {
          record.ids.push(qid);
          inFlight += 1;
          record.inFlightMax = Math.max(record.inFlightMax, inFlight);
          add(query.length + 80, 1, 'sent', query.length);
          const q = dnsPacket.decode(query);
          const name = q.questions![0]!.name;
          await new Promise((r) => setTimeout(r, delay(name)));
          inFlight -= 1;
          const answer = dnsPacket.encode({ type: 'response', id: q.id, questions: q.questions, answers: [{ type: 'A', name, ttl: 5, data: '192.0.2.1' }] });
          add(answer.length + 80, 1, 'received', answer.length);
          return answer;
        },
        wire: () => record.wire(),
        drainEvents: () => [],
        resumable: () => null,
        close: () => {},
      };
      return session;
    },
  });
  const transports = Object.fromEntries(Object.keys(REGISTRY).map((id) => [id, make(id as TransportId)])) as Record<TransportId, Transport>;
  return { transports, sessions };
}

const sum = (records: readonly { bytes: { sent: number; received: number }; packets: { sent: number; received: number } }[]) =>
  records.reduce((a, r) => ({ bytes: a.bytes + r.bytes.sent + r.bytes.received, packets: a.packets + r.packets.sent + r.packets.received }), { bytes: 0, packets: 0 });

test('replay: cold, the first lookup opens one connection, lookups starting meanwhile wait for it, all share it', async () => {
  const fake = timedTransports(30, (name) => (name.startsWith('slow') ? 40 : 5));
  const req = request({
    schedule: 'replay',
    hosts: [{ name: 'a.test', firstNeededMs: 0 }, { name: 'slow.test', firstNeededMs: 10 }, { name: 'c.test', firstNeededMs: 60 }, 'd.test'],
    qtypes: ['A', 'AAAA'],
    modes: ['cold'],
    repeat: 2,
    seed: 4,
  });
  const result = await measure(req, {}, undefined, { clock: monotonic, transports: fake.transports });
  assert.equal(result.records.length, 4 * 2 * 4 * 2);
  for (const r of result.records) assert.equal(r.ok, true, JSON.stringify(r.error));
  const streams = fake.sessions.filter((s) => s.transport !== 'udp');
  assert.equal(streams.length, 3 * 2, 'one connection per endpoint per replay');
  assert.equal(fake.sessions.filter((s) => s.transport === 'udp').length, 8 * 2, 'one UDP socket per lookup');
  for (const transport of ['tcp', 'dot', 'doh'] as const) {
    for (const repeat of [1, 2]) {
      const page = result.records.filter((r) => r.transport === transport && r.repeat === repeat);
      assert.equal(new Set(page.map((r) => r.connection)).size, 1);
      const payers = page.filter((r) => r.replay!.paidSetup);
      assert.equal(payers.length, 1);
      assert.deepEqual([payers[0]!.timings.connect, payers[0]!.timings.tls, payers[0]!.reused], [15, 15, false]);
      // d.test (at 0) and a.test (at 0) start together: one pays, the others wait for its 30 ms set-up — they ask
      // nothing before the connection is up. (Wall-clock bounds only from below: a loaded machine delays timers.)
      const ready = payers[0]!.startedAt + 30;
      const waitedForSetUp = (r: (typeof page)[number]) => r.replay!.waitedForConnection! > 0 && r.startedAt + r.replay!.waitedForConnection! >= ready - 1;
      for (const r of page.filter((x) => x.replay!.firstNeededMs === 0 && !x.replay!.paidSetup)) {
        assert.ok(waitedForSetUp(r), `${r.host} waited ${r.replay!.waitedForConnection} ms from ${r.startedAt}; ready at ${ready}`);
        assert.equal(r.timings.connect, null);
        assert.equal(r.reused, true);
      }
      // slow.test starts at 10 ms, while the connection is still opening: it waits the remaining ~20 ms.
      const slow = page.find((r) => r.host === 'slow.test')!;
      assert.ok(waitedForSetUp(slow), `slow.test waited ${slow.replay!.waitedForConnection} ms`);
      // c.test starts at 60 ms on the open connection: no wait, and its schedule is honoured within a few ms.
      const c = page.find((r) => r.host === 'c.test')!;
      assert.equal(c.replay!.waitedForConnection, null);
      const late = c.startedAt - (c.replay!.pageStartedAt + c.replay!.firstNeededMs);
      assert.ok(late >= -0.5 && late < 50, `c.test started ${late} ms after its offset`);
      assert.ok(Math.abs(c.replay!.endedAt - (c.startedAt + c.timings.total)) < 1e-9);
      // Counted totals are split, never double-counted: the page's records add up to the connection's counters.
      for (const r of page) {
        assert.equal(r.replay!.sharedWith, 8);
        assert.deepEqual(r.provenance, { bytes: 'estimated', packets: 'estimated' });
        if (transport === 'doh') assert.equal(r.bytes.sent, r.layers.dns.sent + r.layers.http!.sent + r.layers.tls!.sent + r.layers.headers.sent);
      }
    }
  }
  // Sessions were opened in run order; pair each with its page by connection number order.
  const byConnection = new Map<number, typeof result.records>();
  for (const r of result.records) if (r.connection !== null) byConnection.set(r.connection, [...(byConnection.get(r.connection) ?? []), r]);
  const connections = [...byConnection.keys()].sort((a, b) => a - b);
  assert.equal(connections.length, streams.length);
  connections.forEach((n, i) => {
    const w = streams[i]!.wire();
    assert.deepEqual(sum(byConnection.get(n)!), { bytes: w.bytes.sent + w.bytes.received, packets: w.packets.sent + w.packets.received });
    const dns = byConnection.get(n)!.reduce((a, r) => a + r.layers.dns.sent, 0);
    assert.equal(dns, w.dns.sent, 'DNS bytes are each exchange\'s own');
  });
  // Pipelined ids are distinct on a connection; DoH sends id 0 on every stream.
  for (const s of streams) {
    assert.ok(s.inFlightMax > 1, `${s.transport}: lookups overlapped (${s.inFlightMax})`);
    if (s.transport !== 'doh') assert.equal(new Set(s.ids).size, s.ids.length);
  }
});

test('replay: warm, the connection is open before the page starts and nobody waits; UDP counts stay exact', async () => {
  const fake = timedTransports(30, () => 5);
  const req = request({ schedule: 'replay', hosts: ['a.test', 'b.test', 'c.test'], modes: ['warm'], repeat: 3, seed: 8 });
  const result = await measure(req, {}, undefined, { clock: monotonic, transports: fake.transports });
  assert.equal(fake.sessions.filter((s) => s.transport !== 'udp').length, 3, 'one warm connection per endpoint for the run');
  for (const r of result.records) {
    assert.equal(r.replay!.waitedForConnection, null);
    assert.equal(r.replay!.paidSetup, false);
    assert.equal(r.timings.connect, null);
    assert.ok(r.timings.total < 25, `${r.transport} ${r.timings.total}`);
  }
  for (const r of result.records.filter((x) => x.transport === 'udp')) {
    assert.equal(r.connection, null);
    assert.equal(r.replay!.sharedWith, 1);
    assert.deepEqual(r.provenance, { bytes: 'counted', packets: 'counted' });
    assert.deepEqual(r.packets, { sent: 1, received: 1 });
  }
  const dot = result.records.filter((r) => r.transport === 'dot');
  const first = dot.filter((r) => r.repeat === 1);
  // The set-up is counted on the connection's first exchange (as sequential warm runs do), and only there.
  assert.equal(first.filter((r) => !r.reused).length, 1);
  const w = fake.sessions.find((s) => s.transport === 'dot')!.wire();
  assert.deepEqual(sum(dot), { bytes: w.bytes.sent + w.bytes.received, packets: w.packets.sent + w.packets.received });
});

test('each host can carry its own record types (what the recording browser asked for it): replayed, primed and counted', async () => {
  const req = request({
    hosts: [{ name: 'doc.test', firstNeededMs: 0, qtypes: ['A', 'AAAA', 'HTTPS'] }, { name: 'img.test', firstNeededMs: 5 }, 'css.test'],
    qtypes: ['A', 'AAAA'], schedule: 'replay', modes: ['cold'], repeat: 2, prime: true, seed: 3,
  });
  const progress: Array<[number, number]> = [];
  const clock = { now: 0 };
  const fake = fakeTransports(clock, { udp: 1, tcp: 2, dot: 3, doh: 4 });
  const result = await measure(req, { onProgress: (d, t) => progress.push([d, t]) }, undefined, { clock: () => clock.now, transports: fake.transports });
  const asked = (host: string) => [...new Set(result.records.filter((r) => r.host === host).map((r) => r.qtype))].sort();
  assert.deepEqual(asked('doc.test'), ['A', 'AAAA', 'HTTPS']);
  assert.deepEqual(asked('img.test'), ['A', 'AAAA'], 'a host without its own types gets the request\'s');
  assert.deepEqual(asked('css.test'), ['A', 'AAAA']);
  // 7 questions × 4 endpoints × 2 repeats, and progress counts exactly that.
  assert.equal(result.records.length, 7 * 4 * 2);
  assert.deepEqual(progress[0], [0, 56], 'the total is told before priming');
  assert.deepEqual(progress.at(-1), [56, 56]);
  assert.ok(result.records.every((r) => r.ok));
});

test('splitEvenly gives integer shares that add up exactly', () => {
  assert.deepEqual(splitEvenly(10, 3), [4, 3, 3]);
  assert.deepEqual(splitEvenly(-4, 3), [-1, -1, -2]);
  assert.deepEqual(splitEvenly(5, 1), [5]);
  assert.deepEqual(splitEvenly(5, 0), []);
});

test('a request over the cap on exchanges is refused before anything is sent', async () => {
  const hosts = Array.from({ length: 500 }, (_, i) => `h${i}.test`);
  await assert.rejects(run(request({ hosts, repeat: 10, modes: ['cold', 'warm'], qtypes: ['A', 'AAAA', 'HTTPS'] })), (e: Error & { code?: string }) => e.code === 'bad-request' && /at most 50000/.test(e.message));
});

test('priming asks a resolver\'s names in parallel and gives it up after two timeouts in a row', async () => {
  const clock = { now: 0 };
  const fake = fakeTransports(clock, { udp: 1 });
  let asked = 0;
  let inFlight = 0;
  let most = 0;
  const udp = fake.transports.udp;
  const slow: Transport = {
    ...udp,
    async open(endpoint, opts) {
      const s = await udp.open(endpoint, opts);
      return {
        ...s,
        usable: true,
        async exchange() {
          asked++;
          most = Math.max(most, ++inFlight);
          await new Promise((r) => setTimeout(r, 30));
          inFlight--;
          throw new DnscostError(CODES.TIMEOUT, 'no answer');
        },
      } as Session;
    },
  };
  const hosts = Array.from({ length: 40 }, (_, i) => `h${i}.test`);
  const req = request({ hosts, prime: true, modes: ['cold'], resolvers: [{ id: 'r', name: 'r', endpoints: [{ transport: 'udp', address: '127.0.0.1', port: 1 }] }], timeoutMs: 100 });
  await measure(req, {}, undefined, { clock: () => clock.now, transports: { ...fake.transports, udp: slow } });
  // Priming: at most PRIME_CONCURRENCY at once, and it stops once two answers in a row time out (a few more were
  // already in flight) instead of asking all 40; the measured exchanges (40, cold) follow.
  assert.ok(most > 1, `parallel (${most} at once)`);
  assert.ok(asked - 40 < 40, `priming asked ${asked - 40} of 40 before giving up`);
});
