import { test } from 'vitest';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { isLeaf, pageCostInput } from './page-cost.js';
import { PAGE_CAPS } from './page-record.js';
import { pageTimingSchema } from '../extension/src/messages/page.js';
import { PageBuilder, storedUrl } from './page-builder.js';

function page() {
  return { p: PageBuilder.start({ tabId: 7, url: 'http://www.example.com/', at: 1000, pageId: 'id-1' }) };
}

test('requests: first-needed times relative to the start, per-host counts and types, sorted report', () => {
  const { p } = page();
  p.request({ url: 'http://www.example.com/', type: 'main_frame', at: 1002, frameId: 0 });
  p.request({ url: 'https://cdn.example.net/a.js', type: 'script', at: 1050, frameId: 0 });
  p.request({ url: 'https://cdn.example.net/b.png', type: 'image', at: 1060, frameId: 0 });
  // Arrives later than an event stamped earlier (two event sources): the report orders by time.
  p.request({ url: 'https://fonts.example.org/f.woff2', type: 'font', at: 1040, frameId: 3 });
  p.request({ url: 'data:image/png;base64,xx', type: 'image', at: 1070, frameId: 0 });
  p.request({ url: 'https://192.168.1.10/x', type: 'xmlhttprequest', at: 1080, frameId: 0 });
  p.completed({ url: 'https://cdn.example.net/a.js', ip: '203.0.113.5', fromCache: true, statusLine: 'HTTP/2.0 200' });
  const r = p.record();
  assert.deepEqual(r.hosts.map((h) => [h.name, h.firstNeededMs]), [
    ['www.example.com', 2], ['fonts.example.org', 40], ['cdn.example.net', 50], ['192.168.1.10', 80],
  ]);
  const cdn = r.hosts.find((h) => h.name === 'cdn.example.net')!;
  assert.deepEqual(cdn.types, { script: 1, image: 1 });
  assert.equal(cdn.requests, 2);
  assert.deepEqual(cdn.ips, ['203.0.113.5']);
  assert.deepEqual(cdn.protocols, ['HTTP/2.0']);
  assert.equal(cdn.fromCache, 1);
  assert.deepEqual(cdn.schemes, ['https']);
  assert.equal(r.hosts.find((h) => h.name === 'fonts.example.org')!.fromSubframe, true);
  assert.equal(cdn.fromSubframe, false);
  // For the model, a host that served only fonts or images is a leaf (nothing it served named another host); one
  // that also served a script is not.
  assert.deepEqual(pageCostInput(r).hosts.map((h) => [h.name, h.leaf ?? false]), [
    ['www.example.com', false], ['fonts.example.org', true], ['cdn.example.net', false],
  ]);
  assert.deepEqual([isLeaf({ image: 2, font: 1 }), isLeaf({ image: 1, other: 1 }), isLeaf({}), isLeaf({ image: 0, script: 0 })], [true, false, false, false]);
  // A top-level frame (parentFrameId −1) is not a subframe whatever its frameId (Chromium, mid-commit); a frame with
  // a parent is one.
  p.request({ url: 'https://top.example.net/x.js', type: 'script', at: 1090, frameId: 12, parentFrameId: -1 });
  p.request({ url: 'https://cdn.example.net/c.js', type: 'script', at: 1091, frameId: 12, parentFrameId: -1 });
  p.request({ url: 'https://ads.example.net/f.html', type: 'sub_frame', at: 1092, frameId: 13, parentFrameId: 0 });
  const hostNamed = (n: string) => p.record().hosts.find((h) => h.name === n)!;
  assert.equal(hostNamed('top.example.net').fromSubframe, false);
  assert.equal(hostNamed('cdn.example.net').fromSubframe, false);
  assert.equal(hostNamed('ads.example.net').fromSubframe, true);
  assert.deepEqual(r.counts, { hosts: 4, measurable: 3, internal: 1, ipLiterals: 1, requests: 5 });
  // A request stamped before the start moves the start back; nothing is negative.
  p.request({ url: 'https://early.example.com/', type: 'ping', at: 990, frameId: 0 });
  const r2 = p.record();
  assert.equal(r2.startedAt, 990);
  assert.equal(r2.hosts[0]!.name, 'early.example.com');
  assert.ok(r2.hosts.every((h) => h.firstNeededMs >= 0));
});

test('completion times: a host\'s last response before the load event, relative to the start; what the model reads', () => {
  const { p } = page();
  p.request({ url: 'http://www.example.com/', type: 'main_frame', at: 1002, frameId: 0 });
  p.request({ url: 'https://cdn.example.net/a.js', type: 'script', at: 1050, frameId: 0 });
  p.request({ url: 'https://cdn.example.net/b.png', type: 'image', at: 1060, frameId: 0 });
  p.request({ url: 'https://late.example.org/x', type: 'xmlhttprequest', at: 1100, frameId: 0 });
  p.completed({ url: 'https://cdn.example.net/b.png', at: 1180 });
  // Out of order: an earlier completion arriving later does not move the last one back.
  p.completed({ url: 'https://cdn.example.net/a.js', at: 1120 });
  p.completed({ url: 'http://www.example.com/', at: 1040 });
  p.complete(1300); // webNavigation.onCompleted: the load event
  p.completed({ url: 'https://late.example.org/x', at: 1450 }); // after the load event: not one it waited for
  p.completed({ url: 'https://cdn.example.net/c.png' }); // no time: nothing recorded
  const r = p.record();
  const done = Object.fromEntries(r.hosts.map((h) => [h.name, h.completedMs]));
  assert.deepEqual(done, { 'www.example.com': 40, 'cdn.example.net': 180, 'late.example.org': null });
  // The model's input keeps completion times within [first needed, onLoad].
  const input = pageCostInput({ ...r, onLoadMs: 250 });
  assert.deepEqual(input.hosts.map((h) => [h.name, h.completedMs]), [['www.example.com', 40], ['cdn.example.net', 180], ['late.example.org', null]]);
  assert.deepEqual(pageCostInput({ ...r, onLoadMs: 150 }).hosts.map((h) => h.completedMs), [40, null, null]);
  // A page stored before completion times were kept reads as unknown.
  const old = p.stored() as unknown as { hosts: Array<{ completedMs?: number | null }> };
  for (const h of old.hosts) delete h.completedMs;
  assert.ok(PageBuilder.revive(old)!.record().hosts.every((h) => h.completedMs === null));
});

test('caps: hosts over the cap are counted once each, refused names sampled (cut), redirects capped', () => {
  const { p } = page();
  for (let n = 0; n < PAGE_CAPS.hosts + 300; n++) {
    p.request({ url: `http://h${n}.example.com/`, type: 'image', at: 1000 + n, frameId: 0 });
    p.request({ url: `http://h${n}.example.com/again`, type: 'image', at: 1000 + n, frameId: 0 });
  }
  p.request({ url: `http://${'x'.repeat(300)}.example.com/`, type: 'image', at: 2000, frameId: 0 });
  const r = p.record();
  assert.equal(r.hosts.length, PAGE_CAPS.hosts);
  assert.equal(r.dropped.hostsOverCap, 300);
  assert.equal(r.dropped.requestsOverCap, 600);
  assert.equal(r.dropped.invalidNames, 1);
  assert.equal(r.dropped.invalidSamples[0]!.length, PAGE_CAPS.sampleLength + 1);
  for (let n = 0; n < PAGE_CAPS.redirects + 5; n++) p.redirect({ url: 'http://a.example/', redirectUrl: 'https://a.example/', statusCode: 301, type: 'main_frame', at: 1001 });
  const r2 = p.record();
  assert.equal(r2.redirects.length, PAGE_CAPS.redirects);
  assert.equal(r2.dropped.redirectsOverCap, 5);
  assert.deepEqual(r2.redirects[0], { from: 'a.example', to: 'a.example', status: 301, type: 'main_frame', atMs: 1 });
});

test('timing: validated on entry; lookups only where exposed; unknown hosts ignored', () => {
  const { p } = page();
  p.request({ url: 'http://www.example.com/', type: 'main_frame', at: 1001, frameId: 0 });
  p.request({ url: 'http://img.example.com/x', type: 'image', at: 1010, frameId: 0 });
  const msg = {
    type: 'page-timing', url: 'http://www.example.com/', timeOrigin: 1000.5, onLoadMs: 120, entries: 3,
    navigation: { entryType: 'navigation', type: 'navigate', loadEventStart: 120, domainLookupStart: 3 },
    resources: [
      { host: 'www.example.com', lookupStart: 5, lookupEnd: 9, nextHopProtocol: 'http/1.1' },
      { host: 'img.example.com', lookupStart: null, lookupEnd: null, nextHopProtocol: null },
      { host: '<b>not</b>', lookupStart: 1, lookupEnd: 2, nextHopProtocol: null },
    ],
  };
  const parsed = v.parse(pageTimingSchema, msg);
  p.timing(parsed, 5000);
  const r = p.record();
  assert.equal(r.onLoadMs, 120);
  assert.equal(r.navigationTiming!.type, 'navigate');
  assert.deepEqual(r.hosts[0]!.lookup, { startMs: 5, endMs: 9, durationMs: 4, nextHopProtocol: 'http/1.1' });
  assert.equal(r.hosts[1]!.lookup, null);
  assert.equal(r.dropped.timingHostsIgnored, 1);
  assert.deepEqual(r.resourceTiming, { entries: 3, hostsExposed: 1 });
  assert.ok(r.complete);
  for (const bad of [
    { ...msg, extra: 1 },
    { ...msg, timeOrigin: Infinity },
    { ...msg, navigation: { x: { nested: 1 } } },
    { ...msg, navigation: Object.fromEntries(Array.from({ length: 200 }, (_, n) => [`f${n}`, n])) },
    { ...msg, resources: Array.from({ length: 2000 }, () => msg.resources[0]) },
    { ...msg, url: 'u'.repeat(10_000) },
  ]) assert.equal(v.safeParse(pageTimingSchema, bad).success, false);
});

test('timing that comes before a host\'s first request is applied when the request arrives (webRequest events trail the load)', () => {
  const { p } = page();
  p.request({ url: 'http://www.example.com/', type: 'main_frame', at: 1001, frameId: 0 });
  p.timing(v.parse(pageTimingSchema, {
    type: 'page-timing', url: 'http://www.example.com/', timeOrigin: 1000.5, onLoadMs: 120, entries: 2, navigation: {},
    resources: [
      { host: 'IMG.example.com', lookupStart: 5, lookupEnd: 9, nextHopProtocol: 'h2' },
      { host: 'never.example.com', lookupStart: 1, lookupEnd: 2, nextHopProtocol: null },
    ],
  }), 5000);
  assert.equal(p.record().dropped.timingHostsIgnored, 2);
  p.request({ url: 'http://img.example.com/x', type: 'image', at: 1010, frameId: 0 });
  const r = p.record();
  assert.deepEqual(r.hosts[1]!.lookup, { startMs: 5, endMs: 9, durationMs: 4, nextHopProtocol: 'h2' });
  assert.deepEqual(r.hosts[1]!.protocols, ['h2']);
  assert.equal(r.dropped.timingHostsIgnored, 1, 'the host never requested stays ignored');
  assert.deepEqual(r.resourceTiming, { entries: 2, hostsExposed: 1 });
  assert.ok(!('timingPending' in r), 'the pending entries are not part of the report');
  // A second request of the host applies nothing twice.
  p.request({ url: 'http://img.example.com/y', type: 'image', at: 1011, frameId: 0 });
  assert.equal(p.record().resourceTiming!.hostsExposed, 1);
});

test('a page\'s address is kept without query, fragment or user info, in the page and in its navigation timing', () => {
  assert.equal(storedUrl('https://user:pw@mail.example.com/inbox?search=doctor&token=abc#msg-1'), 'https://mail.example.com/inbox');
  assert.equal(storedUrl('http://www.example.com/'), 'http://www.example.com/');
  assert.equal(storedUrl('not a url?q=1#x'), 'not a url');
  const p = PageBuilder.start({ tabId: 3, url: 'https://shop.example.com/cart?session=s3cr3t#pay', at: 1000, pageId: 'pg' });
  assert.equal(p.url, 'https://shop.example.com/cart');
  const timing = v.parse(pageTimingSchema, {
    type: 'page-timing', url: 'https://shop.example.com/cart?session=s3cr3t', timeOrigin: 1000, onLoadMs: 50, entries: 1,
    navigation: { entryType: 'navigation', name: 'https://shop.example.com/cart?session=s3cr3t#pay', loadEventStart: 50 }, resources: [],
  });
  p.timing(timing, 2000);
  assert.doesNotMatch(JSON.stringify(p.stored()), /s3cr3t|pay/);
});

test('stored pages round-trip through JSON and are recognised', () => {
  const { p } = page();
  p.request({ url: 'http://www.example.com/', type: 'main_frame', at: 1001, frameId: 0 });
  const back = PageBuilder.revive(JSON.parse(JSON.stringify(p.stored())));
  assert.ok(back);
  assert.deepEqual(back.record(), p.record());
  back.request({ url: 'http://www.example.com/2', type: 'image', at: 1002, frameId: 0 });
  assert.equal(back.record().hosts.length, 1);
  const stored = p.stored();
  for (const bad of [null, {}, { ...stored, version: 2 }, { ...stored, hosts: 'x' }, { ...stored, building: undefined }]) assert.equal(PageBuilder.revive(bad), null);
});

test("a page whose requests went through a proxy (Firefox's proxyInfo) is marked proxied; a direct one is not", () => {
  const direct = page().p;
  direct.request({ url: 'http://www.example.com/', type: 'main_frame', at: 1002, frameId: 0 });
  direct.completed({ url: 'http://www.example.com/', proxyInfo: { type: 'direct', host: '', port: 0 } });
  direct.completed({ url: 'http://www.example.com/', proxyInfo: null });
  assert.equal(direct.record().proxied, undefined);
  const proxied = page().p;
  proxied.request({ url: 'http://www.example.com/', type: 'main_frame', at: 1002, frameId: 0 });
  proxied.request({ url: 'http://cdn.example.net/a.js', type: 'script', at: 1010, frameId: 0 });
  proxied.error({ url: 'http://cdn.example.net/a.js', proxyInfo: { type: 'http', host: '10.0.0.8', port: 3128 } });
  assert.equal(proxied.record().proxied, true);
  // Kept across storage, as every other field.
  assert.equal(PageBuilder.revive(proxied.stored())!.record().proxied, true);
});
