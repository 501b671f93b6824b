// The name-privacy rule: which names may go to which resolver.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import { canonicalIp } from './ip-address.js';
import { isGlobalAddress, isSpecialUseName, privateReason, withheldFrom, withheldFromAny } from './name-privacy.js';

const PUBLIC = '1.1.1.1';
const OFFICE = '10.0.0.53';
const LOOPBACK = '127.0.0.53';

test('global and non-global addresses, IPv4 and IPv6', () => {
  for (const ip of ['1.1.1.1', '8.8.8.8', '9.9.9.9', '192.0.1.1', '100.63.255.255', '172.32.0.1', '2606:4700:4700::1111', '2001:4860:4860::8888', '2620:fe::fe', '::ffff:1.1.1.1', '64:ff9b::808:808']) {
    assert.equal(isGlobalAddress(ip), true, ip);
  }
  for (const ip of [
    '127.0.0.1', '127.0.0.53', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '100.64.0.1', '169.254.1.1', '0.0.0.0',
    '192.0.2.2', '198.51.100.7', '203.0.113.9', '198.18.0.1', '224.0.0.251', '255.255.255.255', '240.0.0.1', '192.0.0.8',
    '::1', '::', 'fd00::1', 'fc12::1', 'fe80::1', 'fe80::1%eth0', '[fe80::1]', 'ff02::fb', '2001:db8::1', '3fff::1', '::ffff:10.0.0.1', '::ffff:7f00:1',
    '64:ff9b::a00:1', '64:ff9b:1::1', '2002:c0a8:0101::1', '2001:2::1',
    // Teredo (2001::/32: a tunnel's address, whose answer may name a machine behind a NAT) counts as non-global.
    '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001::1',
    'not an address', '1.2.3', '256.1.1.1', '1:2:3',
  ]) {
    assert.equal(isGlobalAddress(ip), false, ip);
  }
});

test('one canonical text per address (a UDP answer\'s source is compared in it)', () => {
  for (const [a, b] of [['::ffff:192.0.2.1', '192.0.2.1'], ['0:0:0:0:0:0:0:1', '::1'], ['2001:DB8:0:0:1:0:0:1', '2001:db8::1:0:0:1'], ['[fe80::1%eth0]', 'fe80::1'], ['::ffff:7f00:1', '127.0.0.1'], ['2606:4700:4700:0:0:0:0:1111', '2606:4700:4700::1111'], ['1:0:2:0:3:0:4:0', '1:0:2:0:3:0:4:0'], ['x', 'x']]) {
    assert.equal(canonicalIp(a!), b, a);
  }
});

test('special-use and private-use suffixes', () => {
  for (const n of ['x.onion', 'printer.internal', 'a.test', 'foo.localhost', 'localhost', 'nas.home.arpa', 'mac.local', 'x.alt', 'w.example', 'bad.invalid', 'router.lan', 'jira.corp', 'box.home', 'pc.localdomain', 'site.i2p', 'A.TEST.']) {
    assert.equal(isSpecialUseName(n), true, n);
  }
  for (const n of ['example.com', 'www.example.org', 'testing.com', 'corporate.com', 'local.news', 'onion.com', 'mytest']) assert.equal(isSpecialUseName(n), false, n);
});

test('a resolver on a global address gets no special-use, single-label or private name; one on the person\'s network gets private names', () => {
  assert.equal(withheldFrom('www.example.com', PUBLIC), null);
  assert.equal(withheldFrom('x.onion', PUBLIC), 'onion');
  assert.equal(withheldFrom('x.onion', LOOPBACK, { lab: true }), 'onion', '.onion never goes to DNS, not even in the lab');
  assert.equal(withheldFrom('printer.internal', PUBLIC), 'special-use');
  assert.equal(withheldFrom('a.test', PUBLIC, { lab: true }), 'special-use', 'the lab setting opens only resolvers on the person\'s own network');
  assert.equal(withheldFrom('a.test', LOOPBACK), 'special-use', 'a loopback stub may forward upstream: not without the lab setting');
  assert.equal(withheldFrom('a.test', LOOPBACK, { lab: true }), null);
  assert.equal(withheldFrom('fileserver', PUBLIC), 'single-label');
  assert.equal(withheldFrom('fileserver', OFFICE), null);
  assert.equal(withheldFrom('nas.example.com', PUBLIC, { reached: ['192.168.1.20'] }), 'reached-non-global');
  assert.equal(withheldFrom('nas.example.com', PUBLIC, { reached: ['93.184.216.34'] }), null);
  assert.equal(withheldFrom('wiki.corp.example.com', PUBLIC, { searchDomains: ['corp.example.com'] }), 'search-domain');
  assert.equal(withheldFrom('corp.example.com', PUBLIC, { searchDomains: ['corp.example.com.'] }), 'search-domain');
  assert.equal(withheldFrom('notcorp.example.com', PUBLIC, { searchDomains: ['corp.example.com'] }), null);
  assert.equal(withheldFrom('jira.example.com', PUBLIC, { answeredNonGlobal: true }), 'split-horizon');
  assert.equal(withheldFrom('jira.example.com', PUBLIC, { answeredNonGlobal: false }), null);
  assert.equal(withheldFrom('jira.example.com', OFFICE, { answeredNonGlobal: true, reached: ['10.0.0.5'] }), null, 'the office DNS may be asked its own names');
  assert.equal(privateReason('jira.example.com', { answeredNonGlobal: true }), 'split-horizon');
  assert.equal(withheldFromAny('jira.example.com', [OFFICE, PUBLIC], { answeredNonGlobal: true }), 'split-horizon', 'one global resolver is enough to keep it');
  assert.equal(withheldFromAny('www.example.com', [OFFICE, PUBLIC]), null);
});
