// Browser-like replay against real peers: a page's lookups start at their offsets, concurrently, on one connection
// per endpoint. Against the fault server a slow first answer holds up the lookups behind it on HTTP/1.1 only
// (head-of-line blocking), not on HTTP/2, DoT or TCP (multiplexed or pipelined) nor UDP. Against CoreDNS the
// records of each connection add up to its kernel-counted totals, and scheduled offsets are honoured.
import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import type { ExchangeRecord } from '../../common/record.js';
import type { EndpointSpec, MeasureRequest } from '../../common/schema.js';
import type { TransportId } from '../../common/transports.js';
import type { WireTotals } from '../../native-host/src/dial.js';
import { parseEndpoint } from '../../native-host/src/endpoints.js';
import { measure } from '../../native-host/src/engine/measure.js';
import { REGISTRY } from '../../native-host/src/transports/registry.js';
import type { Transport } from '../../native-host/src/transports/transport.js';
import { issueLeaf, LAB_CERT_IPS, LAB_CERT_NAMES, makeCA } from '../../lab/certs.js';
import { startFaultServer, type FaultServer } from '../../lab/fault-server/index.js';
import { startCoreDNS, type LabResolver } from '../../lab/resolver.js';
import { LAB_ZONE } from '../../lab/zone.js';

const ALL: TransportId[] = ['udp', 'tcp', 'dot', 'doh', 'doh1'];
/**
 * How late a lookup may start after its offset. Timers have 1 ms granularity and a burst of 20+ lookups starts one
 * after another on one thread (~0.2 ms each): the median must stay within a few ms; on 2 cores shared with other
 * test runs a single stall of a few tens of ms happens, hence the looser cap on the latest.
 */
const LATE_MEDIAN_MS = 5;
const LATE_MAX_MS = 60;
const SLOW_MS = 300;

/** Every session the engine opens, with the counters the engine last read and those just before it closed. */
interface Opened {
  transport: TransportId;
  lastRead: WireTotals | null;
  closedWire: WireTotals | null;
}

/** The real transports, each session's close() first reading its kernel counters. */
function watched(): { transports: Record<TransportId, Transport>; opened: Opened[] } {
  const opened: Opened[] = [];
  const transports = Object.fromEntries(
    Object.entries(REGISTRY).map(([id, t]) => [
      id,
      {
        ...t,
        async open(endpoint, options) {
          const entry: Opened = { transport: t.id, lastRead: null, closedWire: null };
          opened.push(entry);
          const session = await t.open(endpoint, options);
          const close = session.close.bind(session);
          const wire = session.wire.bind(session);
          session.wire = () => (entry.lastRead = wire());
          session.close = () => {
            entry.closedWire ??= wire();
            close();
          };
          return session;
        },
      } satisfies Transport,
    ]),
  ) as Record<TransportId, Transport>;
  return { transports, opened };
}

const pageOf = (records: readonly ExchangeRecord[], r: ExchangeRecord) =>
  records.filter((x) => x.endpoint === r.endpoint && x.transport === r.transport && x.mode === r.mode && x.repeat === r.repeat);

function assertSchedule(records: readonly ExchangeRecord[]): { median: number; max: number } {
  const lates = records.map((r) => r.startedAt - (r.replay!.pageStartedAt + r.replay!.firstNeededMs)).sort((a, b) => a - b);
  for (const r of records) assert.ok(Math.abs(r.replay!.endedAt - r.startedAt - r.timings.total) < 1e-6);
  const median = lates[Math.floor(lates.length / 2)]!;
  const max = lates.at(-1)!;
  assert.ok(lates[0]! > -1, `a lookup started ${lates[0]} ms before its offset`);
  assert.ok(median < LATE_MEDIAN_MS, `median start ${median.toFixed(2)} ms after the offset`);
  assert.ok(max < LATE_MAX_MS, `latest start ${max.toFixed(2)} ms after the offset`);
  return { median, max };
}

describe('replay against the fault server: head-of-line blocking', { timeout: 120_000 }, () => {
  let server: FaultServer;
  let caPem: string;
  beforeAll(async () => {
    const ca = makeCA('dnscost replay CA');
    caPem = ca.certPem;
    const leaf = issueLeaf(ca, { names: LAB_CERT_NAMES, ips: LAB_CERT_IPS });
    server = await startFaultServer({ certPem: leaf.certPem, keyPem: leaf.keyPem });
  });
  afterAll(async () => {
    await server?.stop();
  });

  for (const mode of ['cold', 'warm'] as const) {
    test(`${mode}: a slow first answer delays the next lookups on doh1 only`, async () => {
      const connect = new Map([['dns.test', server.address]]);
      const endpoints: EndpointSpec[] = [
        parseEndpoint(server.endpoints.udp),
        parseEndpoint(server.endpoints.tcp),
        parseEndpoint(server.endpoints.dot, { connect }),
        parseEndpoint(server.endpoints.doh, { connect }),
        parseEndpoint(server.endpoints.doh1, { connect, http1: true }),
      ];
      const req: MeasureRequest = {
        id: 'hol',
        type: 'measure',
        schedule: 'replay',
        // The document's host answers slowly; two sub-resources' hosts are needed 20 and 40 ms later.
        hosts: [{ name: `delay-${SLOW_MS}.fault.test`, firstNeededMs: 0 }, { name: 'a.fault.test', firstNeededMs: 20 }, { name: 'b.fault.test', firstNeededMs: 40 }],
        resolvers: [{ id: 'fault', name: 'fault', ca: caPem, endpoints }],
        modes: [mode],
        repeat: 3,
        seed: 11,
      };
      const watch = watched();
      const { records } = await measure(req, {}, undefined, { clock: () => performance.now(), transports: watch.transports });
      assert.equal(records.length, 3 * 5 * 3);
      for (const r of records) assert.equal(r.ok, true, `${r.transport} ${r.host}: ${JSON.stringify(r.error)}`);
      const late = assertSchedule(records);
      const hol: Record<string, number[]> = {};
      for (const transport of ALL) {
        for (let repeat = 1; repeat <= 3; repeat++) {
          const page = records.filter((r) => r.transport === transport && r.repeat === repeat);
          const slow = page.find((r) => r.host.startsWith('delay-'))!;
          assert.ok(slow.timings.total >= SLOW_MS - 1, `${transport}: the slow answer took ${slow.timings.total}`);
          for (const r of page.filter((x) => x !== slow)) {
            // How long after the slow answer this one arrived (negative: before it).
            (hol[transport] ??= []).push(r.timings.total);
            if (transport === 'doh1') {
              // Queued behind the request in flight: it cannot end before the slow answer did.
              assert.ok(r.replay!.endedAt >= slow.replay!.endedAt, `doh1 ${r.host} ended before the slow answer`);
              assert.ok(r.timings.total >= SLOW_MS - r.replay!.firstNeededMs - LATE_MAX_MS, `doh1 ${r.host}: ${r.timings.total} ms`);
            } else {
              assert.ok(r.replay!.endedAt < slow.replay!.endedAt, `${transport} ${r.host} waited for the slow answer`);
              assert.ok(r.timings.total < SLOW_MS / 2, `${transport} ${r.host}: ${r.timings.total} ms`);
            }
          }
          if (transport !== 'udp') {
            assert.equal(new Set(page.map((r) => r.connection)).size, 1, `${transport}: one connection per page`);
            assert.equal(page.filter((r) => r.replay!.paidSetup).length, mode === 'cold' ? 1 : 0);
          }
        }
      }
      const opened = watch.opened.filter((o) => o.transport !== 'udp').length;
      // Warm-up opens one per endpoint (udp too); then cold pages one each, warm one per endpoint for the run.
      assert.equal(opened - 4, mode === 'cold' ? 4 * 3 : 4);
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
      console.error(`replay ${mode}: lookups behind a ${SLOW_MS} ms answer, median total ms:`,
        Object.fromEntries(Object.entries(hol).map(([t, xs]) => [t, Number(median(xs).toFixed(1))])), `; start after offset: median ${late.median.toFixed(2)} ms, latest ${late.max.toFixed(2)} ms`);
    });
  }
});

describe('replay against CoreDNS: one connection per endpoint, bytes add up to the counters', { timeout: 120_000 }, () => {
  let lab: LabResolver;
  beforeAll(async () => {
    lab = await startCoreDNS();
  });
  afterAll(async () => {
    await lab?.stop();
  });

  test('cold and warm pages of 24 hosts × A, AAAA on every transport', async () => {
    const connect = new Map([['dns.test', lab.address]]);
    const e = lab.endpoints;
    const endpoints = [
      parseEndpoint(e.udp),
      parseEndpoint(e.tcp),
      parseEndpoint(e.dot, { connect }),
      parseEndpoint(e.doh, { connect }),
      parseEndpoint(e.doh, { connect, http1: true }),
    ];
    // A page: the document's host first, a burst of sub-resource hosts at 15 ms, stragglers later.
    const hosts = Array.from({ length: 24 }, (_, i) => ({ name: LAB_ZONE.hostName(i + 1), firstNeededMs: i === 0 ? 0 : i < 12 ? 15 : 15 + (i - 11) * 5 }));
    const req: MeasureRequest = {
      id: 'page',
      type: 'measure',
      schedule: 'replay',
      hosts,
      resolvers: [{ id: 'lab', name: 'lab', ca: lab.certs.caPem, endpoints }],
      qtypes: ['A', 'AAAA'],
      modes: ['cold', 'warm'],
      repeat: 2,
      prime: true,
      seed: 5,
    };
    const watch = watched();
    const { records } = await measure(req, {}, undefined, { clock: () => performance.now(), transports: watch.transports });
    assert.equal(records.length, 24 * 2 * 5 * 2 * 2);
    for (const r of records) assert.equal(r.ok, true, `${r.transport} ${r.mode} ${r.host} ${r.qtype}: ${JSON.stringify(r.error)}`);
    const late = assertSchedule(records);

    // Priming opened one UDP session, warm-up one session per endpoint; the rest are the measured connections.
    const sessions = watch.opened.slice(1 + endpoints.length).filter((o) => o.transport !== 'udp');
    const cold = records.filter((r) => r.mode === 'cold' && r.transport !== 'udp');
    const warm = records.filter((r) => r.mode === 'warm' && r.transport !== 'udp');
    assert.equal(new Set(cold.map((r) => r.connection)).size, 4 * 2, 'cold: one connection per endpoint per page');
    assert.equal(new Set(warm.map((r) => r.connection)).size, 4, 'warm: one connection per endpoint for the run');
    assert.equal(sessions.length, 4 * 2 + 4);
    for (const r of cold) assert.equal(pageOf(records, r).filter((x) => x.replay!.paidSetup).length, 1);

    const byConnection = new Map<number, ExchangeRecord[]>();
    for (const r of records) if (r.connection !== null) byConnection.set(r.connection, [...(byConnection.get(r.connection) ?? []), r]);
    const report: string[] = [];
    // Connection numbers and sessions both follow the order of opening.
    for (const [i, [n, list]] of [...byConnection].sort((a, b) => a[0] - b[0]).entries()) {
      const { transport, lastRead, closedWire } = sessions[i]!;
      assert.equal(transport, list[0]!.transport);
      const w = lastRead!;
      const label = `${list[0]!.transport} ${list[0]!.mode} connection ${n}`;
      // Between the engine's last read (the end of the page) and closing, at most pure ACKs (a delayed ACK on a warm
      // connection that stayed open): no payload. Cold pages close right after the read.
      assert.deepEqual(closedWire!.payload, w.payload, `${label}: no payload after the last page`);
      assert.ok(closedWire!.packets.sent - w.packets.sent <= 2 && closedWire!.packets.received === w.packets.received, `${label}: ${JSON.stringify([closedWire!.packets, w.packets])}`);
      if (list[0]!.mode === 'cold') assert.deepEqual(closedWire!.bytes, w.bytes, `${label}: closed at once`);
      const total = (k: 'bytes' | 'packets', d: 'sent' | 'received') => list.reduce((a, r) => a + r[k][d], 0);
      const dns = (d: 'sent' | 'received') => list.reduce((a, r) => a + r.layers.dns[d], 0);
      // The sum over a connection's records is exactly what the kernel counted on it.
      assert.deepEqual({ sent: total('bytes', 'sent'), received: total('bytes', 'received') }, w.bytes, `${label}: bytes`);
      assert.deepEqual({ sent: total('packets', 'sent'), received: total('packets', 'received') }, w.packets, `${label}: packets`);
      assert.deepEqual({ sent: dns('sent'), received: dns('received') }, w.dns, `${label}: DNS bytes`);
      for (const r of list) assert.equal(r.provenance.bytes, 'estimated', `${label}: apportioned figures say so`);
      if (list[0]!.mode === 'cold' && list[0]!.repeat === 1) {
        report.push(`${list[0]!.transport} ${w.bytes.sent + w.bytes.received} B/${w.packets.sent + w.packets.received} pkts for 48 lookups`);
      }
    }
    // UDP: one socket per lookup, each counted exactly: one datagram each way.
    for (const r of records.filter((x) => x.transport === 'udp')) {
      assert.deepEqual([r.connection, r.replay!.sharedWith, r.provenance.bytes], [null, 1, 'counted']);
      assert.deepEqual(r.packets, { sent: 1, received: 1 });
    }
    console.error(`replay CoreDNS cold page: ${report.join('; ')}; start after offset: median ${late.median.toFixed(2)} ms, latest ${late.max.toFixed(2)} ms`);
  });
});
