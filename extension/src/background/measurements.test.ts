// The background's measurement scheduler with a fake host, fake storage and a fake clock: the request it builds
// (hosts at their offsets, resolvers, A/AAAA, cold/warm, replay, repeat, prime), the lab override for internal names,
// every refusal code, progress, records stored as they stream in, a restart in the middle (→ interrupted, finished
// records kept), a host that goes away, cancel, the storage bounds, and the stored records feeding the cost model.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import { type MeasureStatus } from '../messages/measure.js';
import type { PageReplies } from '../messages/page.js';
import { pageCost } from '../../../common/cost-model.js';
import { storedRecord, type StoredRecord } from '../../../common/stored-record.js';
import { chooseBaseline, pageCostInput } from '../../../common/page-cost.js';
import type { ExchangeRecord } from '../../../common/record.js';
import { isResolverSpec, PROTOCOL_VERSION, type MeasureRequest, type ResolverSpec } from '../../../common/schema.js';
import { HostConnection, type NativePort, type RoutedReply } from './host-connection.js';
import { MAX_REPLAY_AT_MS, measurableHosts, offeredEndpoints, planMeasurement } from './measure-plan.js';
import { HOST_STALL_MS, type SchedulerDeps } from './measurements.js';
import { MEASURE_CAPS, MEASURE_KEYS } from './measure-keys.js';
import { EXT, FakeHost, harness, LAB, PUBLIC, settle } from './scheduler-fixtures.js';
import { exchange, host, pageRecord } from './test-fixtures.js';
import { CODES } from '../../../common/errors.js';
import { FIREFOX_NOW_ID } from '../../../common/default-resolvers.js';


test('which names may go (common/name-privacy.ts): special-use names only with the lab setting and resolvers on this network; private names only to those', () => {
  const page = pageRecord('p', [
    host('a.site.localhost', 0), host('printer.local', 5), host('fileserver', 6), host('www.example.com', 10), host('x.onion', 11),
    host('nas.example.org', 12, { ips: ['192.168.1.20'] }), host('wiki.corp.example.com', 13), { ...host('10.0.0.1', 3), kind: 'ip', internal: true, measurable: false },
  ]);
  const ctx = { searchDomains: ['corp.example.com'] };
  const lab = measurableHosts(page, [LAB], { ...ctx, lab: true });
  assert.deepEqual(lab.hosts.map((h) => h.name), ['a.site.localhost', 'printer.local', 'fileserver', 'www.example.com', 'nas.example.org', 'wiki.corp.example.com']);
  assert.equal(lab.internalAllowed, true, 'special-use names went, under the lab setting');
  assert.deepEqual(lab.hosts.find((h) => h.name === 'nas.example.org')?.reached, ['192.168.1.20'], 'where the browser reached it goes along, for the host\'s own check');
  assert.deepEqual(lab.skipped, [{ name: 'x.onion', reason: 'onion' }, { name: '10.0.0.1', reason: 'ip-literal' }]);
  const noLab = measurableHosts(page, [LAB], ctx);
  assert.deepEqual(noLab.hosts.map((h) => h.name), ['fileserver', 'www.example.com', 'nas.example.org', 'wiki.corp.example.com'], 'a loopback stub may forward upstream: special-use names stay');
  const pub = measurableHosts(page, [LAB, PUBLIC], { ...ctx, lab: true });
  assert.deepEqual(pub.hosts.map((h) => h.name), ['www.example.com']);
  assert.deepEqual(Object.fromEntries(pub.skipped.map((x) => [x.name, x.reason])), {
    'a.site.localhost': 'special-use', 'printer.local': 'special-use', fileserver: 'single-label', 'x.onion': 'onion',
    'nas.example.org': 'reached-non-global', 'wiki.corp.example.com': 'search-domain', '10.0.0.1': 'ip-literal',
  });
  assert.equal(pub.internalAllowed, false);
});

test('the measure request: hosts at their first-needed offsets, resolvers, A/AAAA, cold/warm, replay, repeat, prime', () => {
  const page = pageRecord('p', [host('www.example.com', 0), host('cdn.example.net', 12.6), host('late.example.org', 90_000), host('www.example.com', 50)]);
  const plan = planMeasurement(page, [PUBLIC])!;
  assert.deepEqual(plan.request, {
    type: 'measure',
    // A browser not known: A and AAAA for every host.
    hosts: [{ name: 'www.example.com', firstNeededMs: 0, qtypes: ['A', 'AAAA'] }, { name: 'cdn.example.net', firstNeededMs: 13, qtypes: ['A', 'AAAA'] }, { name: 'late.example.org', firstNeededMs: MAX_REPLAY_AT_MS, qtypes: ['A', 'AAAA'] }],
    resolvers: [PUBLIC],
    qtypes: ['A', 'AAAA'],
    modes: ['cold', 'warm'],
    repeat: 3,
    prime: true,
    schedule: 'replay',
  });
  assert.deepEqual(plan.summary.resolvers, [{ id: 'quad9', name: 'Quad9', transports: ['udp'] }]);
  assert.equal(planMeasurement(pageRecord('q', [host('a.site.localhost', 0)]), [PUBLIC]), null);
});

test("each host is asked what the recording browser asks for it (bench/results/browser-queries.md, validation-fiber.md)", () => {
  const page = pageRecord('p', [host('www.example.com', 0, { schemes: ['http'] }), host('cdn.example.net', 12, { schemes: ['http'] }), host('img.example.org', 20)]);
  const types = (browser: 'chromium' | 'firefox', ipv6: boolean) =>
    planMeasurement({ ...page, browser }, [PUBLIC], { ipv6 })!.request.hosts.map((h) => (h as { name: string; qtypes: string[] }).qtypes.join('+'));
  assert.deepEqual(types('chromium', false), ['HTTPS+A', 'HTTPS+A', 'HTTPS+A']);
  assert.deepEqual(types('chromium', true), ['HTTPS+AAAA+A', 'HTTPS+AAAA+A', 'HTTPS+AAAA+A']);
  // Firefox: HTTPS for the document (HTTPS-First probes an http one) and for the hosts it fetched over https.
  assert.deepEqual(types('firefox', false), ['A+AAAA+HTTPS', 'A+AAAA', 'A+AAAA+HTTPS']);
  assert.deepEqual(types('firefox', true), ['A+AAAA+HTTPS', 'A+AAAA', 'A+AAAA+HTTPS']);
  const plan = planMeasurement({ ...page, browser: 'chromium' }, [PUBLIC], { ipv6: false })!;
  assert.deepEqual(plan.request.qtypes, ['A', 'HTTPS'], 'the request lists every type asked');
  assert.equal(plan.summary.browser, 'chromium');
});

test('refusals have stable codes', async () => {
  const noConsent = harness({ settings: { consent: { given: false, at: null, for: null } } });
  assert.equal(((await noConsent.s.start(7, EXT)) as { code: string }).code, CODES.NO_CONSENT);
  const priv = harness({ incognito: [7] });
  assert.equal(((await priv.s.start(7, EXT)) as { code: string }).code, CODES.PRIVATE_WINDOW);
  const unknown = harness({ unknownTabs: [7] });
  assert.equal(((await unknown.s.start(7, EXT)) as { code: string }).code, CODES.PRIVATE_WINDOW, 'a tab the browser cannot tell about counts as private');
  const excl = harness({ pages: { 7: { ok: false, code: 'excluded', message: 'excluded site' } } });
  assert.equal(((await excl.s.start(7, EXT)) as { code: string }).code, CODES.EXCLUDED);
  const none = harness({ pages: {} });
  assert.equal(((await none.s.start(7, EXT)) as { code: string }).code, CODES.NO_PAGE);
  const pub = harness({ settings: { resolvers: [PUBLIC] } });
  const refused = (await pub.s.start(7, EXT)) as { code: string; message: string };
  assert.equal(refused.code, CODES.NO_MEASURABLE_HOSTS);
  assert.equal(refused.message, 'this page needed no hostname that may be sent to your resolvers: 3 special-use (e.g. a.site.localhost)', 'the refusal says why of each name');
  // The status says so before anyone presses the button, with the reasons grouped for the popup to word.
  const pubStatus = (await pub.s.status(7, EXT, false)) as MeasureStatus;
  assert.deepEqual(pubStatus.blocked, { code: CODES.NO_MEASURABLE_HOSTS, message: refused.message, withheld: [{ reason: 'special-use', count: 3, example: 'a.site.localhost' }] });
  assert.equal(pub.host.requests.length, 0, 'nothing was sent');
  const down = harness();
  down.host.connected = false;
  assert.equal(((await down.s.start(7, EXT)) as { code: string }).code, CODES.HOST_NOT_CONNECTED);
  assert.equal(down.host.requests.length, 0);
  const web = harness();
  assert.equal(((await web.s.start(7, { url: 'https://evil.example/' })) as { code: string }).code, CODES.BAD_SENDER);
  // The status says the same before anyone presses the button.
  const st = (await noConsent.s.status(7, EXT, false)) as MeasureStatus;
  assert.equal(st.blocked?.code, CODES.NO_CONSENT);
  assert.equal(st.measurement, null);
  // One measurement at a time.
  const two = harness({ pages: {
    7: { ok: true, record: pageRecord('p1', [host('a.site.localhost', 0)]) },
    8: { ok: true, record: pageRecord('p2', [host('b.site.localhost', 0)], 8) },
  } });
  assert.equal(((await two.s.start(7, EXT)) as MeasureStatus).measurement?.state, 'running');
  assert.equal(((await two.s.start(8, EXT)) as { code: string }).code, CODES.BUSY);
  assert.equal(((await two.s.start(7, EXT)) as MeasureStatus).measurement?.state, 'running', 'starting the same page again is its status');
  assert.equal(two.host.requests.length, 1);
});

test('progress, records stored as they arrive, done; a restart mid-way reports interrupted and keeps finished records', async () => {
  const h = harness();
  const started = (await h.s.start(7, EXT)) as MeasureStatus;
  assert.equal(started.measurement?.state, 'running');
  const req = h.host.requests[0]!.req as unknown as MeasureRequest;
  assert.equal(req.type, 'measure');
  assert.deepEqual(req.hosts, [{ name: 'a.site.localhost', firstNeededMs: 0, qtypes: ['A', 'AAAA'] }, { name: 'css.site.localhost', firstNeededMs: 40, qtypes: ['A', 'AAAA'] }, { name: 'img.site.localhost', firstNeededMs: 90, qtypes: ['A', 'AAAA'] }], 'lab override: .localhost names go to the loopback lab');
  assert.deepEqual(req.resolvers, [LAB]);

  h.host.reply({ type: 'progress', done: 2, total: 36 });
  h.host.reply({ type: 'records', records: [exchange('a.site.localhost', 'udp', 'cold', 1, 'A', 5), exchange('a.site.localhost', 'udp', 'cold', 1, 'AAAA', 6)] });
  await settle();
  const st = (await h.s.status(7, EXT, true)) as MeasureStatus;
  assert.equal(st.measurement?.done, 2);
  assert.equal(st.measurement?.total, 36);
  assert.equal(st.records?.length, 2);
  // Already in storage (a killed worker loses nothing delivered).
  assert.equal((h.area.data.get(MEASURE_KEYS.chunk('p1', 0)) as unknown[]).length, 2);

  // The service worker dies here: a new scheduler over the same storage.
  const h2 = harness({ area: h.area });
  const after = (await h2.s.status(7, EXT, true)) as MeasureStatus;
  assert.equal(after.measurement?.state, 'interrupted');
  assert.equal(after.measurement?.error?.code, 'interrupted');
  assert.equal(after.records?.length, 2);
  assert.equal(after.blocked, null, 'it can be measured again');

  // The first scheduler (still alive in this test) finishes its run normally.
  h.host.reply({ type: 'records', records: [{ ...exchange('css.site.localhost', 'dot', 'warm', 1, 'A', 3), qtype: 'HTTPS', answers: [{ name: 'css.site.localhost', type: 'HTTPS', ttl: 60, data: '1 . alpn=h3 ech=AEX+' }] }] });
  h.host.reply({ type: 'progress', done: 36, total: 36 });
  h.host.reply({ type: 'done', seed: 42, primed: true, warmedUp: true, order: [], exchanges: 3, cancelled: false, summary: [] });
  await settle();
  const done = (await h.s.status(7, EXT, true)) as MeasureStatus;
  assert.equal(done.measurement?.state, 'done');
  assert.equal(done.measurement?.seed, 42);
  assert.equal(done.records?.length, 3);
  assert.deepEqual([done.measurement?.advertised, done.records?.some((r) => 'answers' in r)], [{ h3: ['css.site.localhost'], ech: ['css.site.localhost'] }, false], 'what HTTPS answers advertise is kept; no record keeps answers');
  assert.deepEqual(h.host.released, [req.id]);
});

test('a measurement stored before protocol 2 reads back with its hosts\' and lookups\' first-needed times (then `at` and `scheduledAt`)', async () => {
  const h = harness();
  await h.s.start(7, EXT);
  h.host.reply({ type: 'records', records: [exchange('css.site.localhost', 'udp', 'cold', 1, 'A', 5)] });
  h.host.reply({ type: 'done', seed: 1, primed: true, warmedUp: true, order: [], exchanges: 1, cancelled: false, summary: [] });
  await settle();
  // Rewrite what was stored into the older shape.
  const metaKey = MEASURE_KEYS.meta('p1');
  const meta = structuredClone(h.area.data.get(metaKey)) as { plan: { hosts: Array<Record<string, unknown>> } };
  meta.plan.hosts = meta.plan.hosts.map(({ name, firstNeededMs }) => ({ name, at: firstNeededMs }));
  const chunk = (h.area.data.get(MEASURE_KEYS.chunk('p1', 0)) as Array<{ replay: Record<string, unknown> }>)
    .map(({ replay: { firstNeededMs: _, ...rest }, ...r }) => ({ ...r, replay: { ...rest, scheduledAt: 40 } }));
  await h.area.set({ [metaKey]: meta, [MEASURE_KEYS.chunk('p1', 0)]: chunk });
  const read = (await harness({ area: h.area }).s.status(7, EXT, true)) as MeasureStatus;
  assert.deepEqual(read.measurement?.plan.hosts, [{ name: 'a.site.localhost', firstNeededMs: 0 }, { name: 'css.site.localhost', firstNeededMs: 40 }, { name: 'img.site.localhost', firstNeededMs: 90 }]);
  assert.equal(read.records?.[0]?.replay?.firstNeededMs, 40);
  assert.ok(!('scheduledAt' in read.records![0]!.replay!));
});

test('a measurement that finishes done is handed on with all its records (the history); interrupted and cancelled ones are not', async () => {
  const handed: Array<{ state: string; pageId: string; records: number; network?: unknown }> = [];
  const h = harness({ onDone: async (meta, records) => void handed.push({ state: meta.state, pageId: meta.pageId, records: records.length, ...(meta.network ? { network: meta.network } : {}) }) });
  await h.s.start(7, EXT);
  h.host.reply({ type: 'records', records: [exchange('a.site.localhost', 'udp', 'cold', 1, 'A', 5), exchange('a.site.localhost', 'dot', 'cold', 1, 'A', 30)] });
  const network = { id: '0123456789abcdef', description: 'gateway 192.0.2.1 on eth0 · 192.0.2.0/24' };
  h.host.reply({ type: 'done', seed: 1, primed: true, warmedUp: true, order: [], exchanges: 2, cancelled: false, summary: [], network });
  await settle();
  await settle();
  assert.deepEqual(handed, [{ state: 'done', pageId: 'p1', records: 2, network }], 'the network the host reported goes with it');
  await h.s.start(7, EXT);
  h.host.reply({ type: 'closed', message: 'Native host has exited.' });
  await h.s.start(7, EXT);
  h.host.reply({ type: 'done', seed: 1, primed: true, warmedUp: true, order: [], exchanges: 0, cancelled: true, summary: [] });
  await settle();
  await settle();
  assert.equal(handed.length, 1);
  // A malformed network from the host is not taken.
  await h.s.start(7, EXT);
  h.host.reply({ type: 'done', seed: 1, primed: true, warmedUp: true, order: [], exchanges: 0, cancelled: false, summary: [], network: { id: '<b>x</b>', description: 'x' } as never });
  await settle();
  await settle();
  assert.equal(handed.length, 2);
  assert.equal(handed[1]!.network, undefined);
});

test("the browser's own path runs after the host's replays, with the hosts the host was asked for; its records are stored before done; its failure is logged, the host's records stay; never for a proxied page", async () => {
  const asked: string[][] = [];
  let release: () => void = () => undefined;
  const own: SchedulerDeps['ownPath'] = async (hosts) => {
    asked.push(hosts.map((x) => x.name));
    await new Promise<void>((r) => (release = r));
    return [{ ...storedRecord(exchange('a.site.localhost', 'doh', 'warm', 1, 'A', 41)), resolver: FIREFOX_NOW_ID }];
  };
  const h = harness({ ownPath: own });
  await h.s.start(7, EXT);
  h.host.reply({ type: 'records', records: [exchange('a.site.localhost', 'udp', 'cold', 1, 'A', 5)] });
  assert.equal(asked.length, 0, 'nothing beside the replays');
  h.host.reply({ type: 'done', seed: 1, primed: true, warmedUp: true, order: [], exchanges: 1, cancelled: false, summary: [] });
  await settle();
  assert.deepEqual(asked, [['a.site.localhost', 'css.site.localhost', 'img.site.localhost']]);
  assert.equal(((await h.s.status(7, EXT, false)) as MeasureStatus).measurement?.state, 'running', 'not done while the own lookups run');
  release();
  await settle();
  await settle();
  const done = (await h.s.status(7, EXT, true)) as MeasureStatus;
  assert.equal(done.measurement?.state, 'done');
  assert.deepEqual(done.records?.map((r) => r.resolver), ['lab', FIREFOX_NOW_ID]);

  const logged: string[] = [];
  const failing = harness({ ownPath: async () => Promise.reject(new Error('NS_ERROR_NOT_AVAILABLE')), log: (m) => void logged.push(m) });
  await failing.s.start(7, EXT);
  failing.host.reply({ type: 'records', records: [exchange('a.site.localhost', 'udp', 'cold', 1, 'A', 5)] });
  failing.host.reply({ type: 'done', seed: 1, primed: true, warmedUp: true, order: [], exchanges: 1, cancelled: false, summary: [] });
  await settle();
  await settle();
  const kept = (await failing.s.status(7, EXT, true)) as MeasureStatus;
  assert.deepEqual([kept.measurement?.state, kept.records?.length], ['done', 1]);
  assert.match(logged.join('\n'), /own lookups of .* failed: Error: NS_ERROR_NOT_AVAILABLE/);
  // A cancelled measurement does not go on to the browser's own path.
  const cancelled = harness({ ownPath: async () => (asked.push(['again']), [] as StoredRecord[]) });
  await cancelled.s.start(7, EXT);
  cancelled.host.reply({ type: 'done', seed: 1, primed: true, warmedUp: true, order: [], exchanges: 0, cancelled: true, summary: [] });
  await settle();
  // Nor a page that went through a proxy: the browser never resolved its names.
  const proxied = harness({ ownPath: async () => (asked.push(['proxied']), [] as StoredRecord[]), pages: { 7: { ok: true, record: { ...pageRecord('p1', [host('a.site.localhost', 0)]), proxied: true } } } });
  assert.equal(((await proxied.s.start(7, EXT)) as MeasureStatus).measurement?.plan.proxied, true);
  proxied.host.reply({ type: 'done', seed: 1, primed: true, warmedUp: true, order: [], exchanges: 0, cancelled: false, summary: [] });
  await settle();
  await settle();
  assert.equal(((await proxied.s.status(7, EXT, false)) as MeasureStatus).measurement?.state, 'done');
  assert.equal(asked.length, 1);
});

test('only the transports the host offers are asked for; with none of them offered, the resolvers stay as they are', async () => {
  const quic: ResolverSpec = { id: 'q', name: 'Q', endpoints: [{ transport: 'doq', address: '127.0.0.1', port: 8853, serverName: 'dns.test' }] };
  const mixed: ResolverSpec = { ...LAB, endpoints: [...LAB.endpoints, { transport: 'doh3', address: '127.0.0.1', port: 8443, serverName: 'dns.test', path: '/dns-query' }] };
  const offered = offeredEndpoints([mixed, quic], ['udp', 'tcp', 'dot', 'doh', 'doh1']);
  assert.deepEqual(offered.map((r) => [r.id, r.endpoints.map((e) => e.transport)]), [['lab', LAB.endpoints.map((e) => e.transport)]]);
  assert.deepEqual(offeredEndpoints([quic], ['udp']), [quic], 'nothing left: as they are (the host then says why)');
  assert.deepEqual(offeredEndpoints([mixed], null), [mixed], 'host not connected: as they are');
  // The scheduler asks the connected host for what it offers only.
  const h = harness({ settings: { resolvers: [mixed, quic] } });
  await h.s.start(7, EXT);
  const req = h.host.requests[0]!.req as unknown as MeasureRequest;
  assert.deepEqual(req.resolvers.map((r) => r.id), ['lab']);
  assert.ok(req.resolvers[0]!.endpoints.every((e) => e.transport !== 'doh3'));
});

test("the person's current DNS the host found is measured by default, first, with its local stub; not when turned off; DoT when the stub already encrypts; the browser's DoH kept with the plan", async () => {
  const fake = new FakeHost();
  fake.currentDns = {
    source: 'resolvectl status', servers: [{ address: '192.0.2.53', port: 53 }, { address: 'fe80::1%eth0', port: 53 }], search: ['lan'],
    stub: { address: '127.0.0.53', software: 'systemd-resolved' }, encrypted: null, description: 'your current DNS (192.0.2.53, fe80::1%eth0, through systemd-resolved on 127.0.0.53)',
  };
  // Public names: with a current DNS on the network, internal names are no longer sent anywhere (the lab override).
  const pages = { 7: { ok: true as const, record: pageRecord('p1', [host('www.example.org', 0), host('cdn.example.net', 40)]) } };
  const on = harness({ host: fake, pages });
  assert.equal((await on.s.start(7, EXT)).ok, true);
  const req = on.host.requests[0]!.req as unknown as MeasureRequest;
  assert.deepEqual(req.resolvers.map((r) => r.id), ['system', 'system-stub', 'lab']);
  assert.deepEqual(req.resolvers[0]!.endpoints.map((e) => `${e.transport} ${e.address}:${e.port}`), ['udp 192.0.2.53:53', 'tcp 192.0.2.53:53', 'udp fe80::1%eth0:53', 'tcp fe80::1%eth0:53']);
  assert.equal(req.resolvers[0]!.name, fake.currentDns.description);
  assert.match(req.resolvers[1]!.name, /systemd-resolved on 127\.0\.0\.53/);
  for (const r of req.resolvers) assert.ok(isResolverSpec(r), r.id);
  assert.deepEqual(chooseBaseline([{ resolver: 'lab', transport: 'udp' }, { resolver: 'system', transport: 'udp' }]), { resolver: 'system', transport: 'udp' }, 'the current DNS is the baseline');

  assert.equal(((await on.s.status(7, EXT, false)) as MeasureStatus).measurement?.plan.browserDoh, null, 'no browser DoH reported: none kept');
  fake.browserDoh = { browser: 'firefox', product: 'Firefox', mode: 'secure', active: true, templates: ['https://doh.example/dns-query'], source: '/p/prefs.js', setBy: 'settings', fallback: false, upgradedFrom: null };
  const doh = harness({ host: fake, pages });
  await doh.s.start(7, EXT);
  assert.deepEqual(((await doh.s.status(7, EXT, false)) as MeasureStatus).measurement?.plan.browserDoh, fake.browserDoh, "the browser's DoH is kept with the plan, for the panel");
  fake.browserDoh = null;

  const off = harness({ host: fake, pages, settings: { currentDns: false } });
  await off.s.start(7, EXT);
  assert.deepEqual((off.host.requests.at(-1)!.req as unknown as MeasureRequest).resolvers.map((r) => r.id), ['lab']);

  fake.currentDns = { ...fake.currentDns, stub: null, servers: [{ address: '9.9.9.9', port: 53, tlsName: 'dns.quad9.net' }], encrypted: { transport: 'dot', by: 'systemd-resolved', opportunistic: false } };
  const dot = harness({ host: fake, pages });
  await dot.s.start(7, EXT);
  const sys = (dot.host.requests.at(-1)!.req as unknown as MeasureRequest).resolvers[0]!;
  assert.deepEqual(sys.endpoints, [{ transport: 'dot', address: '9.9.9.9', port: 853, serverName: 'dns.quad9.net' }]);
  assert.deepEqual(chooseBaseline([{ resolver: 'lab', transport: 'udp' }, { resolver: 'system', transport: 'dot' }]), { resolver: 'system', transport: 'dot' }, 'an encrypted current DNS is still the baseline');
  assert.equal((dot.host.requests.at(-1)!.req as unknown as MeasureRequest).resolvers.length, 2, 'no stub reported: none measured');
});

test('a host that goes away interrupts; cancel asks the host and ends as cancelled', async () => {
  const h = harness();
  await h.s.start(7, EXT);
  h.host.reply({ type: 'records', records: [exchange('a.site.localhost', 'udp', 'cold', 1, 'A', 5)] });
  h.host.reply({ type: 'closed', message: 'Native host has exited.' });
  await settle();
  const st = (await h.s.status(7, EXT, true)) as MeasureStatus;
  assert.equal(st.measurement?.state, 'interrupted');
  assert.equal(st.measurement?.error?.code, 'host-disconnected');
  assert.equal(st.records?.length, 1);

  const c = harness();
  assert.equal(((await c.s.cancel(7, EXT)) as { code: string }).code, CODES.NOT_RUNNING);
  await c.s.start(7, EXT);
  await c.s.cancel(7, EXT);
  const cancel = c.host.requests.find((x) => x.req.type === 'cancel')!;
  assert.equal(cancel.req.target, c.host.requests[0]!.req.id);
  c.host.reply({ type: 'done', seed: 1, primed: true, warmedUp: true, order: [], exchanges: 0, cancelled: true, summary: [] });
  await settle();
  assert.equal(((await c.s.status(7, EXT, false)) as MeasureStatus).measurement?.state, 'cancelled');
});

test('a host that stops answering (stopped, or stuck mid-frame): the measurement fails with host-stalled after a minute of silence, the host is restarted, records kept', async () => {
  const h = harness();
  await h.s.start(7, EXT);
  const armed = () => h.timers.filter((t) => !t.cleared && t.ms === HOST_STALL_MS);
  assert.equal(armed().length, 1, 'the watchdog is armed when the request goes');
  h.host.reply({ type: 'records', records: [exchange('a.site.localhost', 'udp', 'cold', 1, 'A', 5)] });
  assert.equal(armed().length, 1, 'every reply re-arms it (the old one cleared)');
  armed()[0]!.fn();
  await settle();
  const st = (await h.s.status(7, EXT, true)) as MeasureStatus;
  assert.equal(st.measurement?.state, 'failed');
  assert.equal(st.measurement?.error?.code, 'host-stalled');
  assert.equal(st.records?.length, 1, 'what arrived is kept');
  assert.equal(h.host.restarts.length, 1);
  // A measurement that finishes in time disarms it.
  const d = harness();
  await d.s.start(7, EXT);
  d.host.reply({ type: 'done', seed: 1, primed: true, warmedUp: true, order: [], exchanges: 0, cancelled: false, summary: [] });
  assert.equal(d.timers.filter((t) => !t.cleared && t.ms === HOST_STALL_MS).length, 0);
});

test('an excluded site: its stored measurements are purged, a running one cancelled; the others kept', async () => {
  const hosts = ['www.bank.localhost', 'news.localhost', 'bank.localhost'];
  const pages: Record<number, PageReplies['page-report']> = {};
  for (const [i, name] of hosts.entries()) pages[i] = { ok: true, record: { ...pageRecord(`pg${i}`, [host(name, 0)], i), host: name } };
  const h = harness({ pages });
  for (const [i, name] of hosts.entries()) {
    await h.s.start(i, EXT);
    h.host.reply({ type: 'records', records: [exchange(name, 'udp', 'cold', 1, 'A', 5)] });
    if (i < 2) h.host.reply({ type: 'done', seed: 1, primed: true, warmedUp: true, order: [], exchanges: 1, cancelled: false, summary: [] });
    h.advance(1000);
    await settle();
  }
  const bank = (name: string) => name === 'bank.localhost' || name.endsWith('.bank.localhost');
  assert.equal(await h.s.purge(bank), 2);
  await settle();
  const metas = [...h.area.data.keys()].filter((k) => k.startsWith('measure:meta:')).sort();
  assert.deepEqual(metas, [MEASURE_KEYS.meta('pg1')]);
  assert.equal(h.area.data.has(MEASURE_KEYS.chunk('pg0', 0)), false, 'with its records');
  assert.ok(h.host.requests.some((r) => r.req.type === 'cancel'), 'the running measurement of the site is cancelled');
});

test('storage is bounded: the oldest measurements go', async () => {
  const pages: Record<number, PageReplies['page-report']> = {};
  for (let i = 0; i < MEASURE_CAPS.pages + 3; i++) pages[i] = { ok: true, record: pageRecord(`pg${i}`, [host(`h${i}.site.localhost`, 0)], i) };
  const h = harness({ pages });
  for (let i = 0; i < MEASURE_CAPS.pages + 3; i++) {
    await h.s.start(i, EXT);
    h.host.reply({ type: 'records', records: [exchange(`h${i}.site.localhost`, 'udp', 'cold', 1, 'A', 5)] });
    h.host.reply({ type: 'done', seed: 1, primed: true, warmedUp: true, order: [], exchanges: 1, cancelled: false, summary: [] });
    h.advance(1000);
    await settle();
  }
  await h.s.start(0, EXT); // a new start prunes
  await settle();
  const metas = [...h.area.data.keys()].filter((k) => k.startsWith('measure:meta:'));
  assert.ok(metas.length <= MEASURE_CAPS.pages, `${metas.length} metas kept`);
  assert.equal(h.area.data.has(MEASURE_KEYS.meta('pg1')), false, 'the oldest went');
  assert.equal(h.area.data.has(MEASURE_KEYS.chunk('pg1', 0)), false, 'with its records');
  assert.equal(h.area.data.has(MEASURE_KEYS.meta(`pg${MEASURE_CAPS.pages + 2}`)), true);
});

test('stored records feed the cost model: one cell per resolver × transport × mode, the UDP replay as baseline', () => {
  const page = pageRecord('p', [host('a.site.localhost', 0), host('css.site.localhost', 40)]);
  const recs: ExchangeRecord[] = [];
  for (const t of ['udp', 'dot'] as const) for (const m of ['cold', 'warm'] as const) for (let r = 1; r <= 3; r++) for (const q of ['A', 'AAAA'] as const) {
    recs.push(exchange('a.site.localhost', t, m, r, q, t === 'dot' && m === 'cold' ? 80 : 5));
    recs.push(exchange('css.site.localhost', t, m, r, q, t === 'dot' && m === 'cold' ? 80 : 5));
  }
  const h = harness();
  void h;
  const stored = recs.map(storedRecord);
  const baseline = chooseBaseline(stored);
  assert.deepEqual(baseline, { resolver: 'lab', transport: 'udp' });
  const input = pageCostInput(page, new Set(['a.site.localhost', 'css.site.localhost']));
  assert.equal(input.documentHost, 'a.site.localhost');
  assert.equal(input.onLoad, 400);
  const cells = pageCost(input, stored, { baseline: baseline! });
  assert.equal(cells.length, 4);
  const dotCold = cells.find((c) => c.transport === 'dot' && c.mode === 'cold')!;
  assert.equal(dotCold.dnsTime.candidate, 160);
  assert.equal(dotCold.dnsTime.baseline, 10);
  assert.equal(dotCold.bytes.model?.formula.includes('285'), true);
});

test('the host connection routes replies by request id and tells open requests when the port closes', () => {
  const listeners: Array<(m: unknown) => void> = [];
  const closers: Array<(p: NativePort) => void> = [];
  const sent: unknown[] = [];
  const port: NativePort = {
    postMessage: (m) => void sent.push(m),
    disconnect: () => undefined,
    onMessage: { addListener: (l) => void listeners.push(l) },
    onDisconnect: { addListener: (l) => void closers.push(l) },
  };
  const conn = new HostConnection({ connect: () => port, lastError: () => undefined, setTimer: () => 0, clearTimer: () => undefined, now: () => 0 });
  conn.start();
  assert.equal(conn.request({ id: 'm1', type: 'cancel', target: 'x' }, () => undefined), false, 'nothing is sent before hello');
  for (const l of listeners) l({ id: 'hello-1', type: 'hello', version: '0.1.0', protocol: PROTOCOL_VERSION, transports: ['udp'] });
  const a: RoutedReply[] = [];
  const b: RoutedReply[] = [];
  assert.equal(conn.request({ id: 'm1', type: 'measure', hosts: ['h1.test'], resolvers: [LAB] }, (r) => a.push(r)), true);
  assert.equal(conn.request({ id: 'm2', type: 'measure', hosts: ['h2.test'], resolvers: [LAB] }, (r) => b.push(r)), true);
  assert.deepEqual((sent.at(-1) as { id: string }).id, 'm2');
  for (const l of listeners) l({ id: 'm1', type: 'progress', done: 1, total: 2 });
  for (const l of listeners) l({ id: 'm2', type: 'progress', done: 1, total: 4 });
  for (const l of listeners) l({ id: 'zz', type: 'progress', done: 1, total: 4 });
  conn.release('m1');
  for (const l of listeners) l({ id: 'm1', type: 'progress', done: 2, total: 2 });
  assert.deepEqual(a.map((r) => r.type), ['progress']);
  for (const c of closers) c(port);
  assert.deepEqual(b.map((r) => r.type), ['progress', 'closed']);
  assert.equal(a.length, 1, 'a released request hears nothing more');
});

test('the automatic sampler: only after consent, within the hourly budget, only hosts not measured within the window', async () => {
  const pages: Record<number, PageReplies['page-report']> = {
    7: { ok: true, record: pageRecord('p1', [host('a.site.localhost', 0), host('b.site.localhost', 10)]) },
    8: { ok: true, record: pageRecord('p2', [host('a.site.localhost', 0), host('c.site.localhost', 20)], 8) },
    9: { ok: true, record: pageRecord('p3', [host('a.site.localhost', 0)], 9) },
  };
  const off = harness({ pages, settings: { consent: { given: false, at: null, for: null } } });
  assert.deepEqual(await off.s.sample(7), { started: false, reason: 'no-consent' });
  const zero = harness({ pages, settings: { budget: { pagesPerHour: 0, remeasureAfterHours: 24 } } });
  assert.deepEqual(await zero.s.sample(7), { started: false, reason: 'sampler-off' });
  assert.equal(off.host.requests.length + zero.host.requests.length, 0);

  const h = harness({ pages, settings: { budget: { pagesPerHour: 1, remeasureAfterHours: 24 } } });
  assert.deepEqual(await h.s.sample(7), { started: true, hosts: 2 });
  assert.deepEqual(await h.s.sample(8), { started: false, reason: 'busy' });
  h.host.reply({ type: 'done', seed: 1, primed: true, warmedUp: true, order: [], exchanges: 0, cancelled: false, summary: [] });
  await settle();
  assert.equal(((await h.s.status(7, EXT, false)) as MeasureStatus).measurement?.trigger, 'auto');
  assert.deepEqual(await h.s.sample(8), { started: false, reason: 'budget' });
  h.advance(3600_000 + 1);
  assert.deepEqual(await h.s.sample(8), { started: true, hosts: 1 });
  const req = h.host.requests.at(-1)!.req as unknown as MeasureRequest;
  assert.deepEqual(req.hosts, [{ name: 'c.site.localhost', firstNeededMs: 20, qtypes: ['A', 'AAAA'] }], 'a.site.localhost was measured within the window');
  h.host.reply({ type: 'done', seed: 1, primed: true, warmedUp: true, order: [], exchanges: 0, cancelled: false, summary: [] });
  await settle();
  h.advance(3600_000 + 1);
  assert.deepEqual(await h.s.sample(9), { started: false, reason: 'recently-measured' });
  h.advance(24 * 3600_000);
  assert.deepEqual(await h.s.sample(9), { started: true, hosts: 1 });
  // Private windows and excluded sites are never sampled.
  const priv = harness({ pages, incognito: [7] });
  assert.deepEqual(await priv.s.sample(7), { started: false, reason: 'private-window' });
});
