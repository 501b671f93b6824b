// Checks the fault server survives garbage on every listener, listens on IPv6 loopback, and stops within a second
// with work in flight, closing every client.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import net from 'node:net';
import tls from 'node:tls';
import https from 'node:https';
import dnsPacket from 'dns-packet';
import { issueLeaf, LAB_CERT_IPS, LAB_CERT_NAMES } from '../../../lab/certs.js';
import { startFaultServer } from '../../../lab/fault-server/index.js';
import type { FaultServer } from '../../../lab/fault-server/index.js';
import { ALL, ask, assertOk, ca, connectStream, doh1Ask, dohAsk, extra, frame, h2Connect, portOf, query, SILENCE, srv, udpAsk, useFaultServer, WAIT } from './fault-server-clients.js';

useFaultServer();

test('survives abuse: garbage datagrams, frames and HTTP requests', async () => {
  // UDP: too short, a response, an undecodable body (header-only FORMERR), random bytes.
  assert.equal((await udpAsk(srv, Buffer.from([1, 2, 3]), SILENCE)).timedOut, true);
  const resp = dnsPacket.encode({ type: 'response', id: 9, questions: [{ type: 'A', name: 'ok.fault.test' }] });
  assert.equal((await udpAsk(srv, resp, SILENCE)).timedOut, true, 'responses are never answered');
  const bad = Buffer.concat([Buffer.from([0xab, 0xcd, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]), Buffer.from([63, 1, 2])]);
  const fe = await udpAsk(srv, bad, WAIT);
  assert.equal(fe.bytes?.length, 12);
  assert.equal(fe.bytes!.readUInt16BE(0), 0xabcd);
  assert.equal(fe.bytes![3]! & 0xf, 1);
  await udpAsk(srv, Buffer.alloc(300, 0x5a), 50);
  // TCP: an empty frame, a garbage frame, a truncated frame, then EOF; then raw junk on the TLS listeners.
  for (const t of ['tcp', 'dot'] as const) {
    await new Promise<void>((resolve) => {
      const sock = connectStream(srv, t);
      sock.on('error', () => {});
      sock.on(t === 'tcp' ? 'connect' : 'secureConnect', () => {
        sock.end(Buffer.concat([Buffer.from([0, 0]), frame(Buffer.alloc(20, 0xee)), Buffer.from([0xff, 0xff, 1, 2, 3])]));
      });
      sock.on('close', () => resolve());
      setTimeout(() => {
        sock.destroy();
        resolve();
      }, SILENCE);
    });
  }
  for (const ep of [srv.endpoints.dot, srv.endpoints.doh, srv.endpoints.doh1]) {
    await new Promise<void>((resolve) => {
      const sock = net.connect(portOf(ep), srv.address, () => sock.end('GET / HTTP/1.1\r\n\r\n'));
      sock.on('error', () => {});
      sock.on('close', () => resolve());
      setTimeout(() => {
        sock.destroy();
        resolve();
      }, SILENCE);
    });
  }
  // DoH: wrong path, wrong method, missing parameter, wrong content type, a body too short for a header.
  assert.equal((await dohAsk(srv, query('x'), { waitMs: WAIT, path: '/nope' })).status, 404);
  assert.equal((await dohAsk(srv, query('x'), { waitMs: WAIT, path: '/dns-query' })).status, 400);
  assert.equal((await dohAsk(srv, query('x'), { waitMs: WAIT, method: 'POST', ctype: 'text/plain' })).status, 415);
  assert.equal((await dohAsk(srv, Buffer.from([1, 2]), { waitMs: WAIT, method: 'POST' })).status, 400);
  assert.equal((await dohAsk(srv, query('x'), { waitMs: WAIT, path: '/dns-query?dns=%%%' })).status, 400);
  // Still healthy.
  for (const t of ALL) assertOk(await ask(t, 'after-abuse.fault.test'), 'after-abuse.fault.test');
});

test('IPv6 loopback', async (t) => {
  let s6: FaultServer;
  try {
    s6 = await startFaultServer({ ...issueLeaf(ca, { names: LAB_CERT_NAMES, ips: LAB_CERT_IPS }), address: '::1' });
  } catch (err) {
    t.skip(`no ::1 here (${(err as Error).message})`);
    return;
  }
  extra.push(s6);
  assert.match(s6.endpoints.udp, /^udp:\/\/\[::1\]:\d+$/);
  assert.match(s6.endpoints.tcp, /^tcp:\/\/\[::1\]:\d+$/);
  for (const tr of ALL) assertOk(await ask(tr, 'ok6.fault.test', { s: s6 }), 'ok6.fault.test');
});

test('stop(): under a second with dropped, delayed, stalled and half-open work in flight; clients see the close', async () => {
  const leaf = issueLeaf(ca, { names: LAB_CERT_NAMES, ips: LAB_CERT_IPS });
  const s = await startFaultServer({ ...leaf });
  const stalled = await startFaultServer({ ...leaf, tls: 'stall' });
  const closes: Promise<string>[] = [];
  const watch = (sock: net.Socket) =>
    closes.push(
      new Promise((resolve) => {
        sock.on('error', () => {});
        sock.on('close', () => resolve('closed'));
        setTimeout(() => resolve('still open'), 2000);
      }),
    );
  const tcpSock = net.connect(portOf(s.endpoints.tcp), s.address, () => tcpSock.write(frame(query('drop.fault.test', { id: 5 }))));
  watch(tcpSock);
  const dotSock = connectStream(s, 'dot');
  dotSock.on('secureConnect', () => dotSock.write(frame(query('delay-60000.fault.test', { id: 6 }))));
  watch(dotSock);
  const stallSock = tls.connect({ host: stalled.address, port: portOf(stalled.endpoints.doh), servername: 'dns.test', ca: ca.certPem });
  watch(stallSock);
  const session = h2Connect(s);
  const pending = dohAsk(s, query('drop.fault.test'), { waitMs: 3000, session });
  const agent = new https.Agent({ keepAlive: true });
  const pending1 = doh1Ask(s, query('drop.fault.test'), { waitMs: 3000, agent });
  const udpPending = udpAsk(s, query('delay-60000.fault.test', { id: 7 }), 600);
  await new Promise((r) => setTimeout(r, 200));
  assert.ok(s.seen.length >= 5, `all queries arrived (${s.seen.length})`);

  const t0 = Date.now();
  await Promise.all([s.stop(), stalled.stop()]);
  assert.ok(Date.now() - t0 < 1000, `stop() took ${Date.now() - t0} ms`);
  await s.stop(); // idempotent
  assert.deepEqual(await Promise.all(closes), ['closed', 'closed', 'closed']);
  const h2r = await pending;
  assert.ok(!h2r.timedOut && h2r.bytes === undefined, 'the h2 stream was closed by stop()');
  const h1r = await pending1;
  assert.ok(!h1r.timedOut && h1r.error, 'the h1 request was closed by stop()');
  session.destroy();
  agent.destroy();
  assert.equal((await udpPending).timedOut, true, 'the delayed UDP answer was cancelled by stop()');
});
