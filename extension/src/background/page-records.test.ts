// The background's page recorder fed event sequences in the orders the browsers deliver them: the usual order
// (webNavigation.onBeforeNavigate, then the main-frame request and its redirect, then onCommitted), and Firefox's
// order under load, where the main frame's webRequest events trail the navigation's commit. Either way the page
// keeps its hosts and its top-level redirect.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import { PageRecorder } from './page-records.js';
import { FakeArea } from './test-fixtures.js';

const BASE = 'moz-extension://test/';

function recorder(isIncognitoTab: (tabId: number) => Promise<boolean | null> = async () => false): PageRecorder {
  let n = 0;
  return new PageRecorder({
    area: new FakeArea(),
    isIncognitoTab,
    loadExclusions: async () => [],
    extensionBase: BASE,
    newId: () => `page-${++n}`,
    now: () => 0,
    setTimer: () => null,
    clearTimer: () => {},
    log: (m) => assert.fail(m),
  });
}

const TAB = 7;
const START = 'http://start.example.org/';
const PAGE = 'http://www.example.org/page.html';
const nav = (url: string, timeStamp: number) => ({ tabId: TAB, frameId: 0, url, timeStamp });
const req = (requestId: string, url: string, type: string, timeStamp: number) => ({ requestId, url, tabId: TAB, frameId: 0, type, timeStamp });
const redirect = { ...req('m1', START, 'main_frame', 102), redirectUrl: PAGE, statusCode: 302 };

type Order = 'navigation first' | 'requests trail the commit' | "the new tab's blank page commits late";

/** The events of one navigation through a 302, in `order`, then the report. */
async function run(order: Order) {
  const pages = recorder();
  await pages.ready;
  pages.onBeforeNavigate(nav(START, 100));
  const requests = (between?: () => void) => {
    pages.onBeforeRequest(req('m1', START, 'main_frame', 101));
    between?.();
    pages.onBeforeRedirect(redirect);
    pages.onBeforeRequest(req('m1', PAGE, 'main_frame', 103));
    pages.onResponseStarted(req('m1', PAGE, 'main_frame', 104));
    pages.onCompleted({ ...req('m1', PAGE, 'main_frame', 105), statusCode: 200 });
  };
  if (order === 'requests trail the commit') {
    pages.onCommitted(nav(PAGE, 106));
    requests();
  } else {
    // A new tab's about:blank, committed at 99 but delivered after the navigation started (seen in Chromium in CI).
    requests(order === 'navigation first' ? undefined : () => pages.onCommitted(nav('about:blank', 99)));
    pages.onCommitted(nav(PAGE, 106));
  }
  pages.onBeforeRequest(req('i1', 'http://img.example.org/x.gif', 'image', 107));
  const reply = await pages.report(TAB, { url: `${BASE}popup/popup.html` });
  assert.ok(reply.ok, JSON.stringify(reply));
  return reply.record;
}

for (const order of ['navigation first', 'requests trail the commit', "the new tab's blank page commits late"] as const) {
  test(`page recorder: a redirected navigation, ${order}`, async () => {
    const r = await run(order);
    assert.equal(r.host, 'www.example.org');
    assert.deepEqual(r.hosts.map((h) => h.name), ['start.example.org', 'www.example.org', 'img.example.org']);
    assert.deepEqual(r.redirects.map((x) => [x.from, x.to, x.status, x.type]), [['start.example.org', 'www.example.org', 302, 'main_frame']]);
    assert.equal(r.hosts.find((h) => h.name === 'www.example.org')?.viaRedirect, true);
    assert.equal(r.hosts.find((h) => h.name === 'img.example.org')?.fromSubframe, false);
  });
}

// Firefox 153's events for the demo's page under load (recorded from the extension, times relative): the typed
// http://start… redirects (302) to http://a…, HTTPS-First upgrades that to https (a redirect with status 0), which is
// refused; Firefox navigates again to the http address (a second onBeforeNavigate) and commits it while the main frame's
// webRequest events, the refused https leg and the new http request, are still on their way.
const FIREFOX_HTTPS_FIRST: Array<[string, Record<string, unknown>]> = [
  ['onBeforeNavigate', { url: 'http://start.example.com/', timeStamp: 433 }],
  ['onBeforeRequest', { type: 'main_frame', requestId: '3', url: 'http://start.example.com/', timeStamp: 432 }],
  ['onBeforeRedirect', { type: 'main_frame', requestId: '3', url: 'http://start.example.com/', timeStamp: 479, redirectUrl: 'http://a.example.com/page.html', statusCode: 302 }],
  ['onBeforeRequest', { type: 'main_frame', requestId: '3', url: 'http://a.example.com/page.html', timeStamp: 486 }],
  ['onBeforeRedirect', { type: 'main_frame', requestId: '3', url: 'http://a.example.com/page.html', timeStamp: 488, redirectUrl: 'https://a.example.com/page.html', statusCode: 0 }],
  ['onBeforeNavigate', { url: 'http://a.example.com/page.html', timeStamp: 508 }],
  ['onCommitted', { url: 'http://a.example.com/page.html', timeStamp: 539 }],
  ['onBeforeRequest', { type: 'main_frame', requestId: '3', url: 'https://a.example.com/page.html', timeStamp: 492 }],
  ['onErrorOccurred', { type: 'main_frame', requestId: '3', url: 'https://a.example.com/page.html', timeStamp: 497, error: 'NS_ERROR_CONNECTION_REFUSED' }],
  ['onBeforeRequest', { type: 'main_frame', requestId: '4', url: 'http://a.example.com/page.html', timeStamp: 502 }],
  ['onResponseStarted', { type: 'main_frame', requestId: '4', url: 'http://a.example.com/page.html', timeStamp: 514 }],
  ['onCompleted', { type: 'main_frame', requestId: '4', url: 'http://a.example.com/page.html', timeStamp: 533, statusCode: 200 }],
  ['onBeforeRequest', { type: 'stylesheet', requestId: '5', url: 'http://css.example.com/s.css', timeStamp: 574 }],
  ['onBeforeRequest', { type: 'image', requestId: '8', url: 'http://r1.example.com/redirect', timeStamp: 586 }],
  ['onBeforeRedirect', { type: 'image', requestId: '8', url: 'http://r1.example.com/redirect', timeStamp: 611, redirectUrl: 'http://r2.example.com/px.gif', statusCode: 302 }],
  ['onBeforeRequest', { type: 'image', requestId: '8', url: 'http://r2.example.com/px.gif', timeStamp: 633 }],
  ['onNavigationCompleted', { timeStamp: 687 }],
];

/** Another order recorded under load: the fallback navigation is reported before the redirect that leads to it. */
const FIREFOX_NAVIGATION_FIRST = [FIREFOX_HTTPS_FIRST[0]!, FIREFOX_HTTPS_FIRST[1]!, FIREFOX_HTTPS_FIRST[5]!, ...FIREFOX_HTTPS_FIRST.slice(2, 5), ...FIREFOX_HTTPS_FIRST.slice(7, 12), FIREFOX_HTTPS_FIRST[6]!, ...FIREFOX_HTTPS_FIRST.slice(12)];
const ORDERS = { 'as recorded': FIREFOX_HTTPS_FIRST, 'navigation before its redirect': FIREFOX_NAVIGATION_FIRST, 'requests first': [...FIREFOX_HTTPS_FIRST].sort((x, y) => (x[1].timeStamp as number) - (y[1].timeStamp as number)) };

/** Feeds the recorded events to a recorder, the navigation's events in `order`, and returns the tab's record. */
async function replayFirefox(order: keyof typeof ORDERS) {
  const pages = recorder();
  await pages.ready;
  const events = ORDERS[order];
  assert.equal(events.length, FIREFOX_HTTPS_FIRST.length);
  for (const [name, e] of events) {
    const d = { tabId: TAB, frameId: 0, ...e } as never;
    (pages as unknown as Record<string, (d: never) => void>)[name]!.call(pages, d);
  }
  const reply = await pages.report(TAB, { url: `${BASE}popup/popup.html` });
  assert.ok(reply.ok, JSON.stringify(reply));
  return reply.record;
}

for (const order of Object.keys(ORDERS) as Array<keyof typeof ORDERS>) {
  test(`page recorder: Firefox's HTTPS-First fallback after a redirect (events ${order}): one page, from the typed host to the subresources`, async () => {
    const r = await replayFirefox(order);
    assert.equal(r.url, 'http://a.example.com/page.html');
    assert.deepEqual(r.hosts.map((h) => h.name), ['start.example.com', 'a.example.com', 'css.example.com', 'r1.example.com', 'r2.example.com']);
    assert.deepEqual(r.redirects.filter((x) => x.status === 302).map((x) => [x.from, x.to]), [['start.example.com', 'a.example.com'], ['r1.example.com', 'r2.example.com']]);
    assert.equal(r.onLoadMs === null ? 'none' : 'seen', 'none', 'no content script here: no timing');
    assert.equal(r.hosts[0]!.firstNeededMs, 0, 'the page starts at the typed address\'s request');
  });
}

test('page recorder: each page says how long the browser had been idle before it (the last request of any page to its start)', async () => {
  const pages = recorder();
  await pages.ready;
  pages.onBeforeNavigate(nav(START, 100));
  pages.onBeforeRequest(req('m1', START, 'main_frame', 101));
  pages.onCompleted({ ...req('m1', START, 'main_frame', 140), statusCode: 200 });
  pages.onBeforeRequest(req('i1', 'http://img.example.org/x.gif', 'image', 150));
  pages.onCompleted({ ...req('i1', 'http://img.example.org/x.gif', 'image', 900), statusCode: 200 });
  const first = await pages.report(TAB, { url: `${BASE}popup/popup.html` });
  assert.ok(first.ok);
  assert.equal(first.record.idleBeforeMs, null, 'nothing before the first page');
  // Another tab navigates 30 s after the last response of the first page.
  pages.onBeforeNavigate({ tabId: 8, frameId: 0, url: PAGE, timeStamp: 30_900 });
  pages.onBeforeRequest({ ...req('m2', PAGE, 'main_frame', 30_901), tabId: 8 });
  const second = await pages.report(8, { url: `${BASE}popup/popup.html` });
  assert.ok(second.ok, JSON.stringify(second));
  assert.equal(second.record.idleBeforeMs, 30_000);
});

test('page recorder: a tab the browser cannot tell about (tabs.get failed) is treated as private: nothing recorded', async () => {
  for (const answer of [null, true] as const) {
    const pages = recorder(async () => answer);
    await pages.ready;
    pages.onBeforeNavigate(nav(PAGE, 100));
    pages.onBeforeRequest(req('m1', PAGE, 'main_frame', 101));
    pages.onCommitted(nav(PAGE, 106));
    pages.onBeforeRequest(req('i1', 'http://img.example.org/x.gif', 'image', 107));
    const reply = await pages.report(TAB, { url: `${BASE}popup/popup.html` });
    assert.equal(reply.ok, false, String(answer));
    assert.equal((reply as { code: string }).code, 'private-window');
  }
});

/** A top frame's or subframe's timing report: each resource as [origin, startTime, responseEnd]. */
function timingReport(url: string, timeOrigin: number, resources: Array<[string, number, number | null]>, onLoadMs: number | null) {
  const navigation: Record<string, number> = onLoadMs === null ? {} : { fetchStart: 15, responseEnd: 20, loadEventStart: onLoadMs };
  return {
    type: 'page-timing' as const, url, timeOrigin, onLoadMs, entries: resources.length, navigation,
    resources: resources.map(([origin, startTime, responseEnd]) => ({
      host: new URL(origin).hostname, lookupStart: null, lookupEnd: null, nextHopProtocol: null, origin, startTime, responseEnd, initiator: 'img',
    })),
  };
}

test('page recorder without webRequest: the navigation, its redirect, subframes and every frame\'s Resource Timing name the hosts', async () => {
  const pages = recorder();
  await pages.ready;
  pages.observeRequests(false);
  pages.onBeforeNavigate(nav(START, 100));
  pages.onCommitted(nav(PAGE, 130));
  pages.onBeforeNavigate({ tabId: TAB, frameId: 3, parentFrameId: 0, url: 'https://frame.example.net/f.html', timeStamp: 150 });
  // The top frame's clock starts at 100 (its timeOrigin); the frame's at 150.
  const top = timingReport(PAGE, 100, [['http://img.example.org', 40, 90], ['https://cdn.example.com', 60, null]], 200);
  const frame = timingReport('https://frame.example.net/f.html', 150, [['https://ads.example.net', 10, 30]], null);
  assert.deepEqual(await pages.timing(frame, { id: 'x', tabId: TAB, frameId: 3, url: 'https://frame.example.net/f.html' }), { ok: true });
  pages.onNavigationCompleted({ tabId: TAB, frameId: 0, timeStamp: 300 });
  assert.deepEqual(await pages.timing(top, { id: 'x', tabId: TAB, frameId: 0, url: PAGE }), { ok: true });
  // The top frame reports again once it has seen another host: the hosts it named before are not counted twice.
  const again = timingReport(PAGE, 100, [['http://img.example.org', 40, 90], ['https://late.example.com', 400, null]], 200);
  assert.deepEqual(await pages.timing(again, { id: 'x', tabId: TAB, frameId: 0, url: PAGE }), { ok: true });
  const reply = await pages.report(TAB, { url: `${BASE}popup/popup.html` });
  assert.ok(reply.ok, JSON.stringify(reply));
  const r = reply.record;
  const by = (name: string) => r.hosts.find((h) => h.name === name)!;
  assert.deepEqual(r.hosts.map((h) => h.name).sort(), ['ads.example.net', 'cdn.example.com', 'frame.example.net', 'img.example.org', 'late.example.com', 'start.example.org', 'www.example.org']);
  assert.deepEqual(r.hosts.slice(0, 3).map((h) => h.name), ['start.example.org', 'www.example.org', 'img.example.org'], 'in first-needed order');
  assert.deepEqual(r.redirects.map((x) => [x.from, x.to, x.type]), [['start.example.org', 'www.example.org', 'main_frame']]);
  assert.equal(by('www.example.org').viaRedirect, true);
  assert.equal(by('www.example.org').types.main_frame, 1);
  assert.equal(by('frame.example.net').fromSubframe, true);
  assert.equal(by('ads.example.net').fromSubframe, true);
  assert.equal(by('ads.example.net').firstNeededMs, 60, 'the frame\'s clock: 150 + 10, from the start at 100');
  assert.equal(by('img.example.org').firstNeededMs, 40);
  assert.equal(by('img.example.org').completedMs, 90);
  assert.equal(by('img.example.org').requests, 1, 'a second report of a host adds no request');
  assert.equal(by('cdn.example.com').completedMs, null);
  assert.equal(by('www.example.org').firstNeededMs, 15, 'the redirect\'s final host, needed at the document\'s fetch start');
  assert.equal(by('www.example.org').completedMs, 20, 'the document\'s response end completes the page\'s host');
  assert.equal(r.onLoadMs, 200);
});

test('page recorder with webRequest: frames\' reports add no host (its events name every request)', async () => {
  const pages = recorder();
  await pages.ready;
  pages.onBeforeNavigate(nav(PAGE, 100));
  pages.onBeforeRequest(req('m1', PAGE, 'main_frame', 101));
  pages.onCommitted(nav(PAGE, 106));
  const frame = timingReport('https://frame.example.net/f.html', 150, [['https://ads.example.net', 10, 30]], null);
  assert.deepEqual(await pages.timing(frame, { id: 'x', tabId: TAB, frameId: 3, url: 'https://frame.example.net/f.html' }), { ok: true });
  pages.onBeforeNavigate({ tabId: TAB, frameId: 3, parentFrameId: 0, url: 'https://frame.example.net/f.html', timeStamp: 150 });
  const reply = await pages.report(TAB, { url: `${BASE}popup/popup.html` });
  assert.ok(reply.ok);
  assert.deepEqual(reply.record.hosts.map((h) => h.name), ['www.example.org']);
});
