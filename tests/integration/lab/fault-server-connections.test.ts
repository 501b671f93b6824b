// Checks the fault server's connection faults: silence (drop), half answers, resets, HTTP/2 GOAWAY and RST_STREAM,
// and the TLS listener modes (stall, alert, expired and wrong-name certificates).
import { test } from 'vitest';
import assert from 'node:assert/strict';
import tls from 'node:tls';
import http2 from 'node:http2';
import { issueLeaf, LAB_CERT_IPS, LAB_CERT_NAMES } from '../../../lab/certs.js';
import { startFaultServer } from '../../../lab/fault-server/index.js';
import type { FaultServer, FaultTlsMode } from '../../../lab/fault-server/index.js';
import { ALL, ask, assertOk, assertSilent, ca, dohAsk, extra, h2Connect, portOf, query, SILENCE, srv, STREAMS, useFaultServer, WAIT } from './fault-server-clients.js';

useFaultServer();

test('drop: never answers, stream connections stay open', async () => {
  await assertSilent(ALL, 'drop.fault.test');
});

test('close-mid: half a message, then the connection ends', async () => {
  for (const t of ['tcp', 'dot'] as const) {
    const r = await ask(t, 'close-mid.fault.test');
    assert.equal(r.bytes, undefined, t);
    assert.ok(r.ended, `${t} must end`);
    assert.ok(r.partial && r.partial.length > 2, t);
    const announced = r.partial.readUInt16BE(0);
    assert.equal(r.partial.length, 2 + Math.floor(announced / 2));
  }
  const h2 = await ask('doh', 'close-mid.fault.test');
  assert.equal(h2.status, 200);
  const len = Number(h2.headers?.['content-length']);
  assert.ok(h2.partial && h2.partial.length === Math.floor(len / 2), 'doh: half the body');
  // node's client ends such a stream without error; only rstCode CANCEL (8) and the short body tell.
  assert.equal(h2.rstCode, http2.constants.NGHTTP2_CANCEL);
  const h1 = await ask('doh1', 'close-mid.fault.test');
  assert.equal(h1.status, 200);
  assert.ok(h1.error, 'doh1: the response is aborted');
  assert.equal(h1.partial?.length, Math.floor(Number(h1.headers?.['content-length']) / 2));
  assert.equal((await ask('udp', 'close-mid.fault.test', { waitMs: SILENCE })).timedOut, true);
});

test('reset: TCP RST on stream transports, silence on UDP', async () => {
  for (const t of STREAMS) {
    const r = await ask(t, 'reset.fault.test');
    assert.equal(r.error, 'ECONNRESET', t);
    assert.equal(r.bytes, undefined);
  }
  assert.equal((await ask('udp', 'reset.fault.test', { waitMs: SILENCE })).timedOut, true);
});

test('goaway: the HTTP/2 stream is refused; silence elsewhere', async () => {
  const first = await ask('doh', 'goaway.fault.test');
  assert.equal(first.goaway, true);
  assert.equal(first.rstCode, http2.constants.NGHTTP2_REFUSED_STREAM);
  assert.equal(first.status, undefined);
  // A later stream on a busy session: GOAWAY's last-stream-id excludes it, the earlier stream still completes.
  const session = h2Connect(srv);
  try {
    const slow = dohAsk(srv, query('delay-200.fault.test'), { waitMs: WAIT, session });
    await new Promise((r) => setTimeout(r, 50));
    const refused = await dohAsk(srv, query('goaway.fault.test'), { waitMs: WAIT, session });
    assert.equal(refused.goaway, true);
    assert.equal(refused.rstCode, http2.constants.NGHTTP2_REFUSED_STREAM);
    const done = await slow;
    assert.equal(done.status, 200);
    assertOk({ ...done, id: 0 }, 'delay-200.fault.test');
  } finally {
    session.destroy();
  }
  await assertSilent(['udp', 'tcp', 'dot', 'doh1'], 'goaway.fault.test');
});

test('rst-stream: RST_STREAM INTERNAL_ERROR over HTTP/2; silence elsewhere', async () => {
  const r = await ask('doh', 'rst-stream.fault.test');
  assert.equal(r.rstCode, http2.constants.NGHTTP2_INTERNAL_ERROR);
  assert.equal(r.error, 'ERR_HTTP2_STREAM_ERROR');
  await assertSilent(['udp', 'tcp', 'dot', 'doh1'], 'rst-stream.fault.test');
});

// ---- TLS listener modes -----------------------------------------------------------------------------------------

/** Opens a bare TLS handshake to a TLS listener and reports how it ended within waitMs. */
function handshake(s: FaultServer, which: 'dot' | 'doh' | 'doh1', waitMs: number): Promise<{ ok: boolean; error?: string; timedOut: boolean; alpn?: string | false | null }> {
  return new Promise((resolve) => {
    const alpn = which === 'doh' ? ['h2'] : which === 'doh1' ? ['http/1.1'] : undefined;
    const sock = tls.connect({ host: s.address, port: portOf(s.endpoints[which]), servername: 'dns.test', ca: ca.certPem, ...(alpn ? { ALPNProtocols: alpn } : {}) });
    let settled = false;
    const done = (r: { ok: boolean; error?: string; timedOut: boolean; alpn?: string | false | null }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => done({ ok: false, timedOut: true }), waitMs);
    sock.on('secureConnect', () => done({ ok: true, timedOut: false, alpn: sock.alpnProtocol }));
    sock.on('error', (err: NodeJS.ErrnoException) => done({ ok: false, timedOut: false, error: err.code ?? err.message }));
    sock.on('close', () => done({ ok: false, timedOut: false, error: 'closed' }));
  });
}

test('tls modes: ok, stall, alert, expired, wrong-name, several servers at once', async () => {
  const hour = 3600_000;
  const expiredCert = issueLeaf(ca, { names: LAB_CERT_NAMES, ips: LAB_CERT_IPS, notBefore: new Date(Date.now() - 48 * hour), notAfter: new Date(Date.now() - 24 * hour) });
  const wrongNameCert = issueLeaf(ca, { names: ['wrong.example'] });
  const base = issueLeaf(ca, { names: LAB_CERT_NAMES, ips: LAB_CERT_IPS });
  const modes: FaultTlsMode[] = ['stall', 'alert', 'expired', 'wrong-name'];
  const servers = await Promise.all(modes.map((tlsMode) => startFaultServer({ ...base, tls: tlsMode, expiredCert, wrongNameCert })));
  extra.push(...servers);
  const want: Record<FaultTlsMode, (r: Awaited<ReturnType<typeof handshake>>) => void> = {
    ok: (r) => assert.equal(r.ok, true),
    stall: (r) => assert.equal(r.timedOut, true),
    alert: (r) => assert.match(String(r.error), /ALERT_HANDSHAKE_FAILURE/),
    expired: (r) => assert.equal(r.error, 'CERT_HAS_EXPIRED'),
    'wrong-name': (r) => assert.equal(r.error, 'ERR_TLS_CERT_ALTNAME_INVALID'),
  };
  await Promise.all(
    (['dot', 'doh', 'doh1'] as const).map(async (which) => {
      const okr = await handshake(srv, which, WAIT);
      want.ok(okr);
      assert.equal(okr.alpn, which === 'doh' ? 'h2' : which === 'doh1' ? 'http/1.1' : false);
      const rs = await Promise.all(servers.map((s) => handshake(s, which, SILENCE * 2)));
      rs.forEach((r, i) => want[modes[i]!](r));
    }),
  );
  // Plain transports are unaffected by the TLS mode.
  for (const s of servers) assertOk(await ask('udp', 'ok.fault.test', { s }), 'ok.fault.test');
  await assert.rejects(startFaultServer({ ...base, tls: 'expired' }), /expiredCert/);
});
