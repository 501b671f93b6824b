// What the popup says it compares with: the person's current DNS whenever it was measured (and whether it is
// already encrypted), otherwise which replay stood in for it; and when the browser already does DNS over HTTPS, that
// the DoH rows are what the person pays now.
import assert from 'node:assert/strict';
import { test } from 'vitest';
import type { BrowserDoh, CurrentDns } from '../../../common/schema.js';
import type { MeasurementMeta } from '../messages/measure.js';
import { browserDohWords, comparedWith, expectedWhy } from './cost-view.js';
import { testI18n } from '../i18n-fixtures.js';

const en = testI18n('en');
const de = testI18n('de');

const plan = (currentDns: CurrentDns | null): Pick<MeasurementMeta, 'plan'> => ({
  plan: {
    hosts: [], qtypes: ['A'], modes: ['cold'], repeat: 1, prime: true, schedule: 'replay', internalAllowed: false, skipped: [],
    resolvers: [{ id: 'system', name: 'your current DNS (192.0.2.53, through systemd-resolved on 127.0.0.53)', transports: ['udp', 'tcp'] }, { id: 'lab', name: 'Lab', transports: ['udp', 'dot'] }],
    currentDns,
  },
});
const current: CurrentDns = { source: 'resolvectl status', servers: [{ address: '192.0.2.53', port: 53 }], search: [], stub: { address: '127.0.0.53', software: 'systemd-resolved' }, encrypted: null, description: 'x' };

test('the panel names the baseline: your current DNS, already encrypted or not; else the replay that stood in', () => {
  assert.equal(comparedWith(plan(current), { resolver: 'system', transport: 'udp' }, en), 'Compared with your current DNS (192.0.2.53, through systemd-resolved on 127.0.0.53), replayed the same way.');
  assert.match(
    comparedWith(plan({ ...current, encrypted: { transport: 'dot', by: 'systemd-resolved', opportunistic: false } }), { resolver: 'system', transport: 'dot' }, en),
    /^Compared with your current DNS .* It is already encrypted \(DNS over TLS through systemd-resolved\): the changes below are against it, not a switch from plain DNS\.$/,
  );
  assert.match(comparedWith(plan(null), { resolver: 'lab', transport: 'udp' }, en), /^Compared with Lab over plain DNS over UDP \(your current DNS was not measured\)/);
  assert.match(comparedWith(plan(null), undefined, en), /No plain-UDP replay/);
});

test('the panel says which connection state each transport would have had at this visit, and why', () => {
  const page = (idleBeforeMs: number | null, browser: 'chromium' | 'firefox') => ({ page: { idleBeforeMs, browser } as MeasurementMeta['page'] });
  const soon = expectedWhy(page(4_000, 'chromium'), ['udp', 'dot', 'doh'], null, en);
  assert.match(soon, /^Your browser had been idle 4 s before this page, so the connection would have been: /);
  assert.match(soon, /DoT open \(warm\), as systemd-resolved \(DNS over TLS\) keeps it 10 s/);
  assert.match(soon, /DoH open \(warm\), as Chromium's DNS over HTTPS keeps it until the server closes it/);
  assert.doesNotMatch(soon, /Do53/, 'plain DNS has no connection to keep');
  const later = expectedWhy(page(30_000, 'chromium'), ['dot', 'doh'], 'unbound', en);
  assert.match(later, /DoT open \(warm\), as unbound \(DNS over TLS\) keeps it 60 s/);
  assert.match(expectedWhy(page(90_000, 'firefox'), ['dot'], 'unbound', en), /DoT closed \(cold\)/);
  assert.match(expectedWhy(page(null, 'firefox'), ['doh'], null, en), /^This was the first page since your browser started, .*DoH closed \(cold\)/);
  assert.equal(expectedWhy(page(1_000, 'firefox'), ['udp', 'tcp'], null, en), '');
});

test("the panel says when the browser's lookups already go over DoH, instead of pricing a switch that already happened", () => {
  const doh = (d: Partial<BrowserDoh>): BrowserDoh => ({
    browser: 'chromium', product: 'Chromium', mode: 'secure', active: true, templates: ['https://doh.example/dns-query{?dns}'],
    source: '/etc/chromium/policies/managed/doh.json', setBy: 'policy', fallback: false, upgradedFrom: null, ...d,
  });
  const withDoh = (d: BrowserDoh | null) => ({ plan: { ...plan(current).plan, browserDoh: d } });
  const secure = comparedWith(withDoh(doh({})), { resolver: 'system', transport: 'udp' }, en);
  assert.equal(
    secure,
    'Compared with your current DNS (192.0.2.53, through systemd-resolved on 127.0.0.53), replayed the same way. ' +
      'Your browser already sends its lookups over DNS over HTTPS (https://doh.example/dns-query{?dns}, set by policy): the DoH rows are roughly what you pay now, not a switch; the plain rows show what turning it off would change.',
  );
  assert.match(
    browserDohWords(doh({ browser: 'firefox', product: 'Firefox', mode: 'automatic', fallback: true, setBy: 'settings', source: '/home/a/.mozilla/firefox/x.default/prefs.js' }), en),
    /^Your browser already sends its lookups over DNS over HTTPS first \(https:\/\/doh\.example\/dns-query\{\?dns\}, set in prefs\.js\), and over plain DNS when that fails: /,
  );
  assert.match(
    browserDohWords(doh({ mode: 'automatic', fallback: true, setBy: 'default', source: 'default', templates: ['https://dns.google/dns-query{?dns}'], upgradedFrom: '8.8.8.8' }), en),
    /\(https:\/\/dns\.google\/dns-query\{\?dns\}, upgraded automatically from your DNS server 8\.8\.8\.8\), and over plain DNS when that fails/,
  );
  assert.match(browserDohWords(doh({ browser: 'firefox', mode: 'secure', templates: [], setBy: 'rollout' }), en), /over DNS over HTTPS \(its default server, turned on by Mozilla's rollout\):/);
  // While the browser encrypts nothing goes out in clear text: its own DoH server is the baseline, or there is none.
  assert.equal(comparedWith(withDoh(doh({})), undefined, en), 'Your browser resolves over DNS over HTTPS, with a server dnscost could not find: there is no baseline. No name of your pages was sent in clear text.');
  const own = { plan: { ...withDoh(doh({})).plan, resolvers: [{ id: 'browser', name: "Chromium's DNS over HTTPS (doh.example)", transports: ['doh' as const] }] } };
  assert.equal(comparedWith(own, { resolver: 'browser', transport: 'doh' }, en), "Compared with your browser's own DNS over HTTPS, Chromium's DNS over HTTPS (doh.example), replayed the same way. While your browser encrypts its DNS, dnscost sends no name of your pages in clear text.");
  assert.equal(comparedWith({ plan: { ...plan(current).plan, proxied: true } }, undefined, en), 'This page went through a proxy, so your browser resolved none of its names through your DNS: there is no baseline, and dnscost sent none of them in clear text.');
  assert.match(comparedWith(own, { resolver: 'browser', transport: 'doh' }, de), /^Vergleichsbasis: das eigene DNS über HTTPS Ihres Browsers, Chromium's DNS over HTTPS \(doh\.example\)/);
  // Off, automatic without an upgrade, unknown, or from before: nothing is said.
  assert.equal(browserDohWords(doh({ mode: 'off', active: false, templates: [] }), en), '');
  assert.equal(browserDohWords(doh({ mode: 'automatic', active: false, templates: [], fallback: true, setBy: 'default' }), en), '');
  assert.equal(comparedWith(withDoh(null), { resolver: 'system', transport: 'udp' }, en), comparedWith(plan(current), { resolver: 'system', transport: 'udp' }, en));
});

test('the same sentences in German', () => {
  assert.equal(comparedWith(plan(current), { resolver: 'system', transport: 'udp' }, de), 'Vergleichsbasis: Ihr aktuelles DNS (192.0.2.53, über systemd-resolved auf 127.0.0.53), auf dieselbe Weise wiederholt.');
  const page = { page: { idleBeforeMs: 4_000, browser: 'chromium' } as MeasurementMeta['page'] };
  assert.match(expectedWhy(page, ['dot', 'doh'], null, de), /^Ihr Browser war vor dieser Seite 4 s lang untätig, daher wäre die Verbindung gewesen: DoT offen \(warm\), da systemd-resolved \(DNS über TLS\) sie 10 s lang offen hält; DoH offen \(warm\), da das DNS über HTTPS von Chromium sie offen hält, bis der Server sie schließt\./);
});

test('the waterfall splits a lookup into its phases: waiting for a connection, TCP connect, TLS or QUIC, the query', async () => {
  const { fitPhases, axisTicks } = await import('./cost-view.js');
  // Set-up within the lookup: the query is the rest.
  assert.deepEqual(fitPhases({ wait: 0, connect: 30, tls: 40, query: 0 }, 100), { wait: 0, connect: 30, tls: 40, query: 30 });
  // Set-up longer than the median lookup it is fitted to: scaled down, no negative query.
  assert.deepEqual(fitPhases({ wait: 60, connect: 30, tls: 30, query: 0 }, 60), { wait: 30, connect: 15, tls: 15, query: 0 });
  assert.deepEqual(axisTicks(430), [0, 100, 200, 300, 400]);
  assert.deepEqual(axisTicks(38), [0, 10, 20, 30]);
});

test("Firefox's own path is a row of its own: never among the choices, never the baseline, named in the UI language", async () => {
  const { computeResults, resolverName } = await import('./cost-view.js');
  const { measured } = await import('../background/test-fixtures.js');
  const { FIREFOX_NOW_ID } = await import('../../../common/default-resolvers.js');
  const { meta, records } = measured('p1', 5_000, 40);
  meta.plan = plan(null).plan as MeasurementMeta['plan'];
  // Firefox's lookups through the system's resolver come first: were they a resolver's, they would be the baseline.
  const own = records.filter((r) => r.transport === 'udp' && r.mode === 'warm' && r.repeat === 1 && r.qtype === 'A').map((r) => ({ ...r, resolver: FIREFOX_NOW_ID }));
  const results = computeResults(meta, [...own, ...records], en);
  assert.deepEqual(results.baseline, { resolver: 'lab', transport: 'udp' });
  assert.equal(results.cells.some((c) => c.resolver === FIREFOX_NOW_ID), false);
  assert.deepEqual(results.ownPath.map((c) => [c.resolver, c.transport, c.mode]), [[FIREFOX_NOW_ID, 'udp', 'warm']]);
  assert.equal(results.ownPath[0]!.onLoad.delta, 0, 'the same lookups as the baseline\'s warm replay cost nothing');
  assert.deepEqual([resolverName(meta, FIREFOX_NOW_ID, en), resolverName(meta, FIREFOX_NOW_ID, de)], ['Firefox as configured now', 'Firefox, wie es jetzt eingestellt ist']);
});
