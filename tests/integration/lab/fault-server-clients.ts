// The raw clients and the shared fixture of the fault server's tests (fault-server-*.test.ts): one server per test
// file, started before its tests and stopped (within a second) after them, and bounded waits everywhere.
import { afterAll, beforeAll } from 'vitest';
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
import { startFaultServer } from '../../../lab/fault-server/index.js';
import type { FaultServer } from '../../../lab/fault-server/index.js';

/** A fault server transport, as the tests name it. */
export type T = 'udp' | 'tcp' | 'dot' | 'doh' | 'doh1';
/** Every transport. */
export const ALL: T[] = ['udp', 'tcp', 'dot', 'doh', 'doh1'];
/** The transports on a connection. */
export const STREAMS: T[] = ['tcp', 'dot', 'doh', 'doh1'];
/** How long to wait for answers that should come. */
export const WAIT = 2000;
/** How long to wait for answers that should not. */
export const SILENCE = 300;

/** The lab CA the fault servers' certificates chain to; set by useFaultServer's beforeAll. */
export let ca: CertAuthority;
/** The file's fault server (TLS mode ok, 127.0.0.1); set by useFaultServer's beforeAll. */
export let srv: FaultServer;
/** Further servers a test started; useFaultServer's afterAll stops them with srv. */
export const extra: FaultServer[] = [];

/** Registers the file's hooks: start srv before its tests; after them stop srv and extra, within a second. */
export function useFaultServer(): void {
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
}

/** The port of a fault server endpoint URL. */
export const portOf = (endpoint: string) => Number(/:(\d+)(\/|$)/.exec(endpoint)?.[1]);

/** A DNS query for name (id 0, type A, no EDNS unless given). */
export function query(name: string, o: { id?: number; qtype?: 'A' | 'AAAA' | 'TXT'; edns?: number } = {}): Buffer {
  return dnsPacket.encode({
    type: 'query',
    id: o.id ?? 0,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type: o.qtype ?? 'A', name, class: 'IN' }],
    additionals: o.edns ? [{ type: 'OPT', name: '.', udpPayloadSize: o.edns, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }] : [],
  });
}

/** msg with its 2-byte stream length prefix. */
export function frame(msg: Buffer): Buffer {
  const len = Buffer.alloc(2);
  len.writeUInt16BE(msg.length);
  return Buffer.concat([len, msg]);
}

/** What one raw request got back: an answer, silence, an HTTP status, an error or a cut connection. */
export interface Result {
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

/** Sends one datagram and waits up to waitMs for one back. */
export function udpAsk(s: FaultServer, msg: Buffer, waitMs: number): Promise<Result> {
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

/** Opens a TCP or DoT (TLS, SNI dns.test, trusting the lab CA) connection to the fault server. */
export function connectStream(s: FaultServer, t: 'tcp' | 'dot', o: { alpn?: string[] } = {}): net.Socket {
  if (t === 'tcp') return net.connect(portOf(s.endpoints.tcp), s.address);
  return tls.connect({ host: s.address, port: portOf(s.endpoints.dot), servername: 'dns.test', ca: ca.certPem, ...(o.alpn ? { ALPNProtocols: o.alpn } : {}) });
}

/** Sends every message at once on one connection; collects `want` framed answers in arrival order. */
export function streamAsk(s: FaultServer, t: 'tcp' | 'dot', msgs: Buffer[], want: number, waitMs: number): Promise<{ frames: Buffer[]; partial: Buffer; ended: boolean; error?: string; timedOut: boolean }> {
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

/** An HTTP/2 session to the fault server's DoH listener; session errors are ignored (requests report them). */
export function h2Connect(s: FaultServer): http2.ClientHttp2Session {
  const session = http2.connect(`https://${net.isIPv6(s.address) ? `[${s.address}]` : s.address}:${portOf(s.endpoints.doh)}`, { ca: ca.certPem, servername: 'dns.test' });
  session.on('error', () => {});
  return session;
}

/** One DoH request over HTTP/2; opens its own session unless given one. */
export function dohAsk(s: FaultServer, msg: Buffer, o: { waitMs: number; method?: 'GET' | 'POST'; session?: http2.ClientHttp2Session; path?: string; ctype?: string }): Promise<Result> {
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
export function doh1Ask(s: FaultServer, msg: Buffer, o: { waitMs: number; agent?: https.Agent; method?: 'GET' | 'POST' }): Promise<Result & { localPort?: number }> {
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
export async function ask(t: T, name: string, o: { waitMs?: number; edns?: number; qtype?: 'A' | 'AAAA' | 'TXT'; s?: FaultServer } = {}): Promise<Result & { id: number }> {
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

/** The answer in r, decoded; fails the test when r holds no complete message. */
export function decode(r: Result): DecodedPacket {
  assert.ok(r.bytes, `expected an answer, got ${JSON.stringify({ ...r, bytes: undefined, partial: r.partial?.length })}`);
  return dnsPacket.decode(r.bytes);
}

// dns-packet decodes the rcode name, but its type definitions omit the field.
/** The rcode name of a decoded packet. */
export const rcodeOf = (p: DecodedPacket) => (p as DecodedPacket & { rcode?: string }).rcode;

/** Asserts r is the ok answer for name: NOERROR, id echoed, one A 192.0.2.53 TTL 60. */
export function assertOk(r: Result & { id: number }, name: string) {
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
export async function assertSilent(ts: T[], name: string): Promise<void> {
  const rs = await Promise.all(ts.map((t) => ask(t, name, { waitMs: SILENCE })));
  rs.forEach((r, i) => {
    assert.equal(r.timedOut, true, `${ts[i]} ${name}`);
    assert.equal(r.bytes, undefined);
    assert.equal(r.error, undefined);
    assert.ok(!r.ended, `${ts[i]} must not close`);
  });
}
