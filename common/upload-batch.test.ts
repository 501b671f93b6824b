import { test } from 'vitest';
import assert from 'node:assert/strict';
import { coarse, coarseCount, coarseWithin, validateBatch } from './upload-batch.js';
import { uploadSite } from './popular-sites.js';

const NOW = Date.parse('2026-11-21T15:30:00Z');
const now = () => NOW;

function result(over: Record<string, unknown> = {}) {
  return {
    resolver: 'cloudflare', transport: 'doh', mode: 'cold', lookups: 11, failures: 1,
    medianMs: 22.6, p5Ms: 11.3, p95Ms: 76.1, onload: { pointMs: 13.5, lowMs: 2.83, highMs: 38.1 },
    bytesPerLookup: 4870, packetsPerLookup: 11.3, ...over,
  };
}

function batch(over: Record<string, unknown> = {}, pageOver: Record<string, unknown> = {}, resultOver: Record<string, unknown> = {}) {
  return {
    version: 3, key: 'k_3f9a-Zq81bX0cD2e', network: { type: 'wifi' },
    pages: [{ site: 'wikipedia.org', hour: '2026-11-21T14Z', hosts: 8, results: [result(resultOver)], ...pageOver }],
    ...over,
  };
}

test('validateBatch accepts well-formed batches', () => {
  const good: Array<[string, unknown]> = [
    ['typical', batch()],
    ['cellular', batch({ network: { type: 'cellular' } })],
    ['site other', batch({}, { site: 'other' })],
    ['every lookup failed', batch({}, {}, { failures: 11, medianMs: null, p5Ms: null, p95Ms: null })],
    ['as many failures as lookups on the grid, some answered', batch({}, {}, { lookups: 11, failures: 11 })],
    ['no onload estimate, bytes not counted', batch({}, {}, { onload: null, bytesPerLookup: null, packetsPerLookup: null })],
    ['negative onload change', batch({}, {}, { onload: { pointMs: -4.76, lowMs: -9.51, highMs: 0 } })],
    ['reserved transport doq', batch({}, {}, { transport: 'doq' })],
    ['64-char key', batch({ key: 'a'.repeat(64) })],
    ['an hour 89 days old', batch({}, { hour: '2026-08-24T16Z' })],
    ['an hour 2 h ahead (client clock skew)', batch({}, { hour: '2026-11-21T17Z' })],
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
    ['version 1', batch({ version: 1 }), 'bad-version', 'version'],
    ['version as string', batch({ version: '2' }), 'bad-version', 'version'],
    ['missing key', { version: 3, network: { type: 'wifi' }, pages: batch().pages }, 'missing-field', 'key'],
    ['short key', batch({ key: 'abc' }), 'bad-value', 'key'],
    ['key with a dot', batch({ key: 'aaaaaaaaaaaaaaaa.b' }), 'bad-value', 'key'],
    ['unknown top-level field', batch({ userId: 'u1' }), 'unknown-field', 'userId'],
    ['__proto__ field', { ...batch(), ...JSON.parse('{"__proto__":{"x":1}}') }, 'unknown-field', '__proto__'],
    ['unknown network type', batch({ network: { type: 'satellite' } }), 'bad-value', 'network.type'],
    ['a network label (free text is gone)', batch({ network: { type: 'wifi', label: 'home' } }), 'unknown-field', 'network.label'],
    ['no pages', batch({ pages: [] }), 'bad-value', 'pages'],
    ['two pages in one batch', batch({ pages: [batch().pages[0], batch().pages[0]] }), 'too-many-items', 'pages'],
    ['exact hosts', batch({}, { hosts: 9 }), 'too-precise', 'pages.0.hosts'],
    ['exact lookups', batch({}, {}, { lookups: 12 }), 'too-precise', 'pages.0.results.0.lookups'],
    ['exact median', batch({}, {}, { medianMs: 21.5 }), 'too-precise', 'pages.0.results.0.medianMs'],
    ['exact bytes (they encode the names\' length)', batch({}, {}, { bytesPerLookup: 5120.5 }), 'too-precise', 'pages.0.results.0.bytesPerLookup'],
    ['exact onload change', batch({}, {}, { onload: { pointMs: 14, lowMs: 2.83, highMs: 38.1 } }), 'too-precise', 'pages.0.results.0.onload.pointMs'],
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
    ['failures > lookups', batch({}, {}, { failures: 16 }), 'inconsistent', 'pages.0.results.0'],
    ['all failed but no median', batch({}, {}, { failures: 8, medianMs: null, p5Ms: null, p95Ms: null }), 'inconsistent', 'pages.0.results.0'],
    ['p5 > median', batch({}, {}, { p5Ms: 32 }), 'inconsistent', 'pages.0.results.0'],
    ['onload low > point', batch({}, {}, { onload: { pointMs: 1, lowMs: 4.76, highMs: 9.51 } }), 'inconsistent', 'pages.0.results.0.onload'],
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

test('uploadSite', () => {
  assert.equal(uploadSite('Wikipedia.org'), 'wikipedia.org');
  assert.equal(uploadSite('my-small-blog.example'), 'other');
});

test('the upload grid: each value maps onto itself, order is kept, steps are about 19 % (counts 41 %), bounds hold', () => {
  for (let n = 0; n <= 200_000; n++) assert.equal(coarseCount(coarseCount(n)), coarseCount(n), `count ${n}`);
  let previous = -Infinity;
  for (let i = -4000; i <= 4000; i++) {
    const x = Math.sign(i) * Math.exp(Math.abs(i) / 300); // ±1 … ±6e5, dense
    const c = coarse(x);
    assert.equal(coarse(c), c, `coarse ${x}`);
    assert.ok(c >= previous, `monotone at ${x}`);
    previous = c;
    if (Math.abs(x) >= 1) assert.ok(Math.abs(c / x - 1) < 0.1, `within half a step of ${x}: ${c}`);
  }
  assert.deepEqual([0.4, -0.9, 1, 9, 21.5, 5120.5].map(coarse), [0, 0, 1, 9.51, 22.6, 4870]);
  assert.deepEqual([3, 5, 9, 12, 500].map(coarseCount), [3, 6, 8, 11, 512]);
  assert.equal(coarseWithin(1e7, 900_000), 882_000);
  assert.equal(coarseWithin(-59_999, 60_000), -55_100);
});

test('the grid check the validator makes (a set lookup) accepts exactly the values coarse() maps onto themselves', () => {
  const result = (medianMs: number) => ({ resolver: 'cloudflare', transport: 'doh', mode: 'cold', lookups: 1, failures: 0, medianMs, p5Ms: medianMs, p95Ms: medianMs, onload: null, bytesPerLookup: null, packetsPerLookup: null });
  const batch = (medianMs: number) => ({ version: 3, key: 'k'.repeat(16), network: { type: 'wifi' }, pages: [{ site: 'other', hour: new Date().toISOString().slice(0, 13) + 'Z', hosts: 1, results: [result(medianMs)] }] });
  // Every grid value of the lookup-time range, its neighbours a hair away, and values spread over the range.
  const grid = [0, ...Array.from({ length: 64 }, (_, k) => coarse(2 ** (k / 4))).filter((g) => g <= 60_000)];
  const probes = [...grid, ...grid.flatMap((g) => [g + 0.01, g - 0.01, g * 1.001]), ...Array.from({ length: 2000 }, (_, i) => Math.round(i * 29.97) / 10)];
  for (const x of probes.filter((p) => p >= 0 && p <= 60_000)) {
    assert.equal(validateBatch(batch(x)).ok, coarse(x) === x, `medianMs ${x}`);
  }
});
