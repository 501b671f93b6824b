// pagePlan over the five real HARs in ../shared/pages (host counts as their README says; a tree with every parent
// present and no cycle) and over an invented HAR that has each initiator dialect and kind; parseHar's errors for
// malformed input. Data only: nothing here resolves or fetches a name.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'vitest';
import { ROOT } from '../paths.js';
import { HarError, parseHar } from '../../common/har.js';
import { readHarFile } from '../../native-host/src/hosts-input.js';
import { chainOf, pagePlan, PLAN_LIMITS, type PagePlan } from './plan.js';

/** The real pages (data only); DNSCOST_HAR_PAGES may point elsewhere. */
const PAGES = process.env.DNSCOST_HAR_PAGES ?? join(ROOT, '..', 'shared', 'pages');

/** The README's table: file → hostnames. */
function readmeHostCounts(): Map<string, number> {
  const text = readFileSync(join(PAGES, 'README.md'), 'utf8');
  return new Map([...text.matchAll(/^\| (\S+\.har) \| +\d+ \| +(\d+) \|$/gm)].map((m) => [m[1]!, Number(m[2])]));
}

/** Checks the invariants every plan keeps: one root, parents exist and came first, no cycle, hosts in order. */
function checkTree(plan: PagePlan): void {
  const rs = plan.resources;
  assert.equal(rs[plan.document]!.parent, null);
  assert.equal(rs.filter((r) => r.parent === null).length, 1, 'one root');
  for (const r of rs) {
    assert.equal(rs[r.id], r);
    if (r.parent !== null) {
      assert.ok(rs[r.parent], `parent ${r.parent} of ${r.id} exists`);
      assert.notEqual(r.discovery, 'root');
    }
    const chain = chainOf(plan, r.id);
    assert.equal(chain[0], plan.document, `resource ${r.id} reaches the document`);
    assert.equal(new Set(chain).size, chain.length, `no cycle through ${r.id}`);
    assert.ok(plan.hosts.includes(r.host));
    assert.ok(r.bytes >= 0 && r.bytes <= PLAN_LIMITS.maxBytes && Number.isInteger(r.bytes));
    assert.ok(r.waitMs >= 0 && r.waitMs <= PLAN_LIMITS.maxWaitMs);
    assert.ok(r.delayMs >= 0 && r.delayMs <= PLAN_LIMITS.maxDelayMs);
    if (r.discovery === 'css') assert.equal(rs[r.parent!]!.type, 'stylesheet');
    if (r.discovery === 'parser') assert.equal(rs[r.parent!]!.type, 'document');
    if (r.discovery === 'redirect') assert.equal(rs[r.parent!]!.redirectTo, r.url);
  }
  // Hosts in order of first request.
  const firstSeen = [...new Set([...rs].sort((a, b) => a.startMs - b.startMs || a.id - b.id).map((r) => r.host))];
  assert.deepEqual(new Set(plan.hosts), new Set(firstSeen));
  assert.equal(plan.hosts.length, new Set(plan.hosts).size);
}

describe.skipIf(!existsSync(PAGES))('the real pages', () => {
  const counts = existsSync(PAGES) ? readmeHostCounts() : new Map<string, number>();
  test('the README lists the five pages', () => {
    assert.deepEqual([...counts.values()].sort((a, b) => a - b), [6, 8, 14, 19, 99]);
    assert.deepEqual([...counts.keys()].sort(), readdirSync(PAGES).filter((f) => f.endsWith('.har')).sort());
  });
  for (const [file, hosts] of counts) {
    test(`${file}: ${hosts} hosts, a tree rooted at the document`, async () => {
      const plan = pagePlan(await readHarFile(join(PAGES, file)));
      assert.equal(plan.hosts.length, hosts);
      checkTree(plan);
      assert.equal(plan.resources[plan.landing]!.type, 'document');
      assert.ok(plan.onLoadMs !== null && plan.onLoadMs > 0);
      // Every kind of discovery the page needs is one the site can rebuild.
      for (const r of plan.resources) assert.ok(['root', 'redirect', 'parser', 'css', 'script', 'other'].includes(r.discovery));
    });
  }
  test('calibreapp: a redirected script is followed, preflights fold into their request', async () => {
    const plan = pagePlan(await readHarFile(join(PAGES, 'www.calibreapp.com.signin.har')));
    const by = (end: string) => plan.resources.find((r) => r.url.endsWith(end))!;
    const widget = by('/widget/pxfscr83');
    const shim = by('/shim.latest.js');
    assert.equal(widget.redirectTo, shim.url);
    assert.equal(shim.parent, widget.id);
    assert.equal(shim.discovery, 'redirect');
    // The stack names the redirected URL; what ran was the redirect's target.
    assert.equal(by('/frame-modern.7ede733e.js').parent, shim.id);
    const sessions = by('sessions.bugsnag.com/');
    assert.equal(sessions.method, 'POST');
    assert.equal(sessions.parent, by('/bugsnag.min.js').id);
    for (const font of plan.resources.filter((r) => r.type === 'font')) assert.deepEqual([font.parent, font.discovery], [0, 'parser']);
    assert.equal(plan.resources.length, 14, '15 entries, the OPTIONS preflight folded in');
  });
});

const T0 = Date.parse('2024-01-01T00:00:00.000Z');
/** One HAR entry at `at` ms with `extra` fields (Chrome's underscore fields, or others). */
function entry(url: string, at: number, extra: Record<string, unknown> = {}, res: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    pageref: 'page_1', startedDateTime: new Date(T0 + at).toISOString(), time: 50,
    request: { method: 'GET', url, headers: [] },
    response: { status: 200, redirectURL: '', headers: [], content: { size: 1000, mimeType: 'text/plain' }, ...res },
    timings: { blocked: 1, dns: 1, connect: 1, send: 1, wait: 30, receive: 16 },
    ...extra,
  };
}
const detail = (d: unknown) => ({ _initiator_detail: JSON.stringify(d) });
const stack = (...urls: string[]) => ({ callFrames: urls.map((url) => ({ url, functionName: 'f', lineNumber: 0, columnNumber: 0 })) });
const DOC = 'https://a.example/';

/** A tiny HAR with each initiator kind and dialect. */
function tinyHar(): string {
  const entries = [
    entry('https://a.example/old', 0, { _resourceType: 'document', ...detail({ type: 'other' }) }, { status: 301, redirectURL: '/' }),
    entry(DOC, 60, { _resourceType: 'document' }, { content: { size: 5000, mimeType: 'text/html' } }),
    entry('https://b.example/app.js', 120, { _resourceType: 'script', ...detail({ type: 'parser', url: DOC, lineNumber: 3 }) }),
    entry('https://a.example/site.css', 121, { _resourceType: 'stylesheet', ...detail({ type: 'parser', url: DOC }) }),
    entry('https://c.example/font.woff2', 200, { _resourceType: 'font', ...detail({ type: 'parser', url: 'https://a.example/site.css' }) }),
    // Inline script: the stack's only URL is the document.
    entry('https://d.example/inline.gif', 150, { _resourceType: 'image', ...detail({ type: 'script', stack: stack(DOC) }) }),
    // A script's child, named by an unnamed (eval) frame first and the script's URL in an async parent.
    entry('https://e.example/api', 300, { _resourceType: 'xhr', ...detail({ type: 'script', stack: { callFrames: [{ url: '' }], parent: stack('https://b.example/app.js') } }) }),
    // The preflight and its POST: one resource, the POST's.
    entry('https://e.example/post', 310, { _resourceType: 'other', ...detail({ type: 'preflight', url: 'https://e.example/post' }) }),
    { ...entry('https://e.example/post', 320, { _resourceType: 'xhr', ...detail({ type: 'script', stack: stack('https://b.example/app.js') }) }), request: { method: 'POST', url: 'https://e.example/post' } },
    // DevTools' own export: _initiator as an object.
    entry('https://f.example/obj.js', 330, { _resourceType: 'script', _initiator: { type: 'script', stack: stack('https://b.example/app.js') } }),
    // WebPageTest: _initiator as a URL string and _initiator_type.
    entry('https://g.example/wpt.png', 340, { _initiator: 'https://f.example/obj.js', _initiator_type: 'script' }, { content: { size: -1, mimeType: 'image/png' }, _transferSize: 777 }),
    // Firefox: _cause with a stack trace; no _resourceType (the MIME type tells).
    entry('https://h.example/ff.js', 350, { _cause: { type: 'script', stacktrace: [{ filename: 'https://f.example/obj.js', lineNumber: 1 }] } }, { content: { size: 10, mimeType: 'application/javascript' } }),
    // No initiator at all (a Firefox HAR without _cause): the document found it.
    entry('https://i.example/none', 360),
    // A script answered 404 cannot have run: its "child" goes to the script's parent.
    entry('https://j.example/missing.js', 370, { _resourceType: 'script', ...detail({ type: 'parser', url: DOC }) }, { status: 404 }),
    entry('https://k.example/orphan.js', 500, { _resourceType: 'script', ...detail({ type: 'script', stack: stack('https://j.example/missing.js') }) }),
    // Duplicates of a URL are one resource; non-http URLs are left out; other pages' entries too.
    entry('https://d.example/inline.gif', 600, { _resourceType: 'image', ...detail({ type: 'script', stack: stack(DOC) }) }),
    entry('data:image/gif;base64,R0lGOD', 610, { _resourceType: 'image' }),
    entry('https://z.example/next-page', 700, { pageref: 'page_2' }),
    entry('https://l.example/huge.bin', 800, { _resourceType: 'other' }, { content: { size: 1e12, mimeType: '' } }),
  ];
  return JSON.stringify({ log: { version: '1.2', creator: { name: 'test', version: '1' }, pages: [{ id: 'page_1', title: 't', pageTimings: { onLoad: 900 } }, { id: 'page_2' }], entries } });
}

describe('an invented HAR', () => {
  const plan = pagePlan(parseHar(tinyHar()));
  const by = (url: string) => plan.resources.find((r) => r.url === url)!;
  test('the tree keeps its invariants', () => checkTree(plan));
  test('the document, its redirect and the landing page', () => {
    assert.equal(plan.resources[plan.document]!.url, 'https://a.example/old');
    assert.equal(plan.resources[plan.landing]!.url, DOC);
    assert.deepEqual([by(DOC).parent, by(DOC).discovery], [plan.document, 'redirect']);
    assert.equal(plan.resources[plan.document]!.redirectTo, DOC);
    assert.equal(plan.onLoadMs, 900);
  });
  test('each initiator kind and dialect', () => {
    const cases: [string, string, string, string][] = [
      ['https://b.example/app.js', DOC, 'parser', 'script'],
      ['https://a.example/site.css', DOC, 'parser', 'stylesheet'],
      ['https://c.example/font.woff2', 'https://a.example/site.css', 'css', 'font'],
      ['https://d.example/inline.gif', DOC, 'script', 'image'],
      ['https://e.example/api', 'https://b.example/app.js', 'script', 'fetch'],
      ['https://e.example/post', 'https://b.example/app.js', 'script', 'fetch'],
      ['https://f.example/obj.js', 'https://b.example/app.js', 'script', 'script'],
      ['https://g.example/wpt.png', 'https://f.example/obj.js', 'script', 'image'],
      ['https://h.example/ff.js', 'https://f.example/obj.js', 'script', 'script'],
      ['https://i.example/none', DOC, 'other', 'other'],
      ['https://k.example/orphan.js', DOC, 'script', 'script'],
    ];
    for (const [url, parent, discovery, type] of cases) {
      const r = by(url);
      assert.deepEqual([plan.resources[r.parent!]!.url, r.discovery, r.type], [parent, discovery, type], url);
    }
  });
  test('sizes, waits, delays, methods, duplicates, skipped URLs and other pages', () => {
    assert.equal(by('https://e.example/post').method, 'POST');
    assert.equal(plan.resources.filter((r) => r.url === 'https://d.example/inline.gif').length, 1);
    assert.equal(by('https://g.example/wpt.png').bytes, 777, 'content.size -1 falls back to _transferSize');
    assert.equal(by('https://l.example/huge.bin').bytes, PLAN_LIMITS.maxBytes);
    assert.equal(by(DOC).bytes, 5000);
    assert.equal(by(DOC).waitMs, 30);
    // app.js started at 120; the landing document's response ended at 60 + 50.
    assert.equal(by('https://b.example/app.js').delayMs, 10);
    // api started at 300; app.js ended at 170.
    assert.equal(by('https://e.example/api').delayMs, 130);
    assert.equal(by('https://e.example/post').startMs, 310, 'a request starts when its preflight did');
    assert.deepEqual(plan.skipped.map((s) => s.reason), ['data: URL']);
    assert.ok(!plan.hosts.includes('z.example'));
    assert.deepEqual(plan.hosts.slice(0, 3), ['a.example', 'b.example', 'd.example']);
  });
});

describe('a URL the recording answered more than once', () => {
  const har = (entries: unknown[]) => JSON.stringify({ log: { version: '1.2', creator: { name: 't', version: '1' }, pages: [{ id: 'page_1' }], entries } });
  const TAG = 'https://t.example/tag.js';
  test('fetched twice (a tag loaded again later): the resource is the first fetch, whose children it started; nothing before it', () => {
    const plan = pagePlan(parseHar(har([
      entry(DOC, 0, { _resourceType: 'document' }, { content: { size: 5000, mimeType: 'text/html' } }),
      entry(TAG, 100, { _resourceType: 'script', ...detail({ type: 'parser', url: DOC }) }, { content: { size: 24069, mimeType: 'text/javascript' } }),
      entry('https://u.example/child.js', 200, { _resourceType: 'script', ...detail({ type: 'script', stack: stack(TAG) }) }),
      entry(TAG, 1800, { _resourceType: 'script', ...detail({ type: 'script', stack: stack('https://u.example/child.js') }) }, { content: { size: 12, mimeType: 'text/javascript' } }),
    ])));
    const tag = plan.resources.find((r) => r.url === TAG)!;
    assert.equal(tag.bytes, 24069);
    assert.deepEqual(tag.earlier, []);
    assert.equal(plan.resources.find((r) => r.url === 'https://u.example/child.js')!.parent, tag.id);
  });
  test('a 302 to itself, then the page: the redirect is served first, the page is the resource', () => {
    const plan = pagePlan(parseHar(har([
      entry(DOC, 0, { _resourceType: 'document' }, { status: 302, redirectURL: DOC }),
      entry(DOC, 50, { _resourceType: 'document' }, { content: { size: 5000, mimeType: 'text/html' } }),
    ])));
    const doc = plan.resources.find((r) => r.url === DOC)!;
    assert.deepEqual([doc.status, doc.bytes, doc.earlier.map((a) => a.status)], [200, 5000, [302]]);
  });
});

describe('malformed HARs are refused with a clear error', () => {
  const har = (entries: unknown, extra: Record<string, unknown> = {}) => JSON.stringify({ log: { entries, ...extra } });
  const cases: [string, string, string, RegExp][] = [
    ['not JSON', '{"log": ', 'not-json', /is not JSON/],
    ['JSON, not a HAR', '[1, 2]', 'not-har', /no "log" object/],
    ['no entries', JSON.stringify({ log: { pages: [] } }), 'no-entries', /no log\.entries/],
    ['empty entries', har([]), 'no-requests', /has no entries/],
    ['an entry that is not an object', har([42]), 'bad-entry', /entry 0 is not an object/],
    ['an entry without a request', har([{ response: {} }]), 'bad-entry', /entry 0 has no request object/],
    ['an entry without a URL', har([entry(DOC, 0), { request: { method: 'GET' } }]), 'bad-entry', /entry 1 has no request\.url/],
    ['a URL that is not one', har([{ ...entry(DOC, 0), request: { url: 'not a url' } }]), 'bad-entry', /not a URL: "not a url"/],
    ['no start time', har([{ ...entry(DOC, 0), startedDateTime: 'yesterday' }]), 'bad-entry', /no valid startedDateTime/],
    ['no entry of the first page', har([entry(DOC, 0, { pageref: 'p2' })], { pages: [{ id: 'p1' }] }), 'no-requests', /first page "p1"/],
  ];
  for (const [what, text, code, message] of cases) {
    test(what, () => {
      assert.throws(() => parseHar(text, 'x.har'), (e: unknown) => e instanceof HarError && e.code === code && message.test(e.message));
    });
  }
  test('a missing file', async () => {
    await assert.rejects(readHarFile('/nonexistent/x.har'), (e: unknown) => e instanceof HarError && e.code === 'unreadable');
  });
  test('a HAR with only non-http URLs has no page to plan', () => {
    assert.throws(() => pagePlan(parseHar(har([entry('data:text/html,hi', 0)]))), /no http\(s\) request/);
  });
  test('missing optional fields are tolerated', () => {
    const plan = pagePlan(parseHar(har([{ startedDateTime: new Date(T0).toISOString(), request: { url: DOC } }])));
    assert.deepEqual([plan.resources.length, plan.resources[0]!.bytes, plan.resources[0]!.waitMs, plan.resources[0]!.type], [1, 0, 0, 'other']);
  });
});
