import assert from 'node:assert/strict';
import { test } from 'vitest';
import { labZone, LAB_ZONE } from '../lab/zone.js';
import { advertisedBy, presentSvcb, svcbFacts, SvcbError } from './svcb.js';

/** The lab zone's SVCB/HTTPS records as (owner, rdata bytes), read back from the zone text's generic form. */
function zoneRecords(): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  for (const line of labZone().split('\n')) {
    const m = /^(\S+) IN (?:HTTPS|SVCB) \\# \d+ ([0-9a-f]+)$/.exec(line);
    if (m) out.set(`${m[1]}.test`, Buffer.from(m[2]!, 'hex'));
  }
  return out;
}

test('the lab zone\'s SVCB and HTTPS records decode to their presentation form, every key RFC 9460 defines', () => {
  const records = zoneRecords();
  assert.equal(presentSvcb(records.get(LAB_ZONE.https[0]!.name)!), '1 . alpn=h2,h3');
  assert.equal(
    presentSvcb(records.get('full.test')!),
    '2 edge.test. mandatory=alpn,ipv4hint alpn=h3,h2 no-default-alpn port=8443 ipv4hint=192.0.2.10,192.0.2.11 ' +
      'ech=AEX+DQBBpQAgACB/9wIQ0K3+7gAEAAEAAQASZWNoLmV4YW1wbGUudGVzdAAA ipv6hint=2001:db8::10,2001:db8:0:1::11',
  );
  assert.equal(presentSvcb(records.get(LAB_ZONE.svcb.name)!), '1 dns.test. alpn=dot,h2,h3 dohpath=/dns-query{?dns}');
});

test('an rdata that breaks RFC 9460 is refused with SvcbError, never read past its end', () => {
  const bad: Array<[string, number[]]> = [
    ['too short', [0, 1]],
    ['compressed target', [0, 1, 0xc0, 0x0c]],
    ['target past the end', [0, 1, 5, 0x61]],
    ['param header cut', [0, 1, 0, 0, 1]],
    ['value past the end', [0, 1, 0, 0, 3, 0, 2, 1]],
    ['keys out of order', [0, 1, 0, 0, 3, 0, 2, 1, 187, 0, 1, 0, 3, 2, 104, 50]],
    ['port of one byte', [0, 1, 0, 0, 3, 0, 1, 1]],
    ['ipv4hint of 5 bytes', [0, 1, 0, 0, 4, 0, 5, 1, 2, 3, 4, 5]],
    ['empty alpn id', [0, 1, 0, 0, 1, 0, 1, 0]],
    ['no-default-alpn with a value', [0, 1, 0, 0, 2, 0, 1, 9]],
  ];
  for (const [why, bytes] of bad) assert.throws(() => presentSvcb(Uint8Array.from(bytes)), SvcbError, why);
  // An unknown key and an odd byte are presented, escaped.
  assert.equal(presentSvcb(Uint8Array.from([0, 1, 0, 0xfd, 0xe8, 0, 3, 0x61, 0x22, 0x01])), '1 . key65000="a\\"\\001"');
});

test('what a presentation says a host offers: HTTP/3, ECH, the port; an alias record says nothing', () => {
  assert.deepEqual(svcbFacts('1 . alpn=h2,h3'), { alpn: ['h2', 'h3', 'http/1.1'], ech: false, port: null });
  assert.deepEqual(svcbFacts('2 edge.test. alpn=h3 no-default-alpn port=8443 ech=AEX+'), { alpn: ['h3'], ech: true, port: 8443 });
  assert.equal(svcbFacts('0 other.example.'), null);
  assert.equal(svcbFacts('\\# 3 000100'), null);
});

test('what a page\'s HTTPS answers advertise: hosts with HTTP/3 and with ECH, each once, whatever else the records hold', () => {
  const rec = (host: string, data: string, over: object = {}) => ({ host, qtype: 'HTTPS', ok: true, answers: [{ name: host, type: 'HTTPS', ttl: 60, data }], ...over });
  const records = [
    rec('a.example', '1 . alpn=h3,h2 ech=AEX+'),
    rec('a.example', '1 . alpn=h3'),
    rec('b.example', '1 . alpn=h2'),
    rec('c.example', '1 . alpn=h2 ech=AEX+'),
    rec('d.example', '1 . alpn=h3', { ok: false }),
    rec('e.example', '1 . alpn=h3', { qtype: 'A' }),
    { host: 'f.example', qtype: 'HTTPS', ok: true, answers: 'not a list' },
    { host: 'g.example', qtype: 'HTTPS', ok: true, answers: [null, 7, { type: 'HTTPS', data: 42 }] },
    null,
  ];
  assert.deepEqual(advertisedBy(records), { h3: ['a.example'], ech: ['a.example', 'c.example'] });
  assert.deepEqual(advertisedBy([rec('z.example', '1 . alpn=h3')], { h3: ['a.example'], ech: [] }), { h3: ['a.example', 'z.example'], ech: [] });
});
