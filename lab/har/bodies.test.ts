// The generated bodies of a rebuilt page: each discovery kind written the way bodies.ts says, every body exactly the
// HAR's size (or whole when the markup needs more), and every script (inline or not) valid JavaScript.
import assert from 'node:assert/strict';
import { describe, test } from 'vitest';
import { runInNewContext } from 'node:vm';
import { bodyFor, padTo, SYNC_MS } from './bodies.js';
import { parseHar } from '../../common/har.js';
import { pagePlan } from './plan.js';

const T0 = Date.parse('2024-01-01T00:00:00.000Z');
const DOC = 'https://a.example/';
function entry(url: string, at: number, type: string, initiator: unknown, size = 3000, res: Record<string, unknown> = {}) {
  return {
    startedDateTime: new Date(T0 + at).toISOString(), time: 20, _resourceType: type, _initiator_detail: JSON.stringify(initiator),
    request: { method: 'GET', url }, response: { status: 200, headers: [], content: { size, mimeType: '' }, ...res }, timings: { wait: 5 },
  };
}
const parser = (url: string) => ({ type: 'parser', url });
const script = (url: string) => ({ type: 'script', stack: { callFrames: [{ url }] } });
// The URLs carry characters that need escaping in HTML, CSS and inline JavaScript.
const WEIRD = `https://w.example/it's"here?<tag>=</script>`;
const har = parseHar(JSON.stringify({ log: { entries: [
  entry(DOC, 0, 'document', { type: 'other' }, 20_000),
  entry('https://b.example/app.js', 30, 'script', parser(DOC)),
  entry('https://c.example/site.css', 31, 'stylesheet', parser(DOC)),
  entry('https://d.example/pic.png', 32, 'image', parser(DOC), 500, { content: { size: 500, mimeType: 'image/png' } }),
  entry('https://e.example/frame.html', 33, 'document', parser(DOC)),
  entry('https://f.example/font.woff2', 34, 'font', parser(DOC)),
  entry('https://g.example/inline.js', 100, 'script', script(DOC)),
  entry('https://h.example/beacon', 120, 'ping', { type: 'other' }),
  entry('https://c.example/more.css', 60, 'stylesheet', parser('https://c.example/site.css')),
  entry('https://c.example/face.woff', 61, 'font', parser('https://c.example/site.css')),
  entry('https://c.example/bg.png', 62, 'image', parser('https://c.example/site.css')),
  entry('https://i.example/chained.js', 200, 'script', script('https://b.example/app.js')),
  entry('https://j.example/api', 210, 'xhr', script('https://b.example/app.js'), 10, { content: { size: 10, mimeType: 'application/json' } }),
  entry(WEIRD, 220, 'image', script('https://b.example/app.js')),
  entry('https://k.example/tiny.js', 40, 'script', parser(DOC), 5),
  entry('https://l.example/soon.js', 75, 'script', script('https://b.example/app.js')),
] } }));
const plan = pagePlan(har);
const id = (url: string) => plan.resources.find((r) => r.url === url)!.id;
const text = (url: string) => bodyFor(plan, id(url)).body.toString();
/** The scripts inside an HTML text. */
const inlineScripts = (html: string) => [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);

describe('bodies', () => {
  test('every body is exactly the HAR size unless its markup needs more', () => {
    for (const r of plan.resources) {
      const { body } = bodyFor(plan, r.id);
      if (r.url.endsWith('tiny.js')) assert.ok(body.length > r.bytes, 'a 5-byte script with a header comment is sent whole');
      else assert.equal(body.length, r.bytes, r.url);
    }
    assert.equal(padTo('abc', 10, '/*', '*/').toString(), 'abc/*xxx*/');
    assert.equal(padTo('abc', 5, '/*', '*/').toString(), 'abc  ');
    assert.equal(padTo('abcdef', 5, '/*', '*/').toString(), 'abcdef');
    assert.equal(padTo('a', 10, '<!--', '-->', 'z').toString(), 'a<!--x-->z');
  });
  test('the document: its parser children as tags in HAR order, an inline starter for the rest, CSS targets', () => {
    const html = text(DOC);
    const order = ['b.example/app.js', 'c.example/site.css', 'f.example/font.woff2', 'k.example/tiny.js'].map((u) => html.indexOf(u));
    assert.ok(order.every((i, k) => i > 0 && (k === 0 || i > order[k - 1]!)), `head tags in order: ${order}`);
    assert.match(html, /<script async src="https:\/\/b\.example\/app\.js"><\/script>/);
    assert.match(html, /<link rel="stylesheet" href="https:\/\/c\.example\/site\.css">/);
    assert.match(html, /<img alt="" width="1" height="1" src="https:\/\/d\.example\/pic\.png">/);
    assert.match(html, /<iframe width="1" height="1" src="https:\/\/e\.example\/frame\.html"><\/iframe>/);
    assert.match(html, /<link rel="preload" as="font" crossorigin href="https:\/\/f\.example\/font\.woff2">/);
    const [starter] = inlineScripts(html);
    assert.ok(starter && starter.includes('g.example/inline.js') && starter.includes('h.example/beacon'), 'inline children started by the inline script');
    assert.ok(!starter.includes('b.example/app.js'), 'tags are not started twice');
    for (const u of ['face.woff', 'bg.png']) assert.ok(html.includes(`class="dnscost-r${id(`https://c.example/${u}`)}"`), `an element for ${u}`);
    assert.ok(html.startsWith('<!doctype html>') && html.endsWith('--></body></html>'));
  });
  test('a stylesheet: @import first, @font-face with a use, background images', () => {
    const css = text('https://c.example/site.css');
    assert.ok(css.startsWith('@import url("https://c.example/more.css");'));
    const face = id('https://c.example/face.woff');
    assert.ok(css.includes(`@font-face{font-family:"dnscost-r${face}";src:url("https://c.example/face.woff")}`));
    assert.ok(css.includes(`.dnscost-r${face}{font-family:"dnscost-r${face}"}`));
    assert.ok(css.includes(`.dnscost-r${id('https://c.example/bg.png')}{display:block;width:1px;height:1px;background-image:url("https://c.example/bg.png")}`));
  });
  test('a script starts its children with their delays; all generated JavaScript parses', () => {
    const js = text('https://b.example/app.js');
    for (const u of ['i.example/chained.js', 'j.example/api']) assert.ok(js.includes(u), u);
    assert.ok(js.includes(`,${plan.resources[id('https://j.example/api')]!.delayMs}]`), 'the delay is in the list');
    const scripts = [js, text('https://i.example/chained.js'), ...inlineScripts(text(DOC))];
    for (const s of scripts) assert.doesNotThrow(() => new Function(s), s.slice(0, 200));
    // The odd URL is a string in the script, never markup.
    const weird = new URL(WEIRD).href;
    assert.ok(js.includes(JSON.stringify(weird).replace(/</g, '\\u003c')), 'URL as an escaped JSON string');
    assert.ok(!js.includes('</script>'));
  });
  test('a child due within SYNC_MS of its parent starts while the parent runs (so onload waits for it), later ones by timers', () => {
    const js = text('https://b.example/app.js');
    const due = (u: string) => plan.resources[id(u)]!.delayMs;
    assert.ok(due('https://l.example/soon.js') <= SYNC_MS && due('https://i.example/chained.js') > SYNC_MS);
    // The script runs the moment its response ended, in a page that records what it starts and when.
    const started: { url: string; at: number; sync: boolean }[] = [];
    const timers: { ms: number; run: () => void }[] = [];
    let running = true;
    const end = performance.now();
    const el = () => ({ set src(u: string) { started.push({ url: u, at: performance.now(), sync: running }); } });
    const document = { currentScript: { src: 'https://b.example/app.js' }, head: { appendChild() {} }, createElement: el };
    const page = {
      document, performance: { now: () => performance.now(), getEntriesByName: () => [{ responseEnd: end }] },
      setTimeout: (run: () => void, ms: number) => timers.push({ ms, run }), Image: function Image() { return el(); },
      fetch: (url: string) => { started.push({ url, at: performance.now(), sync: running }); return Promise.resolve(); },
    };
    runInNewContext(js, { ...page, self: page });
    running = false;
    assert.deepEqual(started.map((s) => [s.url, s.sync]), [['https://l.example/soon.js', true]]);
    assert.ok(started[0]!.at - end >= due('https://l.example/soon.js') - 0.5, 'not before its delay');
    assert.equal(timers.length, 3, 'the chained script, the API call and the image wait for timers');
    for (const t of timers) t.run();
    assert.deepEqual(started.map((s) => s.url).slice(1).sort(), ['https://i.example/chained.js', 'https://j.example/api', new URL(WEIRD).href].sort());
  });
  test('types: images carry a GIF and the HAR type, fonts and others bytes of their size', () => {
    const img = bodyFor(plan, id('https://d.example/pic.png'));
    assert.equal(img.contentType, 'image/png');
    assert.equal(img.body.subarray(0, 6).toString(), 'GIF89a');
    assert.equal(bodyFor(plan, id('https://f.example/font.woff2')).contentType, 'font/woff2');
    assert.equal(bodyFor(plan, id('https://j.example/api')).contentType, 'application/json');
    assert.equal(bodyFor(plan, id('https://b.example/app.js')).contentType, 'text/javascript');
    assert.equal(bodyFor(plan, id('https://c.example/site.css')).contentType, 'text/css');
    assert.equal(bodyFor(plan, id('https://e.example/frame.html')).contentType, 'text/html; charset=utf-8');
  });
});
