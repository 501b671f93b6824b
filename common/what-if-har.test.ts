import assert from 'node:assert/strict';
import { test } from 'vitest';
import type { PageHost } from './page-record.js';
import type { StoredRecord } from './stored-record.js';
import { replayedLookupMs, whatIfHar, type WhatIf } from './what-if-har.js';

const host = (name: string, firstNeededMs: number, lookupMs: number | null, schemes = ['https']): PageHost => ({
  name, kind: 'name', internal: false, measurable: true, firstNeededMs, requests: 1, types: {}, ips: [], protocols: [], schemes,
  fromCache: 0, errors: 0, viaRedirect: false, fromSubframe: false, completedMs: null,
  lookup: lookupMs === null ? null : { startMs: firstNeededMs, endMs: firstNeededMs + lookupMs, durationMs: lookupMs, nextHopProtocol: null },
});

/** A replayed lookup: the page's replay started at 1000, the host needed at `at`, answered `ms` later. */
const rec = (h: string, qtype: 'A' | 'AAAA', repeat: number, at: number, ms: number, o: Partial<StoredRecord> = {}): StoredRecord => ({
  host: h, qtype, resolver: 'cf', transport: 'doh', mode: 'cold', repeat, ok: true, error: null,
  timings: { connect: null, tls: null, query: ms, total: ms }, bytes: { sent: 0, received: 0 }, packets: { sent: 0, received: 0 },
  replay: { pageStartedAt: 1000, firstNeededMs: at, endedAt: 1000 + at + ms, waitedForConnection: null, paidSetup: false, sharedWith: 1 },
  ...o,
});

const W: WhatIf = { resolver: 'cf', resolverName: 'Cloudflare', transport: 'doh', transportName: 'DoH', mode: 'cold', onLoadDeltaMs: 42.5 };

test('a host\'s what-if lookup: per repeat the later of A and AAAA, median over repeats that all answered, that choice only', () => {
  const records = [
    rec('a.example', 'A', 1, 0, 30), rec('a.example', 'AAAA', 1, 0, 50),
    rec('a.example', 'A', 2, 0, 20), rec('a.example', 'AAAA', 2, 0, 10),
    rec('a.example', 'A', 3, 0, 90), rec('a.example', 'AAAA', 3, 0, 99, { ok: false, error: 'timeout' }),
    rec('a.example', 'A', 4, 0, 70), rec('a.example', 'AAAA', 4, 0, 60),
    rec('a.example', 'A', 1, 0, 1, { mode: 'warm' }), rec('a.example', 'A', 1, 0, 2, { transport: 'dot' }),
  ];
  // Repeats 1, 2 and 4: 50, 20, 70; repeat 3 had a failure.
  assert.equal(replayedLookupMs(records, 'a.example', W), 50);
  assert.equal(replayedLookupMs(records, 'a.example', { ...W, mode: 'warm' }), 1);
  assert.equal(replayedLookupMs(records, 'b.example', W), null);
});

test('the what-if HAR: an entry per host at its time, the choice\'s DNS, the onLoad moved by the estimate and said so', () => {
  const page = { url: 'https://a.example/', startedAt: 5000, page: { timeOrigin: 1_700_000_000_000, onLoadMs: 800, hosts: [host('b.example', 120, null), host('a.example', 0, 12.5), host('c.example', 300, 8, ['http'])] } };
  const records = [rec('a.example', 'A', 1, 0, 40), rec('b.example', 'A', 1, 120, 25), rec('c.example', 'A', 1, 300, 9, { ok: false, error: 'servfail' })];
  const har = whatIfHar(page, records, W, { name: 'dnscost', version: '0.1.0' }) as { log: { version: string; pages: Array<{ pageTimings: { onLoad: number }; comment: string; startedDateTime: string }>; entries: Array<{ startedDateTime: string; request: { url: string }; timings: { dns: number }; comment: string }> } };
  assert.equal(har.log.version, '1.2');
  assert.equal(har.log.pages[0]!.pageTimings.onLoad, 842.5);
  assert.match(har.log.pages[0]!.comment, /Cloudflare over DoH, cold.*\+42\.5 ms, the cost model's estimate, not a measurement/);
  assert.equal(har.log.pages[0]!.startedDateTime, new Date(1_700_000_000_000).toISOString());
  assert.deepEqual(har.log.entries.map((e) => e.request.url), ['https://a.example/', 'https://b.example/', 'http://c.example/']);
  assert.deepEqual(har.log.entries.map((e) => e.timings.dns), [40, 25, -1]);
  assert.equal(har.log.entries[1]!.startedDateTime, new Date(1_700_000_000_120).toISOString());
  assert.match(har.log.entries[0]!.comment, /the browser's own lookup took 12\.5 ms/);
  assert.match(har.log.entries[2]!.comment, /no lookup of c\.example answered/);
  const none = whatIfHar({ ...page, page: { ...page.page, onLoadMs: null } }, records, W, { name: 'dnscost', version: '0.1.0' }) as { log: { pages: Array<{ pageTimings: { onLoad: number }; comment: string }> } };
  assert.equal(none.log.pages[0]!.pageTimings.onLoad, -1);
  assert.match(none.log.pages[0]!.comment, /\(no estimate\)/);
});
