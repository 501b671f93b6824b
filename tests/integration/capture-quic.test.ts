// DoQ and DoH3 wire bytes and packets per exchange equal a packet capture of the same exchanges (tshark on lo).
import { test } from 'vitest';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ExchangeRecord, Pair } from '../../common/record.js';
import type { MeasureRequest } from '../../common/schema.js';
import { parseEndpoint } from '../../native-host/src/endpoints.js';
import { measure } from '../../native-host/src/engine/measure.js';
import { monotonic } from '../../native-host/src/dial.js';
import { DOH3 } from '../../native-host/src/transports/doh3.js';
import { DOQ } from '../../native-host/src/transports/doq.js';
import { QuicCompanion } from '../../native-host/src/transports/quic-companion.js';
import type { CompanionFrame } from '../../native-host/src/transports/quic-protocol.js';
import { quicTransport } from '../../native-host/src/transports/quic.js';
import { REGISTRY } from '../../native-host/src/transports/registry.js';
import { labDir, startCoreDNS } from '../../lab/resolver.js';
import { canCapture, Capture, run } from '../../lab/capture.js';

/**
 * Sent datagrams are cut exactly (the companion counts a datagram under the same lock a snapshot takes, around the
 * send). A received datagram is counted when QUIC reads it, and the capture stamps it when the server sends it: one
 * the server sent after QUIC's last read before the answer was parsed (typically its ACK) sits in our socket's
 * queue at the cut and is counted on the next record. Each snapshot says when that last read was (`readAt`), so on
 * the received side a record may differ from its window by the received datagrams stamped after its `readAt` (less
 * READ_SLACK_US, the kernel's delivery) and up to its cut, moved to the next window in order; such records are
 * counted and shown, and every connection's records plus its "after" datagrams must add up to its capture exactly.
 * (A fixed slack before the cut was not enough: under load the companion parses an answer milliseconds after it
 * was read.)
 */
const READ_SLACK_US = 1000;

/** A connection's received datagrams that may still have been in the socket's queue at `cut`, oldest first. */
const queuedAt = (mine: readonly Datagram[], cut: { at: number; readAt: number }): Datagram[] =>
  mine.filter((f) => !f.sent && f.t > Math.min(cut.at, cut.readAt) - READ_SLACK_US && f.t <= cut.at);

/**
 * Remembers every answer the companion sends, in order: their `wire.at` are the cuts.
 *
 * The companion counts every UDP datagram of a connection at its socket and reads the counters when the answer is
 * parsed; each reply carries that moment (`wire.at`, µs on the Unix clock the capture stamps frames with). A
 * record's figures are the connection's counters at its answer less those at the previous record's answer on the
 * same connection (zero for a new one: the QUIC handshake, padded Initials included, is on the first exchange). So
 * per record the capture figure is the datagrams of its connection's UDP port pair stamped after the previous cut
 * and up to its own.
 */
class SpyCompanion extends QuicCompanion {
  readonly answers: Array<{ conn: number; at: number; readAt: number }> = [];
  override async request(message: Parameters<QuicCompanion['request']>[0], timeoutMs: number): Promise<CompanionFrame> {
    const reply = await super.request(message, timeoutMs);
    if (reply.type === 'answer') this.answers.push({ conn: reply.conn, at: reply.wire.at, readAt: reply.wire.readAt });
    return reply;
  }
}

interface Datagram {
  t: number;
  /** The QUIC connection it belongs to: 1, 2, … in order of their first datagram. */
  conn: number;
  server: number;
  sent: boolean;
  ipBytes: number;
}

/**
 * The capture's datagrams to and from the server ports, each given its QUIC connection. Connections map to the
 * capture's QUIC connections by order: the engine runs one exchange at a time and opens connections in order, so the
 * n-th connection of the run is the n-th seen (no warm-up, no priming). A capture connection is a client port from
 * its first datagram until the port starts another: the kernel may give a later connection a port an earlier one
 * used, and a client Initial after that port's own 1-RTT packets is a new one.
 */
async function datagrams(file: string, serverPorts: Set<number>): Promise<Datagram[]> {
  const out = await run('tshark', ['-r', file, '-n', '-Y', 'udp', '-T', 'fields', '-e', 'frame.time_epoch', '-e', 'udp.srcport', '-e', 'udp.dstport', '-e', 'ip.len', '-e', 'udp.payload'], 60_000);
  const list: Datagram[] = [];
  // Per client port: its current connection, and whether the client has sent 1-RTT (short header) packets on it.
  const current = new Map<number, { conn: number; short: boolean }>();
  let conns = 0;
  for (const line of out.split('\n')) {
    if (!line.trim()) continue;
    const [t, src, dst, len, payload = ''] = line.split('\t');
    const s = Number(src);
    const d = Number(dst);
    const sent = serverPorts.has(d);
    if (!sent && !serverPorts.has(s)) continue;
    const client = sent ? s : d;
    const first = parseInt(payload.slice(0, 2), 16);
    let c = current.get(client);
    // A long header (0x80) of type Initial (bits 0x30 clear) from the client.
    const initial = sent && (first & 0xb0) === 0x80;
    if (!c || (initial && c.short)) current.set(client, (c = { conn: ++conns, short: false }));
    if (sent && (first & 0x80) === 0) c.short = true;
    // frame.time_epoch has ns digits; µs keeps it exact in a double.
    const [sec, frac = '0'] = t!.split('.');
    list.push({ t: Number(sec) * 1e6 + Number(frac.padEnd(9, '0').slice(0, 6)), conn: c.conn, server: sent ? d : s, sent, ipBytes: Number(len) });
  }
  return list;
}

const zero = (): { bytes: Pair; packets: Pair } => ({ bytes: { sent: 0, received: 0 }, packets: { sent: 0, received: 0 } });

test('DoQ and DoH3 bytes and packets equal a capture on lo', { timeout: 120_000 }, async (t) => {
  const why = await canCapture();
  if (why) return t.skip(why);
  const companion = new SpyCompanion();
  if (companion.unavailable()) return t.skip(companion.unavailable()!);
  const lab = await startCoreDNS();
  const dir = labDir('capture-quic');
  const file = join(dir, 'quic.pcap');
  const ports = { tls: Number(/:(\d+)$/.exec(lab.endpoints.doq!)![1]), https: Number(/:(\d+)\//.exec(lab.endpoints.doh3!)![1]) };
  const capture = new Capture(file, [ports.tls, ports.https]);
  try {
    const connect = new Map([['dns.test', lab.address]]);
    const transports = { ...REGISTRY, doq: quicTransport(DOQ, () => companion), doh3: quicTransport(DOH3, () => companion) };
    const req: MeasureRequest = {
      id: 'capture-quic',
      type: 'measure',
      hosts: ['h1.test', 'h2.test', 'multi.test'],
      qtypes: ['A', 'AAAA'],
      resolvers: [{ id: 'lab', name: 'lab', ca: lab.certs.caPem, endpoints: [parseEndpoint(lab.endpoints.doq!, { connect }), parseEndpoint(lab.endpoints.doh3!, { connect })] }],
      modes: ['cold', 'warm'],
      repeat: 2,
      warmup: false,
      seed: 7,
    };
    await companion.prepare(lab.certs.caPem);
    await capture.start();
    const result = await measure(req, {}, undefined, { clock: monotonic, transports });
    // Let the last ACKs and CONNECTION_CLOSE frames land before the capture stops.
    await new Promise((r) => setTimeout(r, 200));
    await capture.stop();
    const records = result.records;
    assert.equal(records.length, 3 * 2 * 2 * 2 * 2);
    assert.ok(records.every((r) => r.ok), JSON.stringify(records.filter((r) => !r.ok).map((r) => r.error)));
    assert.equal(companion.answers.length, records.length);

    const frames = await datagrams(file, new Set([ports.tls, ports.https]));
    // The capture's connections in order of their first datagram ↔ connection numbers 1, 2, … of the run.
    const connections = new Set(records.map((r) => r.connection));
    assert.equal(new Set(frames.map((f) => f.conn)).size, connections.size, 'as many QUIC connections in the capture as in the run');

    const lastCut = new Map<number, { at: number; readAt: number }>();
    const counted = new Map<number, { bytes: Pair; packets: Pair }>();
    const lines: string[] = ['transport  mode  conn  record bytes sent/recv  capture  packets sent/recv  capture  queued at a cut'];
    const problems: string[] = [];
    let queued = 0;
    records.forEach((rec: ExchangeRecord, i) => {
      const conn = rec.connection!;
      const expectServer = rec.transport === 'doq' ? ports.tls : ports.https;
      const previous = lastCut.get(conn) ?? { at: -Infinity, readAt: -Infinity };
      const from = previous.at;
      const to = companion.answers[i]!.at;
      lastCut.set(conn, companion.answers[i]!);
      const mine = frames.filter((f) => f.conn === conn);
      assert.ok(mine.every((f) => f.server === expectServer), `connection ${conn} (${rec.transport}) talks to port ${expectServer}`);
      const window = mine.filter((f) => f.t > from && f.t <= to);
      const cap = zero();
      for (const f of window) {
        cap.bytes[f.sent ? 'sent' : 'received'] += f.ipBytes;
        cap.packets[f.sent ? 'sent' : 'received'] += 1;
      }
      const total = counted.get(conn) ?? zero();
      for (const k of ['bytes', 'packets'] as const) for (const d of ['sent', 'received'] as const) total[k][d] += rec[k][d];
      counted.set(conn, total);
      // Received datagrams that may have been queued at either cut, newest last.
      const outAtEnd = queuedAt(mine, companion.answers[i]!);
      const inAtStart = queuedAt(mine, previous);
      let how = '';
      const sentOk = rec.bytes.sent === cap.bytes.sent && rec.packets.sent === cap.packets.sent;
      let receivedOk = false;
      for (let k = 0; k <= outAtEnd.length && !receivedOk; k++) {
        for (let j = 0; j <= inAtStart.length && !receivedOk; j++) {
          const moved = outAtEnd.slice(outAtEnd.length - k);
          const came = inAtStart.slice(inAtStart.length - j);
          const bytes = cap.bytes.received - moved.reduce((s, f) => s + f.ipBytes, 0) + came.reduce((s, f) => s + f.ipBytes, 0);
          const packets = cap.packets.received - k + j;
          if (bytes === rec.bytes.received && packets === rec.packets.received) {
            receivedOk = true;
            if (k || j) how = `${k ? `${k} left queued` : ''}${k && j ? ', ' : ''}${j ? `${j} from the previous cut` : ''}`;
          }
        }
      }
      if (how) queued++;
      lines.push(`${rec.transport.padEnd(9)}  ${rec.mode}  ${String(conn).padStart(4)}  ${rec.bytes.sent}/${rec.bytes.received}  ${cap.bytes.sent}/${cap.bytes.received}  ${rec.packets.sent}/${rec.packets.received}  ${cap.packets.sent}/${cap.packets.received}  ${how}`);
      if (!sentOk || !receivedOk) {
        problems.push(`record ${i} (${rec.transport} ${rec.mode} ${rec.host} ${rec.qtype}, connection ${conn}): record ${JSON.stringify({ bytes: rec.bytes, packets: rec.packets })}, capture ${JSON.stringify(cap)}`);
      }
      assert.equal(rec.provenance.bytes, 'counted');
      assert.equal(rec.provenance.packets, 'counted');
    });
    // What no record could see: after each connection's last answer (ACKs, CONNECTION_CLOSE). With it, every
    // connection's records add up to its capture exactly. After the last cut come the ACK of the answer and the
    // CONNECTION_CLOSE: no record could have seen them (as for TCP's teardown in capture.test.ts); they are counted
    // and shown.
    let after = 0;
    for (const [conn, cut] of lastCut) {
      const mine = frames.filter((f) => f.conn === conn);
      after += mine.filter((f) => f.t > cut.at).length;
      const upTo = zero();
      for (const f of mine.filter((f) => f.t <= cut.at)) {
        upTo.bytes[f.sent ? 'sent' : 'received'] += f.ipBytes;
        upTo.packets[f.sent ? 'sent' : 'received'] += 1;
      }
      const c = counted.get(conn)!;
      // A datagram queued at the connection's last cut is on no record: it is the only allowed difference.
      const lastQueued = queuedAt(mine, cut);
      const ok = c.bytes.sent === upTo.bytes.sent && c.packets.sent === upTo.packets.sent &&
        upTo.packets.received - c.packets.received >= 0 && upTo.packets.received - c.packets.received <= lastQueued.length;
      if (!ok) problems.push(`connection ${conn}: records add up to ${JSON.stringify(c)}, capture up to the last answer ${JSON.stringify(upTo)}`);
    }
    lines.push(`after the last answer of each connection (ACKs, CONNECTION_CLOSE; on no record): ${after} datagrams`);
    lines.push(`records with a received datagram queued at a cut: ${queued} of ${records.length}`);
    for (const l of lines) console.log(l);
    assert.deepEqual(problems, [], lines.join('\n'));
    // The cold first flight is padded to at least 1200 bytes (RFC 9000 §14.1): at IP level 1228 or more.
    const firstSent = frames.find((f) => f.sent)!;
    assert.ok(firstSent.ipBytes >= 1228, `first Initial datagram is ${firstSent.ipBytes} bytes`);
  } finally {
    await capture.stop().catch(() => {});
    await lab.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
