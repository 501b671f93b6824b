// What the fuzzing feeds each boundary, and what must hold for every input (issue 13): the native host's framing and
// request validation, the DNS answer parser, the collector's upload validator, the HAR reader, the HTTP/1.1 response
// reader (DoH over HTTP/1.1), the current-DNS configuration parsers, the page-timing message a web page's content
// script sends, DNS stream reassembly (TCP, DoT) and the collector's routing and query parsing (issue 26 item 7). Each target is a fast-check arbitrary (random inputs, and valid inputs mutated: bytes flipped, cut, fields replaced) and a check that
// throws on a property violation: a crash (an exception that is not the boundary's own coded error), a result that
// breaks the boundary's promises, or an input that takes too long. tests/fuzz.test.ts runs each briefly; bench/fuzz.ts
// runs 1,000,000 inputs each and records the outcome.
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import dnsPacket from 'dns-packet';
import { CODES, DnscostError } from '../common/errors.js';
import { isIpLiteral, MAX_HOSTS_PER_REQUEST, parseRequest } from '../common/schema.js';
import { UPLOAD_BATCH_VERSION, UPLOAD_LIMITS, validateBatch } from '../common/upload-batch.js';
import { PageBuilder } from '../common/page-builder.js';
import { PAGE_CAPS } from '../common/page-record.js';
import { parseExtensionMessage } from '../extension/src/messages/index.js';
import { StreamSession } from '../native-host/src/transports/stream.js';
import type { SetupTimings } from '../native-host/src/transports/transport.js';
import type { TcpWire } from '../native-host/src/dial.js';
import { BodyBudget, handle, type RouteContext } from '../collector/routes.js';
import { HarError, parseHar } from '../common/har.js';
import { pagePlan } from '../lab/har/plan.js';
import { cappedAnswers, MAX_ANSWERS, parseAnswer } from '../native-host/src/dns-wire.js';
import { encodeFrame, FrameDecoder } from '../native-host/src/framing.js';
import { Http1Reader } from '../native-host/src/transports/http1-reader.js';
import { parseDnsmasqConf, parseIpconfigAll, parseNrptPolicy, parseResolvConf, parseResolvectl, parseScutilDns, parseStubbyYml, parseUnboundConf } from '../native-host/src/current-dns/parse.js';

/** One boundary's fuzzing: inputs, and the check each must pass (an async check when the boundary answers later). */
export interface FuzzTarget<T> {
  name: string;
  arbitrary: fc.Arbitrary<T>;
  check(input: T): void | Promise<void>;
  async?: boolean;
}

/** Longest one input may take (ms) before it counts as a hang. */
export const HANG_MS = 1000;

const CODE_SET = new Set<string>(Object.values(CODES));
const bytes = (max: number) => fc.uint8Array({ maxLength: max }).map((a) => Buffer.from(a));

/** `valid` with a few bytes flipped, inserted, or cut off. */
function mutated(valid: Buffer): fc.Arbitrary<Buffer> {
  return fc.tuple(fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 6 }), fc.option(fc.nat())).map(([flips, cut]) => {
    const b = Buffer.from(valid);
    for (const [at, v] of flips) if (b.length) b[at % b.length] = v;
    return cut === null || b.length === 0 ? b : b.subarray(0, cut % (b.length + 1));
  });
}

/** A JSON value with one field somewhere replaced by anything. */
function mutatedJson(valid: unknown): fc.Arbitrary<unknown> {
  return fc.tuple(fc.nat(), fc.jsonValue(), fc.boolean()).map(([pick, value, drop]) => {
    const copy = structuredClone(valid) as Record<string, unknown>;
    const paths: Array<[Record<string, unknown>, string]> = [];
    const walk = (o: unknown) => {
      if (typeof o !== 'object' || o === null) return;
      for (const k of Object.keys(o)) {
        paths.push([o as Record<string, unknown>, k]);
        walk((o as Record<string, unknown>)[k]);
      }
    };
    walk(copy);
    if (paths.length) {
      const [o, k] = paths[pick % paths.length]!;
      if (drop) delete o[k];
      else o[k] = value;
    }
    return copy;
  });
}

/** `all` cut into chunks at up to `maxCuts` places, as a stream may deliver it. */
function chunked(all: Buffer, maxCuts: number): fc.Arbitrary<Buffer[]> {
  return fc.array(fc.nat({ max: all.length }), { maxLength: maxCuts }).map((cuts) => {
    const at = [...new Set([0, ...cuts.sort((a, b) => a - b), all.length])];
    return at.slice(1).map((end, i) => all.subarray(at[i]!, end));
  });
}

function timed<T>(check: (input: T) => void): (input: T) => void {
  return (input) => {
    const t0 = performance.now();
    check(input);
    const ms = performance.now() - t0;
    if (ms > HANG_MS) throw new Error(`one input took ${ms.toFixed(0)} ms (a hang)`);
  };
}

// ---- native framing and request validation ----

const VALID_REQUEST = { id: 'm1', type: 'measure', hosts: ['a.example', { name: 'b.example', firstNeededMs: 5, qtypes: ['A', 'HTTPS'] }], resolvers: [{ id: 'r', name: 'R', endpoints: [{ transport: 'dot', address: '192.0.2.1', port: 853, serverName: 'dns.example' }] }], modes: ['cold'], repeat: 2 };

/** Chunks of bytes as stdin delivers them: random, or frames (valid or mutated requests) cut anywhere. */
const framingInput = fc.array(fc.oneof(
  bytes(64),
  mutatedJson(VALID_REQUEST).map((v) => encodeFrame(JSON.stringify(v))),
  fc.jsonValue().map((v) => encodeFrame(JSON.stringify(v) ?? 'null')),
  mutated(encodeFrame(JSON.stringify(VALID_REQUEST))),
), { maxLength: 8 }).chain((parts) => {
  return chunked(Buffer.concat(parts), 4);
});

export const framing: FuzzTarget<Buffer[]> = {
  name: 'native framing and request validation',
  arbitrary: framingInput,
  check: timed((chunks) => {
    const d = new FrameDecoder(1024 * 1024);
    const total = chunks.reduce((n, c) => n + c.length, 0);
    let seen = 0;
    const events = [...chunks.flatMap((c) => d.push(c)), d.abandon()].filter((e) => e !== null);
    for (const e of events) {
      if (e.kind === 'frame') {
        seen += 4 + e.body.length;
        let value: unknown;
        try {
          value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(e.body));
        } catch {
          continue; // the host answers bad-json
        }
        const parsed = parseRequest(value);
        if (parsed.ok && parsed.request.type === 'measure' && parsed.request.hosts.length > MAX_HOSTS_PER_REQUEST) throw new Error('a request over the host cap passed');
        if (!parsed.ok && (!parsed.problems.length || parsed.problems.some((p) => typeof p !== 'string'))) throw new Error('a refusal without its problems');
      } else if (e.kind !== 'too-large' && e.kind !== 'truncated') throw new Error(`unknown event ${JSON.stringify(e)}`);
    }
    if (seen > total) throw new Error(`frames of ${seen} bytes from ${total} bytes of input`);
  }),
};

// ---- the DNS answer parser ----

const QUESTION = { name: 'www.example.com', qtype: 'A' as const };
const ID = 4242;
const VALID_ANSWER = dnsPacket.encode({
  type: 'response', id: ID, flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE, questions: [{ type: 'A', name: QUESTION.name }],
  answers: [{ type: 'CNAME', name: QUESTION.name, ttl: 60, data: 'cdn.example.net' }, { type: 'A', name: 'cdn.example.net', ttl: 60, data: '192.0.2.7' }],
});

export const dnsAnswer: FuzzTarget<Buffer> = {
  name: 'DNS answer parser',
  arbitrary: fc.oneof(bytes(600), mutated(VALID_ANSWER), mutated(VALID_ANSWER), mutated(VALID_ANSWER)),
  check: timed((buf) => {
    try {
      const a = parseAnswer(buf, QUESTION, ID);
      if (cappedAnswers(a.answers).length > MAX_ANSWERS || typeof a.rcode !== 'string') throw new Error('an answer over the cap');
      for (const r of a.answers) {
        if (typeof r.name !== 'string' || typeof r.type !== 'string' || typeof r.data !== 'string' || !Number.isFinite(r.ttl)) throw new Error(`a record that is not an AnswerData: ${JSON.stringify(r)}`);
      }
    } catch (e) {
      if (e instanceof DnscostError && CODE_SET.has(e.code)) return;
      throw e;
    }
  }),
};

// ---- the collector's upload validator ----

const VALID_BATCH = {
  version: 3, key: 'k_3f9a-Zq81bX0cD2e', network: { type: 'wifi' },
  pages: [{ site: 'wikipedia.org', hour: '2026-11-21T14Z', hosts: 8, results: [{ resolver: 'cloudflare', transport: 'doh', mode: 'cold', lookups: 11, failures: 1, medianMs: 22.6, p5Ms: 11.3, p95Ms: 76.1, onload: { pointMs: 13.5, lowMs: 2.83, highMs: 38.1 }, bytesPerLookup: 4870, packetsPerLookup: 11.3 }] }],
};
const NOW = Date.parse('2026-11-21T15:30:00Z');

export const uploadBatch: FuzzTarget<unknown> = {
  name: 'upload validator',
  arbitrary: fc.oneof(fc.anything(), fc.jsonValue(), mutatedJson(VALID_BATCH), mutatedJson(VALID_BATCH), mutatedJson(VALID_BATCH)),
  check: timed((value) => {
    const r = validateBatch(value, { now: () => NOW });
    if (r.ok) {
      if (r.batch.pages.length > UPLOAD_LIMITS.pages) throw new Error('a batch over the page cap passed');
    } else if (!CODE_SET.has(r.code) || typeof r.message !== 'string') throw new Error(`a refusal without a stable code: ${JSON.stringify(r)}`);
  }),
};

// ---- the HAR reader ----

const VALID_HAR = {
  log: {
    version: '1.2', creator: { name: 'fuzz', version: '1' }, pages: [{ id: 'p', title: 't', startedDateTime: '2026-01-01T00:00:00.000Z', pageTimings: { onLoad: 900 } }],
    entries: [
      { pageref: 'p', startedDateTime: '2026-01-01T00:00:00.000Z', time: 120, request: { method: 'GET', url: 'https://www.example.com/', headers: [] }, response: { status: 200, headers: [], content: { size: 5000, mimeType: 'text/html' }, bodySize: 5000 }, timings: { dns: 10, connect: 20, ssl: 10, send: 1, wait: 50, receive: 9 } },
      { pageref: 'p', startedDateTime: '2026-01-01T00:00:00.200Z', time: 80, _initiator: { type: 'parser', url: 'https://www.example.com/' }, request: { method: 'GET', url: 'https://cdn.example.net/a.js', headers: [] }, response: { status: 200, headers: [], content: { size: 900, mimeType: 'text/javascript' }, bodySize: 900 }, timings: { dns: 5, connect: 10, send: 1, wait: 30, receive: 4 } },
    ],
  },
};

export const harReader: FuzzTarget<string> = {
  name: 'HAR reader',
  arbitrary: fc.oneof(fc.string(), fc.jsonValue().map((v) => JSON.stringify(v) ?? ''), mutatedJson(VALID_HAR).map((v) => JSON.stringify(v)), mutatedJson(VALID_HAR).map((v) => JSON.stringify(v)), mutated(Buffer.from(JSON.stringify(VALID_HAR))).map((b) => b.toString('utf8'))),
  check: timed((text) => {
    try {
      pagePlan(parseHar(text, 'fuzz.har'));
    } catch (e) {
      // The reader's own errors name what is wrong; the plan's one refusal is a plain Error with its sentence.
      if (e instanceof HarError || (e instanceof Error && e.constructor === Error && /^the HAR /.test(e.message))) return;
      throw e;
    }
  }),
};

// ---- the HTTP/1.1 response reader (DoH over HTTP/1.1) ----

const VALID_RESPONSES = Buffer.concat([
  Buffer.from(`HTTP/1.1 200 OK\r\ncontent-type: application/dns-message\r\ncontent-length: ${VALID_ANSWER.length}\r\n\r\n`, 'latin1'), VALID_ANSWER,
  Buffer.from('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5;x\r\nabcde\r\n0\r\nt: 1\r\n\r\n', 'latin1'),
]);
const HTTP1_MAX_BODY = 1024;

export const http1Reader: FuzzTarget<Buffer[]> = {
  name: 'HTTP/1.1 response reader',
  arbitrary: fc.oneof(bytes(600), mutated(VALID_RESPONSES), mutated(VALID_RESPONSES), mutated(VALID_RESPONSES)).chain((all) => chunked(all, 4)),
  check: timed((chunks) => {
    const reader = new Http1Reader(HTTP1_MAX_BODY);
    const total = chunks.reduce((n, c) => n + c.length, 0);
    let body = 0;
    try {
      for (const c of chunks) {
        const r = reader.push(c);
        if (r) body += r.body.length;
        if (r && (r.status < 200 || r.status > 999 || r.body.length > HTTP1_MAX_BODY)) throw new Error(`a response out of bounds: ${r.status}, ${r.body.length} bytes`);
      }
      const last = reader.end();
      if (last) body += last.body.length;
    } catch (e) {
      if (e instanceof DnscostError && CODE_SET.has(e.code)) return;
      throw e;
    }
    if (body > total) throw new Error(`bodies of ${body} bytes from ${total} bytes of input`);
  }),
};

// ---- the current-DNS configuration parsers ----

/** Real configuration text each parser reads (the fixtures' formats), to mutate. */
const CONFIGS = [
  'search corp.example.com lan\nnameserver 192.168.1.1\nnameserver fe80::1%eth0\noptions edns0\n',
  'Link 2 (wlp3s0)\n    Protocols: +DefaultRoute -LLMNR +DNSOverTLS\nCurrent DNS Server: 192.168.178.1#dns.example\n       DNS Servers: 192.168.178.1 fd00::1\n        DNS Domain: ~corp.example.com lan\n',
  'server=/corp.example.com/10.0.0.1\nserver=9.9.9.9#5353\nno-resolv\nresolv-file=/etc/x.conf\n',
  'forward-zone:\n  name: "."\n  forward-tls-upstream: yes\n  forward-addr: 9.9.9.9@853#dns.quad9.net\nstub-zone:\n  name: "intra.example"\n',
  'upstream_recursive_servers:\n  - address_data: 9.9.9.9\n    tls_auth_name: "dns.quad9.net"\n    tls_port: 853\n',
  'resolver #1\n  search domain[0] : corp.example.com\n  nameserver[0] : 10.8.0.1\n  flags    : Supplemental\nresolver #2\n  domain   : local\n  nameserver[0] : fe80::1%en0\n',
  'Ethernet adapter Ethernet:\r\n   DNS Servers . . . . . . . . . . . : 192.168.1.1\r\n   Default Gateway . . . . . . . . . : 192.168.1.1\r\n',
  'Namespace : {.corp.example.com, build.example.net}\r\n',
];

export const currentDnsParsers: FuzzTarget<string> = {
  name: 'current-DNS configuration parsers',
  arbitrary: fc.oneof(fc.string({ maxLength: 400 }), fc.string({ unit: 'binary', maxLength: 400 }), ...CONFIGS.map((c) => mutated(Buffer.from(c)).map((b) => b.toString('latin1')))),
  check: timed((text) => {
    const results = [parseResolvConf(text), parseResolvectl(text), parseDnsmasqConf(text), parseUnboundConf(text), parseStubbyYml(text), parseScutilDns(text), parseIpconfigAll(text)];
    for (const r of results) {
      for (const s of r.servers) if (!isIpLiteral(s.address) || !Number.isInteger(s.port) || s.port < 1 || s.port > 65535) throw new Error(`a server that is not one: ${JSON.stringify(s)}`);
    }
    const listed = (r: object, key: 'search' | 'split'): unknown[] => (Array.isArray((r as Record<string, unknown>)[key]) ? ((r as Record<string, unknown>)[key] as unknown[]) : []);
    const domains = [...parseNrptPolicy(text), ...results.flatMap((r) => [...listed(r, 'search'), ...listed(r, 'split')])];
    for (const d of domains) if (typeof d !== 'string' || !d || /\s/.test(d)) throw new Error(`a domain that is not one: ${JSON.stringify(d)}`);
  }),
};

// ---- the page-timing message (a web page's content script sends it; the page builder takes it) ----

const VALID_TIMING = {
  type: 'page-timing', url: 'https://www.example.com/a', timeOrigin: 1_700_000_000_000,
  navigation: { domainLookupStart: 3, domainLookupEnd: 21, connectStart: 21, responseStart: 60, loadEventEnd: 400, name: 'https://www.example.com/a', nextHopProtocol: 'h2' },
  onLoadMs: 400, entries: 3,
  resources: [{ host: 'cdn.example.net', lookupStart: 80, lookupEnd: 95, nextHopProtocol: 'h2' }, { host: 'x.example', lookupStart: null, lookupEnd: null, nextHopProtocol: null }],
};

export const pageTiming: FuzzTarget<unknown> = {
  name: 'page-timing message',
  arbitrary: fc.oneof(fc.jsonValue(), mutatedJson(VALID_TIMING), mutatedJson(VALID_TIMING), mutatedJson(VALID_TIMING)),
  check: timed((value) => {
    const parsed = parseExtensionMessage(value);
    if (!parsed.ok) {
      if (parsed.code !== CODES.BAD_REQUEST) throw new Error(`refused with ${parsed.code}`);
      return;
    }
    if (parsed.message.type !== 'page-timing') return;
    const page = PageBuilder.start({ tabId: 1, url: 'https://www.example.com/a', at: 1_700_000_000_000, pageId: 'p' });
    page.request({ url: 'https://www.example.com/a', type: 'main_frame', at: 1_700_000_000_001, frameId: 0 });
    page.timing(parsed.message, 1_700_000_000_500);
    const record = page.record();
    if (!PageBuilder.revive(page.stored())) throw new Error('the page no longer revives from storage');
    if (record.hosts.length > PAGE_CAPS.hosts || JSON.stringify(record).length > 2_000_000) throw new Error('a record over its caps');
    for (const h of record.hosts) if (!Number.isFinite(h.firstNeededMs)) throw new Error(`a host with no time: ${h.name}`);
  }),
};

// ---- DNS over a stream (TCP, DoT): length-prefixed answers reassembled and matched by id ----

/** A socket in memory: what StreamSession reads from and writes to. */
class MemorySocket extends EventEmitter {
  written = 0;
  write(b: Buffer): boolean {
    this.written += b.length;
    return true;
  }
  destroy(): void {
    this.emit('close');
  }
}

const prefixed = (m: Buffer) => Buffer.concat([Buffer.from([m.length >> 8, m.length & 0xff]), m]);
const answerWithId = (id: number) => {
  const a = Buffer.from(VALID_ANSWER);
  a.writeUInt16BE(id, 0);
  return a;
};
const STREAM_IDS = [0x1234, 0x0001, 0xbeef];
const VALID_STREAM = Buffer.concat([prefixed(answerWithId(STREAM_IDS[1]!)), prefixed(answerWithId(STREAM_IDS[0]!)), prefixed(Buffer.from([7])), prefixed(answerWithId(STREAM_IDS[2]!))]);

export const streamReassembly: FuzzTarget<{ queries: number; chunks: Buffer[]; end: boolean }> = {
  name: 'DNS stream reassembly (TCP, DoT)',
  arbitrary: fc.record({
    queries: fc.integer({ min: 0, max: 3 }),
    end: fc.boolean(),
    chunks: fc.oneof(bytes(600), mutated(VALID_STREAM), mutated(VALID_STREAM)).chain((all) => chunked(all, 6)),
  }),
  check: timed(({ queries, chunks, end }) => {
    const socket = new MemorySocket();
    const wire = { dns: { sent: 0, received: 0 }, totals: () => ({}) };
    const session = new StreamSession(socket as unknown as Socket, wire as unknown as TcpWire, { tcpConnectMs: 1, tlsHandshakeMs: null } as unknown as SetupTimings, null);
    let settled = 0;
    for (const id of STREAM_IDS.slice(0, queries)) {
      session.exchange(answerWithId(id), id, 60_000).then(
        (a) => void (settled += a.length >= 0 ? 1 : 0),
        (e: unknown) => {
          if (!(e instanceof DnscostError && CODE_SET.has(e.code))) throw e;
          settled++;
        },
      );
    }
    const total = chunks.reduce((n, c) => n + c.length, 0);
    for (const c of chunks) socket.emit('data', c);
    if (wire.dns.received > total) throw new Error(`${wire.dns.received} bytes counted from ${total}`);
    if (end) socket.emit('end');
    else session.close();
    // Every query is settled now (answered, refused, or failed with the connection): no timer outlives the session.
    if ((session as unknown as { pending: Map<number, unknown> }).pending.size !== 0) throw new Error('a query left waiting after the connection ended');
    void settled;
  }),
};

// ---- the collector's routing and query parsing ----

/** A collector's routes on fakes that accept everything: what a request's method, path, query and headers reach. */
const ROUTE_CONTEXT = (): RouteContext => ({
  store: { delete: async () => false } as unknown as RouteContext['store'],
  committer: { submit: async () => 'stored' } as unknown as RouteContext['committer'],
  limiter: null,
  trustedProxies: new Set(['127.0.0.1']),
  aggregates: async () => ({ epsilon: 4, minPages: 299, delayHours: 6, epochs: [], cells: [] }),
  openData: { index: async () => [], file: async () => null },
  stored: () => {},
  assets: new Map([['/', { type: 'text/html', body: Buffer.from('<!doctype html>') }]]),
  now: () => Date.parse('2026-11-21T15:00:00Z'),
  bodies: new BodyBudget({ budget: 1 << 20, perClient: 1 << 19, reserve: 1 << 16 }),
});
const VALID_UPLOAD = JSON.stringify({ version: UPLOAD_BATCH_VERSION, key: 'k_3f9a-Zq81bX0cD2e', network: { type: 'wifi' }, pages: [{ site: 'github.com', hour: '2026-11-21T14Z', hosts: 8, results: [{ resolver: 'quad9', transport: 'doh', mode: 'cold', lookups: 16, failures: 0, medianMs: 19, p5Ms: 9.51, p95Ms: 38.1, onload: null, bytesPerLookup: null, packetsPerLookup: null }] }] });
const PATHS = ['/v1/batches', '/v1/batches/k_3f9a-Zq81bX0cD2e', '/v1/aggregates?epoch=2026-11-21&site=github.com&resolver=quad9', '/v1/vocabulary', '/healthz', '/', '/dashboard.js', '/v1/aggregates?constructor=x&__proto__=1'];
const ALLOWED_STATUS = new Set([200, 201, 400, 404, 405, 409, 411, 413, 415, 429, 503]);

export const collectorRoutes: FuzzTarget<{ method: string; url: string; headers: Record<string, string>; body: Buffer }> = {
  name: 'collector routing and query parsing',
  async: true,
  arbitrary: fc.record({
    method: fc.oneof(fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'HEAD', 'OPTIONS'), fc.string({ maxLength: 8 })),
    url: fc.oneof(fc.constantFrom(...PATHS), mutated(Buffer.from(PATHS.join(''))).map((b) => b.toString('latin1')), fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 200 })),
    headers: fc.record({
      'content-type': fc.constantFrom('application/json', 'text/plain', 'application/json; charset=utf-8', ''),
      'dnscost-deletion-token': fc.oneof(fc.constant('t'.repeat(43)), fc.string({ maxLength: 140 })),
      'x-forwarded-for': fc.oneof(fc.constant('192.0.2.9'), fc.string({ maxLength: 60 })),
    }, { requiredKeys: [] }),
    body: fc.oneof(mutated(Buffer.from(VALID_UPLOAD)), bytes(300)),
  }),
  check: async ({ method, url, headers, body }) => {
    const t0 = performance.now();
    const req = Object.assign(Readable.from(body.length ? [body] : []), {
      method, url, headers: { ...headers, 'content-length': String(body.length) }, socket: { remoteAddress: '127.0.0.1', destroy: () => {} },
    }) as unknown as IncomingMessage;
    let status = 0;
    let text = '';
    const res = {
      headersSent: false,
      writeHead(s: number) {
        status = s;
        res.headersSent = true;
        return res;
      },
      end(t?: string | Buffer) {
        text = t === undefined ? '' : String(t);
      },
      setHeader() {},
      destroy() {},
    };
    await handle(req, res as unknown as ServerResponse, ROUTE_CONTEXT());
    if (!ALLOWED_STATUS.has(status)) throw new Error(`${method} ${JSON.stringify(url)}: status ${status}: ${text.slice(0, 200)}`);
    if (status >= 400) {
      const reply = JSON.parse(text) as { ok?: unknown; code?: unknown };
      if (reply.ok !== false || typeof reply.code !== 'string' || !CODE_SET.has(reply.code)) throw new Error(`an uncoded refusal: ${text.slice(0, 200)}`);
    }
    const ms = performance.now() - t0;
    if (ms > HANG_MS) throw new Error(`one input took ${ms.toFixed(0)} ms (a hang)`);
  },
};

/** Every target, in the order the benchmark runs them. */
export const FUZZ_TARGETS = [framing, dnsAnswer, uploadBatch, harReader, http1Reader, currentDnsParsers, pageTiming, streamReassembly, collectorRoutes] as const;
