import assert from 'node:assert/strict';
import { test } from 'vitest';
import { DnscostError } from './errors.js';
import { isInternalName, normalizeHostname } from './hostname.js';

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
