// From history entries to upload batches: the site is named only when popular, times are cut to the hour, custom
// resolvers are "custom", every batch passes the collector's own validator, and nothing in the bytes names the
// page's host, a URL, a path or an address.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import { historyEntry } from '../history.js';
import { UPLOAD_LIMITS, validateBatch, type UploadResult } from '../../../common/upload-batch.js';
import { buildBatch, hourOf, sampleResults, siteOf, uploadPage } from './upload-build.js';
import { PERSON_CAP } from '../../../common/privacy-budget.js';
import { seededRandom } from '../../../common/stats.js';
import { measured } from './test-fixtures.js';

const NOW = Date.parse('2026-11-21T15:30:00Z');

test('site: the registrable domain when it is on the popular list, otherwise other', () => {
  const cases: Array<[string, string]> = [
    ['www.bbc.co.uk', 'bbc.co.uk'], ['en.wikipedia.org', 'wikipedia.org'], ['github.com', 'github.com'],
    ['someone.github.io', 'other'], ['www.example.org', 'other'], ['intranet', 'other'], ['printer.local', 'other'],
    ['192.168.1.1', 'other'], ['bbc.co.uk.evil.example', 'other'], ['xn--bcher-kva.example', 'other'],
  ];
  for (const [host, site] of cases) assert.equal(siteOf(host), site, host);
});

test('hour: the UTC hour of a time', () => {
  assert.equal(hourOf(Date.parse('2026-11-21T14:59:59.999Z')), '2026-11-21T14Z');
  assert.equal(hourOf(Date.parse('2026-01-01T00:00:00Z')), '2026-01-01T00Z');
});

test('upload page of a history entry: counts, percentiles and estimates per resolver × transport × mode', () => {
  const { meta, records } = measured('p1', NOW - 3600_000, 80, 'www.bbc.co.uk');
  const page = uploadPage(historyEntry(meta, records))!;
  assert.equal(page.site, 'bbc.co.uk');
  assert.equal(page.hour, '2026-11-21T14Z');
  assert.equal(page.hosts, 3);
  assert.deepEqual(page.results.map((r) => `${r.resolver}/${r.transport}/${r.mode}`).sort(), ['custom/dot/cold', 'custom/dot/warm', 'custom/udp/cold', 'custom/udp/warm']);
  const dotCold = page.results.find((r) => r.transport === 'dot' && r.mode === 'cold')!;
  // On the upload grid: 18 lookups → 16, 6 failures → 6, 80 ms → 76.1, 150 B → 152.
  assert.deepEqual([dotCold.lookups, dotCold.failures, dotCold.medianMs], [16, 6, 76.1]);
  assert.ok(dotCold.onload && dotCold.onload.pointMs >= 64);
  assert.equal(dotCold.bytesPerLookup, 152);
});

test('batches: one page each, each valid, distinct keys, nothing identifying in the bytes', () => {
  const pages = Array.from({ length: 45 }, (_, i) => {
    const { meta, records } = measured(`p${i}`, NOW - i * 60_000, 50 + (i % 40), i % 2 ? 'www.example.org' : 'news.bbc.co.uk');
    return uploadPage(historyEntry(meta, records))!;
  });
  const batches = pages.map((p, i) => buildBatch(p, { type: 'wifi' }, `key-${String(i).padStart(16, '0')}`, () => NOW));
  assert.equal(new Set(batches.map((b) => b.batch.key)).size, 45);
  for (const { batch, body } of batches) {
    assert.equal(batch.pages.length, 1);
    assert.ok(new TextEncoder().encode(body).length <= UPLOAD_LIMITS.bodyBytes);
    assert.equal(validateBatch(JSON.parse(body), { now: () => NOW }).ok, true);
    for (const bad of ['example.org', 'news.', 'www.', 'http', '127.0.0.1', '/', '"lab"']) assert.ok(!body.includes(bad), `${bad} in the body`);
    assert.deepEqual(JSON.parse(body).network, { type: 'wifi' });
  }
});

test('results per page: a uniform random sample of at most the cap, in their order; a page of 7 or more is refused whole', () => {
  const { meta, records } = measured('p1', NOW, 80, 'www.bbc.co.uk');
  const page = uploadPage(historyEntry(meta, records))!;
  const results: UploadResult[] = (['cloudflare', 'google', 'quad9'] as const).flatMap((resolver) => page.results.map((r) => ({ ...r, resolver })));
  const big = { ...page, results };
  assert.equal(results.length, 12);
  assert.throws(() => buildBatch(big, { type: 'wifi' }, 'k'.repeat(16), () => NOW), /results/);
  const seen = new Array<number>(12).fill(0);
  const trials = 3000;
  // A seeded stream, so the test is the same every run.
  const random = seededRandom(12345);
  for (let t = 0; t < trials; t++) {
    const s = sampleResults(big, PERSON_CAP.resultsPerPage, random);
    assert.equal(s.results.length, PERSON_CAP.resultsPerPage);
    const at = s.results.map((r) => results.indexOf(r));
    assert.deepEqual(at, [...at].sort((x, y) => x - y), 'in their order');
    for (const i of at) seen[i]!++;
    assert.equal(buildBatch(s, { type: 'wifi' }, 'k'.repeat(16), () => NOW).batch.pages[0]!.results.length, 6);
  }
  const sd = Math.sqrt((0.5 * 0.5) / trials);
  for (const [i, n] of seen.entries()) assert.ok(Math.abs(n / trials - 0.5) < 4 * sd, `result ${i} kept in ${n} of ${trials}`);
  assert.equal(sampleResults(page, PERSON_CAP.resultsPerPage, Math.random), page, 'a page under the cap is kept whole');
});

test('a page without a usable lookup is not uploaded', () => {
  const { meta, records } = measured('p1', NOW, 80);
  const entry = historyEntry(meta, records);
  assert.equal(uploadPage({ ...entry, cells: [] }), null);
  assert.equal(uploadPage({ ...entry, measuredHosts: 0 }), null);
});
