import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import type DnsPacket from 'dns-packet';
import { test } from 'vitest';
import { encodeProbeQuery, ProbeWireError, readProbeAnswer } from './wire.js';

const dnsPacket = createRequire(import.meta.url)('dns-packet') as typeof DnsPacket;

test('a probe query carries what it asks: two questions, DO and AD, a client subnet, padding to a 128-octet block', () => {
  const q = encodeProbeQuery({ questions: [{ name: 'a.test', type: 'A' }, { name: 'a.test', type: 'AAAA' }], dnssec: true, clientSubnet: '192.0.2.0', pad: true }, 7);
  assert.equal(q.length % 128, 0);
  const m = dnsPacket.decode(q);
  assert.equal(m.questions?.length, 2);
  assert.ok((m.flags ?? 0) & dnsPacket.AUTHENTIC_DATA);
  const opt = m.additionals?.find((a) => a.type === 'OPT') as DnsPacket.OptAnswer & { flag_do?: boolean };
  assert.equal(opt.flag_do, true);
  const codes = (opt.options as { code: number }[]).map((o) => o.code);
  assert.deepEqual(codes, [8, 12]);
  const plain = dnsPacket.decode(encodeProbeQuery({ questions: [{ name: 'a.test', type: 'A' }] }, 7));
  assert.equal((plain.flags ?? 0) & dnsPacket.AUTHENTIC_DATA, 0);
  assert.deepEqual((plain.additionals?.[0] as DnsPacket.OptAnswer).options, []);
});

test('an answer is read for its rcode (extended too), AD, padding, EDE and the client subnet scope', () => {
  const answer = (flags: number, options: unknown[], extendedRcode = 0) =>
    dnsPacket.encode({
      type: 'response', id: 9, flags,
      questions: [{ type: 'A', name: 'a.test' }],
      answers: [{ type: 'A', name: 'a.test', ttl: 60, data: '192.0.2.1' }],
      additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, extendedRcode, options } as unknown as DnsPacket.OptAnswer],
    });
  const a = readProbeAnswer(answer(dnsPacket.AUTHENTIC_DATA | 2, [
    { code: 15, data: Buffer.concat([Buffer.from([0, 6]), Buffer.from('DNSSEC Bogus')]) },
    { code: 'CLIENT_SUBNET', family: 1, sourcePrefixLength: 24, scopePrefixLength: 20, ip: '192.0.2.0' },
    { code: 'PADDING', length: 40 },
  ]), 9);
  assert.equal(a.rcode, 'SERVFAIL');
  assert.equal(a.ad, true);
  assert.deepEqual(a.ede, [{ code: 6, text: 'DNSSEC Bogus' }]);
  assert.equal(a.clientSubnetScope, 20);
  assert.equal(a.padded, true);
  assert.deepEqual(a.answerTypes, ['A']);
  const b = readProbeAnswer(answer(0, [], 1), 9);
  assert.equal(b.rcode, 'RCODE16');
  assert.equal(b.ad, false);
  assert.equal(b.padded, false);
  assert.equal(b.clientSubnetScope, null);
  assert.deepEqual(b.ede, []);
  assert.throws(() => readProbeAnswer(answer(0, []), 10), ProbeWireError);
  assert.throws(() => readProbeAnswer(Buffer.from([1, 2, 3]), 9), ProbeWireError);
});
