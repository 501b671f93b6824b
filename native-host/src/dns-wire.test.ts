import assert from 'node:assert/strict';
import { test } from 'vitest';
import dnsPacket from 'dns-packet';
import { DnscostError } from '../../common/errors.js';
import { answerTtl, cappedAnswers, encodeQuery, MAX_ANSWER_DATA, MAX_ANSWERS, parseAnswer, QUERY_PAD_BLOCK, rcodeError } from './dns-wire.js';

const answerFor = (query: Buffer, patch: Partial<dnsPacket.Packet> = {}): Buffer => {
  const q = dnsPacket.decode(query);
  return dnsPacket.encode({
    type: 'response',
    id: q.id,
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
    questions: q.questions,
    answers: [{ type: 'A', name: q.questions![0]!.name, ttl: 60, data: '192.0.2.7' }],
    ...patch,
  });
};

test('queries carry the asked type (HTTPS as 65) and EDNS; padded ones fill a 128-octet block', () => {
  for (const qtype of ['A', 'AAAA', 'HTTPS', 'SVCB', 'TXT'] as const) {
    const plain = encodeQuery({ name: 'h1.test', qtype }, 4660, false);
    assert.equal(plain.readUInt16BE(0), 4660);
    const padded = encodeQuery({ name: 'h1.test', qtype }, 0, true);
    assert.equal(padded.length % QUERY_PAD_BLOCK, 0, qtype);
    const decoded = dnsPacket.decode(padded);
    assert.equal(decoded.id, 0);
    assert.equal(decoded.questions![0]!.name, 'h1.test');
  }
  const https = dnsPacket.decode(encodeQuery({ name: 'h1.test', qtype: 'HTTPS' }, 1, false));
  assert.equal(https.questions![0]!.type, 'UNKNOWN_65');
});

test('a repeated question is a copy with its own id: the same bytes otherwise, never the same buffer', () => {
  const first = encodeQuery({ name: 'again.test', qtype: 'AAAA' }, 0x0102, true);
  first.fill(0xff, 2);
  const second = encodeQuery({ name: 'again.test', qtype: 'AAAA' }, 0xa0b0, true);
  assert.equal(second.readUInt16BE(0), 0xa0b0);
  const decoded = dnsPacket.decode(second);
  assert.equal(decoded.questions![0]!.name, 'again.test');
  assert.equal(decoded.questions![0]!.type, 'AAAA');
  assert.equal(second.length % QUERY_PAD_BLOCK, 0);
  assert.notDeepEqual(encodeQuery({ name: 'again.test', qtype: 'AAAA' }, 0xa0b0, false), second, 'padding is part of the key');
});

test('parseAnswer returns rcode, TC and answers of a matching response', () => {
  const query = encodeQuery({ name: 'h1.test', qtype: 'A' }, 99, false);
  const parsed = parseAnswer(answerFor(query), { name: 'h1.test', qtype: 'A' }, 99);
  assert.equal(parsed.rcode, 'NOERROR');
  assert.equal(parsed.truncated, false);
  assert.deepEqual(parsed.answers, [{ name: 'h1.test', type: 'A', ttl: 60, data: '192.0.2.7' }]);
  const tc = parseAnswer(answerFor(query, { flags: dnsPacket.TRUNCATED_RESPONSE }), { name: 'h1.test', qtype: 'A' }, 99);
  assert.equal(tc.truncated, true);
});

test('a hostile answer of 4,000 records parses whole; what goes to the extension is the first MAX_ANSWERS, each record\'s data cut to its cap', () => {
  const many = Array.from({ length: 4000 }, (_, i) => ({ type: 'A' as const, name: 'h1.test', ttl: 1, data: `10.0.${i >> 8}.${i & 255}` }));
  const parsed = parseAnswer(answerFor(encodeQuery({ name: 'h1.test', qtype: 'A' }, 7, false), { answers: many }), { name: 'h1.test', qtype: 'A' }, 7);
  assert.equal(parsed.answers.length, 4000);
  const capped = cappedAnswers(parsed.answers);
  assert.equal(capped.length, MAX_ANSWERS);
  assert.deepEqual(capped.map((a) => a.data).slice(0, 2), ['10.0.0.0', '10.0.0.1']);
  const long = parseAnswer(answerFor(encodeQuery({ name: 'h1.test', qtype: 'A' }, 8, false), { answers: [{ type: 'TXT', name: 'h1.test', ttl: 1, data: ['x'.repeat(250), 'y'.repeat(250), 'z'.repeat(250)] }] }), { name: 'h1.test', qtype: 'A' }, 8);
  assert.ok(cappedAnswers(long.answers)[0]!.data.length <= MAX_ANSWER_DATA + 1);
});

test('a record without data in the answer section (an OPT where an A was: the fuzzer\'s find) is presented as a string, and capping it does not throw', () => {
  // The fuzzer's input (bench/fuzz.ts, seed 1): the second answer's type bytes flipped from A (1) to OPT (41).
  const buf = Buffer.from('10928180000100020000000003777777076578616d706c6503636f6d000001000103777777076578616d706c6503636f6d00000500010000003c00110363646e076578616d706c65036e6574000363646e076578616d706c65036e657400002900010000003c0004c0000207', 'hex');
  const parsed = parseAnswer(buf, { name: 'www.example.com', qtype: 'A' }, 4242);
  assert.equal(parsed.answers.length, 2);
  for (const a of parsed.answers) assert.deepEqual([typeof a.name, typeof a.type, typeof a.ttl, typeof a.data], ['string', 'string', 'number', 'string'], JSON.stringify(a));
  assert.equal(parsed.answers[1]!.type, 'OPT');
  assert.equal(cappedAnswers(parsed.answers).length, 2);
});

test('parseAnswer refuses answers that do not belong to the query, each with its code', () => {
  const q = { name: 'h1.test', qtype: 'A' as const };
  const query = encodeQuery(q, 99, false);
  const cases: Array<[Buffer, string]> = [
    [Buffer.alloc(5), 'short-answer'],
    [Buffer.alloc(40, 0xff), 'malformed-answer'],
    [answerFor(query, { id: 100 }), 'id-mismatch'],
    [answerFor(query, { questions: [{ type: 'A', name: 'other.test' }] }), 'question-mismatch'],
    [answerFor(query, { questions: [{ type: 'AAAA', name: 'h1.test' }] }), 'question-mismatch'],
    [query, 'malformed-answer'],
  ];
  for (const [buf, code] of cases) {
    assert.throws(() => parseAnswer(buf, q, 99), (err: unknown) => err instanceof DnscostError && err.code === code, code);
  }
});

test('rcodes map to stable error codes', () => {
  assert.equal(rcodeError('NOERROR'), null);
  assert.equal(rcodeError('SERVFAIL'), 'servfail');
  assert.equal(rcodeError('REFUSED'), 'refused');
  assert.equal(rcodeError('NXDOMAIN'), 'nxdomain');
  assert.equal(rcodeError('NOTIMP'), 'rcode');
});

test('an answer\'s TTL is its records\' smallest (a CNAME chain\'s included); none without records', () => {
  assert.equal(answerTtl([]), null);
  assert.equal(answerTtl([{ name: 'a.test', type: 'CNAME', ttl: 60, data: 'b.test' }, { name: 'b.test', type: 'A', ttl: 300, data: '192.0.2.1' }]), 60);
});
