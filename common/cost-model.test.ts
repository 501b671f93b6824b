import assert from 'node:assert/strict';
import { test } from 'vitest';
import { burstsOf, CHROMIUM_DOH_CPU_MS_PER_QUERY, CHROMIUM_RESOLVER_JOBS, clientCpuMs, DOH_DISPATCH, dohDispatchMs, queuedLookups, resolverSlots } from './client-costs.js';
import { chromiumHttpsWait, classifyHost, INDISTINGUISHABLE_MS, pageCost, RETRANSMISSION_MS, UDP_RETRY_MS, udpRetryOf, type CellCost, type PageInput } from './cost-model.js';
import { pageCostInput } from './page-cost.js';
import { lookups } from './replay-lookups.js';
import { type StoredRecord } from './stored-record.js';
import type { QType, TransportId } from './transports.js';
import { AT, cell, HOSTS, only, page, SYSTEM } from './cost-model-fixtures.js';


test('classifying hosts: document, render-blocking, before the mark (first paint, else DCL, else onLoad), off path, after onLoad', () => {
  const cases: Array<[Partial<PageInput['navigation']>, PageInput['hosts'][number], string]> = [
    [{}, { name: 'doc.test', firstNeededMs: 5 }, 'document'],
    [{}, { name: 'x.test', firstNeededMs: 500, renderBlocking: true }, 'render-blocking'],
    [{}, { name: 'x.test', firstNeededMs: 299 }, 'before-first-paint'],
    // A leaf (only images, fonts…) blocks no paint and names no host: off the path even before the mark.
    [{}, { name: 'x.test', firstNeededMs: 299, leaf: true }, 'off-path'],
    [{}, { name: 'x.test', firstNeededMs: 300 }, 'off-path'],
    [{ firstPaint: null, domContentLoadedEventEnd: 600 }, { name: 'x.test', firstNeededMs: 500 }, 'before-dom-content-loaded'],
    [{ firstPaint: null }, { name: 'x.test', firstNeededMs: 900 }, 'before-onload'],
    [{}, { name: 'x.test', firstNeededMs: 1000, renderBlocking: true }, 'after-onload'],
  ];
  for (const [nav, host, want] of cases) assert.equal(classifyHost(page([], nav), host).reason, want, `${host.name} at ${host.firstNeededMs}`);
});

test('onLoad change: point and bounds by the model, in a table of cells', () => {
  const records = [
    ...SYSTEM,
    // Every lookup 40 ms slower: the document's +40 is serial, the critical cdn's +40 parallel, img hides in slack.
    ...cell('far', 'doh', { 'doc.test': 60, 'cdn.test': 50, 'img.test': 50, 'beacon.test': 500 }, AT),
    // A few ms either way: indistinguishable.
    ...cell('near', 'doh', { 'doc.test': 21, 'cdn.test': 12, 'img.test': 11, 'beacon.test': 10 }, AT),
    // An off-path host slowed past onLoad moves it by the part that sticks out.
    ...cell('late', 'dot', { 'doc.test': 20, 'cdn.test': 10, 'img.test': 700, 'beacon.test': 10 }, AT),
  ];
  const costs = pageCost(page(HOSTS), records);
  const cases: Array<[string, TransportId, number, number, number, CellCost['verdict']]> = [
    // resolver, transport, point, lower, upper, verdict
    // doc +40 (serial) + cdn +40 (critical; alone, so parallel = chain); img +40 could add up to 40 more.
    ['far', 'doh', 80, 80, 120, 'slower'],
    ['near', 'doh', 3, 3, 4, 'indistinguishable'],
    // img now finishes at 1100, 100 ms after onLoad (1000): at least +100; +690 if its lookup was what onLoad awaited.
    ['late', 'dot', 100, 100, 690, 'slower'],
    ['system', 'udp', 0, 0, 0, 'indistinguishable'],
  ];
  for (const [resolver, transport, point, lower, upper, verdict] of cases) {
    const c = only(costs, resolver, transport);
    const label = `${resolver} ${transport}: ${JSON.stringify(c.onLoad)}`;
    assert.ok(Math.abs(c.onLoad.delta! - point) < 1e-9, label);
    assert.ok(Math.abs(c.onLoad.lower! - lower) < 1e-9, label);
    assert.ok(Math.abs(c.onLoad.upper! - upper) < 1e-9, label);
    assert.ok(c.onLoad.lower! <= c.onLoad.delta! && c.onLoad.delta! <= c.onLoad.upper!, label);
    assert.equal(c.verdict, verdict, label);
  }
  const far = only(costs, 'far', 'doh');
  assert.equal(far.onLoad.relative, 80 / 1000);
  // Every baseline is the system's Do53 replay (replay against replay); the document's observed 20 ms is its timeline.
  assert.deepEqual(far.hosts.map((h) => [h.name, h.baselineSource, h.critical, h.reason]), [
    ['doc.test', 'replay', true, 'document'],
    ['cdn.test', 'replay', true, 'before-first-paint'],
    ['img.test', 'replay', false, 'off-path'],
    ['beacon.test', 'replay', false, 'after-onload'],
  ]);
  // Böttger's cumulative view counts every host, the beacon after onLoad too: 660 against 50.
  assert.deepEqual(far.dnsTime, { hosts: 4, candidate: 660, baseline: 50, delta: 610 });
});

test('parallel critical lookups: a slower one needed early can hide behind one needed later', () => {
  const hosts = [{ name: 'x.test', firstNeededMs: 100 }, { name: 'y.test', firstNeededMs: 200 }];
  const at = { 'doc.test': 0, 'x.test': 100, 'y.test': 200 };
  const records = [
    ...cell('system', 'udp', { 'doc.test': 20, 'x.test': 10, 'y.test': 10 }, at),
    ...cell('r', 'doh', { 'doc.test': 20, 'x.test': 50, 'y.test': 10 }, at), // x ends at 150, before y at 210
    ...cell('r', 'dot', { 'doc.test': 20, 'x.test': 50, 'y.test': 50 }, at), // both +40 at once: +40, not +80
  ];
  const costs = pageCost(page(hosts), records);
  assert.deepEqual([only(costs, 'r', 'doh').onLoad.delta, only(costs, 'r', 'doh').onLoad.upper], [0, 40]);
  assert.deepEqual([only(costs, 'r', 'dot').onLoad.delta, only(costs, 'r', 'dot').onLoad.lower, only(costs, 'r', 'dot').onLoad.upper], [40, 40, 80]);
});

test('onLoad waited for the off-path response that came last: a faster lookup there lets it come sooner, as far as the next response', () => {
  // cdn.test is critical (needed before first paint at 300) and done at 400; img.test and beacon.test are needed after
  // first paint; img.test's Do53 lookup took 400 ms and its response came last, at 990, just before onLoad (1000).
  const at = { 'doc.test': 0, 'cdn.test': 120, 'img.test': 500, 'beacon.test': 500 };
  const hosts = [
    { name: 'cdn.test', firstNeededMs: 120, completedMs: 400 },
    { name: 'img.test', firstNeededMs: 500, completedMs: 990 },
    { name: 'beacon.test', firstNeededMs: 500, completedMs: 700 },
  ];
  const baseline = cell('system', 'udp', { 'doc.test': 20, 'cdn.test': 10, 'img.test': 400, 'beacon.test': 10 }, at);
  const fast = (img: number) => only(pageCost(page(hosts), [...baseline, ...cell('r', 'doh', { 'doc.test': 20, 'cdn.test': 10, 'img.test': img, 'beacon.test': 10 }, at)]), 'r', 'doh').onLoad.delta;
  // 390 ms sooner, img.test's response would come at 600, before beacon.test's at 700: onLoad waits for that one.
  assert.equal(fast(10), 700 - 990);
  // 100 ms sooner where the next response is far enough back.
  assert.equal(fast(300), -100);
  // 5 ms slower it still comes before onLoad: nothing moves (a response later than onLoad is what `late` counts).
  assert.equal(fast(405), 0);
});

test('an off-path host whose lookup ended after onLoad (a beacon at 995, no response before onLoad) was not waited for', () => {
  const at = { 'doc.test': 0, 'beacon.test': 995 };
  const records = [...cell('system', 'udp', { 'doc.test': 20, 'beacon.test': 10 }, at), ...cell('r', 'doh', { 'doc.test': 20, 'beacon.test': 310 }, at)];
  const cost = (host: PageInput['hosts'][number]) => only(pageCost(page([host]), records), 'r', 'doh').onLoad;
  assert.deepEqual(cost({ name: 'beacon.test', firstNeededMs: 995 }), { delta: 0, lower: 0, upper: 0, relative: 0 });
  // Awaited (a response at 999), its 300 ms slower lookup moves onLoad by what sticks out past it.
  assert.equal(cost({ name: 'beacon.test', firstNeededMs: 995, completedMs: 999 }).delta, 995 + 310 - 1000);
});

test('faster, cached and unknown baselines', () => {
  // The system resolver is slow: the candidate saves 60 ms on the document's lookup.
  const slow = page([{ name: 'cdn.test', firstNeededMs: 120, observedLookupMs: 0 }], { domainLookupEnd: 85 });
  const records = [...cell('system', 'udp', { 'doc.test': 80, 'cdn.test': 70 }, AT), ...cell('r', 'doh', { 'doc.test': 20, 'cdn.test': 900 }, AT)];
  const c = only(pageCost(slow, records), 'r', 'doh');
  // cdn.test's observed lookup of 0 ms was the browser's cache: any transport would be, so it adds nothing.
  assert.deepEqual(c.hosts.map((h) => [h.name, h.baselineSource, h.delta]), [['doc.test', 'replay', -60], ['cdn.test', 'cache', 0]]);
  assert.equal(c.onLoad.delta, -60);
  assert.equal(c.verdict, 'faster');
  // A redirected navigation whose final request reads a 0 ms lookup (http → https on one host) looked the host up at
  // the first hop, serially: the document's difference counts (validation-fiber.md, izettle), unless not redirected.
  const hop = (redirected: boolean) => only(pageCost(page([], { domainLookupStart: 160, domainLookupEnd: 160, redirected }), records), 'r', 'doh');
  assert.deepEqual([hop(false).hosts[0]!.baselineSource, hop(false).onLoad.delta], ['cache', 0]);
  assert.deepEqual([hop(true).hosts[0]!.baselineSource, hop(true).onLoad.delta], ['replay', -60]);
  // No baseline replay and no observed lookup: that host is unknown and left out; the document still counts.
  const lone = pageCost(page([{ name: 'cdn.test', firstNeededMs: 120 }]), cell('r', 'doh', { 'doc.test': 30, 'cdn.test': 10 }, AT));
  assert.deepEqual(lone[0]!.hosts.map((h) => [h.baselineSource, h.delta]), [['observed', 10], ['none', null]]);
  assert.equal(lone[0]!.onLoad.delta, 10);
  assert.equal(lone[0]!.dnsTime.baseline, null);
  assert.ok(Math.abs(lone[0]!.onLoad.delta!) < INDISTINGUISHABLE_MS);
});

test('failures: probability over records; a critical host that never resolves makes the verdict "fails"', () => {
  const records = [
    ...SYSTEM,
    ...cell('r', 'doh', { 'doc.test': 20, 'cdn.test': null, 'img.test': 10, 'beacon.test': 10 }, AT, { repeats: 2 }),
    ...cell('r', 'dot', { 'doc.test': 20, 'cdn.test': 10, 'img.test': null, 'beacon.test': 10 }, AT, { repeats: 2 }),
  ];
  const costs = pageCost(page(HOSTS), records);
  const doh = only(costs, 'r', 'doh');
  assert.equal(doh.verdict, 'fails');
  assert.deepEqual(doh.unresolved, ['cdn.test']);
  assert.deepEqual(doh.failures, { failed: 4, total: 16, probability: 0.25 });
  // An off-path host failing is reported but does not decide the verdict.
  const dot = only(costs, 'r', 'dot');
  assert.deepEqual([dot.verdict, dot.unresolved], ['indistinguishable', ['img.test']]);
});

test('bytes: median per replay of the page beside the papers\' model for the same number of queries', () => {
  const records = [...SYSTEM, ...cell('r', 'dot', { 'doc.test': 20, 'cdn.test': 10, 'img.test': 10, 'beacon.test': 10 }, AT, { repeats: 3, bytes: 250 })];
  const costs = pageCost(page(HOSTS), records);
  const dot = only(costs, 'r', 'dot');
  assert.equal(dot.repeats, 3);
  assert.deepEqual([dot.bytes.sent, dot.bytes.received, dot.bytes.packets, dot.bytes.queries], [2000, 4000, { sent: 8, received: 8 }, 8]);
  assert.deepEqual(dot.bytes.model, { sent: 40 + 33 * 8 + 285, formula: "DoT = 40·⌈r/44⌉ + 33·r + 285 (the paper's formula)" });
  assert.equal(dot.bytes.modelAlternative!.sent, 40 + 33 * 8 + 506);
  assert.equal(only(costs, 'system', 'udp').bytes.model!.sent, 56 * 8);
  // The text's overhead can be chosen instead.
  assert.equal(only(pageCost(page(HOSTS), records, { dotOverhead: 'text' }), 'r', 'dot').bytes.model!.sent, 40 + 33 * 8 + 506);
});

test('baselines are replay against replay: the browser\'s own lookup overhead is not counted as a cost', () => {
  // The browser observed 30 ms for the document (its resolver's overhead included); replays: Do53 15, DoH 45.
  const p = page([], { domainLookupStart: 5, domainLookupEnd: 35 });
  const at = { 'doc.test': 0 };
  const costs = pageCost(p, [...cell('system', 'udp', { 'doc.test': 15 }, at), ...cell('r', 'doh', { 'doc.test': 45 }, at)]);
  const doh = only(costs, 'r', 'doh');
  assert.deepEqual(doh.hosts.map((h) => [h.baselineSource, h.baseline, h.observed, h.delta]), [['replay', 15, 30, 30]]);
  assert.equal(doh.onLoad.delta, 30);
});

test('a retransmission one side waited for and the other did not: that lookup is priced from what the browser saw', () => {
  const at = { 'doc.test': 0 };
  const doh = (observed: number, udp: number) =>
    only(pageCost(page([], { domainLookupStart: 5, domainLookupEnd: 5 + observed, connectStart: 5 + observed, responseStart: 100 + observed, firstPaint: 300 + observed, loadEventEnd: 1000 + observed }), [...cell('system', 'udp', { 'doc.test': udp }, at), ...cell('r', 'doh', { 'doc.test': 45 }, at)]), 'r', 'doh');
  // The browser's Do53 query was lost (glibc asked again after 5 s); the replay's was not: DoH saves the wait.
  const lost = doh(5020, 15);
  assert.deepEqual(lost.hosts.map((h) => [h.baselineSource, h.baseline, h.delta]), [['observed', 5020, 45 - 5020]]);
  assert.equal(lost.onLoad.delta, 45 - 5020);
  // The replay's was lost (1.015 s) and the browser's was not: the load had no wait for DoH to save.
  assert.deepEqual(doh(30, 1015).hosts.map((h) => [h.baselineSource, h.delta]), [['observed', 15]]);
  // Below the shortest stub timer the two are the same lookup, replay against replay as before.
  assert.deepEqual(doh(30 + RETRANSMISSION_MS - 20, 15).hosts.map((h) => [h.baselineSource, h.delta]), [['replay', 30]]);
});

test('a Do53 query lost over UDP costs the stub\'s retransmission timeout, not a failure', () => {
  const at = { 'doc.test': 0, 'cdn.test': 120 };
  const hosts = [{ name: 'cdn.test', firstNeededMs: 120 }];
  const lose = (records: StoredRecord[], host: string, qtypes: string[]) => records.map((r) =>
    r.host === host && qtypes.includes(r.qtype)
      ? { ...r, ok: false, error: 'timeout', replay: { ...r.replay!, endedAt: r.replay!.pageStartedAt + r.replay!.firstNeededMs + 5000 } }
      : r);
  const candidate = cell('r', 'doh', { 'doc.test': 45, 'cdn.test': 40 }, at);
  const cases: Array<[string, string[], number | undefined, number, number]> = [
    // host lost, qtypes lost, udpRetryMs, baseline lookup of cdn.test, its delta
    ['cdn.test', ['AAAA'], undefined, 1000 + 15, 40 - 1015], // A answered in 15 ms; AAAA asked again after 1 s
    ['cdn.test', ['A', 'AAAA'], undefined, 1000 + 15, 40 - 1015], // both lost: the retry answers as a typical UDP lookup (15)
    ['cdn.test', ['AAAA'], 5000, 5000 + 15, 40 - 5015], // glibc's 5 s timeout
  ];
  for (const [host, qtypes, udpRetryMs, baseline, delta] of cases) {
    const records = [...lose(cell('system', 'udp', { 'doc.test': 15, 'cdn.test': 15 }, at), host, qtypes), ...candidate];
    const costs = pageCost(page(hosts), records, udpRetryMs === undefined ? {} : { udpRetryMs });
    const cdn = only(costs, 'r', 'doh').hosts.find((h) => h.name === 'cdn.test')!;
    assert.deepEqual([cdn.baseline, cdn.delta], [baseline, delta], `${qtypes.join('+')} lost, retry ${udpRetryMs ?? 'default'}`);
    const udp = only(costs, 'system', 'udp');
    // The baseline itself still resolves (after the retry) and its failures are still counted.
    assert.deepEqual([udp.verdict !== 'fails', udp.unresolved, udp.failures.failed], [true, [], qtypes.length]);
  }
  // An unseen lookup (no Resource Timing) whose host's response completed 300 ms after it was needed: the load did not
  // wait 5 s for it, so the replay's lost AAAA was the replay's own and is priced as if answered (15 ms); without a
  // completion nothing contradicts the replay.
  const records = [...lose(cell('system', 'udp', { 'doc.test': 15, 'cdn.test': 15 }, at), 'cdn.test', ['AAAA']), ...candidate];
  const unseen = (completedMs?: number) =>
    only(pageCost(page([{ ...hosts[0]!, ...(completedMs ? { completedMs } : {}) }]), records, { udpRetryMs: 5000 }), 'r', 'doh').hosts.find((h) => h.name === 'cdn.test')!;
  assert.deepEqual([unseen(420).baseline, unseen(420).delta], [15, 40 - 15]);
  assert.deepEqual([unseen().baseline, unseen().delta], [5015, 40 - 5015]);
  // A completion as late as the retry allows (5.2 s after it was needed) leaves the replay's lost query in.
  assert.deepEqual([unseen(120 + 5200).baseline], [5015]);
  // A failure that is not a lost UDP query (here a DoH one) is not retried: the host does not resolve.
  const dohLost = lose(candidate, 'cdn.test', ['A', 'AAAA']);
  const c = only(pageCost(page(hosts), [...cell('system', 'udp', { 'doc.test': 15, 'cdn.test': 15 }, at), ...dohLost]), 'r', 'doh');
  assert.deepEqual([c.unresolved, c.verdict], [['cdn.test'], 'fails']);
});

test('a query the load lost on a host it exposed no lookup for: likely where the replay loses some and the fetch took the retry longer', () => {
  // Firefox behind glibc (5 s). seen.test's lookup was exposed (15 ms, nothing lost); u.test's was not. The replay
  // lost one of its 6 queries (on z.test): p = 1/6 a query, so a host of two queries lost one with 0.31.
  const at = { 'doc.test': 0, 'seen.test': 100, 'u.test': 100, 'z.test': 100 };
  const base = cell('system', 'udp', { 'doc.test': 15, 'seen.test': 15, 'u.test': 15, 'z.test': 15 }, at)
    .map((r) => (r.host === 'z.test' && r.qtype === 'AAAA' ? { ...r, ok: false, error: 'timeout' } : r));
  const candidate = cell('r', 'doh', { 'doc.test': 40, 'seen.test': 40, 'u.test': 40, 'z.test': 40 }, at);
  const uOf = (uFetch: number, seenFetch: number, records = base) => {
    const hosts = [
      { name: 'seen.test', firstNeededMs: 100, observedLookupMs: 15, completedMs: 100 + seenFetch },
      { name: 'u.test', firstNeededMs: 100, completedMs: 100 + uFetch },
    ];
    const c = only(pageCost(page(hosts, { firstPaint: 50, loadEventEnd: 6000 }), [...records, ...candidate], { udpRetryMs: 5000 }), 'r', 'doh');
    return c.hosts.find((h) => h.name === 'u.test')!.baseline;
  };
  // u.test's fetch took 5.4 s, and no fetch of a seen host without a loss took that long (q = 0): it lost one.
  assert.equal(uOf(5400, 300), 15 + 5000);
  // A fetch shorter than its lookup plus the retry: nothing lost.
  assert.equal(uOf(300, 300), 15);
  // Seen fetches that long without a loss (q = 1): a long fetch says nothing more than p (0.31 < 0.5).
  assert.equal(uOf(5400, 5400), 15);
  // A replay that lost nothing: no loss is guessed however long the fetch.
  assert.equal(uOf(5400, 300, cell('system', 'udp', { 'doc.test': 15, 'seen.test': 15, 'u.test': 15, 'z.test': 15 }, at)), 15);
});

test("a lost Do53 query's retry timer: Chromium's own resolver's 1 s on every system, Firefox the system stub's where known", () => {
  const GLIBC_RETRY_MS = 5000; // what the host reports for glibc without `options timeout:`
  assert.equal(udpRetryOf('chromium', GLIBC_RETRY_MS), UDP_RETRY_MS);
  assert.equal(udpRetryOf('firefox', GLIBC_RETRY_MS), GLIBC_RETRY_MS);
  assert.equal(udpRetryOf('firefox', null), UDP_RETRY_MS);
  assert.equal(udpRetryOf(null, GLIBC_RETRY_MS), UDP_RETRY_MS);
});

test('completion times: a lookup moves its host\'s fetch, and a chain\'s shifts add up link by link', () => {
  // First paint at 50 (every host off the critical path by that mark), onLoad at 410. A script on s.test inserts
  // c1.test's script, which inserts c2.test's image, which ends 10 ms before onLoad; img.test is independent.
  const at = { 'doc.test': 0, 's.test': 100, 'img.test': 100, 'c1.test': 210, 'c2.test': 310 };
  const done: Record<string, number> = { 's.test': 200, 'img.test': 150, 'c1.test': 300, 'c2.test': 400 };
  const hosts = (withEnds: boolean): PageInput['hosts'] => Object.entries(at).filter(([n]) => n !== 'doc.test')
    .map(([name, firstNeededMs]) => ({ name, firstNeededMs, ...(withEnds ? { completedMs: done[name]! } : {}) }));
  const base = cell('system', 'udp', { 'doc.test': 20, 's.test': 10, 'img.test': 10, 'c1.test': 10, 'c2.test': 10 }, at);
  const slower = cell('r', 'dot', { 'doc.test': 20, 's.test': 50, 'img.test': 50, 'c1.test': 50, 'c2.test': 50 }, at);
  const nav = { firstPaint: 50, loadEventEnd: 410 };
  const cases: Array<[string, boolean, number, number, number]> = [
    // Without completion times: lookups end long before onLoad; their slack hides every +40.
    ['lookup ends only', false, 0, 0, 40],
    // With them: c2's chain (s → c1 → c2) comes 3 × 40 = 120 later and ended 10 ms before onLoad: +110, at most +120.
    ['response ends', true, 110, 110, 120],
  ];
  for (const [label, withEnds, point, lower, upper] of cases) {
    const dot = only(pageCost(page(hosts(withEnds), nav), [...base, ...slower]), 'r', 'dot');
    assert.deepEqual([dot.onLoad.delta, dot.onLoad.lower, dot.onLoad.upper], [point, lower, upper], `${label}: ${JSON.stringify(dot.onLoad)}`);
  }
});

test('a leaf host is never a parent: an image that ended just before a chain\'s next link was needed moves nothing', () => {
  // s.test's script inserts c1.test (needed at 210); img.test's image ended at 205, after s.test's script (200), so
  // by completion order alone it would be c1's likeliest parent. Only img.test's lookup gets 40 ms slower.
  const at = { 'doc.test': 0, 's.test': 100, 'img.test': 100, 'c1.test': 210 };
  const done: Record<string, number> = { 's.test': 200, 'img.test': 205, 'c1.test': 400 };
  const hosts = (leaf: boolean): PageInput['hosts'] => Object.entries(at).filter(([n]) => n !== 'doc.test')
    .map(([name, firstNeededMs]) => ({ name, firstNeededMs, completedMs: done[name]!, ...(leaf && name === 'img.test' ? { leaf } : {}) }));
  const base = cell('system', 'udp', { 'doc.test': 20, 's.test': 10, 'img.test': 10, 'c1.test': 10 }, at);
  const slower = cell('r', 'dot', { 'doc.test': 20, 's.test': 10, 'img.test': 50, 'c1.test': 10 }, at);
  const nav = { firstPaint: 50, loadEventEnd: 410 };
  const of = (leaf: boolean) => only(pageCost(page(hosts(leaf), nav), [...base, ...slower]), 'r', 'dot').onLoad;
  // Taken for c1's parent, the image's +40 reaches c1's end (400 → 440): onLoad +30.
  assert.equal(of(false).delta, 30);
  // As a leaf it is nobody's parent and ends (245) long before onLoad: nothing moves.
  assert.deepEqual([of(true).delta, of(true).lower], [0, 0]);
});

test('a lookup that waited for the document\'s connection in the replay waits that much less in the page', () => {
  // DoH: the document's lookup opens the connection (100 ms against Do53's 20: +80). x.test, scheduled at 50 ms,
  // waited 60 ms for that connection, then took 40. In the page x.test is needed 80 ms later, when it is open.
  const at = { 'doc.test': 0, 'x.test': 50 };
  const hosts = [{ name: 'x.test', firstNeededMs: 50 }];
  const doh = cell('r', 'doh', { 'doc.test': 100, 'x.test': 100 }, at).map((r) => (r.host === 'x.test' ? { ...r, replay: { ...r.replay!, waitedForConnection: 60 } } : r));
  const costs = pageCost(page(hosts), [...cell('system', 'udp', { 'doc.test': 20, 'x.test': 20 }, at), ...doh]);
  const x = only(costs, 'r', 'doh').hosts.find((h) => h.name === 'x.test')!;
  // The replay's own lookup is shown as measured; its difference counts only the 40 ms against Do53's 20.
  assert.deepEqual([x.lookup, x.delta], [100, 20]);
  // The document's +80, then x.test's own +20 (without the credit: +80 + 80).
  assert.equal(only(costs, 'r', 'doh').onLoad.delta, 100);
});

test("a host is done when the recording browser has what it waits for: Chromium bounds its wait for HTTPS, Firefox waits for every type", () => {
  // One host besides the document; over the candidate its HTTPS answer comes 200 ms after its addresses.
  const rec = (resolver: string, transport: TransportId, qtype: QType, host: string, total: number, ok = true): StoredRecord => ({
    host, qtype, resolver, transport, mode: 'cold', repeat: 1, ok, error: ok ? null : 'servfail',
    bytes: { sent: 100, received: 100 }, packets: { sent: 1, received: 1 }, timings: { connect: null, tls: null, query: total, total },
    replay: { pageStartedAt: 0, firstNeededMs: host === 'doc.test' ? 0 : 120, endedAt: (host === 'doc.test' ? 0 : 120) + total, waitedForConnection: null, paidSetup: false, sharedWith: 1 },
  });
  const records = [
    ...['doc.test', 'cdn.test'].flatMap((h) => [rec('system', 'udp', 'A', h, 20), rec('system', 'udp', 'HTTPS', h, 20)]),
    ...['doc.test', 'cdn.test'].flatMap((h) => [rec('r', 'doh', 'A', h, 40), rec('r', 'doh', 'HTTPS', h, 240)]),
  ];
  const of = (browser: 'chromium' | 'firefox') => only(pageCost({ ...page([{ name: 'cdn.test', firstNeededMs: 120 }]), browser }, records), 'r', 'doh').hosts.find((h) => h.name === 'cdn.test')!;
  // Chromium: 40 ms of addresses, then at most 20 % of that (8 ms) more for HTTPS; each browser's DoH wait on top.
  const [cw, fw] = [DOH_DISPATCH.chromium.baseMs, DOH_DISPATCH.firefox.baseMs];
  assert.equal(of('chromium').lookup, 48 + cw);
  assert.equal(of('chromium').delta, 48 + cw - 20, 'against the baseline, whose HTTPS came with its addresses');
  assert.equal(of('firefox').lookup, 240 + fw, 'Firefox waits for the HTTPS record');
  // An address type must answer: HTTPS alone does not resolve a host; a failed HTTPS does not fail it.
  const noAddress = records.map((r) => (r.resolver === 'r' && r.qtype === 'A' && r.host === 'cdn.test' ? { ...r, ok: false, error: 'servfail' } : r));
  assert.deepEqual(only(pageCost({ ...page([{ name: 'cdn.test', firstNeededMs: 120 }]), browser: 'chromium' }, noAddress), 'r', 'doh').unresolved, ['cdn.test']);
  const noHttps = records.map((r) => (r.resolver === 'r' && r.qtype === 'HTTPS' ? { ...r, ok: false, error: 'servfail' } : r));
  assert.deepEqual(only(pageCost({ ...page([{ name: 'cdn.test', firstNeededMs: 120 }]), browser: 'chromium' }, noHttps), 'r', 'doh').unresolved, []);
  assert.equal(chromiumHttpsWait(1), 5);
  assert.equal(chromiumHttpsWait(100), 20);
  assert.equal(chromiumHttpsWait(1000), 50);
});

test("Firefox's TRR asks an http document's HTTPS record before its addresses: one more query round trip over DoH, not over Do53 or DoT", () => {
  // Warm cells: every lookup is one 30 ms query over DoH and DoT, 20 ms over Do53; the document and one more host.
  const at = { 'doc.test': 0, 'cdn.test': 120 };
  const records = [
    ...cell('system', 'udp', { 'doc.test': 20, 'cdn.test': 20 }, at, { mode: 'warm' }),
    ...cell('r', 'doh', { 'doc.test': 30, 'cdn.test': 30 }, at, { mode: 'warm' }),
    ...cell('r', 'dot', { 'doc.test': 30, 'cdn.test': 30 }, at, { mode: 'warm' }),
  ];
  const hosts = [{ name: 'cdn.test', firstNeededMs: 120 }];
  const doc = (p: PageInput, transport: TransportId) => only(pageCost(p, records), 'r', transport, 'warm').hosts.find((h) => h.reason === 'document')!;
  const http = { ...page(hosts), browser: 'firefox' as const, documentHttp: true };
  const wait = DOH_DISPATCH.firefox.baseMs;
  assert.equal(doc(http, 'doh').lookup, 60 + wait, 'HTTPS first (30 ms), then the addresses (30 ms), and TRR\'s wait');
  assert.equal(doc(http, 'dot').lookup, 30, 'over the machine\'s stub Firefox asks no HTTPS record for an http document');
  assert.equal(doc({ ...http, documentHttp: false }, 'doh').lookup, 30 + wait, 'an https document: asked together');
  assert.equal(doc({ ...http, browser: 'chromium' }, 'doh').lookup, 30, 'Chromium asks them together (its document does not wait)');
  assert.equal(only(pageCost(http, records), 'r', 'doh', 'warm').hosts.find((h) => h.name === 'cdn.test')!.lookup, 30 + wait, 'only the document');
});

test("a redirected navigation's earlier leg is serial like the document: its cold connection moves onLoad one for one", () => {
  // www.doc.test answers at once with a redirect to doc.test, whose request starts at 600 (fetchStart). A cold DoT
  // connection opened for the first leg costs 200 there; the document's and cdn.test's lookups ride it.
  const at = { 'www.doc.test': 0, 'doc.test': 600, 'cdn.test': 900 };
  const base = cell('system', 'udp', { 'www.doc.test': 10, 'doc.test': 20, 'cdn.test': 10 }, at);
  const dot = cell('r', 'dot', { 'www.doc.test': 210, 'doc.test': 20, 'cdn.test': 20 }, at);
  const nav = { domainLookupStart: 600, domainLookupEnd: 620, connectStart: 620, responseStart: 700, loadEventEnd: 2000, firstPaint: 1000 };
  const hosts = (leg: boolean): PageInput['hosts'] => [
    { name: 'www.doc.test', firstNeededMs: 0, ...(leg ? { navigationLeg: true } : {}) },
    { name: 'cdn.test', firstNeededMs: 900, completedMs: 1900 },
  ];
  const asLeg = only(pageCost(page(hosts(true), nav), [...base, ...dot]), 'r', 'dot');
  assert.equal(asLeg.hosts.find((h) => h.name === 'www.doc.test')!.reason, 'redirect');
  // +200 for the leg, 0 for the document, +10 for cdn.test's fetch that onLoad waited for.
  assert.equal(asLeg.onLoad.delta, 210);
  // Taken as any early host, the leg's lookup ends long before cdn.test's fetch and hides behind it: what it was.
  assert.equal(only(pageCost(page(hosts(false), nav), [...base, ...dot]), 'r', 'dot').onLoad.delta, 10);
  // The page record marks the leg: requested by the main frame, or needed before the final request's fetchStart.
  const host = (name: string, firstNeededMs: number, types: Record<string, number> = {}) => ({
    name, kind: 'name' as const, internal: false, measurable: true, firstNeededMs, requests: 1, types, ips: [], protocols: [], schemes: ['https'],
    fromCache: 0, errors: 0, viaRedirect: false, fromSubframe: false, lookup: null, completedMs: null,
  });
  const legs = (hs: ReturnType<typeof host>[], fetchStart: number) =>
    pageCostInput({ host: 'doc.test', hosts: hs, navigationTiming: { fetchStart, domainLookupStart: fetchStart, domainLookupEnd: fetchStart }, onLoadMs: 2000 })
      .hosts.filter((h) => h.navigationLeg).map((h) => h.name);
  assert.deepEqual(legs([host('doc.test', 0, { main_frame: 1 }), host('www.doc.test', 0), host('cdn.test', 900)], 600), ['www.doc.test']);
  assert.deepEqual(legs([host('doc.test', 0, { main_frame: 1 }), host('www.doc.test', 0, { main_frame: 1 }), host('cdn.test', 900)], 0), ['www.doc.test']);
  assert.deepEqual(legs([host('doc.test', 0, { main_frame: 1 }), host('cdn.test', 900)], 3), []);
});

test("a browser's DoH request waits inside the browser, longer in a burst of names: priced on DoH only, per browser", () => {
  // Ten names needed at once at 100 ms (a burst), one alone at 500; the document at 0. Every lookup 20 ms.
  const at: Record<string, number> = { 'doc.test': 0, 'solo.test': 500 };
  for (let i = 0; i < 10; i++) at[`b${i}.test`] = 100 + i;
  const ms = Object.fromEntries(Object.keys(at).map((h) => [h, 20]));
  const records = [...cell('system', 'udp', ms, at), ...cell('r', 'doh', ms, at), ...cell('r', 'dot', ms, at), ...cell('r', 'doq', ms, at)];
  const hosts = Object.entries(at).filter(([h]) => h !== 'doc.test').map(([name, firstNeededMs]) => ({ name, firstNeededMs }));
  const lookup = (browser: 'chromium' | 'firefox' | null, transport: TransportId, name: string) =>
    only(pageCost({ ...page(hosts), browser }, records), 'r', transport).hosts.find((h) => h.name === name)!.lookup;
  const ff = DOH_DISPATCH.firefox;
  assert.equal(lookup('firefox', 'doh', 'solo.test'), 20 + ff.baseMs, 'alone: the base wait');
  assert.equal(lookup('firefox', 'doh', 'b0.test'), 20 + ff.baseMs, 'the first of the burst has no name before it');
  assert.equal(lookup('firefox', 'doh', 'b9.test'), 20 + ff.baseMs + 9 * ff.perNameMs, 'the tenth: nine names in the window before it');
  assert.equal(lookup('chromium', 'doh', 'b9.test'), 20 + DOH_DISPATCH.chromium.baseMs, 'Chromium: its constant');
  assert.equal(lookup('chromium', 'doh', 'doc.test'), 20, "Chromium's document lookup does not wait");
  for (const t of ['dot', 'doq'] as TransportId[]) assert.equal(lookup('firefox', t, 'b9.test'), 20, `${t} goes through the machine's stub: no wait`);
  assert.equal(lookup(null, 'doh', 'b9.test'), 20, 'an unknown browser: nothing priced');
  // The cap, and the window: a name more than DOH_BURST_WINDOW_MS after the others is alone.
  assert.equal(dohDispatchMs('firefox', 'doh', 50, false), ff.baseMs + ff.burstCap * ff.perNameMs);
  assert.deepEqual(Object.fromEntries(burstsOf(new Map([['a', 0], ['b', 10], ['c', 10], ['d', 21]]))), { a: 0, b: 2, c: 2, d: 0 });
});

test("the DoQ stub's CPU: per query asked before onLoad, on DoQ only, over the same lookups", () => {
  // The same lookups over DoT and DoQ (each host as quick as over Do53): only the stub's CPU tells them apart. The
  // beacon is asked after onLoad, so its two queries cost the page nothing.
  const ms = { 'doc.test': 20, 'cdn.test': 10, 'img.test': 10, 'beacon.test': 10 };
  const records = [...SYSTEM, ...cell('r', 'dot', ms, AT, { repeats: 3 }), ...cell('r', 'doq', ms, AT, { repeats: 3 })];
  const costs = pageCost(page(HOSTS), records);
  assert.equal(only(costs, 'r', 'dot').onLoad.delta, 0);
  const doq = only(costs, 'r', 'doq').onLoad;
  // Three hosts before onLoad × A and AAAA: six queries.
  assert.ok(Math.abs(doq.delta! - clientCpuMs(null, 'doq', 6)) < 1e-9, JSON.stringify(doq));
  assert.ok(clientCpuMs(null, 'doq', 6) > 1 && clientCpuMs(null, 'dot', 6) === 0 && clientCpuMs(null, 'udp', 6) === 0);
  assert.ok(doq.lower! <= doq.delta! && doq.delta! <= doq.upper!, JSON.stringify(doq));
});

test("Chromium's own DoH CPU: per query asked before onLoad, in Chromium only, beside its DoH wait", () => {
  // The same DoH lookups priced for a page Chromium loaded and for one with no browser named: the difference is the
  // measured CPU of Chromium's DoH client for the six queries before onLoad (three hosts × two).
  const ms = { 'doc.test': 20, 'cdn.test': 10, 'img.test': 10, 'beacon.test': 10 };
  const records = [...SYSTEM, ...cell('r', 'doh', ms, AT, { repeats: 3 })];
  const chromium = only(pageCost({ ...page(HOSTS), browser: 'chromium' }, records), 'r', 'doh').onLoad;
  const none = only(pageCost(page(HOSTS), records), 'r', 'doh').onLoad;
  const wait = DOH_DISPATCH.chromium.baseMs; // what the non-document hosts wait for Chromium's network thread (dohDispatchMs)
  assert.ok(Math.abs(chromium.delta! - none.delta! - wait - 6 * CHROMIUM_DOH_CPU_MS_PER_QUERY) < 1e-9, JSON.stringify({ chromium, none }));
  assert.equal(clientCpuMs('firefox', 'doh', 6), 0);
  assert.equal(clientCpuMs('chromium', 'dot', 6), 0);
});

test("Chromium's resolver slots: a lookup asked while every slot is taken waits for the first to end; DoH and Firefox do not", () => {
  assert.equal(resolverSlots('chromium', 'udp'), CHROMIUM_RESOLVER_JOBS);
  assert.equal(resolverSlots('chromium', 'dot'), CHROMIUM_RESOLVER_JOBS);
  assert.equal(resolverSlots('chromium', 'doh'), null);
  assert.equal(resolverSlots('firefox', 'dot'), null);
  // Two slots; four lookups asked at 0, 0, 5 and 50 ms.
  const lookups = [{ startMs: 0, ms: 30 }, { startMs: 0, ms: 10 }, { startMs: 5, ms: 40 }, { startMs: 50, ms: 20 }];
  // The third waits for the second (ends at 10): 10 + 40 − 5 = 45; the fourth finds a slot free (the first ended at 30).
  assert.deepEqual(queuedLookups(lookups, 2), [30, 10, 45, 20]);
  assert.deepEqual(queuedLookups(lookups, 1), [30, 40, 75, 50], 'one slot: each waits for every one before it');
  assert.deepEqual(queuedLookups(lookups, null), [30, 10, 40, 20], 'no limit: each its own time');
  assert.deepEqual(queuedLookups([...lookups].reverse(), 2), [20, 45, 10, 30], 'the order of asking, not of the list, decides');
});

test("in Chromium a many-host page's later names wait for a resolver slot, over Do53 and DoT alike; the model's lookups pay the wait", () => {
  // 33 names asked at once, each answered in 50 ms over udp and 80 ms over DoT: the 33rd waits for the first slot.
  const rec = (transport: TransportId, host: string, total: number): StoredRecord => ({
    host, qtype: 'A', resolver: transport === 'udp' ? 'system' : 'r', transport, mode: 'cold', repeat: 1, ok: true, error: null,
    bytes: { sent: 100, received: 100 }, packets: { sent: 1, received: 1 }, timings: { connect: null, tls: null, query: total, total },
    replay: { pageStartedAt: 0, firstNeededMs: host === 'h32.test' ? 1 : 0, endedAt: (host === 'h32.test' ? 1 : 0) + total, waitedForConnection: null, paidSetup: false, sharedWith: 1 },
  });
  const names = Array.from({ length: CHROMIUM_RESOLVER_JOBS + 1 }, (_, i) => `h${i}.test`);
  const cell = (transport: TransportId, ms: number) => lookups(names.map((h) => rec(transport, h, ms)), UDP_RETRY_MS, 'chromium').get('h32.test')!.perRepeat.get(1);
  assert.equal(cell('udp', 50), 50 + 49, 'asked at 1 ms, a slot frees at 50');
  assert.equal(cell('dot', 80), 80 + 79, 'over DoT the wait is DoT\'s own lookup: the transport\'s extra time is paid twice');
  assert.equal(lookups(names.map((h) => rec('dot', h, 80)), UDP_RETRY_MS, 'firefox').get('h32.test')!.perRepeat.get(1), 80, 'Firefox: no slots');
});
