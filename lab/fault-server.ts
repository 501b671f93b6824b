// The lab's fault-injecting resolver: answers, or deliberately mis-answers, by the query name's first label,
// over UDP, TCP, DoT, DoH (HTTP/2) and DoH over HTTP/1.1, so every failure dnscost classifies can be produced on demand.
//
// First label → behaviour (rest of the name is free, e.g. `servfail.fault.test`):
//   ok (anything unknown)  NOERROR, A 192.0.2.53 TTL 60 (AAAA 2001:db8::53 for AAAA; no answer for other types)
//   delay-<ms>             the ok answer after <ms> (capped at 60 s); on TCP/DoT later queries may overtake it
//   drop                   never answer; streams stay open and silent
//   tc                     NOERROR, TC=1, no answers, on every transport
//   servfail refused nxdomain formerr   that rcode
//   malformed / short      40 bytes of 0xff / the first 7 bytes of the answer, correctly framed
//   wrong-id               id+1 (id 0, as DoH sends, becomes 0x1234)
//   wrong-question         question and answer for other.fault.test
//   close-mid              stream transports: half the message, then the connection ends; UDP: drop
//   reset                  stream transports: TCP RST; UDP: drop
//   goaway / rst-stream    HTTP/2 GOAWAY excluding this stream / RST_STREAM INTERNAL_ERROR; elsewhere: drop
//   http-<status>          DoH/DoH1: that HTTP status with a text body; plain DNS transports: the ok answer
//   bad-ctype              DoH/DoH1: the ok answer as text/html; plain DNS transports: the ok answer
//   big                    ~3000 bytes of A records; over UDP truncated (TC=1) to the client's EDNS size or 512
import dgram from 'node:dgram';
import net from 'node:net';
import tls from 'node:tls';
import http2 from 'node:http2';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket, Packet, Question } from 'dns-packet';

/** The transport a query came in on, spelled as in common/transports.ts. */
export type FaultTransport = 'udp' | 'tcp' | 'dot' | 'doh' | 'doh1';

/** How the TLS listeners (dot, doh, doh1) behave before any DNS is exchanged. */
export type FaultTlsMode = 'ok' | 'stall' | 'alert' | 'expired' | 'wrong-name';

/** What startFaultServer needs: the lab leaf for dns.test, plus the bad certificates its TLS modes serve. */
export interface FaultServerOptions {
  certPem: string;
  keyPem: string;
  /** Loopback address to listen on: 127.0.0.1 (default) or ::1. */
  address?: string;
  tls?: FaultTlsMode;
  /** Served in 'expired' mode. */
  expiredCert?: { certPem: string; keyPem: string };
  /** Served in 'wrong-name' mode. */
  wrongNameCert?: { certPem: string; keyPem: string };
}

/** One query the server decoded, in arrival order. */
export interface SeenQuery {
  transport: FaultTransport;
  name: string;
  qtype: string;
  /** Date.now() at arrival. */
  at: number;
}

/** A running fault server: where to reach it, what it was asked, and how to shut it down (within a second). */
export interface FaultServer {
  /** udp://A:P, tcp://A:P, tls://dns.test:P, https://dns.test:P/dns-query (h2) and the same for HTTP/1.1. */
  endpoints: { udp: string; tcp: string; dot: string; doh: string; doh1: string };
  /** The loopback address every listener is on; dns.test in the TLS endpoints must be mapped to it. */
  address: string;
  seen: SeenQuery[];
  stop(): Promise<void>;
}

const DEBUG = process.env.DEBUG_FAULT === '1';
const MAX_SEEN = 10_000;
const MAX_DELAY_MS = 60_000;
const TTL = 60;
// Name the TLS endpoints carry; the lab certificate covers it and clients map it to `address`.
const TLS_HOST = 'dns.test';
// A TLS 1.2-framed fatal alert record, handshake_failure (RFC 8446 §6, §B.2: level 2, description 40).
const TLS_ALERT_HANDSHAKE_FAILURE = Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28]);
// RFC 6891 §6.2.5: a requestor's payload size below 512 is treated as 512.
const UDP_MIN = 512;
// The EDNS size we advertise back: the DNS Flag Day 2020 default.
const OUR_EDNS_SIZE = 1232;
const BIG_TARGET_BYTES = 3000;
const RCODES = { noerror: 0, formerr: 1, servfail: 2, nxdomain: 3, refused: 5 } as const;

function debug(...args: unknown[]): void {
  if (DEBUG) console.error('[fault-server]', ...args);
}

/** What to do with one query; transports turn this into bytes, silence or a broken connection. */
type Plan =
  | { kind: 'reply'; bytes: Buffer; delayMs: number; packet?: Packet; contentType?: string }
  | { kind: 'drop' }
  | { kind: 'unparseable' }
  | { kind: 'close-mid'; bytes: Buffer }
  | { kind: 'reset' }
  | { kind: 'goaway' }
  | { kind: 'rst-stream' }
  | { kind: 'http'; status: number };

const isStream = (t: FaultTransport) => t !== 'udp';
const isHttp = (t: FaultTransport) => t === 'doh' || t === 'doh1';

// RFC 1035 §4.1.1: keep the opcode and RD of the query; we are a "recursive" server, so RA is set.
function responseFlags(query: DecodedPacket, rcode: number, tc = false): number {
  const f = query.flags ?? 0;
  return (
    (f & 0x7800) |
    (f & dnsPacket.RECURSION_DESIRED) |
    (f & dnsPacket.CHECKING_DISABLED) |
    dnsPacket.RECURSION_AVAILABLE |
    (tc ? dnsPacket.TRUNCATED_RESPONSE : 0) |
    (rcode & 0xf)
  );
}

// A header-only FORMERR for queries whose header reads but whose body does not (RFC 1035 §4.1.1).
function formerrHeader(query: Buffer): Buffer {
  const out = Buffer.alloc(12);
  out.writeUInt16BE(query.readUInt16BE(0), 0);
  const qflags = query.readUInt16BE(2);
  out.writeUInt16BE(0x8000 | (qflags & 0x7800) | (qflags & 0x0100) | 0x0080 | RCODES.formerr, 2);
  return out;
}

function queryOpt(query: DecodedPacket): { udpPayloadSize: number } | undefined {
  for (const a of query.additionals ?? []) {
    if (a.type === 'OPT') return a;
  }
  return undefined;
}

function records(name: string, qtype: string, count: number): Answer[] {
  const out: Answer[] = [];
  for (let i = 0; i < count; i++) {
    // RFC 2181 §5: an RRset holds no duplicates, so every record gets its own documentation address.
    if (qtype === 'AAAA') {
      out.push({ type: 'AAAA', name, class: 'IN', ttl: TTL, data: count === 1 ? '2001:db8::53' : `2001:db8::${(i + 1).toString(16)}` });
    } else {
      out.push({ type: 'A', name, class: 'IN', ttl: TTL, data: count === 1 ? '192.0.2.53' : `192.0.2.${i + 1}` });
    }
  }
  return out;
}

function response(query: DecodedPacket, q: Question, opts: { rcode?: number; tc?: boolean; answers?: Answer[]; id?: number; question?: Question }): Packet {
  const additionals: Answer[] = [];
  // RFC 6891 §7: a responder that understands EDNS answers an OPT with an OPT.
  if (queryOpt(query)) additionals.push({ type: 'OPT', name: '.', udpPayloadSize: OUR_EDNS_SIZE, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] });
  return {
    type: 'response',
    id: opts.id ?? query.id ?? 0,
    flags: responseFlags(query, opts.rcode ?? 0, opts.tc ?? false),
    questions: [opts.question ?? q],
    answers: opts.answers ?? [],
    additionals,
  };
}

function okAnswers(q: Question): Answer[] {
  return q.type === 'A' || q.type === 'AAAA' ? records(q.name, q.type, 1) : [];
}

function bigAnswers(q: Question): Answer[] {
  const qtype = q.type === 'AAAA' ? 'AAAA' : 'A';
  const one = dnsPacket.encodingLength({ answers: records(q.name, qtype, 1) }) - 12;
  const fixed = 12 + dnsPacket.encodingLength({ questions: [q] }) - 12;
  const count = Math.min(250, Math.max(1, Math.ceil((BIG_TARGET_BYTES - fixed) / one)));
  return records(q.name, qtype, count);
}

// RFC 1035 §4.2.1 / RFC 6891 §7: a UDP answer larger than the requestor's buffer is cut at whole records and
// marked TC; we keep as many answers as fit (what e.g. PowerDNS does) so the datagram ends near the limit.
function truncateForUdp(packet: Packet, bytes: Buffer, limit: number): Buffer {
  if (bytes.length <= limit) return bytes;
  const all = packet.answers ?? [];
  const flags = (packet.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE;
  let lo = 0;
  let hi = all.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (dnsPacket.encodingLength({ ...packet, answers: all.slice(0, mid) }) <= limit) lo = mid;
    else hi = mid - 1;
  }
  const out = dnsPacket.encode({ ...packet, flags, answers: all.slice(0, lo) });
  // A question too long to fit even alone: send the bare header with TC, still within the limit.
  return out.length <= limit ? out : Buffer.concat([out.subarray(0, 4), Buffer.alloc(8)]);
}

function udpLimit(query: DecodedPacket): number {
  const opt = queryOpt(query);
  if (!opt) return UDP_MIN; // RFC 1035 §4.2.1
  return Math.max(UDP_MIN, Math.min(65_535, opt.udpPayloadSize || UDP_MIN));
}

function reply(packet: Packet, delayMs = 0, contentType?: string): Plan {
  const plan: Plan = { kind: 'reply', bytes: dnsPacket.encode(packet), delayMs, packet };
  if (contentType) plan.contentType = contentType;
  return plan;
}

/** The engine: decodes one query, records it, and decides the fault for `transport`. */
function planFor(msg: Buffer, transport: FaultTransport, seen: SeenQuery[]): { plan: Plan; query?: DecodedPacket } {
  if (msg.length < 12) return { plan: { kind: 'unparseable' } };
  // Never answer a response (QR=1): two resolvers echoing each other would loop.
  if (msg[2]! & 0x80) return { plan: { kind: 'drop' } };
  let query: DecodedPacket;
  try {
    query = dnsPacket.decode(msg);
  } catch (err) {
    debug(transport, 'undecodable query', err);
    return { plan: { kind: 'reply', bytes: formerrHeader(msg), delayMs: 0 } };
  }
  const q = query.questions?.[0];
  // RFC 1035 §4.1.2: a query without a question is malformed; the FORMERR echoes the header only.
  if (!q || typeof q.name !== 'string') return { plan: { kind: 'reply', bytes: formerrHeader(msg), delayMs: 0 } };
  seen.push({ transport, name: q.name, qtype: String(q.type), at: Date.now() });
  if (seen.length > MAX_SEEN) seen.splice(0, seen.length - MAX_SEEN);

  const label = (q.name.split('.')[0] ?? '').toLowerCase();
  const ok = () => response(query, q, { answers: okAnswers(q) });
  const plan = ((): Plan => {
    const delay = /^delay-(\d+)$/.exec(label);
    if (delay) return reply(ok(), Math.min(MAX_DELAY_MS, Number(delay[1])));
    const http = /^http-(\d{3})$/.exec(label);
    if (http) {
      const status = Number(http[1]);
      if (!isHttp(transport) || status < 200 || status > 599) return reply(ok());
      return { kind: 'http', status };
    }
    switch (label) {
      case 'drop':
        return { kind: 'drop' };
      case 'tc':
        return reply(response(query, q, { tc: true }));
      case 'servfail':
      case 'refused':
      case 'nxdomain':
      case 'formerr':
        return reply(response(query, q, { rcode: RCODES[label] }));
      case 'malformed':
        return { kind: 'reply', bytes: Buffer.alloc(40, 0xff), delayMs: 0 };
      case 'short':
        return { kind: 'reply', bytes: dnsPacket.encode(ok()).subarray(0, 7), delayMs: 0 };
      case 'wrong-id': {
        const id = query.id ?? 0;
        // RFC 8484 §4.1: DoH clients send id 0, and 0+1 is too easy to mistake for "any id"; 0x1234 is unmistakable.
        return reply(response(query, q, { answers: okAnswers(q), id: id === 0 ? 0x1234 : (id + 1) & 0xffff }));
      }
      case 'wrong-question': {
        const other: Question = { name: 'other.fault.test', type: q.type, class: q.class ?? 'IN' };
        return reply(response(query, q, { question: other, answers: okAnswers(other) }));
      }
      case 'close-mid':
        return isStream(transport) ? { kind: 'close-mid', bytes: dnsPacket.encode(ok()) } : { kind: 'drop' };
      case 'reset':
        return isStream(transport) ? { kind: 'reset' } : { kind: 'drop' };
      case 'goaway':
        return transport === 'doh' ? { kind: 'goaway' } : { kind: 'drop' };
      case 'rst-stream':
        return transport === 'doh' ? { kind: 'rst-stream' } : { kind: 'drop' };
      case 'bad-ctype':
        return reply(ok(), 0, isHttp(transport) ? 'text/html' : undefined);
      case 'big':
        return reply(response(query, q, { answers: bigAnswers(q) }));
      default:
        return reply(ok());
    }
  })();
  return { plan, query };
}

function hostPort(address: string, port: number): string {
  return net.isIPv6(address) ? `[${address}]:${port}` : `${address}:${port}`;
}

// RFC 1035 §4.2.2 / RFC 7858 §3.3: every message on a stream is preceded by its 2-byte length.
function frame(bytes: Buffer): Buffer {
  const len = Buffer.alloc(2);
  len.writeUInt16BE(bytes.length & 0xffff);
  return Buffer.concat([len, bytes]);
}

const connKey = (s: { remoteAddress?: string | undefined; remotePort?: number | undefined }) => `${s.remoteAddress}|${s.remotePort}`;

/** Starts every listener on free loopback ports; resolves once all are listening. */
export async function startFaultServer(opts: FaultServerOptions): Promise<FaultServer> {
  const address = opts.address ?? '127.0.0.1';
  const mode: FaultTlsMode = opts.tls ?? 'ok';
  const seen: SeenQuery[] = [];
  let stopped = false;

  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<net.Socket>(); // raw TCP sockets and the TLS sockets over them
  const sessions = new Set<http2.ServerHttp2Session>();
  const servers: net.Server[] = [];

  let leaf = { certPem: opts.certPem, keyPem: opts.keyPem };
  if (mode === 'expired') {
    if (!opts.expiredCert) throw new Error("startFaultServer: tls 'expired' needs opts.expiredCert");
    leaf = opts.expiredCert;
  } else if (mode === 'wrong-name') {
    if (!opts.wrongNameCert) throw new Error("startFaultServer: tls 'wrong-name' needs opts.wrongNameCert");
    leaf = opts.wrongNameCert;
  }

  const later = (ms: number, fn: () => void) => {
    const run = () => {
      if (stopped) return;
      try {
        fn();
      } catch (err) {
        debug('deferred action failed', err);
      }
    };
    if (ms <= 0) return run();
    const t = setTimeout(() => {
      timers.delete(t);
      run();
    }, ms);
    timers.add(t);
  };

  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('error', (err) => debug('socket error', err.message));
    s.on('close', () => sockets.delete(s));
  };

  // Raw TCP sockets under the TLS listeners, by peer, so a TLS-level handler can send an RST on the TCP beneath.
  const raws = new Map<string, net.Socket>();
  const resetUnder = (s: { remoteAddress?: string | undefined; remotePort?: number | undefined } | undefined) => {
    const raw = s ? raws.get(connKey(s)) : undefined;
    if (raw && !raw.destroyed) raw.resetAndDestroy();
  };

  // ---- UDP ---------------------------------------------------------------------------------------------------
  const udp = dgram.createSocket({ type: net.isIPv6(address) ? 'udp6' : 'udp4' });
  udp.on('error', (err) => debug('udp error', err.message));
  udp.on('message', (msg, rinfo) => {
    try {
      const { plan, query } = planFor(msg, 'udp', seen);
      if (plan.kind !== 'reply') return; // every stream-only fault reads as silence over UDP
      const bytes = plan.packet && query ? truncateForUdp(plan.packet, plan.bytes, udpLimit(query)) : plan.bytes;
      later(plan.delayMs, () => udp.send(bytes, rinfo.port, rinfo.address, (err) => err && debug('udp send', err.message)));
    } catch (err) {
      debug('udp handler', err);
    }
  });

  // ---- TCP and DoT: length-prefixed messages, pipelined, answered as each is ready (RFC 7766 §6.2.1.1) --------
  const serveStream = (sock: net.Socket, transport: 'tcp' | 'dot') => {
    let buf: Buffer = Buffer.alloc(0);
    const writable = () => !sock.destroyed && sock.writable;
    sock.on('data', (chunk: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      while (buf.length >= 2) {
        const len = buf.readUInt16BE(0);
        if (buf.length < 2 + len) break;
        const msg = buf.subarray(2, 2 + len);
        buf = buf.subarray(2 + len);
        let plan: Plan;
        try {
          plan = planFor(msg, transport, seen).plan;
        } catch (err) {
          debug(transport, 'plan failed', err);
          continue;
        }
        switch (plan.kind) {
          case 'reply': {
            const bytes = plan.bytes;
            later(plan.delayMs, () => writable() && sock.write(frame(bytes)));
            break;
          }
          case 'close-mid': {
            const framed = frame(plan.bytes);
            // Prefix plus half the message, then FIN (and close_notify over TLS): the reader sees a short read.
            if (writable()) sock.end(framed.subarray(0, 2 + Math.floor(plan.bytes.length / 2)));
            return;
          }
          case 'reset':
            if (transport === 'tcp') {
              if (!sock.destroyed) sock.resetAndDestroy();
            }
            else resetUnder(sock);
            return;
          default:
            break; // drop, unparseable, http-only faults: silence, connection stays open
        }
      }
    });
  };

  const tcp = net.createServer((sock) => {
    track(sock);
    serveStream(sock, 'tcp');
  });

  // ---- DoH over HTTP/2 (RFC 8484) ------------------------------------------------------------------------------
  const h2 = http2.createSecureServer({ key: leaf.keyPem, cert: leaf.certPem, allowHTTP1: false });
  h2.on('session', (session) => {
    sessions.add(session);
    session.on('error', (err) => debug('h2 session error', err.message));
    session.on('close', () => sessions.delete(session));
  });
  h2.on('sessionError', (err) => debug('h2 sessionError', err.message));
  h2.on('tlsClientError', (err) => debug('doh tls error', err.message));
  h2.on('stream', (stream, headers) => {
    stream.on('error', (err) => debug('h2 stream error', err.message));
    try {
      serveH2(stream, headers);
    } catch (err) {
      debug('h2 handler', err);
      if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    }
  });

  const h2Text = (stream: http2.ServerHttp2Stream, status: number, text: string) => {
    if (stream.destroyed || stream.closed || stream.headersSent) return;
    // RFC 9110 §15.3.5, §15.4.5: 204/205/304 carry no content.
    if (status === 204 || status === 205 || status === 304) {
      stream.respond({ ':status': status }, { endStream: true });
      return;
    }
    stream.respond({ ':status': status, 'content-type': 'text/plain; charset=utf-8' });
    stream.end(text);
  };

  const serveH2 = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
    withDohQuery(
      String(headers[':method'] ?? ''),
      String(headers[':path'] ?? ''),
      String(headers['content-type'] ?? ''),
      stream,
      (status, text) => h2Text(stream, status, text),
      (msg) => {
        const { plan } = planFor(msg, 'doh', seen);
        const session = stream.session;
        switch (plan.kind) {
          case 'reply': {
            const { bytes, contentType } = plan;
            later(plan.delayMs, () => {
              if (stream.destroyed || stream.closed || stream.headersSent) return;
              stream.respond({ ':status': 200, 'content-type': contentType ?? 'application/dns-message', 'content-length': bytes.length, 'cache-control': `max-age=${TTL}` });
              stream.end(bytes);
            });
            return;
          }
          case 'close-mid': {
            stream.respond({ ':status': 200, 'content-type': 'application/dns-message', 'content-length': plan.bytes.length });
            const peer = session?.socket;
            stream.write(plan.bytes.subarray(0, Math.floor(plan.bytes.length / 2)), () => {
              // The write callback means nghttp2 took the DATA frame; give the socket a moment to flush it.
              later(30, () => {
                const tlsSock = peer ? tlsByPeer.get(connKey(peer)) : undefined;
                if (tlsSock) tlsSock.destroy();
                else session?.destroy();
              });
            });
            return;
          }
          case 'reset':
            resetUnder(session?.socket);
            return;
          case 'goaway': {
            // RFC 9113 §6.8: streams above last-stream-id were not processed and may be retried elsewhere.
            // node turns a last-stream-id of 0 into "last processed" (stream 1 itself), so the first stream
            // of a connection is refused explicitly with RST_STREAM REFUSED_STREAM (RFC 9113 §8.7), which
            // the client sees exactly as it sees a stream cut off by GOAWAY.
            const id = stream.id ?? 1;
            session?.goaway(http2.constants.NGHTTP2_NO_ERROR, id - 2);
            if (id - 2 <= 0 && !stream.closed && !stream.destroyed) stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
            return;
          }
          case 'rst-stream':
            stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR); // RFC 9113 §6.4
            return;
          case 'http':
            h2Text(stream, plan.status, `http-${plan.status}\n`);
            return;
          case 'unparseable':
            h2Text(stream, 400, 'not a DNS message\n');
            return;
          case 'drop':
            return; // the stream stays open until the client gives up or stop()
        }
      },
    );
  };

  // ---- DoH over HTTP/1.1 ---------------------------------------------------------------------------------------
  const h1 = https.createServer({ key: leaf.keyPem, cert: leaf.certPem, ALPNProtocols: ['http/1.1'] });
  // Keep idle connections long enough for warm measurements; stop() destroys them regardless.
  h1.keepAliveTimeout = 60_000;
  h1.on('tlsClientError', (err) => debug('doh1 tls error', err.message));
  h1.on('request', (req: IncomingMessage, res: ServerResponse) => {
    req.on('error', (err) => debug('h1 req error', err.message));
    res.on('error', (err) => debug('h1 res error', err.message));
    try {
      serveH1(req, res);
    } catch (err) {
      debug('h1 handler', err);
      req.socket.destroy();
    }
  });

  const h1Text = (res: ServerResponse, status: number, text: string) => {
    if (res.headersSent || res.destroyed) return;
    if (status === 204 || status === 205 || status === 304) {
      res.writeHead(status).end();
      return;
    }
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };

  const serveH1 = (req: IncomingMessage, res: ServerResponse) => {
    withDohQuery(
      req.method ?? '',
      req.url ?? '',
      String(req.headers['content-type'] ?? ''),
      req,
      (status, text) => h1Text(res, status, text),
      (msg) => {
        const { plan } = planFor(msg, 'doh1', seen);
        switch (plan.kind) {
          case 'reply': {
            const { bytes, contentType } = plan;
            later(plan.delayMs, () => {
              if (res.headersSent || res.destroyed) return;
              res.writeHead(200, { 'content-type': contentType ?? 'application/dns-message', 'content-length': bytes.length, 'cache-control': `max-age=${TTL}` });
              res.end(bytes);
            });
            return;
          }
          case 'close-mid': {
            res.writeHead(200, { 'content-type': 'application/dns-message', 'content-length': plan.bytes.length });
            const sock = req.socket;
            res.write(plan.bytes.subarray(0, Math.floor(plan.bytes.length / 2)), () => later(30, () => sock.destroy()));
            return;
          }
          case 'reset':
            resetUnder(req.socket);
            return;
          case 'http':
            h1Text(res, plan.status, `http-${plan.status}\n`);
            return;
          case 'unparseable':
            h1Text(res, 400, 'not a DNS message\n');
            return;
          default:
            return; // drop, goaway, rst-stream: the request hangs, which also blocks this keep-alive connection
        }
      },
    );
  };

  // ---- DoT --------------------------------------------------------------------------------------------------------
  // No ALPN list: RFC 7858 clients need not send "dot", and node rejects a mismatched ALPN offer with an alert.
  const dotTls = tls.createServer({ key: leaf.keyPem, cert: leaf.certPem });
  dotTls.on('tlsClientError', (err) => debug('dot tls error', err.message));
  dotTls.on('secureConnection', (sock) => {
    track(sock);
    serveStream(sock, 'dot');
  });

  // TLS sockets by peer, so the h2 handler (which only sees a guarded proxy of the socket) can destroy the real one.
  const tlsByPeer = new Map<string, tls.TLSSocket>();
  for (const inner of [h2, h1] as tls.Server[]) {
    inner.on('secureConnection', (sock: tls.TLSSocket) => {
      const key = connKey(sock);
      tlsByPeer.set(key, sock);
      track(sock);
      sock.on('close', () => tlsByPeer.delete(key));
    });
  }

  // Each TLS listener is a plain TCP server that hands connections to the TLS server only in the modes that
  // handshake, so 'stall' and 'alert' can misbehave before TLS begins and every raw socket stays in reach.
  const tlsFront = (inner: tls.Server) =>
    net.createServer((raw) => {
      track(raw);
      const key = connKey(raw);
      raws.set(key, raw);
      raw.on('close', () => raws.delete(key));
      if (stopped) return void raw.destroy();
      if (mode === 'stall') return; // accept, read nothing, say nothing: the client's handshake timer must fire
      if (mode === 'alert') {
        raw.once('data', () => {
          if (!raw.destroyed) raw.end(TLS_ALERT_HANDSHAKE_FAILURE);
        });
        return;
      }
      inner.emit('connection', raw);
    });

  const dot = tlsFront(dotTls);
  const doh = tlsFront(h2);
  const doh1 = tlsFront(h1);

  const listenTcp = (srv: net.Server) =>
    new Promise<number>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen({ host: address, port: 0 }, () => {
        srv.off('error', reject);
        srv.on('error', (err) => debug('listener error', err.message));
        servers.push(srv);
        resolve((srv.address() as net.AddressInfo).port);
      });
    });
  const udpPort = await new Promise<number>((resolve, reject) => {
    udp.once('error', reject);
    udp.bind({ address, port: 0 }, () => {
      udp.off('error', reject);
      resolve(udp.address().port);
    });
  });
  const [tcpPort, dotPort, dohPort, doh1Port] = await Promise.all([listenTcp(tcp), listenTcp(dot), listenTcp(doh), listenTcp(doh1)]);

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    for (const t of timers) clearTimeout(t);
    timers.clear();
    for (const s of sessions) s.destroy();
    for (const s of sockets) s.destroy();
    const closes = servers.map((srv) => new Promise<void>((resolve) => srv.close(() => resolve())));
    closes.push(new Promise<void>((resolve) => udp.close(() => resolve())));
    // close() waits for sockets to finish closing, which after destroy() is a tick or two; never wait past 900 ms.
    let guard: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(closes), new Promise<void>((resolve) => (guard = setTimeout(resolve, 900)))]);
    clearTimeout(guard);
  };

  return {
    address,
    seen,
    endpoints: {
      udp: `udp://${hostPort(address, udpPort)}`,
      tcp: `tcp://${hostPort(address, tcpPort!)}`,
      dot: `tls://${TLS_HOST}:${dotPort}`,
      doh: `https://${TLS_HOST}:${dohPort}/dns-query`,
      doh1: `https://${TLS_HOST}:${doh1Port}/dns-query`,
    },
    stop,
  };
}

// RFC 8484 §4.1: GET carries the query as base64url `dns=`, POST as an application/dns-message body.
function withDohQuery(
  method: string,
  pathAndQuery: string,
  contentType: string,
  body: NodeJS.ReadableStream,
  fail: (status: number, text: string) => void,
  handle: (msg: Buffer) => void,
): void {
  let url: URL;
  try {
    url = new URL(pathAndQuery, 'https://dns.test');
  } catch {
    return fail(400, 'bad path\n');
  }
  if (url.pathname !== '/dns-query') return fail(404, 'not found\n');
  if (method === 'GET') {
    const dns = url.searchParams.get('dns');
    if (!dns) return fail(400, 'missing dns parameter\n');
    return handle(Buffer.from(dns, 'base64url'));
  }
  if (method !== 'POST') return fail(405, 'method not allowed\n');
  if (contentType.split(';')[0]?.trim().toLowerCase() !== 'application/dns-message') return fail(415, 'want application/dns-message\n');
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  body.on('data', (c: Buffer) => {
    if (done) return;
    size += c.length;
    if (size > 65_535) {
      done = true;
      return fail(413, 'too large\n');
    }
    chunks.push(c);
  });
  body.on('end', () => {
    if (done) return;
    done = true;
    try {
      handle(Buffer.concat(chunks));
    } catch (err) {
      debug('doh handler', err);
      fail(500, 'internal error\n');
    }
  });
}
