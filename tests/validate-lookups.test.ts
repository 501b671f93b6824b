// Chromium's NetLog read as the validation reads it: a job's asked, started and ended times and its transactions from a
// real log's events (Chromium 13x over DoH, trimmed to one job), a log cut short mid-line, a failed job; the per-lookup
// layer of a row against the replay's lookups of the same names.
import assert from 'node:assert/strict';
import { test } from 'vitest';
import { netLogLookups, visitLookups } from '../bench/validate/netlog.js';
import { lookupLayer, lookupTolerance, missesBySign, replayLookups } from '../bench/validate/lookups.js';
import type { StoredRecord } from '../common/stored-record.js';
import { DOH_DISPATCH } from '../common/client-costs.js';
import type { Visit } from '../bench/validate/types.js';

const OFFSET = 1795687872441;
const CONSTANTS = JSON.stringify({ logEventTypes: { HOST_RESOLVER_MANAGER_JOB: 12, HOST_RESOLVER_MANAGER_JOB_STARTED: 14, HOST_RESOLVER_DNS_TASK: 21, DNS_TRANSACTION: 484 }, logEventPhase: { PHASE_BEGIN: 1, PHASE_END: 2, PHASE_NONE: 0 }, timeTickOffset: String(OFFSET) });
// One job of a real log (p10-h0 over DoH: HTTPS and A transactions), as Chromium writes it: one event a line.
const JOB = [
  '{"params":{"dns_query_types":["A","HTTPS"],"host":"http://p10-h0.val.example","secure_dns_mode":2,"source_dependency":{"id":118,"type":7},"tasks":[2]},"phase":1,"source":{"id":121,"start_time":"9040712","type":14},"time":"9040712","type":12}',
  '{"phase":0,"source":{"id":121,"start_time":"9040712","type":14},"time":"9040712","type":14}',
  '{"params":{"secure":true,"transactions_needed":[{"dns_query_type":"HTTPS"},{"dns_query_type":"A"}]},"phase":1,"source":{"id":121,"start_time":"9040712","type":14},"time":"9040712","type":21}',
  '{"params":{"source_dependency":{"id":122,"type":45}},"phase":0,"source":{"id":121,"start_time":"9040712","type":14},"time":"9040712","type":484}',
  '{"params":{"hostname":"p10-h0.val.example","query_type":65},"phase":1,"source":{"id":122,"start_time":"9040712","type":45},"time":"9040712","type":484}',
  '{"params":{"source_dependency":{"id":124,"type":45}},"phase":0,"source":{"id":121,"start_time":"9040712","type":14},"time":"9040713","type":484}',
  '{"params":{"hostname":"p10-h0.val.example","query_type":1},"phase":1,"source":{"id":124,"start_time":"9040713","type":45},"time":"9040713","type":484}',
  '{"phase":2,"source":{"id":122,"start_time":"9040712","type":45},"time":"9040767","type":484}',
  '{"phase":2,"source":{"id":124,"start_time":"9040713","type":45},"time":"9040767","type":484}',
  '{"phase":2,"source":{"id":121,"start_time":"9040712","type":14},"time":"9040768","type":12}',
];
const log = (lines: string[], tail = '') => `{"constants":${CONSTANTS},\n"events": [\n${lines.map((l) => `${l},`).join('\n')}\n${tail}`;

test('a job from a real NetLog: asked, out of the queue, each transaction, resolved, on the epoch clock', () => {
  const [l, ...rest] = netLogLookups(log(JOB, ']}'));
  assert.equal(rest.length, 0);
  assert.deepEqual(l, {
    name: 'p10-h0.val.example', askedAt: OFFSET + 9040712, startedAt: OFFSET + 9040712, endedAt: OFFSET + 9040768, secure: true, error: null,
    transactions: [{ qtype: 'HTTPS', startedAt: OFFSET + 9040712, endedAt: OFFSET + 9040767 }, { qtype: 'A', startedAt: OFFSET + 9040713, endedAt: OFFSET + 9040767 }],
  });
});

test('a log cut short (a killed browser): the last whole line counts, the half line does not; an unfinished job has no end', () => {
  const cut = log(JOB.slice(0, 7), JOB[7]!.slice(0, 40));
  const [l] = netLogLookups(cut);
  assert.equal(l?.endedAt, null);
  assert.deepEqual(l?.transactions.map((t) => [t.qtype, t.endedAt]), [['HTTPS', null], ['A', null]]);
  assert.throws(() => netLogLookups('{"events": []}'), /not a NetLog/);
});

test('a failed job keeps its net error; a visit keeps its page names in its window, times in ms', () => {
  const failed = [JOB[0]!.replace('p10-h0', 'gone'), JOB[9]!.replace('"phase":2,', '"params":{"net_error":-105},"phase":2,')];
  const [l] = netLogLookups(log(failed));
  assert.equal(l?.error, -105);
  const all = netLogLookups(log(JOB));
  const from = OFFSET + 9040700;
  assert.deepEqual(visitLookups(all, new Set(['p10-h0.val.example']), from, from + 100), [{
    name: 'p10-h0.val.example', atMs: 12, queueMs: 0, ms: 56, secure: true, error: null,
    tx: [{ qtype: 'HTTPS', startMs: 0, ms: 55 }, { qtype: 'A', startMs: 1, ms: 54 }],
  }]);
  assert.deepEqual(visitLookups(all, new Set(['other.example']), from, from + 100), [], 'not a page name');
  assert.deepEqual(visitLookups(all, new Set(['p10-h0.val.example']), from + 20, from + 100), [], 'asked before the window');
});

const rec = (host: string, qtype: 'A' | 'HTTPS', repeat: number, ms: number, transport: StoredRecord['transport'] = 'doh', mode: StoredRecord['mode'] = 'cold'): StoredRecord => ({
  host, qtype, resolver: 'lab', transport, mode, repeat, ok: true, error: null, timings: { connect: null, tls: null, query: ms, total: ms },
  bytes: { sent: 0, received: 0 }, packets: { sent: 0, received: 0 }, replay: { pageStartedAt: 1000 * repeat, firstNeededMs: 10, endedAt: 1000 * repeat + 10 + ms, waitedForConnection: null, paidSetup: false, sharedWith: 1 },
});
const visit = (transport: Visit['transport'], lookups: Visit['lookups'], records?: StoredRecord[]): Visit => ({
  browser: 'chromium', page: 'p', transport, scenario: 'cold', round: 1, onLoad: 100, error: null, startedAt: 0, endedAt: 1, openBefore: null, ...(lookups ? { lookups } : {}), ...(records ? { records } : {}),
});
const look = (name: string, ms: number, atMs = 0) => ({ name, atMs, queueMs: 0, ms, secure: true, error: null, tx: [] });

test('the replay\'s lookup of a name is its last record type\'s answer from when the page needed it, per replay', () => {
  const byName = replayLookups([rec('a.test', 'A', 1, 20), rec('a.test', 'HTTPS', 1, 26), rec('a.test', 'A', 2, 30), rec('a.test', 'A', 1, 99, 'dot')], 'doh', 'cold');
  assert.deepEqual(byName.get('a.test')?.sort(), [26, 30]);
});

test('the per-lookup layer: each name\'s median browser lookup against the replay\'s, within max(10 %, 5 ms); a second lookup of a name does not count', () => {
  assert.equal(lookupTolerance(20), 5);
  assert.equal(lookupTolerance(200), 20);
  const base = [visit('do53', undefined, [rec('a.test', 'A', 1, 40), rec('a.test', 'A', 2, 42), rec('b.test', 'A', 1, 40)])];
  const compared = [
    visit('doh', [look('a.test', 44), look('b.test', 80), look('a.test', 500, 900)]),
    visit('doh', [look('a.test', 45), look('b.test', 90), look('c.test', 10)]),
  ];
  const layer = lookupLayer(base, compared, 'doh', () => 'cold')!;
  // The replay's side carries the wait Chromium's DoH requests have inside it (cost-model.ts dohDispatchMs).
  const wait = DOH_DISPATCH.chromium.baseMs;
  assert.deepEqual(layer.pairs.map((p) => [p.name, p.browser, p.replay, p.loads, p.within]), [['a.test', 44.5, 41 + wait, 2, true], ['b.test', 85, 40 + wait, 2, false]]);
  assert.equal(layer.n, 2);
  assert.equal(layer.within, 1);
  // b.test's browser lookup (85 ms) is slower than its replay: the replay under-predicts it.
  assert.deepEqual(missesBySign(layer.pairs), { slower: 1, faster: 0 });
  assert.deepEqual(missesBySign(layer.pairs.map((p) => ({ ...p, browser: p.replay - 50, within: false }))), { slower: 0, faster: 2 });
  assert.equal(lookupLayer(base, [visit('doh', undefined)], 'doh', () => 'cold'), null, 'no browser lookups: no layer');
});

test("Firefox over TRR, an http document: the replay's lookup of the document's host carries one query more, as the model prices it", () => {
  // The document p.test fetched over http by Firefox; its replay's A record took 50 ms cold, of which 17 the query.
  const a = { ...rec('p.test', 'A', 1, 50), timings: { connect: 16, tls: 17, query: 17, total: 50 } };
  const page = { host: 'p.test', hosts: [{ name: 'p.test', schemes: ['http'], firstNeededMs: 0 }], browser: 'firefox', navigationTiming: { name: 'http://p.test/' } };
  const base = [{ ...visit('do53', undefined, [a, rec('q.test', 'A', 1, 17)]), browser: 'firefox', pageRecord: page } as unknown as Visit];
  const compared = [{ ...visit('doh', [look('p.test', 72), look('q.test', 22)]), browser: 'firefox' } as Visit];
  const layer = lookupLayer(base, compared, 'doh', () => 'cold')!;
  // Both names needed at 10 ms: each has the other in its burst, so TRR's wait is its base and one name.
  const wait = DOH_DISPATCH.firefox.baseMs + DOH_DISPATCH.firefox.perNameMs;
  assert.deepEqual(layer.pairs.map((p) => [p.name, p.replay, p.within]), [['p.test', 67 + wait, true], ['q.test', 17 + wait, true]]);
  // Over DoT (its own resolver: no HTTPS question first) and in Chromium, the document's lookup is the replay's as it is.
  const dot = [{ ...visit('do53', undefined, [{ ...a, transport: 'dot' }]), browser: 'firefox', pageRecord: page } as unknown as Visit];
  assert.equal(lookupLayer(dot, [{ ...visit('dot', [look('p.test', 50)]), browser: 'firefox' } as Visit], 'dot', () => 'cold')!.pairs[0]!.replay, 50);
  const chromium = [{ ...base[0]!, pageRecord: { ...page, browser: 'chromium' } } as unknown as Visit];
  assert.equal(lookupLayer(chromium, compared, 'doh', () => 'cold')!.pairs[0]!.replay, 50);
});
