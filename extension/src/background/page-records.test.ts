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
