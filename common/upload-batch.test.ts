import { test } from 'vitest';
import assert from 'node:assert/strict';
import { looksIdentifying, validateBatch } from './upload-batch.js';
import { uploadSite } from './popular-sites.js';

const NOW = Date.parse('2026-11-21T15:30:00Z');
const now = () => NOW;

function result(over: Record<string, unknown> = {}) {
  return {
    resolver: 'cloudflare', transport: 'doh', mode: 'cold', lookups: 12, failures: 1,
    medianMs: 21.5, p5Ms: 11, p95Ms: 80.25, onload: { pointMs: 14, lowMs: 3, highMs: 40 },
    bytesPerLookup: 5120.5, packetsPerLookup: 11.5, ...over,
  };
}

function batch(over: Record<string, unknown> = {}, pageOver: Record<string, unknown> = {}, resultOver: Record<string, unknown> = {}) {
  return {
    version: 1, key: 'k_3f9a-Zq81bX0cD2e', network: { type: 'wifi', label: 'home' },
    pages: [{ site: 'wikipedia.org', hour: '2026-11-21T14Z', hosts: 9, results: [result(resultOver)], ...pageOver }],
    ...over,
  };
}

test('validateBatch accepts well-formed batches', () => {
  const good: Array<[string, unknown]> = [
    ['typical', batch()],
    ['no label', batch({ network: { type: 'cellular' } })],
    ['site other', batch({}, { site: 'other' })],
    ['every lookup failed', batch({}, {}, { failures: 12, medianMs: null, p5Ms: null, p95Ms: null })],
    ['no onload estimate, bytes not counted', batch({}, {}, { onload: null, bytesPerLookup: null, packetsPerLookup: null })],
    ['negative onload change', batch({}, {}, { onload: { pointMs: -5, lowMs: -9, highMs: 0 } })],
    ['reserved transport doq', batch({}, {}, { transport: 'doq' })],
    ['label with letters, digits, spaces', batch({ network: { type: 'wifi', label: "Café 2 (Anna's)" } })],
    ['64-char key', batch({ key: 'a'.repeat(64) })],
    ['an hour 89 days old', batch({}, { hour: '2026-08-24T16Z' })],
    ['an hour 2 h ahead (client clock skew)', batch({}, { hour: '2026-11-21T17Z' })],
    ['200 pages', batch({ pages: Array.from({ length: 200 }, () => batch().pages[0]) })],
    [
      'two results per page',
      batch({}, { results: [result(), result({ mode: 'warm' })] }),
    ],
  ];
  for (const [name, value] of good) {
    const r = validateBatch(value, { now });
    assert.equal(r.ok, true, `${name}: ${JSON.stringify(r)}`);
  }
});

test('validateBatch refuses bad batches with a stable code and path', () => {
  const bad: Array<[string, unknown, string, string]> = [
    ['not an object', 'hello', 'bad-type', ''],
    ['null', null, 'bad-type', ''],
    ['array', [], 'bad-type', ''],
    ['version 2', batch({ version: 2 }), 'bad-version', 'version'],
    ['version as string', batch({ version: '1' }), 'bad-version', 'version'],
    ['missing key', { version: 1, network: { type: 'wifi' }, pages: batch().pages }, 'missing-field', 'key'],
    ['short key', batch({ key: 'abc' }), 'bad-value', 'key'],
    ['key with a dot', batch({ key: 'aaaaaaaaaaaaaaaa.b' }), 'bad-value', 'key'],
    ['unknown top-level field', batch({ userId: 'u1' }), 'unknown-field', 'userId'],
    ['__proto__ field', { ...batch(), ...JSON.parse('{"__proto__":{"x":1}}') }, 'unknown-field', '__proto__'],
    ['unknown network type', batch({ network: { type: 'satellite' } }), 'bad-value', 'network.type'],
    ['label is a URL', batch({ network: { type: 'wifi', label: 'https://evil.example/' } }), 'identifying-string', 'network.label'],
    ['label is an IPv4', batch({ network: { type: 'wifi', label: '192.168.1.20' } }), 'identifying-string', 'network.label'],
    ['label is an IPv6', batch({ network: { type: 'wifi', label: 'fe80::1' } }), 'identifying-string', 'network.label'],
    ['label is a hostname', batch({ network: { type: 'wifi', label: 'router.home' } }), 'identifying-string', 'network.label'],
    ['label is a path', batch({ network: { type: 'wifi', label: 'users/anna' } }), 'identifying-string', 'network.label'],
    ['label is an e-mail', batch({ network: { type: 'wifi', label: 'anna@example' } }), 'identifying-string', 'network.label'],
    ['label is a phone number', batch({ network: { type: 'wifi', label: 'tel 0612345678' } }), 'identifying-string', 'network.label'],
    ['label is a MAC', batch({ network: { type: 'wifi', label: 'a4b1c2d3e4f5' } }), 'identifying-string', 'network.label'],
    ['label with markup', batch({ network: { type: 'wifi', label: '<b>x' } }), 'bad-value', 'network.label'],
    ['label too long', batch({ network: { type: 'wifi', label: 'x'.repeat(33) } }), 'bad-value', 'network.label'],
    ['no pages', batch({ pages: [] }), 'bad-value', 'pages'],
    ['201 pages', batch({ pages: Array.from({ length: 201 }, () => batch().pages[0]) }), 'too-many-items', 'pages'],
    ['site is a URL', batch({}, { site: 'https://wikipedia.org/wiki/Secret' }), 'bad-value', 'pages.0.site'],
    ['site not in the list', batch({}, { site: 'my-small-blog.example' }), 'bad-value', 'pages.0.site'],
    ['site is an IP', batch({}, { site: '203.0.113.7' }), 'bad-value', 'pages.0.site'],
    ['page carries a url', batch({}, { url: 'https://wikipedia.org/' }), 'unknown-field', 'pages.0.url'],
    ['page carries hostnames', batch({}, { hostnames: ['a.example'] }), 'unknown-field', 'pages.0.hostnames'],
    ['precise timestamp', batch({}, { hour: '2026-11-21T14:03:22Z' }), 'bad-value', 'pages.0.hour'],
    ['epoch ms as hour', batch({}, { hour: 1795791600000 }), 'bad-type', 'pages.0.hour'],
    ['impossible date', batch({}, { hour: '2026-02-31T10Z' }), 'out-of-range', 'pages.0.hour'],
    ['hour too old', batch({}, { hour: '2026-08-01T10Z' }), 'out-of-range', 'pages.0.hour'],
    ['hour in the future', batch({}, { hour: '2026-11-22T10Z' }), 'out-of-range', 'pages.0.hour'],
    ['hosts 0', batch({}, { hosts: 0 }), 'out-of-range', 'pages.0.hosts'],
    ['hosts fractional', batch({}, { hosts: 2.5 }), 'out-of-range', 'pages.0.hosts'],
    ['hosts huge', batch({}, { hosts: 1e9 }), 'out-of-range', 'pages.0.hosts'],
    ['unknown resolver', batch({}, {}, { resolver: 'evil' }), 'bad-value', 'pages.0.results.0.resolver'],
    ['resolver as address', batch({}, {}, { resolver: '1.1.1.1' }), 'bad-value', 'pages.0.results.0.resolver'],
    ['unknown transport', batch({}, {}, { transport: 'http' }), 'bad-value', 'pages.0.results.0.transport'],
    ['mode hot', batch({}, {}, { mode: 'hot' }), 'bad-value', 'pages.0.results.0.mode'],
    ['negative lookups', batch({}, {}, { lookups: -1 }), 'out-of-range', 'pages.0.results.0.lookups'],
    ['lookups as string', batch({}, {}, { lookups: '12' }), 'bad-type', 'pages.0.results.0.lookups'],
    ['median too large', batch({}, {}, { medianMs: 1e12, p95Ms: 1e12 }), 'out-of-range', 'pages.0.results.0.medianMs'],
    ['result carries an endpoint', batch({}, {}, { endpoint: 'https://dns.example/dns-query' }), 'unknown-field', 'pages.0.results.0.endpoint'],
    ['failures > lookups', batch({}, {}, { failures: 13 }), 'inconsistent', 'pages.0.results.0'],
    ['all failed but a median', batch({}, {}, { failures: 12 }), 'inconsistent', 'pages.0.results.0'],
    ['p5 > median', batch({}, {}, { p5Ms: 30 }), 'inconsistent', 'pages.0.results.0'],
    ['onload low > point', batch({}, {}, { onload: { pointMs: 1, lowMs: 5, highMs: 9 } }), 'inconsistent', 'pages.0.results.0.onload'],
    ['duplicate result', batch({}, { results: [result(), result()] }), 'inconsistent', 'pages.0'],
  ];
  const wrong = [];
  for (const [name, value, code, path] of bad) {
    const r = validateBatch(value, { now });
    const got = r.ok ? 'accepted' : `${r.code} at ${r.path}`;
    if (got !== `${code} at ${path}`) wrong.push(`${name}: want ${code} at ${path}, got ${got}${r.ok ? '' : ` (${r.message})`}`);
    else if (!r.ok) assert.ok(r.message.length <= 200, `${name}: message is bounded`);
  }
  assert.deepEqual(wrong, []);
});

test('looksIdentifying and uploadSite', () => {
  for (const s of ['http://x', 'a.b', '10.0.0.1', '::1', 'x/y', 'a@b', '?q=1', '123456', 'deadbeefcafe']) assert.equal(looksIdentifying(s), true, s);
  for (const s of ['home', 'Office 2', 'Café', 'phone hotspot', 'flat-3']) assert.equal(looksIdentifying(s), false, s);
  assert.equal(uploadSite('Wikipedia.org'), 'wikipedia.org');
  assert.equal(uploadSite('my-small-blog.example'), 'other');
});
