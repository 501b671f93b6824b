// The validation's pure parts (bench/validate/): the command line, the target and when a row is resolved, when a
// side needs another load, the trace's gaps around the holders' idle limits, and the rows from a run.
import assert from 'node:assert/strict';
import { test } from 'vitest';
import { analyse, measuredChange, modeFor, predictedShift, pricedPairs, shift, tolerance, type Row } from '../bench/validate/analysis.js';
import { mannWhitneyNull, mosesRank, shiftInterval } from '../bench/validate/interval.js';
import { lookupTable, report, rowsJson } from '../bench/validate/report.js';
import { seededRandom } from '../common/stats.js';
import { pageRecordOf, requestTypeOf, type PageTimings } from '../bench/validate/browser.js';
import { mergeRuns } from '../bench/validate/legacy.js';
import { parseCommand } from '../bench/validate/options.js';
import { attribute, QueryLog } from '../bench/validate/querylog.js';
import { gapRanges, gapSequence, idleLimitMs, LoadBook, needsLoad, REPLAYS_PER_ROW, replayed, rowDone, serverIdleFor, type Budget } from '../bench/validate/schedule.js';
import type { ValidationRun, Visit } from '../bench/validate/types.js';
import { profileByName } from '../lab/profiles.js';

test('the command line: defaults, the issue\'s spellings, custom profiles, clear errors', () => {
  const d = parseCommand([]).options;
  assert.deepEqual(d.browsers, ['chromium', 'firefox']);
  assert.deepEqual(d.pages, [1, 10, 30, 100]);
  assert.deepEqual(d.profiles.map((p) => p.name), ['fiber', 'dsl', '4g', '3g']);
  assert.deepEqual(d.scenarios, ['cold', 'warm', 'expected']);
  assert.deepEqual(d.transports, ['dot', 'doh', 'doq']);
  assert.equal(d.loads, 20);
  assert.equal(d.minLoads, undefined, 'no row stops early');
  const c = parseCommand(['--browser', 'firefox', '--har', 'a.har,b.har', '--profile', 'rtt=80,loss=1', '--profile', 'dsl', '--scenario', 'warm',
    '--transports', 'do53,doq', '--loads', '4', '--out', 'r.md', '--json', 'r.json']);
  assert.deepEqual(c.options.browsers, ['firefox']);
  assert.deepEqual(c.options.hars, ['a.har', 'b.har']);
  assert.deepEqual(c.options.pages, [], 'only HAR pages when --har is given alone');
  assert.deepEqual(c.options.profiles.map((p) => [p.name, p.rttMs, p.lossPct]), [['rtt=80,loss=1', 80, 1], ['dsl', profileByName('dsl').rttMs, profileByName('dsl').lossPct]]);
  assert.deepEqual(c.options.transports, ['doq'], 'Do53 is always the baseline');
  assert.throws(() => parseCommand(['--min-loads', '5']), /--min-loads is gone: every row gets exactly --loads/);
  assert.equal(c.out, 'r.md');
  assert.equal(c.json, 'r.json');
  assert.throws(() => parseCommand(['--browser', 'safari']), /--browser: unknown "safari"/);
  assert.throws(() => parseCommand(['--transports', 'dnscrypt']), /--transports: unknown "dnscrypt"/);
  assert.throws(() => parseCommand(['--loads', '0']), /--loads: "0"/);
  assert.throws(() => parseCommand(['--pages', 'none']), /nothing to load/);
  assert.throws(() => parseCommand(['--profile', 'rtt=x']), /KEY=NUMBER/);
});

test('a queue file: one chunk per line, comments and blank lines skipped; a chunk needs its raw file', async () => {
  const { queueChunks } = await import('../bench/validate/main.js');
  assert.deepEqual(queueChunks('# the final matrix\n\n--profile dsl --pages 1,10   --raw a.raw.json.gz  # fixed loads\n  --profile 3g --har x.har --raw b.raw.json.gz\n'),
    [['--profile', 'dsl', '--pages', '1,10', '--raw', 'a.raw.json.gz'], ['--profile', '3g', '--har', 'x.har', '--raw', 'b.raw.json.gz']]);
  const cmd = parseCommand(['--queue', 'q.txt', '--chunks', '2']);
  assert.deepEqual(cmd.queue, { file: 'q.txt', chunks: 2 });
  assert.throws(() => parseCommand(['--chunks', '2', '--pages', '1']), /--chunks goes with --queue/);
});

test('the target: 10 % of the measured change, at least 10 ms; resolved when the interval is that narrow', () => {
  assert.equal(tolerance(50), 10);
  assert.equal(tolerance(-300), 30);
  // Two tight sides 100 ms apart: resolved.
  const base = [500, 502, 498, 501, 499, 500];
  const tight = measuredChange(base, base.map((x) => x + 100))!;
  assert.equal(tight.measured, 100);
  assert.ok(tight.resolved && tight.halfWidth! <= tight.tolerance, JSON.stringify(tight));
  // The same medians with a wide spread: not resolved.
  const wide = measuredChange([300, 500, 700, 400, 600], [400, 600, 800, 500, 700])!;
  assert.equal(wide.measured, 100);
  assert.equal(wide.resolved, false, JSON.stringify(wide));
  assert.equal(measuredChange([], [1]), null);
  assert.equal(shiftInterval([1], [2, 3]), null, 'one load is no interval');
  assert.equal(shiftInterval([1, 2, 3], [2, 3, 4]), null, '3 and 3 loads cannot give a 95 % interval');
  // The measured change is the Hodges–Lehmann shift: the median of every pairwise difference, not the difference of
  // the medians (here 30, not 31 − 10 = 21), and one slow load moves it little.
  assert.equal(shift([0, 10, 20], [30, 31, 60]), 30);
  assert.equal(shift([100, 110, 120, 130], [140, 150, 160, 2000]), shift([100, 110, 120, 130], [140, 150, 160, 170]));
  assert.equal(shift([100, 110, 120, 130], [140, 150, 160, 170]), 40);
  assert.equal(shift([], [1]), null);
});

test("the interval: Moses's distribution-free interval of the shift, from the exact null distribution of Mann–Whitney's U", () => {
  // The null distribution: sizes 2 and 2 give U = 0…4 with counts 1, 1, 2, 1, 1 (of C(4, 2) = 6).
  assert.deepEqual([...mannWhitneyNull(2, 2)].map((p) => Math.round(p * 6)), [1, 1, 2, 1, 1]);
  for (const [m, n] of [[5, 5], [10, 10], [12, 7], [20, 20], [40, 40]] as const) {
    const p = mannWhitneyNull(m, n);
    assert.ok(Math.abs(p.reduce((a, b) => a + b, 0) - 1) < 1e-9);
    for (let u = 0; u <= m * n; u++) assert.ok(Math.abs(p[u]! - p[m * n - u]!) < 1e-12, 'symmetric');
  }
  // The tables' two-sided 5 % critical values of U (reject when U ≤ c): 2 for 5 and 5, 23 for 10 and 10, 127 for 20 and 20.
  assert.equal(mosesRank(5, 5), 3);
  assert.equal(mosesRank(10, 10), 24);
  assert.equal(mosesRank(20, 20), 128);
  assert.equal(mosesRank(3, 3), 0);
  // A pure shift of 100 ms: the interval holds it, and its ends are differences of the data.
  const a = [500, 510, 490, 505, 495, 520, 480, 515, 485, 500];
  const [lo, hi] = shiftInterval(a, a.map((x) => x + 100))!;
  assert.ok(lo <= 100 && 100 <= hi && hi - lo < 40, `${lo}…${hi}`);
  // Coverage, the property that matters: 4,000 seeded A/A pairs of 10 and 10 loads from a skewed onLoad-like
  // distribution (a lognormal body with a slow tail in one load of ten) hold 0 in about 95 % of their intervals.
  const random = seededRandom(11);
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const load = () => 800 * Math.exp(0.1 * normal()) + (random() < 0.1 ? 400 * random() : 0);
  let held = 0;
  const trials = 4000;
  for (let i = 0; i < trials; i++) {
    const iv = shiftInterval(Array.from({ length: 10 }, load), Array.from({ length: 10 }, load))!;
    if (iv[0] <= 0 && 0 <= iv[1]) held++;
  }
  assert.ok(held / trials >= 0.94 && held / trials <= 0.97, `A/A coverage ${held / trials}`);
});

test('every row gets exactly its loads a side, whatever they show; Do53 while any row needs it', () => {
  const b: Budget = { loads: 6, transports: ['dot', 'doh'] };
  const book = new LoadBook();
  const add = (side: 'do53' | 'dot' | 'doh', xs: (number | null)[]) => xs.forEach((x) => book.add('chromium', '1', side, 'cold', x));
  assert.equal(needsLoad(book, b, 'chromium', '1', 'do53', 'cold'), true);
  add('do53', [500, 501, 499]);
  add('dot', [600, 601, 599]);
  assert.equal(rowDone(book, b, 'chromium', '1', 'dot', 'cold'), false, 'tight after three loads: not done (no early stop)');
  assert.equal(needsLoad(book, b, 'chromium', '1', 'dot', 'cold'), true);
  add('dot', [600, 601, 599]);
  assert.equal(needsLoad(book, b, 'chromium', '1', 'dot', 'cold'), false, 'its loads reached');
  add('doh', [300, 900, null, 500, 1200, 100]);
  assert.equal(book.get('chromium', '1', 'doh', 'cold').attempts, 6, 'a failed load counts as an attempt');
  assert.equal(needsLoad(book, b, 'chromium', '1', 'doh', 'cold'), false);
  assert.equal(rowDone(book, b, 'chromium', '1', 'doh', 'cold'), false, 'Do53 has not had its loads yet');
  assert.equal(needsLoad(book, b, 'chromium', '1', 'do53', 'cold'), true);
  add('do53', [500, 500, 500]);
  assert.equal(rowDone(book, b, 'chromium', '1', 'doh', 'cold'), true);
  assert.equal(needsLoad(book, b, 'chromium', '1', 'do53', 'cold'), false);
});

test("a trace's gaps straddle every holder's idle limit, clear of each by 13 %", () => {
  const limits = [10_000, 60_000];
  const ranges = gapRanges(limits);
  assert.deepEqual(ranges, [{ min: 4000, max: 7000 }, { min: 11_500, max: 52_200 }, { min: 69_000, max: 81_000 }]);
  const gaps = gapSequence(ranges, 30, 5);
  assert.equal(gaps.length, 30);
  for (const g of gaps) for (const l of limits) assert.ok(g < l / 1.13 || g > l * 1.13, `${g} near ${l}`);
  for (let i = 0; i + 3 <= 30; i += 3) assert.equal(new Set(gaps.slice(i, i + 3).map((g) => ranges.findIndex((r) => g >= r.min && g <= r.max))).size, 3, 'each block holds every range once');
  assert.equal(gapRanges([20_000]).length, 3, 'one limit: below it twice, above it once');
  assert.throws(() => gapRanges([Infinity]), /finite idle limit/);
  // The server's limit ends the connections of holders without one of their own.
  assert.equal(idleLimitMs('doh', 'chromium', 'unbound', 20_000), 20_000);
  assert.equal(idleLimitMs('dot', 'chromium', 'stubby', 90_000), Math.min(90_000, idleLimitMs('dot', 'firefox', 'stubby', Infinity)));
  assert.equal(serverIdleFor({ scenarios: ['cold'], transports: ['dot'], dotStub: 'unbound' }), 20);
  assert.equal(serverIdleFor({ scenarios: ['cold'], transports: ['dot'], dotStub: 'unbound', serverIdleS: 45 }), 45);
});

test('rows: one per browser × page × transport × scenario, the prediction in the mode the scenario says', () => {
  const visit = (transport: Visit['transport'], onLoad: number, round: number, idle?: number): Visit => ({
    browser: 'chromium', page: '1', transport, scenario: 'expected', round, onLoad, error: null, startedAt: 0, endedAt: 1, openBefore: null,
    ...(idle !== undefined ? { pageRecord: { host: 'a.test', hosts: [], navigation: null, onLoadMs: onLoad, idleBeforeMs: idle } as unknown as Visit['pageRecord'] } : {}),
  });
  const run: ValidationRun = {
    format: 2, options: { browsers: ['chromium'], profiles: ['fiber'], pages: [1], hars: [], scenarios: ['expected'], transports: ['doh'], loads: 3, repeat: 1, seed: 1, dotStub: 'unbound', stubNoDelay: false },
    startedAt: '', finishedAt: '', machine: '',
    profiles: [{
      profile: profileByName('fiber'), pages: [{ id: '1', kind: 'synthetic', hosts: 1, url: 'http://x/' }], browserVersions: {}, serverIdleS: 20, queryTypes: {},
      visits: [visit('do53', 500, 1), visit('do53', 502, 2), visit('do53', 498, 3), visit('doh', 600, 1), visit('doh', 602, 2), visit('doh', 598, 3)],
    }],
  };
  const rows = analyse(run);
  assert.equal(rows.length, 1);
  // Two raw runs (one per profile) merged: both profiles' rows, the union of what ran.
  const other: ValidationRun = { ...run, options: { ...run.options, profiles: ['dsl'] }, startedAt: '2', finishedAt: '9', profiles: [{ ...run.profiles[0]!, profile: profileByName('dsl') }] };
  const merged = mergeRuns([{ ...run, startedAt: '1', finishedAt: '5' }, other]);
  assert.deepEqual(merged.options.profiles, ['fiber', 'dsl']);
  assert.deepEqual([merged.startedAt, merged.finishedAt], ['1', '9']);
  assert.deepEqual(analyse(merged).map((x) => x.profile), ['fiber', 'dsl']);
  assert.throws(() => mergeRuns([]), /no raw run/);
  // Two runs of one profile (say a later run adding loads): one profile, one row with every load.
  const more: ValidationRun = { ...run, profiles: [{ ...run.profiles[0]!, visits: [visit('do53', 501, 4), visit('doh', 601, 4)] }] };
  const topped = mergeRuns([run, more]);
  assert.equal(topped.profiles.length, 1);
  assert.deepEqual(analyse(topped).map((x) => x.loads), [{ do53: 4, candidate: 4, failed: 0 }]);
  assert.equal(run.profiles[0]!.visits.length, 6, 'the runs merged are left as they were');
  const [r] = rows;
  assert.deepEqual([r!.browser, r!.profile, r!.page, r!.transport, r!.scenario], ['chromium', 'fiber', '1', 'doh', 'expected']);
  assert.equal(r!.measured, 100);
  assert.deepEqual(r!.loads, { do53: 3, candidate: 3, failed: 0 });
  assert.equal(r!.predicted, null, 'no replay, no prediction');
  assert.equal(r!.within, null);
  // Expected: warm while the holder (with the server's limit) would still hold the connection, cold after.
  const ctx = { dotStub: 'unbound' as const, serverIdleMs: 20_000 };
  assert.equal(modeFor(visit('do53', 1, 1, 5_000), 'doh', 'expected', ctx), 'warm');
  assert.equal(modeFor(visit('do53', 1, 1, 25_000), 'doh', 'expected', ctx), 'cold');
  assert.equal(modeFor(visit('do53', 1, 1, 25_000), 'doh', 'warm', ctx), 'warm', 'the warm scenario is warm whatever the gap');
});

test('A/A controls: a second Do53 series against Do53 and a second DoT series against DoT, predicted 0; the naive rule beside the model', () => {
  const visit = (transport: Visit['transport'], onLoad: number, round: number): Visit => ({
    browser: 'firefox', page: '1', transport, scenario: 'cold', round, onLoad, error: null, startedAt: 0, endedAt: 1, openBefore: null,
  });
  const series = (transport: Visit['transport'], base: number) => Array.from({ length: 10 }, (_, i) => visit(transport, base + ((i * 7) % 10), i + 1));
  const run: ValidationRun = {
    format: 2, options: { browsers: ['firefox'], profiles: ['dsl'], pages: [1], hars: [], scenarios: ['cold'], transports: ['dot'], controls: ['do53-aa', 'dot-aa'], loads: 10, repeat: 1, seed: 1, dotStub: 'unbound', stubNoDelay: false },
    startedAt: '', finishedAt: '', machine: '',
    profiles: [{
      profile: profileByName('dsl'), pages: [{ id: '1', kind: 'synthetic', hosts: 1, url: 'http://x/' }], browserVersions: {}, serverIdleS: 20, queryTypes: {},
      // Do53 and its control alike; DoT 100 ms later, and its control another 300 ms later (a control that fails).
      visits: [...series('do53', 500), ...series('do53-aa', 500), ...series('dot', 600), ...series('dot-aa', 900)],
    }],
  };
  const rows = analyse(run);
  assert.deepEqual(rows.map((r) => [r.transport, r.control]), [['dot', false], ['do53-aa', true], ['dot-aa', true]]);
  const [dot, aa53, aaDot] = rows;
  const near = (x: number | null | undefined, y: number) => x != null && Math.abs(x - y) < 1e-9;
  assert.ok(near(dot!.naive?.delta, 2 * profileByName('dsl').rttMs), `naive: a cold DoT lookup costs 2 RTT (${dot!.naive?.delta})`);
  assert.ok(near(dot!.naive?.error, 2 * profileByName('dsl').rttMs - 100));
  assert.deepEqual(aa53!.predicted, { delta: 0, lower: 0, upper: 0 });
  assert.equal(aa53!.measured, 0);
  assert.equal(aa53!.inside, true, 'the same series again: 0 inside its interval');
  assert.equal(aaDot!.measured, 300, 'the DoT control is measured against DoT, not Do53');
  assert.equal(aaDot!.inside, false, 'a control whose series differ misses: the check can fail');
  const text = report(run, 'test');
  assert.match(text, /A\/A controls\*\* \(the same path twice; true change 0\): 0 inside the interval in \*\*1 of 2\*\* control rows \(50 %; goal ≥ 90 % of ≥ 30: not measured, 2 of the 30 needed\)/);
  const json = JSON.parse(rowsJson(run, 'test')) as { summary: { rows: number }; controls: { rows: number; inside: number } };
  assert.equal(json.summary.rows, 1, 'controls are not counted as the model\'s rows');
  assert.deepEqual([json.controls.rows, json.controls.inside], [2, 1]);
});

test('replays: at most REPLAYS_PER_ROW Do53 visits per browser × page × scenario, spread over its loads', () => {
  const v = (browser: string, page: string, round: number) => ({ browser, page, scenario: 'cold', transport: 'do53', round }) as unknown as Visit;
  const many = Array.from({ length: 20 }, (_, i) => v('chromium', '1', i + 1));
  const few = Array.from({ length: 3 }, (_, i) => v('firefox', '1', i + 1));
  const chosen = replayed([...many, ...few]);
  assert.equal(chosen.length, REPLAYS_PER_ROW + 3);
  assert.deepEqual(chosen.filter((x) => x.browser === 'chromium').map((x) => x.round), [1, 3, 6, 8, 11, 13, 16, 18]);
});

test("the query log: each query goes to the visit whose window holds it; the browser's own lookups are kept apart", () => {
  const visit = (startedAt: number) => ({ startedAt } as Visit);
  const a = visit(1000);
  const b = visit(2000);
  const log = new QueryLog();
  log.feed('[INFO] dnscost-query tls A p1-h0.val.example.\n[INFO] dnscost-query tls A firefox.settings.services', 1100);
  log.feed('.mozilla.com.\n[INFO] dnscost-query tls HTTPS warm-3.val.example.\n', 1150);
  log.feed('[INFO] dnscost-query dns AAAA P1-H0.val.example.\n[INFO] dnscost-query dns A warm-t1.val.example.\n', 2500);
  const totals = attribute(log.entries, [b, a], (n) => n.startsWith('p1-'));
  assert.deepEqual(totals, { tls: { A: 1 }, dns: { AAAA: 1 } });
  assert.deepEqual(a.asked, { tls: { 'p1-h0.val.example': { A: 1 } } });
  assert.deepEqual(a.warmScheme, ['tls']);
  assert.deepEqual(a.background, [{ atMs: 150, scheme: 'tls', qtype: 'A', name: 'firefox.settings.services.mozilla.com' }]);
  // A trace's opening lookup is nobody's, neither warm-up nor background.
  assert.deepEqual(b.asked, { dns: { 'p1-h0.val.example': { AAAA: 1 } } });
  assert.equal(b.warmScheme, undefined);
  assert.equal(b.background, undefined);
});

test('the prediction of a row whose loads mix states is the shift that mixture shows, not the median prediction', () => {
  // 20 Do53 loads; their candidate twins pay +100 (warm) or, two in five, +300 (cold).
  const a = Array.from({ length: 20 }, (_, i) => 1500 + ((i * 7) % 11) * 9);
  const delta = (i: number) => (i % 5 < 2 ? 300 : 100);
  const b = a.map((x, i) => x + delta(i));
  const priced = a.map((onLoad, i) => ({ onLoad, estimate: { delta: delta(i), lower: delta(i) - 5, upper: delta(i) + 5 } }));
  const measured = shift(a, b)!;
  assert.equal(predictedShift(priced, (e) => e.delta), measured, 'exact per-load predictions give the measured shift');
  assert.ok(measured > 110, `the cold loads move the shift off the median prediction, 100 (${measured})`);
  assert.equal(predictedShift(priced, (e) => e.lower), shift(a, b.map((x) => x - 5)));
  // One state for every load: the prediction is that state's change exactly, whatever the onLoads.
  const warm = a.map((onLoad) => ({ onLoad, estimate: { delta: 100, lower: 90, upper: 110 } }));
  assert.equal(predictedShift(warm, (e) => e.delta), 100);
});

test("a trace's prediction prices every Do53 load in each candidate load's own mode", () => {
  const est = (d: number) => ({ delta: d, lower: d - 5, upper: d + 5 });
  const base = [1000, 1010, 1020].map((onLoad) => ({ onLoad, byMode: { cold: est(300), warm: est(100) } }));
  const of = (modes: ('cold' | 'warm')[]) => predictedShift(pricedPairs(base, modes).map((x) => ({ onLoad: x.onLoad, estimate: x.value })), (e) => e.delta);
  // Five candidate loads after long gaps (the Do53 side, with more loads, had short gaps too): all cold, so 300.
  assert.equal(pricedPairs(base, ['cold', 'cold', 'cold', 'cold', 'cold']).length, 15);
  assert.equal(of(['cold', 'cold', 'cold', 'cold', 'cold']), 300);
  assert.equal(of(['warm', 'warm']), 100);
  // Two of five cold: the shift that mixture shows against the Do53 loads.
  const a = base.map((b) => b.onLoad);
  const mix: ('cold' | 'warm')[] = ['cold', 'warm', 'warm', 'cold', 'warm'];
  assert.equal(of(mix), shift(a, mix.flatMap((m) => a.map((x) => x + (m === 'cold' ? 300 : 100)))));
  assert.ok(of(mix)! > 100 && of(mix)! < 300);
  // A visit with no estimate in a mode adds nothing in it.
  assert.equal(pricedPairs([{ onLoad: 1, byMode: { cold: null, warm: est(1) } }], ['cold', 'warm']).length, 1);
});

test("the page record has every host the browser's network events showed: a redirected navigation's first leg, a subresource's redirect target", () => {
  const t: PageTimings = {
    finalUrl: 'https://b.example/',
    navigation: { startTime: 0, domainLookupStart: 514, domainLookupEnd: 514, redirectEnd: 0, loadEventStart: 2000 },
    firstPaint: null, firstContentfulPaint: null,
    resources: [{ name: 'https://cdn.example/a.js', startTime: 700, domainLookupStart: 701, domainLookupEnd: 795, responseEnd: 900 }],
    requests: [
      { name: 'https://a.example/', startTime: 2, viaRedirect: false },
      { name: 'https://b.example/', startTime: 510, viaRedirect: true },
      { name: 'https://cdn.example/a.js', startTime: 703, viaRedirect: false },
      { name: 'https://w.example/widget', startTime: 1000, viaRedirect: false },
      { name: 'https://shim.example/s.js', startTime: 1300, viaRedirect: true },
    ],
  };
  const r = pageRecordOf(t, 'chromium');
  const by = new Map(r.hosts.map((h) => [h.name, h]));
  assert.equal(r.host, 'b.example');
  assert.deepEqual([...by.keys()].sort(), ['a.example', 'b.example', 'cdn.example', 'shim.example', 'w.example']);
  // The first leg is needed first and its lookup unknown; Resource Timing wins where it has the host.
  assert.equal(by.get('a.example')!.firstNeededMs, 2);
  assert.equal(by.get('a.example')!.lookup, null);
  assert.equal(by.get('b.example')!.viaRedirect, true);
  assert.equal(by.get('cdn.example')!.firstNeededMs, 700);
  assert.equal(by.get('cdn.example')!.lookup!.durationMs, 94);
  assert.equal(by.get('shim.example')!.viaRedirect, true);
  assert.deepEqual(by.get('a.example')!.schemes, ['https']);
  // Without network events the record is Resource Timing's alone (the first leg unseen).
  assert.equal(pageRecordOf({ ...t, requests: undefined }, 'chromium').hosts.some((h) => h.name === 'a.example'), false);
});

test("each request's type comes from its Resource Timing entry's initiatorType where that is sure: an <img>'s host is a leaf", () => {
  const t: PageTimings = {
    finalUrl: 'https://b.example/',
    navigation: { startTime: 0, domainLookupStart: 5, domainLookupEnd: 25, loadEventStart: 2000 },
    firstPaint: null, firstContentfulPaint: null,
    resources: [
      { name: 'https://img.example/a.png', startTime: 700, domainLookupStart: 701, domainLookupEnd: 795, responseEnd: 900, initiatorType: 'img' },
      { name: 'https://cdn.example/a.js', startTime: 700, domainLookupStart: 701, domainLookupEnd: 795, responseEnd: 900, initiatorType: 'script' },
      { name: 'https://css.example/f.woff2', startTime: 800, domainLookupStart: 801, domainLookupEnd: 895, responseEnd: 950, initiatorType: 'css' },
    ],
  };
  const types = Object.fromEntries(pageRecordOf(t, 'firefox').hosts.map((h) => [h.name, h.types]));
  assert.deepEqual(types, { 'b.example': { main_frame: 1 }, 'img.example': { image: 1 }, 'cdn.example': { script: 1 }, 'css.example': { other: 1 } });
  assert.deepEqual(['img', 'video', 'beacon', 'script', 'iframe', 'fetch', 'link', 'css', undefined].map(requestTypeOf),
    ['image', 'media', 'beacon', 'script', 'sub_frame', 'xmlhttprequest', 'other', 'other', 'other']);
});

test('the per-lookup table sums each profile × browser × path over its rows, controls included, and is left out without lookups', () => {
  const row = (profile: string, transport: string, within: number, n: number, slower: number, faster: number) =>
    ({ profile, browser: 'chromium', transport, lookups: { n, within, slower, faster, worst: [] } }) as unknown as Row;
  const text = lookupTable([row('dsl', 'dot', 3, 10, 6, 1), row('dsl', 'dot', 5, 10, 4, 1), row('dsl', 'do53-aa', 9, 10, 1, 0), row('fiber', 'dot', 0, 0, 0, 0)]);
  assert.match(text, /\| dsl \| chromium \| do53-aa \| 9\/10 \| 90 % \| 1 \| 0 \|\n\| dsl \| chromium \| dot \| 8\/20 \| 40 % \| 10 \| 2 \|\n/);
  assert.doesNotMatch(text, /fiber/, 'a row that compared no lookup adds no line');
  assert.equal(lookupTable([row('dsl', 'dot', 0, 0, 0, 0)]), '');
});
