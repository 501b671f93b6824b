import { test } from 'vitest';
import assert from 'node:assert/strict';
import { combos, comboStats, CSV_COLUMNS, csvField, defaultNetwork, filterEntries, inView, lookupCdf, networkOptions, onLoadDeltas, parseJsonExport, recommend, sharedCdf, signedMs, siteFromInput, toCsv, toJson, whatIfMedians, windowFilter, type ComboStats, type Names } from './analysis.js';
import { testI18n } from '../i18n-fixtures.js';

const en = testI18n('en');
import { HISTORY_VERSION, isHistoryEntry, LOOKUP_BUCKETS_MS, lookupHistogram, type HistoryCell, type HistoryEntry } from '../history.js';
import type { Mode, TransportId } from '../../../common/transports.js';

const NAMES: Names = { resolver: (id) => ({ cloudflare: 'Cloudflare', google: 'Google Public DNS' })[id] ?? id, transport: (t) => ({ udp: 'Do53/UDP', tcp: 'Do53/TCP', dot: 'DoT', doh: 'DoH', doh1: 'DoH/1.1', doq: 'DoQ', doh3: 'DoH3' })[t] };

function cell(resolver: string, transport: TransportId, mode: Mode, delta: number | null, over: Partial<HistoryCell> = {}): HistoryCell {
  return {
    resolver, transport, mode, hosts: 3, failures: 0, lookups: 18, histogram: lookupHistogram([5, 12, 40]), p5Ms: 5, medianMs: 12, p95Ms: 40,
    onLoad: delta === null ? null : { delta, lower: delta - 5, upper: delta + 5 },
    verdict: delta === null ? 'unknown' : Math.abs(delta) < 30 ? 'indistinguishable' : delta > 0 ? 'slower' : 'faster',
    bytesPerLookup: 150, packetsPerLookup: 2.5, ...over,
  };
}

function entry(id: string, at: number, host: string, cells: HistoryCell[]): HistoryEntry {
  return { version: HISTORY_VERSION, id, at, host, trigger: 'auto', onLoadMs: 800, pageHosts: 4, measuredHosts: 3, cells };
}

test('time windows and custom bounds', () => {
  const now = 1_800_000_000_000;
  const cases: Array<[Parameters<typeof windowFilter>, ReturnType<typeof windowFilter>]> = [
    [['24h', now], { since: now - 86_400_000 }],
    [['7d', now], { since: now - 7 * 86_400_000 }],
    [['30d', now], { since: now - 30 * 86_400_000 }],
    [['all', now], {}],
    [['custom', now, { from: 5, to: 9 }], { since: 5, until: 9 }],
    [['custom', now, { from: null, to: 9 }], { until: 9 }],
    [['custom', now, { from: Number.NaN }], {}],
  ];
  for (const [args, want] of cases) assert.deepEqual(windowFilter(...args), want, JSON.stringify(args));
});

test('networks: offered latest first with their pages; the dashboard opens on the latest when there are several; the filter', () => {
  const home = { id: 'aaaaaaaaaaaaaaaa', description: 'gateway 192.168.1.1 on wlan0 · 192.168.1.0/24 · DNS 192.168.1.1' };
  const phone = { id: 'bbbbbbbbbbbbbbbb', description: '172.20.10.0/28 · DNS 172.20.10.1' };
  const on = (e: HistoryEntry, network?: typeof home): HistoryEntry => (network ? { ...e, network } : e);
  const es = [
    on(entry('1', 100, 'a.example', []), home), on(entry('2', 200, 'b.example', []), phone), entry('3', 300, 'c.example', []),
    on(entry('4', 400, 'a.example', []), home), on(entry('5', 250, 'd.example', []), phone),
  ];
  assert.ok(es.every(isHistoryEntry), 'entries with and without a network are valid');
  assert.deepEqual(networkOptions(es).map((n) => [n.id, n.pages, n.lastAt]), [['aaaaaaaaaaaaaaaa', 2, 400], ['unknown', 1, 300], ['bbbbbbbbbbbbbbbb', 2, 250]]);
  assert.equal(networkOptions(es)[1]!.description, 'network not recorded');
  assert.equal(defaultNetwork(networkOptions(es)), home.id);
  assert.equal(defaultNetwork(networkOptions(es.filter((e) => e.network?.id === phone.id))), '', 'one network: all');
  assert.equal(defaultNetwork(networkOptions([])), '');
  assert.deepEqual(filterEntries(es, { network: phone.id }).map((e) => e.id), ['2', '5']);
  assert.deepEqual(filterEntries(es, { network: 'unknown' }).map((e) => e.id), ['3']);
  assert.deepEqual(filterEntries(es, { network: phone.id, site: 'b.example' }).map((e) => e.id), ['2']);
  // A stored network must be well formed.
  assert.equal(isHistoryEntry({ ...es[0]!, network: { id: 'not-hex', description: '' } }), false);
  assert.equal(isHistoryEntry({ ...es[0]!, network: { ...home, extra: 1 } }), false);
  // The CSV carries it.
  const csv = toCsv([es[0]!, es[2]!]).split('\r\n');
  const col = CSV_COLUMNS.indexOf('network_id');
  assert.equal(csv[1]!.split(',')[col], home.id);
  assert.equal(csv[2]!.split(',')[col], '');
});

test('a typed site becomes a host', () => {
  const cases: Array<[string, string]> = [
    ['', ''], ['  Example.ORG ', 'example.org'], ['https://www.example.org/path?q#x', 'www.example.org'], ['example.org.', 'example.org'],
    ['example.org:8443', 'example.org'], ['*.example.org', 'example.org'], ['.example.org', 'example.org'],
  ];
  for (const [input, want] of cases) assert.equal(siteFromInput(input), want, input);
});

test('filtering agrees with the background rule: window inclusive, site and its subdomains', () => {
  const es = [entry('a', 100, 'example.org', []), entry('b', 200, 'www.example.org', []), entry('c', 300, 'notexample.org', []), entry('d', 400, 'other.net', [])];
  const cases: Array<[Parameters<typeof filterEntries>[1], string[]]> = [
    [{}, ['a', 'b', 'c', 'd']],
    [{ since: 200 }, ['b', 'c', 'd']],
    [{ until: 200 }, ['a', 'b']],
    [{ since: 150, until: 350 }, ['b', 'c']],
    [{ site: 'example.org' }, ['a', 'b']],
    [{ site: 'www.example.org' }, ['b']],
    [{ site: 'example.org', since: 150 }, ['b']],
    [{ site: 'nothing.test' }, []],
  ];
  for (const [f, want] of cases) assert.deepEqual(filterEntries(es, f).map((e) => e.id), want, JSON.stringify(f));
});

test('combos: resolvers in the given order (unknown ones after, by name), transports in TRANSPORT_IDS order', () => {
  const es = [entry('a', 1, 'x.test', [cell('zeta', 'doh', 'cold', 1), cell('google', 'dot', 'warm', 1), cell('cloudflare', 'doh', 'cold', 1)]),
    entry('b', 2, 'x.test', [cell('cloudflare', 'udp', 'cold', 0), cell('alpha', 'udp', 'cold', 0)])];
  assert.deepEqual(combos(es, ['cloudflare', 'google']).map((c) => `${c.resolver}/${c.transport}`), ['cloudflare/udp', 'cloudflare/doh', 'google/dot', 'alpha/udp', 'zeta/doh']);
});

test('onLoad deltas per combo and mode, sorted; cells without an estimate left out', () => {
  const es = [
    entry('a', 1, 'x.test', [cell('c', 'doh', 'cold', 40), cell('c', 'doh', 'warm', 3), cell('c', 'udp', 'cold', 0)]),
    entry('b', 2, 'x.test', [cell('c', 'doh', 'cold', -10), cell('c', 'doh', 'warm', null), cell('c', 'udp', 'cold', 0)]),
  ];
  const order = combos(es);
  assert.deepEqual(onLoadDeltas(es, 'cold', order), [[0, 0], [-10, 40]]);
  assert.deepEqual(onLoadDeltas(es, 'warm', order), [[], [3]]);
});

test('shared CDF: step values on the union of x, empty samples null, capped to quantiles', () => {
  const cases: Array<{ samples: number[][]; max?: number; x: number[]; y: (number | null)[][] }> = [
    { samples: [[1, 2, 3, 4]], x: [1, 2, 3, 4], y: [[0.25, 0.5, 0.75, 1]] },
    { samples: [[1, 3], [2, 2]], x: [1, 2, 3], y: [[0.5, 0.5, 1], [0, 1, 1]] },
    { samples: [[5], []], x: [5], y: [[1], [null]] },
    { samples: [[]], x: [], y: [[]] },
    { samples: [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]], max: 3, x: [0, 5, 10], y: [[1 / 11, 6 / 11, 1]] },
  ];
  for (const c of cases) assert.deepEqual(sharedCdf(c.samples, c.max), { x: c.x, y: c.y }, JSON.stringify(c.samples));
  const big = Array.from({ length: 5000 }, (_, i) => i);
  const r = sharedCdf([big, big.map((v) => v * 2)], 1000);
  assert.ok(r.x.length <= 1000 && r.x[0] === 0 && r.x[r.x.length - 1] === 9998);
  assert.equal(r.y[1]![r.x.length - 1], 1);
});

test('lookup CDF pooled from histograms per transport, at the bucket bounds', () => {
  const es = [
    entry('a', 1, 'x.test', [cell('c', 'udp', 'cold', 0, { histogram: lookupHistogram([0.5, 3]) }), cell('g', 'udp', 'cold', 0, { histogram: lookupHistogram([30, 9000]) }),
      cell('c', 'doh', 'warm', 0, { histogram: lookupHistogram([7]) })]),
  ];
  const cold = lookupCdf(es, 'cold');
  assert.deepEqual(cold.x, [...LOOKUP_BUCKETS_MS]);
  assert.equal(cold.series.length, 1);
  assert.equal(cold.series[0]!.transport, 'udp');
  assert.equal(cold.series[0]!.n, 4);
  // ≤1: 1, ≤2: 1, ≤5: 2, ≤10: 2, ≤20: 2, ≤50: 3 … ≤5000: 3 (9000 ms is beyond the axis).
  assert.deepEqual(cold.series[0]!.y, [0.25, 0.25, 0.5, 0.5, 0.5, 0.75, 0.75, 0.75, 0.75, 0.75, 0.75, 0.75]);
  assert.deepEqual(lookupCdf(es, 'warm').series.map((s) => [s.transport, s.n]), [['doh', 1]]);
  assert.deepEqual(lookupCdf([], 'cold').series, []);
});

test('combo statistics: failures, rates, median and shares of the onLoad change', () => {
  const es = [10, 20, 50, -40, null].map((d, i) => entry(`p${i}`, i, 'x.test', [cell('c', 'doh', 'cold', d, { failures: i === 0 ? 2 : 0, lookups: 10, verdict: i === 0 ? 'fails' : d === null ? 'unknown' : 'slower' })]));
  const all = comboStats(es, combos(es));
  const s = all.find((x) => x.mode === 'cold');
  assert.deepEqual({ ...s }, {
    resolver: 'c', transport: 'doh', mode: 'cold', pages: 5, estimated: 4, lookups: 50, failures: 2, failureRate: 0.04, pagesWithFailures: 1, pagesFailing: 1,
    medianDelta: 15, p95Delta: 45.5, indistinguishable: 0.5, slower: 0.25, faster: 0.25,
  });
  // Entries from before the expected state was kept count their cold cells as expected.
  assert.deepEqual({ ...all.find((x) => x.mode === 'expected') }, { ...s, mode: 'expected' });
  assert.deepEqual(all.map((x) => x.mode), ['expected', 'cold']);
});

test('the expected view takes each page\'s cell in the state its visit would have had', () => {
  const es = [
    entry('p0', 0, 'x.test', [{ ...cell('c', 'doh', 'cold', 100), expected: false }, { ...cell('c', 'doh', 'warm', 10), expected: true }]),
    entry('p1', 1, 'x.test', [{ ...cell('c', 'doh', 'cold', 120), expected: true }, { ...cell('c', 'doh', 'warm', 12), expected: false }]),
  ];
  assert.deepEqual(onLoadDeltas(es, 'expected', combos(es)), [[10, 120]]);
  assert.deepEqual(onLoadDeltas(es, 'cold', combos(es)), [[100, 120]]);
  assert.deepEqual(onLoadDeltas(es, 'warm', combos(es)), [[10, 12]]);
  const expected = comboStats(es, combos(es)).find((x) => x.mode === 'expected')!;
  assert.equal(expected.pages, 2);
  assert.equal(expected.medianDelta, 65);
  assert.equal(inView({ mode: 'warm' }, 'expected'), false, 'no flag: the cold cell stands for the visit');
});

function stats(transport: TransportId, medianDelta: number | null, over: Partial<ComboStats> = {}): ComboStats {
  return {
    resolver: 'cloudflare', transport, mode: 'warm', pages: 20, estimated: 20, lookups: 1000, failures: 0, failureRate: 0, pagesWithFailures: 0, pagesFailing: 0,
    medianDelta, p95Delta: medianDelta === null ? null : medianDelta + 20, indistinguishable: 0.9, slower: 0.1, faster: 0, ...over,
  };
}

test('recommendation: table of situations', () => {
  const cases: Array<{ name: string; stats: ComboStats[]; pages: number; kind: string; best?: string; says: RegExp[] }> = [
    { name: 'nothing measured', stats: [], pages: 0, kind: 'nothing', says: [/Nothing measured yet/] },
    { name: 'only plain DNS', stats: [stats('udp', 0), stats('tcp', 2)], pages: 20, kind: 'no-encrypted', says: [/No encrypted transport/] },
    { name: 'other mode only', stats: [stats('doh', 5, { mode: 'cold' })], pages: 20, kind: 'no-encrypted', says: [/warm/] },
    { name: 'too few pages', stats: [stats('doh', 5, { estimated: 3 })], pages: 3, kind: 'too-few', says: [/at least 5 pages/, /has 3/] },
    {
      name: 'cheap DoH', stats: [stats('udp', 0), stats('dot', 25, { indistinguishable: 0.6, slower: 0.4 }), stats('doh', 12, { indistinguishable: 0.87, slower: 0.13 })], pages: 20, kind: 'cheap', best: 'doh',
      says: [/DoH on Cloudflare would add a median 12 ms to your pages' onLoad \(within ±30 ms, indistinguishable, for 87 % of pages; noticeably slower for 13 %\)/, /costs you little/, /Next best: DoT on Cloudflare, a median \+25 ms/],
    },
    {
      name: 'median cheap but too many pages slower', stats: [stats('doh', 12, { indistinguishable: 0.7, slower: 0.3 })], pages: 20, kind: 'costly', best: 'doh', says: [/noticeably slow/, /least costly/],
    },
    { name: 'costly everywhere', stats: [stats('dot', 80), stats('doh', 45, { resolver: 'google' })], pages: 20, kind: 'costly', best: 'doh', says: [/DoH on Google Public DNS would add a median 45 ms/, /Next best: DoT on Cloudflare, a median \+80 ms/] },
    { name: 'faster', stats: [stats('doh', -8)], pages: 20, kind: 'cheap', says: [/take a median 8\.0 ms off/] },
    {
      name: 'cheapest fails too often', stats: [stats('doh', 2, { failureRate: 0.05, failures: 50 }), stats('dot', 20)], pages: 20, kind: 'cheap', best: 'dot',
      says: [/DoT on Cloudflare/, /Not considered, as they failed more than 1\.0 % of lookups: DoH on Cloudflare \(5\.0 %\)/],
    },
    { name: 'all unreliable', stats: [stats('doh', 2, { failureRate: 0.5 }), stats('dot', 20, { failureRate: 0.2 })], pages: 20, kind: 'unreliable', best: 'dot', says: [/failed 20 %/, /blocked or unreliable/] },
  ];
  for (const c of cases) {
    const r = recommend(c.stats, 'warm', c.pages, NAMES, en);
    assert.equal(r.kind, c.kind, c.name);
    if (c.best) assert.equal(r.best?.transport, c.best, c.name);
    const text = r.sentences.join(' ');
    for (const re of c.says) assert.match(text, re, `${c.name}: ${text}`);
  }
});

test('signed ms', () => {
  for (const [x, want] of [[12.4, '+12 ms'], [-4.5, '−4.5 ms'], [0, '0.0 ms'], [150, '+150 ms']] as const) assert.equal(signedMs(x), want);
});

test('CSV fields: quoting and formula-looking text', () => {
  const cases: Array<[string | number | null, string]> = [
    [null, ''], [12.5, '12.5'], [-3, '-3'], [Number.NaN, ''], ['plain', 'plain'], ['a,b', '"a,b"'], ['say "hi"', '"say ""hi"""'], ['two\nlines', '"two\nlines"'],
    ['=1+1', "'=1+1"], ['-cmd', "'-cmd"], ['@x', "'@x"], ['+x,y', `"'+x,y"`],
  ];
  for (const [v, want] of cases) assert.equal(csvField(v), want, String(v));
});

test('CSV export: a header and one row per entry × cell', () => {
  const es = [entry('a', 0, 'x.test', [cell('c', 'udp', 'cold', 0), cell('c', 'doh', 'warm', null)]), entry('b', 1000, 'y,test', [])];
  const lines = toCsv(es).split('\r\n');
  assert.equal(lines.pop(), '');
  assert.equal(lines[0], CSV_COLUMNS.join(','));
  assert.equal(lines.length, 1 + 2 + 1);
  for (const l of lines) assert.equal(l.split(',').length, CSV_COLUMNS.length + (l.includes('"y,test"') ? 1 : 0));
  assert.equal(lines[1], 'a,0,1970-01-01T00:00:00.000Z,x.test,auto,800,4,3,,,c,udp,cold,3,0,18,5,12,40,0,-5,5,indistinguishable,150,2.5,0,0,1,0,1,1,0,0,0,0,0,0,0');
  assert.match(lines[2]!, /,c,doh,warm,3,0,18,5,12,40,,,,unknown,/);
  assert.match(lines[3]!, /^b,1000,.*,"y,test",auto,800,4,3,,,,/);
});

test('JSON export round-trips and refuses what is not one', () => {
  const es = [entry('a', 5, 'x.test', [cell('c', 'dot', 'cold', 33)]), entry('b', 6, 'y.test', [])];
  for (const e of es) assert.ok(isHistoryEntry(e));
  const text = toJson(es, { since: 1, site: 'x.test' }, 1_800_000_000_000);
  assert.deepEqual(parseJsonExport(text), es);
  assert.deepEqual(JSON.parse(text).filter, { since: 1, site: 'x.test' });
  assert.throws(() => parseJsonExport('{"format":"other","version":1,"entries":[]}'), /not a dnscost-history/);
  assert.throws(() => parseJsonExport(JSON.stringify({ format: 'dnscost-history', version: 1, entries: [{ id: 'x' }] })), /entries\[0\]/);
});

test('the recommendation in German, numbers in the German locale', () => {
  const de = testI18n('de');
  const r = recommend([stats('dot', 25, { mode: 'expected', indistinguishable: 0.6, slower: 0.4 }), stats('doh', 12.5, { mode: 'expected', indistinguishable: 0.875, slower: 0.125, failureRate: 0.0042 })], 'expected', 20, NAMES, de);
  assert.equal(r.sentences[0], 'Auf den 20 Seiten, die Sie hier gemessen haben (mit den Verbindungen, die Ihr Surfen gehabt hätte), würde DoH bei Cloudflare den onLoad Ihrer Seiten ' +
    'im Median um 13 ms verzögern (innerhalb ±30 ms, also nicht unterscheidbar, bei 88 % der Seiten; spürbar langsamer bei 13 %); 0,4 % seiner Abfragen schlugen fehl.');
  assert.match(r.sentences.join(' '), /Zweitbeste Wahl: DoT bei Cloudflare, im Median \+25 ms\./);
});

test("on another network: per combo in the view, the medians here and there over the pages that have both; older entries without it count for neither", () => {
  const entries = [
    entry('a', 1, 'a.example', [cell('cloudflare', 'dot', 'cold', 40, { expected: true, whatIf: { '4g': 120, fiber: 20 } }), cell('cloudflare', 'udp', 'cold', 0, { expected: true, whatIf: { '4g': 0 } })]),
    entry('b', 2, 'b.example', [cell('cloudflare', 'dot', 'cold', 60, { expected: true, whatIf: { '4g': 200, fiber: null } })]),
    entry('c', 3, 'c.example', [cell('cloudflare', 'dot', 'cold', 80, { expected: true, whatIf: { '4g': 260 } })]),
    // Measured before the what-if was kept: no estimate there.
    entry('d', 4, 'd.example', [cell('cloudflare', 'dot', 'cold', 1000, { expected: true })]),
    // Warm: not in the cold view.
    entry('e', 5, 'e.example', [cell('cloudflare', 'dot', 'warm', 5, { whatIf: { '4g': 15 } })]),
  ];
  const order = [{ resolver: 'cloudflare', transport: 'dot' as const }, { resolver: 'cloudflare', transport: 'udp' as const }, { resolver: 'google', transport: 'dot' as const }];
  assert.deepEqual(whatIfMedians(entries, 'cold', order, '4g'), [{ pages: 3, here: 60, there: 200 }, { pages: 1, here: 0, there: 0 }, { pages: 0, here: null, there: null }]);
  assert.deepEqual(whatIfMedians(entries, 'cold', order, 'fiber')[0], { pages: 1, here: 40, there: 20 }, 'a null estimate there is no estimate');
  assert.deepEqual(whatIfMedians(entries, 'warm', order, '4g')[0], { pages: 1, here: 5, there: 15 });
  assert.equal(isHistoryEntry(entries[0]), true, 'a cell with what-if estimates is a history entry');
  assert.equal(isHistoryEntry({ ...entries[0]!, cells: [cell('x', 'dot', 'cold', 1, { whatIf: { moon: 3 } as never })] }), false, 'a network it does not know is not');
});
