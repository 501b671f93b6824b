import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'vitest';
import { CODES } from '../../../common/errors.js';
import { CompanionFrameDecoder, encodeCompanionFrame, MAX_QUIC_FRAME, parseCompanionFrame, type CompanionRequest } from './quic-protocol.js';

const wire = { bytes: { sent: 1290, received: 2300 }, packets: { sent: 2, received: 3 }, payload: { sent: 1234, received: 2216 }, dns: { sent: 130, received: 87 }, at: 1_795_000_000_000_000, readAt: 1_794_999_999_999_000 };
const tls = { version: 'TLSv1.3', alpn: 'doq', cipher: 'TLS_AES_128_GCM_SHA256', resumed: false, earlyData: false, complete: true };
const body = (o: unknown): Buffer => Buffer.from(JSON.stringify(o));

test('requests round-trip through a frame whose declared length equals the bytes written', () => {
  const requests: CompanionRequest[] = [
    { id: 1, type: 'hello' },
    { id: 2, type: 'open', transport: 'doh3', address: '::1', port: 443, serverName: 'dns.test', path: '/dns-query', method: 'GET', timeoutMs: 5000, resumeFrom: 1 },
    { id: 3, type: 'exchange', conn: 1, query: Buffer.from('bücher ✓').toString('base64'), timeoutMs: 100 },
    { id: 4, type: 'close', conn: 1 },
  ];
  for (const r of requests) {
    const frame = encodeCompanionFrame(r);
    assert.equal(frame.readUInt32BE(0), frame.length - 4);
    const [only, ...rest] = new CompanionFrameDecoder().push(frame);
    assert.deepEqual(rest, []);
    assert.deepEqual(JSON.parse(only!.toString('utf8')), r);
  }
});

test('a stream of frames split at every chunk size decodes the same', () => {
  const frames = Buffer.concat([1, 2, 3].map((id) => encodeCompanionFrame({ id, type: 'close', conn: id })));
  for (let size = 1; size <= frames.length; size++) {
    const d = new CompanionFrameDecoder();
    const ids: number[] = [];
    for (let i = 0; i < frames.length; i += size) for (const b of d.push(frames.subarray(i, i + size))) ids.push(JSON.parse(b.toString()).id);
    assert.deepEqual(ids, [1, 2, 3], `chunk size ${size}`);
    assert.equal(d.pending, 0);
  }
});

test('a frame over the limit is refused', () => {
  const header = Buffer.alloc(4);
  header.writeUInt32BE(MAX_QUIC_FRAME + 1);
  assert.throws(() => new CompanionFrameDecoder().push(header), /over/);
});

test('every companion frame kind validates; anything else is refused with a path', () => {
  const good = [
    { id: 1, type: 'hello', version: 'dnscost-quic', protocol: 1, quicGo: 'v0.64.1' },
    { id: 2, type: 'opened', conn: 1, handshakeMs: 80.2, early: false, tls, wire },
    { id: 3, type: 'answer', conn: 1, answer: Buffer.from([0, 0, 0x81, 0x80]).toString('base64'), queryMs: 40.1, tls, ticket: true, wire },
    { id: 4, type: 'error', code: 'tls-cert-untrusted', message: 'handshake: x509: unknown authority', wire, handshakeMs: 40 },
    { id: 5, type: 'closed', conn: 1 },
    { id: 0, type: 'event', conn: 1, event: 'connection-closed', detail: 'timeout: no recent network activity' },
  ];
  for (const f of good) assert.equal(parseCompanionFrame(body(f)).ok, true, JSON.stringify(f));
  const bad: Array<[unknown, RegExp]> = [
    [{ id: 4, type: 'error', code: 'made-up', message: 'x' }, /code/],
    [{ id: 2, type: 'opened', conn: 1, handshakeMs: -1, early: false, tls, wire }, /handshakeMs/],
    [{ id: 3, type: 'answer', conn: 1, answer: '***', queryMs: 1, tls, ticket: true, wire }, /answer/],
    [{ id: 2, type: 'opened', conn: 1, handshakeMs: 1, early: false, tls, wire, extra: 1 }, /extra/],
    [{ id: 1, type: 'surprise' }, /type/],
  ];
  for (const [f, problem] of bad) {
    const r = parseCompanionFrame(body(f));
    assert.equal(r.ok, false, JSON.stringify(f));
    if (!r.ok) assert.match(r.problem, problem);
  }
  const notJson = parseCompanionFrame(Buffer.from('{'));
  assert.equal(notJson.ok, false);
});

test("the Go companion's error codes (native-host/quic/protocol.go) are codes of common/errors.ts", () => {
  const go = readFileSync(new URL('../../quic/protocol.go', import.meta.url), 'utf8');
  const block = /\/\/ Stable error codes[^\n]*\nconst \(([^)]*)\)/.exec(go)?.[1] ?? '';
  const codes = [...block.matchAll(/^\s*code\w+\s*=\s*"([^"]+)"/gm)].map((m) => m[1]!);
  assert.ok(codes.length >= 10, `codes found in protocol.go: ${codes.join(', ')}`);
  const known = new Set<string>(Object.values(CODES));
  assert.deepEqual(codes.filter((c) => !known.has(c)), [], 'codes the host would refuse as a bad frame');
  // Where a code is given (a reply's Code, a coded error's code, classify's return) it is one of those constants,
  // never a bare string (an event's name, "connection-closed", may spell the same words).
  const dir = new URL('../../quic/', import.meta.url);
  const bare = readdirSync(dir).filter((f) => f.endsWith('.go') && !f.endsWith('_test.go')).flatMap((f) => {
    const text = readFileSync(new URL(f, dir), 'utf8');
    return [...text.matchAll(/(?:\b[Cc]ode:\s*|\breturn\s+)"([a-z0-9-]+)"/g)].map((m) => `${f}: "${m[1]!}"`);
  });
  assert.deepEqual(bare, []);
});
