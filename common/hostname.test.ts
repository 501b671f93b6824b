import assert from 'node:assert/strict';
import { test } from 'vitest';
import { DnscostError } from './errors.js';
import { isInternalName, isPrivateIPv4, isPrivateIPv6, normalizeHostname } from './hostname.js';

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

test('isInternalName flags names that must not reach public resolvers', () => {
  for (const n of ['router', 'printer.local', 'nas.home.arpa', 'db.internal', 'app.localhost']) assert.equal(isInternalName(n), true, n);
  for (const n of ['example.com', 'h1.test', 'localhost.example.com']) assert.equal(isInternalName(n), false, n);
});

test('private ranges', () => {
  for (const ip of ['10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.0.1', '127.0.0.1', '169.254.1.1', '100.64.0.1', '0.0.0.0']) assert.ok(isPrivateIPv4(ip), ip);
  for (const ip of ['172.32.0.1', '8.8.8.8', '1.1.1.1', '100.128.0.1']) assert.ok(!isPrivateIPv4(ip), ip);
  for (const ip of ['::1', 'fc00::1', 'fd12:3456::1', 'fe80::1', '::ffff:10.0.0.1']) assert.ok(isPrivateIPv6(ip), ip);
  for (const ip of ['2606:4700::1111', '2001:db8::1', '::ffff:8.8.8.8']) assert.ok(!isPrivateIPv6(ip), ip);
});
