// The background's quiet while pages load (quiet.ts), alone and in the page recorder: while a top-level page loads the
// recorder asks the browser nothing (no tab or settings read for its gate, no storage write); at the load's end, when
// someone asks for the page, or after QUIET_CAP_MS it does; an exclusion's removal does not wait.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import { LoadQuiet, QUIET_CAP_MS } from './quiet.js';
import { PageRecorder } from './page-records.js';
import { FakeArea, fakeClock, settle } from './test-fixtures.js';

test('quiet: work asked for while a page loads runs at its end, in order; with no load at once', () => {
  const c = fakeClock();
  const q = new LoadQuiet(c);
  const ran: string[] = [];
  q.run(() => ran.push('idle'));
  assert.deepEqual(ran, ['idle']);
  q.started(1);
  q.started(2);
  q.run(() => ran.push('a'));
  q.run(() => ran.push('b'));
  q.ended(1);
  assert.deepEqual(ran, ['idle'], 'tab 2 still loads');
  q.ended(2);
  assert.deepEqual(ran, ['idle', 'a', 'b']);
});

test(`quiet: a load that never ends holds work back for ${QUIET_CAP_MS} ms at most; flush runs it at once`, () => {
  const c = fakeClock();
  const q = new LoadQuiet(c);
  const ran: string[] = [];
  q.started(1);
  q.run(() => ran.push('capped'));
  c.advance(QUIET_CAP_MS - 1);
  assert.equal(ran.join(), '');
  c.advance(1);
  assert.deepEqual(ran, ['capped']);
  q.run(() => ran.push('after the cap'));
  assert.deepEqual(ran, ['capped', 'after the cap'], 'a load older than the cap no longer counts');
  q.started(2);
  q.run(() => ran.push('flushed'));
  q.flush();
  assert.deepEqual(ran, ['capped', 'after the cap', 'flushed']);
});

test('page recorder: while the page loads it reads no tab or settings and writes nothing; after onCompleted it does', async () => {
  const c = fakeClock();
  const area = new FakeArea();
  const asked: string[] = [];
  const pages = new PageRecorder({
    area,
    isIncognitoTab: async () => (asked.push('tab'), false),
    loadExclusions: async () => (asked.push('settings'), []),
    extensionBase: 'moz-extension://test/',
    newId: () => 'page-1',
    now: c.now,
    setTimer: c.setTimer,
    clearTimer: c.clearTimer,
    log: (m) => assert.fail(m),
  });
  await pages.ready;
  pages.onBeforeNavigate({ tabId: 7, frameId: 0, url: 'https://www.example.org/', timeStamp: 100 });
  pages.onBeforeRequest({ requestId: 'm1', url: 'https://www.example.org/', tabId: 7, frameId: 0, type: 'main_frame', timeStamp: 101 });
  c.advance(20);
  pages.onCommitted({ tabId: 7, frameId: 0, url: 'https://www.example.org/', timeStamp: 120 });
  pages.onBeforeRequest({ requestId: 'i1', url: 'https://img.example.net/x.png', tabId: 7, frameId: 0, type: 'image', timeStamp: 130 });
  c.advance(1000);
  await settle();
  assert.equal(asked.join(), '', 'no gate read during the load');
  assert.equal(area.sets, 0, 'no storage write during the load');
  pages.onNavigationCompleted({ tabId: 7, frameId: 0, timeStamp: 1200 });
  await settle();
  assert.ok(asked.includes('tab') && asked.includes('settings'), asked.join());
  c.advance(1000);
  await settle();
  assert.equal(area.sets, 1, 'one write once the load has ended');
  const stored = (await area.get('pages:tab:7'))['pages:tab:7'] as { current: { hosts: Array<{ name: string }> } };
  assert.deepEqual(stored.current.hosts.map((h) => h.name), ['www.example.org', 'img.example.net']);

  // An exclusion made while another tab loads: what it drops leaves storage at once.
  pages.onBeforeNavigate({ tabId: 8, frameId: 0, url: 'https://other.example.net/', timeStamp: 2500 });
  pages.applyExclusions(['example.org']);
  c.advance(0);
  await settle();
  assert.equal((await area.get('pages:tab:7'))['pages:tab:7'], undefined, 'the excluded page is gone from storage');
  pages.onTabRemoved(8);
  await settle(); // tab 8's gate, held back while it loaded, runs now that it closed

  // A second load: the popup asking for the page decides its gate at once.
  asked.length = 0;
  pages.onBeforeNavigate({ tabId: 7, frameId: 0, url: 'https://news.example.com/', timeStamp: 5000 });
  pages.onCommitted({ tabId: 7, frameId: 0, url: 'https://news.example.com/', timeStamp: 5020 });
  await settle();
  assert.equal(asked.join(), '');
  const reply = await pages.report(7, { url: 'moz-extension://test/popup/popup.html' });
  assert.ok(reply.ok, JSON.stringify(reply));
  assert.equal(reply.record.host, 'news.example.com');
  assert.ok(asked.includes('tab'));
});
