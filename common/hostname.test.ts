import assert from 'node:assert/strict';
import { test } from 'vitest';
import { DnscostError } from './errors.js';
import { isLocalName, isSpecialUseName, normalizeHostname, parseHost } from './hostname.js';

test('normalizeHostname accepts and normalises real names', () => {
  const cases: Array<[string, string]> = [
    ['Example.COM', 'example.com'],
    ['www.example.com.', 'www.example.com'],
    ['xn--bcher-kva.example', 'xn--bcher-kva.example'],
    ['_dns.resolver.arpa', '_dns.resolver.arpa'],
    [`${'a'.repeat(63)}.test`, `${'a'.repeat(63)}.test`],
  ];
  for (const [input, want] of cases) assert.equal(normalizeHostname(input), want);
});

test('normalizeHostname refuses what is not a hostname with bad-hostname', () => {
  const bad: unknown[] = [
    '',
    '.',
    '192.168.1.1',
    '10.0.0.1.',
    '[::1]',
    '::1',
    'a..b',
    '-a.test',
    'a-.test',
    `${'a'.repeat(64)}.test`,
    `${'a.'.repeat(127)}test`,
    'bücher.example',
    '<script>.test',
    'a b.test',
    'foo.123',
    42,
    null,
  ];
  for (const input of bad) {
    assert.throws(() => normalizeHostname(input), (err: unknown) => err instanceof DnscostError && err.code === 'bad-hostname', String(input));
  }
});

test('isLocalName flags names only the person\'s own network can mean (page hosts flagged internal)', () => {
  for (const n of ['router', 'printer.local', 'nas.home.arpa', 'db.internal', 'app.localhost']) assert.equal(isLocalName(n), true, n);
  for (const n of ['example.com', 'h1.test', 'localhost.example.com']) assert.equal(isLocalName(n), false, n);
});

test('parseHost: A-labels, internal names, IP literals, refusals', () => {
  const cases: Array<[unknown, string | null, Partial<{ kind: string; internal: boolean; measurable: boolean; reason: string }>]> = [
    ['Example.COM', 'example.com', { kind: 'name', internal: false, measurable: true }],
    ['example.com.', 'example.com', { measurable: true }],
    ['bücher.example', 'xn--bcher-kva.example', { measurable: true }],
    ['xn--bcher-kva.example', 'xn--bcher-kva.example', { measurable: true }],
    ['ＥＸＡＭＰＬＥ.com', 'example.com', { measurable: true }], // full-width folds (UTS #46)
    ['_dmarc.example.com', '_dmarc.example.com', { measurable: true }],
    ['printer', 'printer', { internal: true, measurable: false }],
    ['nas.local', 'nas.local', { internal: true, measurable: false }],
    ['a.site.localhost', 'a.site.localhost', { internal: true, measurable: false }],
    ['router.home.arpa', 'router.home.arpa', { internal: true, measurable: false }],
    ['db.internal', 'db.internal', { internal: true, measurable: false }],
    ['192.168.1.1', '192.168.1.1', { kind: 'ip', internal: true, measurable: false }],
    ['10.0.0.7', '10.0.0.7', { kind: 'ip', internal: true }],
    ['8.8.8.8', '8.8.8.8', { kind: 'ip', internal: false, measurable: false }],
    ['0x7f.1', '127.0.0.1', { kind: 'ip', internal: true }], // the URL parser's IPv4 forms
    ['[::1]', '::1', { kind: 'ip', internal: true }],
    ['[fd00::5]', 'fd00::5', { kind: 'ip', internal: true }],
    ['[2606:4700::1111]', '2606:4700::1111', { kind: 'ip', internal: false, measurable: false }],
    ['[2001:db8::1]', '2001:db8::1', { kind: 'ip', internal: true }], // documentation: never global (ip-address.ts)
    ['100.64.0.1', '100.64.0.1', { kind: 'ip', internal: true }], // shared address space
    ['[::ffff:192.168.0.1]', '::ffff:c0a8:1', { kind: 'ip', internal: true }],
    ['', null, { reason: 'empty' }],
    [42, null, { reason: 'not-a-host' }],
    ['<script>alert(1)</script>.example', null, { reason: 'not-a-host' }],
    ['a b.example', null, { reason: 'not-a-host' }],
    ['evil.com/path@x', null, { reason: 'not-a-host' }],
    ['user@evil.com', null, { reason: 'not-a-host' }],
    [`${'l'.repeat(64)}.example`, null, { reason: 'label-too-long' }],
    [`${'l'.repeat(250)}.ex`, null, { reason: 'label-too-long' }],
    [Array.from({ length: 5 }, () => 'n'.repeat(60)).join('.'), null, { reason: 'name-too-long' }],
    ['x'.repeat(5000), null, { reason: 'name-too-long' }],
    ['-bad.example', null, { reason: 'bad-label' }],
    ['a..b.example', null, { reason: 'bad-label' }],
    ['a*b.example', null, { reason: 'bad-label' }],
  ];
  for (const [input, name, want] of cases) {
    const c = parseHost(input);
    if (name === null) {
      assert.equal(c.ok, false, `${String(input)} refused`);
      if (!c.ok) assert.equal(c.reason, want.reason, String(input));
    } else {
      assert.ok(c.ok, `${String(input)} accepted`);
      if (c.ok) {
        assert.equal(c.name, name, String(input));
        for (const [k, val] of Object.entries(want)) assert.equal((c as unknown as Record<string, unknown>)[k], val, `${String(input)} ${k}`);
      }
    }
  }
});

test('reverse names of private, loopback, link-local, shared and ULA addresses are private-use; public ones are not', () => {
  for (const n of ['5.1.168.192.in-addr.arpa', '1.0.0.10.in-addr.arpa', '9.9.20.172.in-addr.arpa', '1.1.64.100.in-addr.arpa', '1.0.0.127.in-addr.arpa', 'f.f.d.f.ip6.arpa', '1.0.8.e.f.ip6.arpa']) {
    assert.equal(isSpecialUseName(n), true, n);
    assert.equal(isLocalName(n), true, n);
  }
  for (const n of ['8.8.8.8.in-addr.arpa', '1.0.32.172.in-addr.arpa', '1.1.128.100.in-addr.arpa', '8.b.d.0.1.0.0.2.ip6.arpa']) assert.equal(isSpecialUseName(n), false, n);
});
