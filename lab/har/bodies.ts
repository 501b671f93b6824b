// The bodies of a rebuilt page (lab/har/): for each resource of a plan (plan.ts), bytes that make a browser discover
// its children the way the HAR's initiators say, padded to the HAR's size. Pure: site.ts serves what this returns.
import type { PagePlan, PlanResource } from './plan.js';

/** A generated response body and its Content-Type. */
export interface Body {
  contentType: string;
  body: Buffer;
}

// A 1×1 GIF; images may be any bytes, but a real one keeps decoders quiet.
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

const html = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const cssString = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\a ')}"`;
// JSON inside <script>: no `</script>` or `<!--` can end or confuse the element.
const jsValue = (v: unknown) => JSON.stringify(v).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');

/** `text` padded to exactly `bytes` bytes with `open`…`close` (a comment) or spaces; longer text is returned whole. */
export function padTo(text: string, bytes: number, open: string, close: string, suffix = ''): Buffer {
  const head = Buffer.from(text);
  const tail = Buffer.from(suffix);
  const room = bytes - head.length - tail.length;
  if (room <= 0) return Buffer.concat([head, tail]);
  const pad = room >= open.length + close.length ? open + 'x'.repeat(room - open.length - close.length) + close : ' '.repeat(room);
  return Buffer.concat([head, Buffer.from(pad), tail]);
}

const childrenOf = (plan: PagePlan, id: number, kinds: PlanResource['discovery'][]) =>
  plan.resources.filter((r) => r.parent === id && kinds.includes(r.discovery));

// fetch() allows these methods in no-cors mode; anything else is rebuilt as GET (the server answers any method).
const fetchMethod = (m: string) => (m === 'POST' || m === 'HEAD' ? m : 'GET');

/** A child due at most this long (ms) after its parent's response is started synchronously, not by a timer. */
export const SYNC_MS = 50;

// The starter: `L` is [type, url, method, delayMs][]; `BASE` picks the time the delays count from. One copy per
// script, so every script works alone on any origin and in any frame. How it rebuilds a discovery:
// - `script` / `other` with the document as parent: an inline script at the top of <head> starts them `delayMs`
//   after the document's response ended (its navigation entry's responseEnd), as a script's children below.
// - `script` with a script as parent: the generated script starts them `delayMs` after its own response ended (its
//   Resource Timing entry; else when it runs), by a timer or, within SYNC_MS, while it runs: scripts by inserting
//   <script> (so they run and continue the chain), stylesheets by <link>, images by `new Image()`, documents by
//   <iframe>, fonts by FontFace.load(), the rest by fetch(…, {mode: 'no-cors'}) with the HAR's method when GET, HEAD
//   or POST (else GET).
function starter(children: PlanResource[], base: 'document' | 'script'): string {
  const list = children.map((c) => [c.type, c.url, fetchMethod(c.method), c.delayMs]);
  const from = base === 'document'
    // The document's response end; inline code runs while it may still be arriving, so wait for it (bounded).
    ? `var t0=performance.now();(function w(){var n=performance.getEntriesByType&&performance.getEntriesByType('navigation')[0];` +
      `if(n&&n.responseEnd>0)run(n.responseEnd);else if(performance.now()-t0>30000)run(performance.now());else setTimeout(w,5);})();`
    : `var c=d.currentScript,e=c&&c.src&&performance.getEntriesByName&&performance.getEntriesByName(c.src)[0];` +
      `run(e&&e.responseEnd>0?e.responseEnd:performance.now());`;
  return `(function(){var d=document,L=${jsValue(list)},k=self.__dnscostKeep||(self.__dnscostKeep=[]);` +
    `function go(t,u,m){try{var e;` +
    `if(t==='script'){e=d.createElement('script');e.src=u;e.async=true;(d.head||d.documentElement).appendChild(e);}` +
    `else if(t==='stylesheet'){e=d.createElement('link');e.rel='stylesheet';e.href=u;(d.head||d.documentElement).appendChild(e);}` +
    `else if(t==='image'){e=new Image();e.src=u;}` +
    `else if(t==='document'){e=d.createElement('iframe');e.src=u;e.width=e.height=1;(d.body||d.documentElement).appendChild(e);}` +
    `else if(t==='font'&&self.FontFace){e=new FontFace('dnscost-font','url('+JSON.stringify(u)+')');e.load().catch(function(){});}` +
    `else{fetch(u,{method:m,mode:'no-cors',cache:'no-store'}).catch(function(){});}` +
    `if(e)k.push(e);}catch(x){}}` +
    // Children due within SYNC_MS are started by the code itself, spinning until their time: a real script that starts
    // a request that soon after its response did so while it ran, so the load event waits for it. A timer would let
    // onload fire first (Firefox did in every other load, Chromium always: the calibreapp page's onLoad was bimodal).
    `function run(b){var s=[];L.forEach(function(c){var w=b+c[3]-performance.now();` +
    `if(w>${SYNC_MS})setTimeout(function(){go(c[0],c[1],c[2]);},w);else s.push(c);});` +
    `s.sort(function(x,y){return x[3]-y[3];}).forEach(function(c){while(performance.now()<b+c[3]);go(c[0],c[1],c[2]);});}` +
    `${from}})();`;
}

/**
 * `parser` (a document's child): a real tag in the document's HTML, in HAR order — <script async src>,
 * <link rel=stylesheet>, <img>, <iframe>, <link rel=preload as=font crossorigin> for fonts and
 * <link rel=preload as=fetch crossorigin> for anything else (so every one delays onload, as tags do).
 * A tag cannot wait, so `parser` and `css` children start as soon as the browser finds them; their delayMs is kept in
 * the plan but not enacted.
 */
function tag(r: PlanResource): { head: boolean; markup: string } {
  const u = html(r.url);
  switch (r.type) {
    case 'script': return { head: true, markup: `<script async src="${u}"></script>` };
    case 'stylesheet': return { head: true, markup: `<link rel="stylesheet" href="${u}">` };
    case 'image': return { head: false, markup: `<img alt="" width="1" height="1" src="${u}">` };
    case 'document': return { head: false, markup: `<iframe width="1" height="1" src="${u}"></iframe>` };
    case 'font': return { head: true, markup: `<link rel="preload" as="font" crossorigin href="${u}">` };
    default: return { head: true, markup: `<link rel="preload" as="fetch" crossorigin href="${u}">` };
  }
}

/** The HTML of document `r`: its parser children as tags, an inline starter for the rest, the CSS targets. */
export function documentHtml(plan: PagePlan, r: PlanResource): Buffer {
  const head: string[] = [];
  const body: string[] = [];
  const started = childrenOf(plan, r.id, ['script', 'other']);
  if (started.length) head.push(`<script>${starter(started, 'document')}</script>`);
  for (const c of childrenOf(plan, r.id, ['parser'])) {
    const t = tag(c);
    (t.head ? head : body).push(t.markup);
  }
  // Elements for CSS-discovered resources: any stylesheet this document loads finds its targets here.
  for (const c of plan.resources) if (c.discovery === 'css' && c.type !== 'stylesheet') body.push(`<i class="dnscost-r${c.id}">x</i>`);
  const text = `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>dnscost: ${html(r.host)}</title>` +
    `${head.join('')}</head><body>${body.join('')}`;
  return padTo(text, r.bytes, '<!--', '-->', '</body></html>');
}

/** The JavaScript of script `r`: starts its children after their delays. */
export function scriptJs(plan: PagePlan, r: PlanResource): Buffer {
  const children = childrenOf(plan, r.id, ['script']);
  const text = `/* dnscost: ${r.url.replace(/\*\//g, '*_/')} */\n${children.length ? starter(children, 'script') : ''}\n`;
  return padTo(text, r.bytes, '/*', '*/');
}

/**
 * The CSS of stylesheet `r`: @import for stylesheets, @font-face and a use for fonts, background images for the rest.
 * `css` (a stylesheet's child): `@import` for stylesheets; `@font-face` plus a rule that uses the face for fonts;
 * a `background-image: url()` rule for anything else. The HAR does not say which rule or element, so every
 * generated document holds one element per CSS-discovered resource (`<i class="dnscost-rID">`), and the rule in
 * the discovering stylesheet targets it: the resource is requested when that stylesheet applies.
 */
export function stylesheetCss(plan: PagePlan, r: PlanResource): Buffer {
  const imports: string[] = [];
  const rules: string[] = [];
  for (const c of childrenOf(plan, r.id, ['css'])) {
    const url = `url(${cssString(c.url)})`;
    if (c.type === 'stylesheet') imports.push(`@import ${url};`);
    else if (c.type === 'font') rules.push(`@font-face{font-family:"dnscost-r${c.id}";src:${url}}`, `.dnscost-r${c.id}{font-family:"dnscost-r${c.id}"}`);
    else rules.push(`.dnscost-r${c.id}{display:block;width:1px;height:1px;background-image:${url}}`);
  }
  // @import must come before every other rule.
  return padTo(`${imports.join('\n')}\n${rules.join('\n')}\n`, r.bytes, '/*', '*/');
}

const mime = (m: string) => m.split(';')[0]!.trim();

/**
 * The body and Content-Type the site sends for resource `id` of `plan` (status and headers are the site's).
 * `redirect`: nothing to write; the server answers with the HAR's status and Location. Bodies are exactly `bytes`
 * long unless the markup needed is longer (then it is sent whole).
 */
export function bodyFor(plan: PagePlan, id: number): Body {
  const r = plan.resources[id];
  if (!r) throw new Error(`no resource ${id} in the plan`);
  if (r.redirectTo !== null) return { contentType: mime(r.mimeType) || 'text/html', body: Buffer.alloc(r.bytes, ' ') };
  switch (r.type) {
    case 'document': return { contentType: 'text/html; charset=utf-8', body: documentHtml(plan, r) };
    case 'script': return { contentType: 'text/javascript', body: scriptJs(plan, r) };
    case 'stylesheet': return { contentType: 'text/css', body: stylesheetCss(plan, r) };
    case 'image': {
      const body = r.bytes >= PIXEL.length ? Buffer.concat([PIXEL, Buffer.alloc(r.bytes - PIXEL.length)]) : Buffer.alloc(r.bytes);
      return { contentType: mime(r.mimeType).startsWith('image/') ? mime(r.mimeType) : 'image/gif', body };
    }
    case 'font': return { contentType: mime(r.mimeType) || 'font/woff2', body: Buffer.alloc(r.bytes) };
    default: return { contentType: mime(r.mimeType) || 'application/octet-stream', body: Buffer.alloc(r.bytes, ' ') };
  }
}
