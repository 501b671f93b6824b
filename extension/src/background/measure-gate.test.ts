// The plan while the browser resolves over DoH (issue 26 item 1): never weaker than the browser, so nothing of its
// pages in clear text; the host refuses it too (native-host/src/browser-resolver.ts), and the browsers' own run is
// tests/browser/no-cleartext.test.ts.
import assert from 'node:assert/strict';
import { test } from 'vitest';
import { chooseBaseline } from '../../../common/page-cost.js';
import { isResolverSpec, type BrowserDoh, type CurrentDns, type EndpointSpec, type ResolverSpec } from '../../../common/schema.js';
import type { HostStatus } from '../messages/host.js';
import { planFor, type MeasureHost } from './measure-gate.js';
import { host, pageRecord } from './test-fixtures.js';

const current: CurrentDns = { source: 'resolv.conf', servers: [{ address: '192.0.2.53', port: 53 }], search: [], stub: { address: '127.0.0.53', software: 'systemd-resolved' }, encrypted: null, description: 'your current DNS (192.0.2.53)' };
const endpoint: EndpointSpec = { transport: 'doh', address: '192.0.2.80', port: 443, serverName: 'doh.example', path: '/dns-query', method: 'POST' };
const firefox: BrowserDoh = { browser: 'firefox', product: 'Firefox', mode: 'secure', active: true, templates: ['https://doh.example/dns-query'], source: '/p/prefs.js', setBy: 'settings', fallback: false, upgradedFrom: null, endpoint };
const resolvers: ResolverSpec[] = [
  { id: 'mixed', name: 'A resolver on two transports', endpoints: [{ transport: 'udp', address: '192.0.2.9', port: 53 }, { transport: 'dot', address: '192.0.2.9', port: 853 }] },
  { id: 'plain', name: 'Plain only', endpoints: [{ transport: 'udp', address: '192.0.2.10', port: 53 }] },
];
const page = pageRecord('p1', [host('www.example.org', 0), host('cdn.example.net', 40)]);

/** A connected host that found `browserDoh` and the current DNS above. */
function hostWith(browserDoh: BrowserDoh | null): MeasureHost {
  const status: HostStatus = { ok: true, connected: true, version: '0.1.0', protocol: 2, transports: ['udp', 'tcp', 'dot', 'doh'], currentDns: current, ipv6: false, browserDoh };
  return { status: () => status, request: () => true, release: () => undefined };
}

const planned = (browserDoh: BrowserDoh | null) => {
  const plan = planFor(hostWith(browserDoh), page, { resolvers, currentDns: true, lab: false });
  assert.ok('request' in plan, JSON.stringify(plan));
  return plan.request.resolvers;
};

test("while the browser resolves over DoH its own server is measured first and plain endpoints of every resolver are left out", () => {
  const on = planned(firefox);
  assert.deepEqual(on.map((r) => r.id), ['browser', 'mixed'], 'the current DNS (plain), its stub and a plain-only resolver are not measured');
  assert.deepEqual(on[0]!.endpoints, [endpoint]);
  assert.equal(on[0]!.name, "Firefox's DNS over HTTPS (doh.example)");
  assert.deepEqual(on.flatMap((r) => r.endpoints.map((e) => e.transport)), ['doh', 'dot'], 'encrypted endpoints only');
  for (const r of on) assert.ok(isResolverSpec(r), r.id);
  assert.deepEqual(chooseBaseline([{ resolver: 'system', transport: 'dot' }, { resolver: 'browser', transport: 'doh' }]), { resolver: 'browser', transport: 'doh' }, "the browser's DoH is the baseline");
});

test('no endpoint found for the browser\'s server: no baseline, and still nothing in clear text', () => {
  assert.deepEqual(planned({ ...firefox, endpoint: null }).map((r) => `${r.id} ${r.endpoints.map((e) => e.transport).join(',')}`), ['mixed dot']);
});

test('a browser whose DoH is not active (automatic, not upgraded) or unknown resolves in plain text: the current DNS is measured as before', () => {
  const inactive = { ...firefox, browser: 'chromium' as const, product: 'Chromium', mode: 'automatic' as const, active: false, templates: [], endpoint: null };
  for (const doh of [inactive, null]) {
    assert.deepEqual(planned(doh).map((r) => `${r.id} ${r.endpoints.map((e) => e.transport).join(',')}`), ['system udp,tcp', 'system-stub udp', 'mixed udp,dot', 'plain udp']);
  }
});

test('a page that went through a proxy: encrypted endpoints only, the host told so, the panel too; the browser\'s DoH still first when active', () => {
  const proxied = { ...page, proxied: true };
  const plain = planFor(hostWith(null), proxied, { resolvers, currentDns: true, lab: false });
  assert.ok('request' in plain);
  assert.deepEqual(plain.request.resolvers.map((r) => `${r.id} ${r.endpoints.map((e) => e.transport).join(',')}`), ['mixed dot']);
  assert.equal(plain.request.noCleartext, true);
  assert.equal(plain.summary.proxied, true);
  const withDoh = planFor(hostWith(firefox), proxied, { resolvers, currentDns: true, lab: false });
  assert.ok('request' in withDoh);
  assert.deepEqual(withDoh.request.resolvers.map((r) => r.id), ['browser', 'mixed']);
  const direct = planFor(hostWith(null), page, { resolvers, currentDns: true, lab: false });
  assert.ok('request' in direct);
  assert.equal(direct.request.noCleartext, undefined);
});

test("a Chromium the host found behind a proxy (its policy, command line or system settings): every page as a proxied one", () => {
  const chromium: BrowserDoh = { browser: 'chromium', product: 'Chromium', mode: 'automatic', active: false, templates: [], source: 'default', setBy: 'default', fallback: true, upgradedFrom: null, proxy: 'the command line (--proxy-server)' };
  const plan = planFor(hostWith(chromium), page, { resolvers, currentDns: true, lab: false });
  assert.ok('request' in plan);
  assert.deepEqual(plan.request.resolvers.map((r) => `${r.id} ${r.endpoints.map((e) => e.transport).join(',')}`), ['mixed dot'], 'no current DNS, no plain endpoint');
  assert.deepEqual([plan.request.noCleartext, plan.summary.proxied], [true, true]);
});

test('the public resolvers as this version defines them: a stored copy is brought up to date, at IPv6 addresses when the machine reaches IPv6', () => {
  // Quad9 as an older version stored it, with the DoH over HTTP/1.1 it no longer serves.
  const stale: ResolverSpec = { id: 'quad9', name: 'Quad9', endpoints: [{ transport: 'doh1', address: '9.9.9.9', port: 443, serverName: 'dns.quad9.net', path: '/dns-query', method: 'POST' }] };
  const withIpv6 = (ipv6: boolean): MeasureHost => {
    const status: HostStatus = { ok: true, connected: true, version: '0.1.0', protocol: 2, transports: ['udp', 'tcp', 'dot', 'doh', 'doh1', 'doq', 'doh3'], currentDns: null, ipv6, browserDoh: null };
    return { status: () => status, request: () => true, release: () => undefined };
  };
  for (const ipv6 of [false, true]) {
    const plan = planFor(withIpv6(ipv6), page, { resolvers: [stale, resolvers[1]!], currentDns: false, lab: false });
    assert.ok('request' in plan, JSON.stringify(plan));
    const [quad9, plain] = plan.request.resolvers;
    assert.deepEqual(quad9!.endpoints.map((e) => e.transport), ['udp', 'tcp', 'dot', 'doh', 'doq', 'doh3']);
    assert.deepEqual([...new Set(quad9!.endpoints.map((e) => e.address))], [ipv6 ? '2620:fe::fe' : '9.9.9.9']);
    assert.deepEqual(plain, resolvers[1], 'a resolver of the person\'s own is left as it is');
  }
});

test("the CDN check is asked for hosts the browser reached, on its scheme's port; never for a page behind a proxy", () => {
  const reached = pageRecord('p2', [host('www.example.org', 0, { ips: ['192.0.2.1'] }), host('cdn.example.net', 40, { ips: ['192.0.2.2'], schemes: ['http'] }), host('late.example.com', 60)]);
  const plan = planFor(hostWith(null), reached, { resolvers, currentDns: true, lab: false });
  assert.ok('request' in plan, JSON.stringify(plan));
  assert.equal(plan.request.edges, true);
  assert.deepEqual(plan.request.hosts.map((h) => (typeof h === 'string' ? h : `${h.name} ${h.port ?? '-'}`)), ['www.example.org 443', 'cdn.example.net 80', 'late.example.com -'], 'no port where the browser reached nothing');
  const behindProxy = planFor(hostWith(null), { ...reached, proxied: true }, { resolvers: [...resolvers, { id: 'enc', name: 'Encrypted', endpoints: [{ transport: 'dot', address: '192.0.2.11', port: 853 }] }], currentDns: true, lab: false });
  assert.ok('request' in behindProxy, JSON.stringify(behindProxy));
  assert.equal(behindProxy.request.edges, undefined);
  assert.ok(behindProxy.request.hosts.every((h) => typeof h === 'string' || h.port === undefined));
});
