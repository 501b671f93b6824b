// The background's uploader with a fake collector (a function answering like collector/routes.ts), storage in
// memory and a fake clock: off until turned on; pages sealed into batches; the preview is the bytes sent; offline and
// 5xx retried with backoff and the same key (exactly once at the collector); 4xx refused and kept aside; 429's
// Retry-After honoured; pause holds the queue; a restarted worker carries on; delete sends each token.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import { historyEntry } from '../history.js';
import { defaultSettings, type Settings } from '../settings.js';
import { DELETION_TOKEN_HEADER } from '../../../common/upload-batch.js';
import type { UploadStatus } from '../messages/upload.js';
import { UPLOAD_TIMING, Uploader } from './uploader.js';
import { PERSON_CAP } from '../../../common/privacy-budget.js';
import { seededRandom } from '../../../common/stats.js';
import { FakeArea, measured } from './test-fixtures.js';

const T0 = Date.parse('2026-11-21T15:00:00Z');
type Call = { url: string; method: string; headers: Record<string, string>; body?: string | undefined };

function harness(opts: { area?: FakeArea; upload?: Partial<Settings['upload']>; answer?: (c: Call) => { status: number; body?: unknown; retryAfter?: string } | 'offline'; random?: () => number } = {}) {
  const area = opts.area ?? new FakeArea();
  const calls: Call[] = [];
  const stored = new Map<string, string>();
  let now = T0;
  let n = 0;
  const settings: Settings = { ...defaultSettings([]), upload: { enabled: true, paused: false, collector: 'http://127.0.0.1:9/', network: { type: 'wifi' }, ...opts.upload } };
  // The default collector: stores each key once (duplicate → 200), refuses a key reused for other bytes (409).
  const collector = (c: Call): { status: number; body?: unknown; retryAfter?: string } | 'offline' => {
    if (c.method === 'DELETE') return { status: 200, body: { ok: true } };
    const key = (JSON.parse(c.body!) as { key: string }).key;
    if (stored.has(key)) return stored.get(key) === c.body ? { status: 200, body: { ok: true, duplicate: true } } : { status: 409, body: { ok: false, code: 'key-conflict', message: 'no' } };
    stored.set(key, c.body!);
    return { status: 201, body: { ok: true, key, duplicate: false } };
  };
  let answer = opts.answer ?? collector;
  const u = new Uploader({
    area,
    loadSettings: async () => settings,
    fetch: async (url, init) => {
      const call = { url, method: init.method, headers: init.headers, body: init.body };
      calls.push(call);
      const a = answer(call);
      if (a === 'offline') throw new TypeError('Failed to fetch');
      return { status: a.status, headers: { get: (h: string) => (h === 'retry-after' ? (a.retryAfter ?? null) : null) }, text: async () => JSON.stringify(a.body ?? {}) };
    },
    randomToken: (bytes) => `tok${String(++n).padStart(bytes, '0')}`,
    random: opts.random ?? (() => 0.5),
    now: () => now,
    setTimer: () => null,
    clearTimer: () => {},
    log: () => {},
  });
  const entry = (i: number, host = 'www.bbc.co.uk') => {
    const m = measured(`p${i}`, now - 1000, 80, host);
    return historyEntry(m.meta, m.records);
  };
  return {
    u, area, calls, stored, settings, entry,
    advance: (ms: number) => (now += ms),
    setAnswer: (f: typeof answer) => (answer = f),
    collector,
    status: async () => (await u.status()) as UploadStatus,
  };
}

test('uploads off: a finished measurement is not queued, nothing is sent', async () => {
  const h = harness({ upload: { enabled: false } });
  for (let i = 0; i < 25; i++) await h.u.onHistory(h.entry(i));
  assert.equal((await h.status()).pendingPages, 0);
  assert.equal((await h.u.preview()).batch, null);
  assert.equal(h.calls.length, 0);
});

test('an excluded site: its pages waiting to be uploaded are dropped, and every sealed batch holding one', async () => {
  const h = harness({ upload: { paused: true } });
  await h.u.onHistory(h.entry(0, 'www.bank.example'));
  await h.u.onHistory(h.entry(1));
  await h.u.flush();
  assert.equal((await h.u.preview()).batch!.pages, 1, 'sealed, one page per batch, waiting (paused)');
  assert.equal((await h.status()).queued.length, 2);
  await h.u.onHistory(h.entry(2, 'bank.example'));
  const bank = (host: string) => host === 'bank.example' || host.endsWith('.bank.example');
  assert.deepEqual(await h.u.purge(bank), { pages: 1, batches: 1 });
  const s = await h.status();
  assert.deepEqual([s.pendingPages, s.queued.length], [0, 1], 'the other site\'s batch stays');
  assert.doesNotMatch(JSON.stringify([...h.area.data.values()]), /bank\.example/, 'nothing of the site is kept for upload');
  assert.deepEqual(await h.u.purge(bank), { pages: 0, batches: 0 });
});

test('of a day\'s pages at most 3 are kept, sealed when the day is over, one batch each, sent a random gap apart; the preview is byte for byte what the collector receives', async () => {
  const h = harness();
  const gap = UPLOAD_TIMING.gapMs.min + 0.5 * (UPLOAD_TIMING.gapMs.max - UPLOAD_TIMING.gapMs.min);
  // Sends what is due after `ms` more.
  const later = async (ms: number) => {
    h.advance(ms);
    await h.u.kick();
  };
  for (let i = 0; i < 3; i++) await h.u.onHistory(h.entry(i));
  const preview = (await h.u.preview()).batch!;
  assert.equal(preview.pages, 1);
  for (let i = 3; i < 8; i++) await h.u.onHistory(h.entry(i));
  let s = await h.status();
  assert.deepEqual([s.pendingPages, s.today], [PERSON_CAP.pagesPerDay, { day: '2026-11-21', measured: 8, kept: 3, cap: 3 }]);
  await later(Date.parse('2026-11-22T00:00:00Z') - T0);
  assert.equal(h.calls.length, 0, 'nothing leaves before the day is over');
  const afterDay = UPLOAD_TIMING.afterDayMs.min + 0.5 * (UPLOAD_TIMING.afterDayMs.max - UPLOAD_TIMING.afterDayMs.min);
  await later(afterDay - 1);
  assert.equal(h.calls.length, 0, 'nor at midnight: a random wait after it');
  await later(1);
  assert.equal(h.calls.length, 1, 'the first batch goes, the others a gap apart each');
  assert.equal(h.calls[0]!.body, preview.body, 'sent bytes = preview bytes');
  assert.equal(h.calls[0]!.url, 'http://127.0.0.1:9/v1/batches');
  assert.match(h.calls[0]!.headers[DELETION_TOKEN_HEADER]!, /^[A-Za-z0-9_-]{32,}$/);
  await later(gap - 1);
  assert.equal(h.calls.length, 1, 'not before its gap');
  await later(1);
  await later(gap);
  assert.equal(h.calls.length, 3);
  assert.ok(UPLOAD_TIMING.gapMs.min > 300_000, 'longer than the collector and common front proxies keep an idle connection: each batch on its own');
  assert.ok(UPLOAD_TIMING.afterDayMs.max + 2 * UPLOAD_TIMING.gapMs.max < 6 * 3_600_000, 'a day\'s batches arrive before the day is published');
  s = await h.status();
  assert.deepEqual([s.pendingPages, s.queued.length, s.sent.length, s.today.measured], [0, 0, 3, 0]);
  assert.ok(s.sent.every((b) => b.pages === 1));
  assert.equal(new Set(h.calls.map((c) => (JSON.parse(c.body!) as { key: string }).key)).size, 3, 'a key per batch');
  for (const c of h.calls) assert.ok(!JSON.stringify(s).includes(c.headers[DELETION_TOKEN_HEADER]!), 'the status does not show deletion tokens');
});

test('the day\'s sample is uniform: each of a day\'s 10 pages is uploaded with chance 3/10, whatever its place in the day', async () => {
  // A seeded stream, so the test is the same every run.
  const random = seededRandom(0x9e3779b9);
  const h = harness({ upload: { paused: true }, random });
  const days = 400;
  const kept = new Array<number>(10).fill(0);
  for (let d = 0; d < days; d++) {
    for (let i = 0; i < 10; i++) {
      await h.u.onHistory(h.entry(i, `p${i}.bbc.co.uk`));
      h.advance(60_000);
    }
    for (const { host } of h.area.data.get('upload:pending') as Array<{ host: string }>) kept[Number(host.slice(1, host.indexOf('.')))]!++;
    h.advance(86_400_000 - 600_000);
  }
  const sd = Math.sqrt((0.3 * 0.7) / days);
  for (const [i, k] of kept.entries()) assert.ok(Math.abs(k / days - 0.3) < 4 * sd, `page ${i} of each day kept in ${k} of ${days} days`);
  assert.equal(kept.reduce((a, b) => a + b, 0), 3 * days, 'exactly 3 a day');
});

test('offline, then 503, then up: retried with backoff and the same key and bytes; stored exactly once', async () => {
  const h = harness();
  h.setAnswer(() => 'offline');
  await h.u.onHistory(h.entry(1));
  await h.u.flush();
  let s = await h.status();
  assert.equal(s.queued.length, 1);
  assert.equal(s.queued[0]!.attempts, 1);
  assert.equal(s.queued[0]!.lastError?.code, 'unreachable');
  const wait1 = s.queued[0]!.nextAt - T0;
  assert.ok(wait1 >= UPLOAD_TIMING.retryBaseMs / 2 && wait1 <= UPLOAD_TIMING.retryBaseMs, `first retry after ${wait1} ms`);
  await h.u.kick();
  assert.equal(h.calls.length, 1, 'not due yet: not sent again');
  h.setAnswer(() => ({ status: 503, body: { ok: false, code: 'unavailable', message: 'store down' } }));
  h.advance(wait1);
  await h.u.kick();
  s = await h.status();
  assert.equal(s.queued[0]!.attempts, 2);
  assert.equal(s.queued[0]!.lastError?.code, 'unavailable');
  assert.ok(s.queued[0]!.nextAt - (T0 + wait1) >= UPLOAD_TIMING.retryBaseMs, 'the backoff doubles');
  // The collector stored the batch but its answer was lost: the retry is a duplicate, acknowledged once.
  h.setAnswer(h.collector);
  h.collector(h.calls[0]!);
  h.advance(UPLOAD_TIMING.retryMaxMs);
  await h.u.kick();
  s = await h.status();
  assert.deepEqual([s.queued.length, s.sent.length], [0, 1]);
  assert.equal(new Set(h.calls.map((c) => c.body)).size, 1, 'every try sent the same bytes');
  assert.equal(h.stored.size, 1);
});

test('a refused batch (400) is set aside with the collector\'s code and never retried; 429 waits Retry-After', async () => {
  const h = harness({ answer: () => ({ status: 400, body: { ok: false, code: 'out-of-range', message: 'hour too old' } }) });
  await h.u.onHistory(h.entry(1));
  await h.u.flush();
  let s = await h.status();
  assert.deepEqual([s.queued.length, s.refused.length], [0, 1]);
  assert.deepEqual([s.refused[0]!.status, s.refused[0]!.code], [400, 'out-of-range']);
  await h.u.flush();
  assert.equal(h.calls.length, 1);

  const r = harness({ answer: () => ({ status: 429, body: { ok: false, code: 'rate-limited', message: 'slow down' }, retryAfter: '120' }) });
  await r.u.onHistory(r.entry(1));
  await r.u.flush();
  s = await r.status();
  assert.equal(s.queued[0]!.lastError?.code, 'rate-limited');
  assert.ok(s.queued[0]!.nextAt - T0 >= 120_000, 'Retry-After honoured');
});

test('paused: the queue waits; resumed: it goes. A restarted worker carries on from storage', async () => {
  const area = new FakeArea();
  const h = harness({ area, upload: { paused: true } });
  await h.u.onHistory(h.entry(1));
  await h.u.flush();
  assert.equal(h.calls.length, 0);
  assert.equal((await h.status()).queued.length, 1);
  // The worker dies; the new one has uploads resumed.
  const h2 = harness({ area });
  await h2.u.kick();
  assert.equal(h2.calls.length, 1);
  assert.equal((await h2.status()).sent.length, 1);
});

test('the cap counts pages sent early; a page of a day before yesterday is not kept; pages stored by an earlier version are not sent', async () => {
  const area = new FakeArea();
  const h = harness({ area });
  await h.u.onHistory(h.entry(1));
  await h.u.flush();
  assert.equal(h.calls.length, 1, '"send now" seals today\'s page');
  for (let i = 2; i < 8; i++) await h.u.onHistory(h.entry(i));
  assert.deepEqual((await h.status()).today, { day: '2026-11-21', measured: 7, kept: 3, cap: 3 });
  const old = h.entry(9);
  await h.u.onHistory({ ...old, at: T0 - 2 * 86_400_000 });
  assert.equal((await h.status()).pendingPages, 2);
  area.data.set('upload:pending', [...(area.data.get('upload:pending') as unknown[]), { page: {}, at: T0, host: 'x.example' }]);
  assert.equal((await h.status()).pendingPages, 2, 'a pending page of the old shape is dropped');
  await h.u.flush();
  assert.equal(h.calls.length, 2, 'the first at once');
  h.advance(UPLOAD_TIMING.gapMs.max);
  await h.u.kick();
  assert.equal(h.calls.length, 3, 'the second a gap later: 3 of the day in all');
});

test('delete: each sent batch is deleted with its own token; what the collector no longer has is forgotten', async () => {
  const h = harness();
  for (const i of [1, 2]) {
    await h.u.onHistory(h.entry(i));
    await h.u.flush();
  }
  const tokens = h.calls.map((c) => c.headers[DELETION_TOKEN_HEADER]);
  h.setAnswer((c) => (c.method === 'DELETE' ? { status: c.url.endsWith((JSON.parse(h.calls[0]!.body!) as { key: string }).key) ? 200 : 500 } : { status: 201 }));
  const r = await h.u.deleteSent();
  assert.equal(r.deleted, 1);
  assert.equal(r.failed.length, 1);
  const deletes = h.calls.filter((c) => c.method === 'DELETE');
  assert.deepEqual(deletes.map((c) => c.headers[DELETION_TOKEN_HEADER]), tokens);
  assert.equal((await h.status()).sent.length, 1, 'the one that failed stays, to try again');
});

test('the backlog goes to the collector it was queued for or nowhere: a new collector gets only what came after', async () => {
  const h = harness({ upload: { paused: true, collector: 'https://a.example/' } });
  for (let i = 0; i < 3; i++) await h.u.onHistory(h.entry(i));
  await h.u.flush();
  assert.equal((await h.u.preview()).batch!.pages, 1, 'sealed for a.example, waiting (paused)');
  h.advance(86_400_000);
  await h.u.onHistory(h.entry(3));
  const before = await h.status();
  assert.deepEqual([before.queued.length, before.pendingPages], [3, 1]);
  // The person moves to another collector (and has agreed to it): nothing queued for the first may go there.
  Object.assign(h.settings.upload, { collector: 'https://b.example/', paused: false });
  await h.u.flush();
  assert.deepEqual(h.calls.map((c) => c.url), [], 'the backlog was not sent to b.example');
  const after = await h.status();
  assert.deepEqual([after.queued.length, after.pendingPages], [0, 0], 'dropped');
  await h.u.onHistory(h.entry(4));
  await h.u.flush();
  assert.deepEqual(h.calls.map((c) => c.url), ['https://b.example/v1/batches'], 'what came after goes to b.example');
});
