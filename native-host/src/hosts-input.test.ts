import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'vitest';
import { DnscostError } from '../../common/errors.js';
import { parseHar } from '../../common/har.js';
import { harPages } from '../../lab/paths.js';
import { harLookups, parseHostList, readHarFile, readHarLookups, readHostList } from './hosts-input.js';

test('a host list: one name or NAME@MS a line, comments and blank lines skipped, a ranked list read by its name', async () => {
  const text = '# top sites\r\nexample.com\r\n\r\n  a.test@12.5  # the page needed it at 12.5 ms\n1,b.test,rank\nc.test extra words\n#\n';
  assert.deepEqual(parseHostList(text), ['example.com', { name: 'a.test', firstNeededMs: 12.5 }, 'b.test', 'c.test']);
  assert.deepEqual(parseHostList('d.test,rank\ne.test'), ['d.test', 'e.test']);
  assert.deepEqual(await readHostList('-', Readable.from([Buffer.from('x.test\n'), Buffer.from('y.test@3\n')])), ['x.test', { name: 'y.test', firstNeededMs: 3 }]);
  await assert.rejects(readHostList('/nonexistent/hosts.txt'), (e: unknown) => e instanceof DnscostError && e.code === 'bad-request' && /cannot read --hosts-file \/nonexistent/.test(e.message));
});

const entry = (url: string, startedDateTime: string, status = 200) => ({ startedDateTime, time: 5, request: { method: 'GET', url }, response: { status, headers: [] }, timings: {} });

test('a HAR\'s lookups: each name once, at its first request\'s offset from the page\'s first request; redirect hops and failed requests count, IP literals and data: URLs do not', () => {
  const har = parseHar(JSON.stringify({
    log: {
      entries: [
        entry('https://cdn.example.net/b.js', '2024-01-01T00:00:00.250Z'),
        entry('http://example.com/', '2024-01-01T00:00:00.000Z', 301),
        entry('https://www.example.com/', '2024-01-01T00:00:00.040Z'),
        entry('https://cdn.example.net/a.css', '2024-01-01T00:00:00.120Z'),
        entry('https://blocked.example.org/px', '2024-01-01T00:00:00.300Z', 0),
        entry('https://93.184.216.34/x', '2024-01-01T00:00:00.310Z'),
        entry('https://[2001:db8::1]/y', '2024-01-01T00:00:00.320Z'),
        entry('data:image/png;base64,AAAA', '2024-01-01T00:00:00.330Z'),
        entry('https://B\u00fccher.Example/', '2024-01-01T00:00:00.400Z'),
      ],
    },
  }));
  assert.deepEqual(harLookups(har), [
    { name: 'example.com', firstNeededMs: 0 },
    { name: 'www.example.com', firstNeededMs: 40 },
    { name: 'cdn.example.net', firstNeededMs: 120 },
    { name: 'blocked.example.org', firstNeededMs: 300 },
    { name: 'xn--bcher-kva.example', firstNeededMs: 400 },
  ]);
});

test('a HAR\'s lookup starts where the browser asked: its request\'s own DNS after its wait in the queue (timings.blocked), a document at once', () => {
  const timed = (url: string, at: string, timings: Record<string, number>, type = 'image') => ({ ...entry(url, at), timings, _resourceType: type });
  const har = parseHar(JSON.stringify({
    log: {
      entries: [
        timed('https://www.example.com/', '2024-01-01T00:00:00.000Z', { blocked: 4, dns: 20 }, 'document'),
        // Needed at 50, held 70 ms in the browser's queue, then looked up.
        timed('https://img.example.net/a.png', '2024-01-01T00:00:00.050Z', { blocked: 70, dns: 15 }),
        // The same host again: no lookup of its own (dns -1).
        timed('https://img.example.net/b.png', '2024-01-01T00:00:00.060Z', { blocked: 1, dns: -1 }),
        // A name whose lookup the HAR does not show (dns 0: answered from the cache): its first need.
        timed('https://cached.example.org/c.png', '2024-01-01T00:00:00.055Z', { blocked: 30, dns: 0 }),
      ],
    },
  }));
  assert.deepEqual(harLookups(har), [
    { name: 'www.example.com', firstNeededMs: 0 },
    { name: 'cached.example.org', firstNeededMs: 55 },
    { name: 'img.example.net', firstNeededMs: 120 },
  ]);
});

test('every real page\'s HAR gives each of its hostnames once, the first at 0 and every offset inside the page\'s span of requests and lookups', async () => {
  const pages = harPages();
  assert.ok(pages.size >= 10, `${pages.size} HAR pages`);
  for (const [f, path] of pages) {
    const har = await readHarFile(path);
    const lookups = harLookups(har);
    const names = new Set(har.requests.map((r) => new URL(r.url).hostname).filter((h) => h && !/^\d+\.\d+\.\d+\.\d+$|^\[/.test(h)));
    assert.deepEqual(new Set(lookups.map((l) => l.name)), names, f);
    assert.equal(lookups.length, names.size, f);
    assert.equal(lookups[0]!.firstNeededMs, 0, f);
    const span = Math.max(...har.requests.map((r) => Math.max(r.startMs, r.dnsStartMs ?? -Infinity))) - Math.min(...har.requests.map((r) => r.startMs));
    for (const l of lookups) assert.ok(l.firstNeededMs >= 0 && l.firstNeededMs <= span + 0.05, `${f}: ${l.name} at ${l.firstNeededMs}`);
  }
});

test('a HAR that cannot be used is a bad request naming why', async () => {
  await assert.rejects(readHarLookups('/nonexistent/page.har'), (e: unknown) => e instanceof DnscostError && e.code === 'bad-request' && /--har: cannot read HAR file .*\(unreadable\)/.test(e.message));
});
