// Checks every fault of the lab's fault-injecting resolver over raw clients, with bounded waits everywhere.
import { afterAll, beforeAll, test } from 'vitest';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import tls from 'node:tls';
import http2 from 'node:http2';
import https from 'node:https';
import dnsPacket from 'dns-packet';
import type { DecodedPacket } from 'dns-packet';
import { issueLeaf, LAB_CERT_IPS, LAB_CERT_NAMES, makeCA } from '../../../lab/certs.js';
import type { CertAuthority } from '../../../lab/certs.js';
import { startFaultServer } from '../../../lab/fault-server.js';
import type { FaultServer, FaultTlsMode } from '../../../lab/fault-server.js';

type T = 'udp' | 'tcp' | 'dot' | 'doh' | 'doh1';
const ALL: T[] = ['udp', 'tcp', 'dot', 'doh', 'doh1'];
const STREAMS: T[] = ['tcp', 'dot', 'doh', 'doh1'];
const WAIT = 2000; // for answers that should come
const SILENCE = 300; // for answers that should not

let ca: CertAuthority;
let srv: FaultServer;
const extra: FaultServer[] = [];

beforeAll(async () => {
  ca = makeCA();
  const leaf = issueLeaf(ca, { names: LAB_CERT_NAMES, ips: LAB_CERT_IPS });
  srv = await startFaultServer({ ...leaf });
});

afterAll(async () => {
  const t0 = Date.now();
  await Promise.all([srv, ...extra].map((s) => s.stop()));
  assert.ok(Date.now() - t0 < 1000, 'stop() took too long');
});

// ---- raw clients -----------------------------------------------------------------------------------------------

const portOf = (endpoint: string) => Number(/:(\d+)(\/|$)/.exec(endpoint)?.[1]);

function query(name: string, o: { id?: number; qtype?: 'A' | 'AAAA' | 'TXT'; edns?: number } = {}): Buffer {
  return dnsPacket.encode({
    type: 'query',
    id: o.id ?? 0,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type: o.qtype ?? 'A', name, class: 'IN' }],
    additionals: o.edns ? [{ type: 'OPT', name: '.', udpPayloadSize: o.edns, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }] : [],
  });
}

function frame(msg: Buffer): Buffer {
  const len = Buffer.alloc(2);
  len.writeUInt16BE(msg.length);
  return Buffer.concat([len, msg]);
}

interface Result {
  bytes?: Buffer; // the one DNS message received, if complete
  timedOut: boolean;
  status?: number;
  headers?: Record<string, unknown>;
  error?: string;
  rstCode?: number;
  ended?: boolean;
  partial?: Buffer; // bytes received that do not form a complete message
  goaway?: boolean;
}

function udpAsk(s: FaultServer, msg: Buffer, waitMs: number): Promise<Result> {
  return new Promise((resolve) => {
    const sock = dgram.createSocket(net.isIPv6(s.address) ? 'udp6' : 'udp4');
    const done = (r: Result) => {
      clearTimeout(timer);
      sock.close();
      resolve(r);
    };
    const timer = setTimeout(() => done({ timedOut: true }), waitMs);
    sock.on('error', (err: NodeJS.ErrnoException) => done({ timedOut: false, error: err.code ?? err.message }));
    sock.on('message', (m) => done({ timedOut: false, bytes: m }));
    sock.send(msg, portOf(s.endpoints.udp), s.address);
  });
}

function connectStream(s: FaultServer, t: 'tcp' | 'dot', o: { alpn?: string[] } = {}): net.Socket {
  if (t === 'tcp') return net.connect(portOf(s.endpoints.tcp), s.address);
  return tls.connect({ host: s.address, port: portOf(s.endpoints.dot), servername: 'dns.test', ca: ca.certPem, ...(o.alpn ? { ALPNProtocols: o.alpn } : {}) });
}

/** Sends every message at once on one connection; collects `want` framed answers in arrival order. */
function streamAsk(s: FaultServer, t: 'tcp' | 'dot', msgs: Buffer[], want: number, waitMs: number): Promise<{ frames: Buffer[]; partial: Buffer; ended: boolean; error?: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    const sock = connectStream(s, t);
    const frames: Buffer[] = [];
    let buf = Buffer.alloc(0);
    let ended = false;
    let settled = false;
    const done = (extra: { error?: string; timedOut?: boolean } = {}) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      resolve({ frames, partial: buf, ended, timedOut: extra.timedOut ?? false, ...(extra.error ? { error: extra.error } : {}) });
    };
    const timer = setTimeout(() => done({ timedOut: true }), waitMs);
    sock.on(t === 'tcp' ? 'connect' : 'secureConnect', () => sock.write(Buffer.concat(msgs.map(frame))));
    sock.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const len = buf.readUInt16BE(0);
        frames.push(buf.subarray(2, 2 + len));
        buf = buf.subarray(2 + len);
      }
      if (frames.length >= want) done();
    });
    sock.on('end', () => {
      ended = true;
      done();
    });
    sock.on('error', (err: NodeJS.ErrnoException) => done({ error: err.code ?? err.message }));
  });
}

function h2Connect(s: FaultServer): http2.ClientHttp2Session {
  const session = http2.connect(`https://${net.isIPv6(s.address) ? `[${s.address}]` : s.address}:${portOf(s.endpoints.doh)}`, { ca: ca.certPem, servername: 'dns.test' });
  session.on('error', () => {});
  return session;
}

/** One DoH request over HTTP/2; opens its own session unless given one. */
function dohAsk(s: FaultServer, msg: Buffer, o: { waitMs: number; method?: 'GET' | 'POST'; session?: http2.ClientHttp2Session; path?: string; ctype?: string }): Promise<Result> {
  return new Promise((resolve) => {
    const own = !o.session;
    const session = o.session ?? h2Connect(s);
    const r: Result = { timedOut: false };
    const chunks: Buffer[] = [];
    let settled = false;
    const done = (extra: Partial<Result> = {}) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      Object.assign(r, extra);
      if (chunks.length) {
        const body = Buffer.concat(chunks);
        const full = r.status === 200 && r.rstCode === 0 && !r.error;
        if (full) r.bytes = body;
        else r.partial = body;
      }
      const snapshot = { ...r }; // destroying the session below fires late events into r
      if (own) session.destroy();
      resolve(snapshot);
    };
    const timer = setTimeout(() => done({ timedOut: true }), o.waitMs);
    session.on('goaway', () => (r.goaway = true));
    session.on('error', (err: NodeJS.ErrnoException) => (r.error ??= err.code ?? err.message));
    const method = o.method ?? 'GET';
    const path = o.path ?? (method === 'GET' ? `/dns-query?dns=${msg.toString('base64url')}` : '/dns-query');
    const headers: http2.OutgoingHttpHeaders = { ':method': method, ':path': path, accept: 'application/dns-message' };
    if (method === 'POST') headers['content-type'] = o.ctype ?? 'application/dns-message';
    let stream: http2.ClientHttp2Stream;
    try {
      stream = session.request(headers);
    } catch (err) {
      return done({ error: (err as NodeJS.ErrnoException).code ?? String(err) });
    }
    stream.on('response', (h) => {
      r.status = Number(h[':status']);
      r.headers = h;
    });
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => (r.ended = true));
    stream.on('error', (err: NodeJS.ErrnoException) => (r.error ??= err.code ?? err.message));
    stream.on('close', () => done({ rstCode: stream.rstCode ?? 0 }));
    stream.end(method === 'POST' ? msg : undefined);
  });
}

/** One DoH request over HTTP/1.1, through `agent` when given (keep-alive reuse). */
function doh1Ask(s: FaultServer, msg: Buffer, o: { waitMs: number; agent?: https.Agent; method?: 'GET' | 'POST' }): Promise<Result & { localPort?: number }> {
  return new Promise((resolve) => {
    const r: Result & { localPort?: number } = { timedOut: false };
    const chunks: Buffer[] = [];
    let settled = false;
    const done = (extra: Partial<Result> = {}) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      Object.assign(r, extra);
      const body = Buffer.concat(chunks);
      if (r.ended && !r.error) r.bytes = body;
      else if (body.length) r.partial = body;
      const snapshot = { ...r };
      if (!o.agent) req.destroy();
      resolve(snapshot);
    };
    const timer = setTimeout(() => {
      req.destroy();
      done({ timedOut: true });
    }, o.waitMs);
    const method = o.method ?? 'GET';
    const req = https.request(
      {
        host: s.address,
        port: portOf(s.endpoints.doh1),
        servername: 'dns.test',
        ca: ca.certPem,
        method,
        path: method === 'GET' ? `/dns-query?dns=${msg.toString('base64url')}` : '/dns-query',
        headers: { host: 'dns.test', ...(method === 'POST' ? { 'content-type': 'application/dns-message' } : {}) },
        agent: o.agent ?? false,
      },
      (res) => {
        r.status = res.statusCode;
        r.headers = res.headers;
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          r.ended = true;
          done();
        });
        res.on('error', (err: NodeJS.ErrnoException) => done({ error: err.code ?? err.message }));
      },
    );
    req.on('socket', (sock) => {
      if (sock.localPort) r.localPort = sock.localPort;
      else sock.once('connect', () => (r.localPort = sock.localPort));
    });
    req.on('error', (err: NodeJS.ErrnoException) => done({ error: err.code ?? err.message }));
    req.end(method === 'POST' ? msg : undefined);
  });
}

let nextId = 100;
/** Asks `name` once over transport t and reports what came back (or did not). */
async function ask(t: T, name: string, o: { waitMs?: number; edns?: number; qtype?: 'A' | 'AAAA' | 'TXT'; s?: FaultServer } = {}): Promise<Result & { id: number }> {
  const s = o.s ?? srv;
  const waitMs = o.waitMs ?? WAIT;
  const id = t === 'doh' || t === 'doh1' ? 0 : nextId++ & 0xffff; // RFC 8484 §4.1: DoH uses id 0
  const msg = query(name, { id, ...(o.qtype ? { qtype: o.qtype } : {}), ...(o.edns ? { edns: o.edns } : {}) });
  if (t === 'udp') return { id, ...(await udpAsk(s, msg, waitMs)) };
  if (t === 'doh') return { id, ...(await dohAsk(s, msg, { waitMs })) };
  if (t === 'doh1') return { id, ...(await doh1Ask(s, msg, { waitMs })) };
  const r = await streamAsk(s, t, [msg], 1, waitMs);
  const out: Result & { id: number } = { id, timedOut: r.timedOut, ended: r.ended };
  if (r.frames[0]) out.bytes = r.frames[0];
  if (r.partial.length) out.partial = r.partial;
  if (r.error) out.error = r.error;
  return out;
}

function decode(r: Result): DecodedPacket {
  assert.ok(r.bytes, `expected an answer, got ${JSON.stringify({ ...r, bytes: undefined, partial: r.partial?.length })}`);
  return dnsPacket.decode(r.bytes);
}

// dns-packet decodes the rcode name, but its type definitions omit the field.
const rcodeOf = (p: DecodedPacket) => (p as DecodedPacket & { rcode?: string }).rcode;

function assertOk(r: Result & { id: number }, name: string) {
  const p = decode(r);
  assert.equal(p.id, r.id);
  assert.equal(p.type, 'response');
  assert.equal(rcodeOf(p), 'NOERROR');
  assert.equal(p.flag_tc, false);
  assert.equal(p.questions?.[0]?.name, name);
  assert.equal(p.answers?.length, 1);
  const a = p.answers?.[0];
  assert.ok(a && a.type === 'A');
  assert.equal(a.data, '192.0.2.53');
  assert.equal(a.ttl, 60);
}

/** Asks over every transport in ts at once; none may answer or close within SILENCE. */
async function assertSilent(ts: T[], name: string): Promise<void> {
  const rs = await Promise.all(ts.map((t) => ask(t, name, { waitMs: SILENCE })));
  rs.forEach((r, i) => {
    assert.equal(r.timedOut, true, `${ts[i]} ${name}`);
    assert.equal(r.bytes, undefined);
    assert.equal(r.error, undefined);
    assert.ok(!r.ended, `${ts[i]} must not close`);
  });
}

// ---- behaviours -------------------------------------------------------------------------------------------------

test('ok: NOERROR, A 192.0.2.53 TTL 60, id and question echoed, on every transport', async () => {
  for (const t of ALL) assertOk(await ask(t, `ok-${t}.fault.test`), `ok-${t}.fault.test`);
  for (const t of ['udp', 'doh'] as T[]) {
    const p = decode(await ask(t, 'ok.fault.test', { qtype: 'AAAA' }));
    assert.equal(p.answers?.[0]?.type, 'AAAA');
    assert.equal(p.answers?.[0]?.data, '2001:db8::53');
  }
  const txt = decode(await ask('tcp', 'ok.fault.test', { qtype: 'TXT' }));
  assert.equal(rcodeOf(txt), 'NOERROR');
  assert.equal(txt.answers?.length, 0);
  for (const t of ALL) assert.ok(srv.seen.some((x) => x.transport === t && x.name === `ok-${t}.fault.test` && x.qtype === 'A' && x.at > 0), `seen ${t}`);
});

test('DoH: POST as well as GET; DoH1 keeps the connection alive', async () => {
  const post = await dohAsk(srv, query('post.fault.test'), { waitMs: WAIT, method: 'POST' });
  assert.equal(post.status, 200);
  assert.equal(post.headers?.['content-type'], 'application/dns-message');
  assertOk({ ...post, id: 0 }, 'post.fault.test');
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const a = await doh1Ask(srv, query('ka1.fault.test'), { waitMs: WAIT, agent });
    const b = await doh1Ask(srv, query('ka2.fault.test'), { waitMs: WAIT, agent, method: 'POST' });
    assertOk({ ...a, id: 0 }, 'ka1.fault.test');
    assertOk({ ...b, id: 0 }, 'ka2.fault.test');
    assert.equal(a.headers?.['connection'], 'keep-alive');
    assert.ok(a.localPort && a.localPort === b.localPort, 'second request reused the connection');
  } finally {
    agent.destroy();
  }
});

test('delay-<ms>: answers after the delay', async () => {
  await Promise.all(
    ALL.map(async (t) => {
      const t0 = Date.now();
      const r = await ask(t, 'delay-250.fault.test');
      assertOk(r, 'delay-250.fault.test');
      assert.ok(Date.now() - t0 >= 240, `${t} answered too early`);
    }),
  );
});

test('TCP and DoT: several queries per connection, answered out of order', async () => {
  for (const t of ['tcp', 'dot'] as const) {
    const slow = query('delay-300.fault.test', { id: 1 });
    const fast = query('ok.fault.test', { id: 2 });
    const fast2 = query('servfail.fault.test', { id: 3 });
    const r = await streamAsk(srv, t, [slow, fast, fast2], 3, WAIT);
    assert.equal(r.frames.length, 3, t);
    const ids = r.frames.map((f) => dnsPacket.decode(f).id);
    assert.equal(ids[2], 1, `${t}: the delayed answer comes last`);
    assert.deepEqual(ids.slice(0, 2).sort(), [2, 3]);
  }
});

test('drop: never answers, stream connections stay open', async () => {
  await assertSilent(ALL, 'drop.fault.test');
});

test('tc: NOERROR with TC=1 and no answers, on every transport', async () => {
  for (const t of ALL) {
    const p = decode(await ask(t, 'tc.fault.test'));
    assert.equal(p.flag_tc, true, t);
    assert.equal(rcodeOf(p), 'NOERROR');
    assert.equal(p.answers?.length, 0);
  }
});

test('servfail, refused, nxdomain, formerr: that rcode', async () => {
  const want = { servfail: 'SERVFAIL', refused: 'REFUSED', nxdomain: 'NXDOMAIN', formerr: 'FORMERR' } as const;
  for (const t of ALL) {
    for (const [label, rcode] of Object.entries(want)) {
      const r = await ask(t, `${label}.fault.test`);
      const p = decode(r);
      assert.equal(rcodeOf(p), rcode, `${t} ${label}`);
      assert.equal(p.id, r.id);
      assert.equal(p.answers?.length, 0);
    }
  }
});

test('malformed and short: non-DNS bytes, correctly framed', async () => {
  for (const t of ALL) {
    const m = await ask(t, 'malformed.fault.test');
    assert.deepEqual(m.bytes, Buffer.alloc(40, 0xff), t);
    assert.throws(() => dnsPacket.decode(m.bytes!));
    const s = await ask(t, 'short.fault.test');
    assert.equal(s.bytes?.length, 7, t);
    if (t === 'doh' || t === 'doh1') assert.equal(s.headers?.['content-type'], 'application/dns-message');
  }
});

test('wrong-id: id+1, and 0x1234 for DoH id 0', async () => {
  for (const t of ALL) {
    const r = await ask(t, 'wrong-id.fault.test');
    const p = decode(r);
    assert.equal(p.id, r.id === 0 ? 0x1234 : (r.id + 1) & 0xffff, t);
    assert.equal(p.answers?.length, 1);
  }
});

test('wrong-question: answer about other.fault.test', async () => {
  for (const t of ALL) {
    const r = await ask(t, 'wrong-question.fault.test');
    const p = decode(r);
    assert.equal(p.id, r.id);
    assert.equal(p.questions?.[0]?.name, 'other.fault.test', t);
    assert.equal(p.answers?.[0]?.name, 'other.fault.test');
  }
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

test('http-<status> and bad-ctype over DoH and DoH1; plain answers elsewhere', async () => {
  for (const t of ['doh', 'doh1'] as T[]) {
    for (const status of [404, 500, 503]) {
      const r = await ask(t, `http-${status}.fault.test`);
      assert.equal(r.status, status, t);
      assert.match(String(r.headers?.['content-type']), /^text\/plain/);
      assert.equal(String(r.bytes ?? r.partial), `http-${status}\n`);
    }
    const b = await ask(t, 'bad-ctype.fault.test');
    assert.equal(b.status, 200);
    assert.equal(b.headers?.['content-type'], 'text/html');
    assertOk(b, 'bad-ctype.fault.test');
  }
  assertOk(await ask('udp', 'http-503.fault.test'), 'http-503.fault.test');
  assertOk(await ask('tcp', 'bad-ctype.fault.test'), 'bad-ctype.fault.test');
});

test('big: ~3000 bytes on streams; truncated with TC=1 to the EDNS size (or 512) on UDP', async () => {
  for (const t of STREAMS) {
    const r = await ask(t, 'big.fault.test');
    const p = decode(r);
    assert.ok(r.bytes!.length >= 2900 && r.bytes!.length <= 3200, `${t}: ${r.bytes!.length} bytes`);
    assert.equal(p.flag_tc, false);
    assert.ok((p.answers?.length ?? 0) > 50);
  }
  for (const [edns, limit] of [[0, 512], [1232, 1232], [600, 600], [100, 512]] as const) {
    const r = await ask('udp', 'big.fault.test', edns ? { edns } : {});
    const p = decode(r);
    assert.equal(p.flag_tc, true, `edns ${edns}`);
    assert.ok(r.bytes!.length <= limit && r.bytes!.length > limit - 40, `edns ${edns}: ${r.bytes!.length} bytes`);
    assert.equal(p.additionals?.some((a) => a.type === 'OPT'), edns > 0, 'OPT echoed only to EDNS queries');
  }
  const full = decode(await ask('udp', 'big.fault.test', { edns: 4096 }));
  assert.equal(full.flag_tc, false);
  assert.ok((full.answers?.length ?? 0) > 50);
});

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
