// The cost-model validation site (bench/validate/): pages needing 1, 10, 30 and 100 distinct hostnames,
// some chained (a script on one host loads a script or an image from a host nobody named before), served by one
// node:http server that answers by Host header. Its names live in their own zone (VALIDATION_ZONE), which the lab
// resolver answers with the server's address inside the lab namespaces, so a browser resolves every one for real.
//   node dist/lab/site/validation-site.js --address 192.0.2.2 --port 80   (prints "ready PORT" when listening)
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** The zone of the validation site's names. */
export const VALIDATION_ZONE = 'val.example';

/** One host of a page and how the page comes to need it. */
export interface PageHostPlan {
  name: string;
  index: number;
  /** `document`; `css`/`sync-script`/`image`/`async-script` named in the HTML; `chained` inserted by `parent`'s script. */
  role: 'document' | 'css' | 'sync-script' | 'image' | 'async-script' | 'chained';
  /** For chain links: the host whose script inserts this one. */
  parent?: number;
  /** For chain links and starters: the next link (a host index), if any. */
  next?: number;
  /** Sends Timing-Allow-Origin. */
  tao: boolean;
}

/** Host i of page n. */
export function pageHost(n: number, i: number): string {
  return `p${n}-h${i}.${VALIDATION_ZONE}`;
}

/** The document's URL of page n on a server at `port`. */
export function pageUrl(n: number, port = 80): string {
  return `http://${pageHost(n, 0)}${port === 80 ? '' : `:${port}`}/`;
}

/**
 * Every host of page n with its role (deterministic; the plan both the server and the report use).
 * Page n (`http://p<n>-h0.<zone>/`): the document on host 0, then hosts 1…n-1. A third of them (rounded down) are
 * chained: chains of up to three, each started by an async script on a directly named host, every link a script
 * inserted by the previous one, the last link an image. The rest are named by the document: host 1 a render-blocking
 * stylesheet, host 2 a synchronous script in <head> (parser-blocking), the chain starters async scripts, the others
 * images. Even-numbered hosts send Timing-Allow-Origin (their lookups are visible to Resource Timing), odd ones not,
 * as on the web where only some third parties do.
 */
export function pagePlan(n: number): PageHostPlan[] {
  if (!Number.isInteger(n) || n < 1 || n > 500) throw new Error(`page sizes are 1…500 hostnames, not ${n}`);
  const hosts: PageHostPlan[] = [{ name: pageHost(n, 0), index: 0, role: 'document', tao: true }];
  const chained = Math.floor((n - 1) / 3);
  const direct = n - 1 - chained;
  for (let i = 1; i <= direct; i++) {
    const role: PageHostPlan['role'] = i === 1 ? 'css' : i === 2 ? 'sync-script' : 'image';
    hosts.push({ name: pageHost(n, i), index: i, role, tao: i % 2 === 0 });
  }
  // Chains of up to 3 links, started by async scripts on the last direct hosts (so a starter is never host 1 or 2).
  let next = direct + 1;
  let starter = direct;
  while (next <= n - 1) {
    const s = hosts[starter]!;
    s.role = 'async-script';
    let prev = starter;
    for (let link = 0; link < 3 && next <= n - 1; link++, next++) {
      hosts[prev]!.next = next;
      hosts.push({ name: pageHost(n, next), index: next, role: 'chained', parent: prev, tao: next % 2 === 0 });
      prev = next;
    }
    starter -= 1;
    if (starter < 3 && next <= n - 1) throw new Error(`page ${n}: not enough direct hosts to start its chains`);
  }
  return hosts;
}

const pad = (bytes: number, prefix: string) => prefix + 'x'.repeat(Math.max(0, bytes - prefix.length));

// A 1×1 transparent GIF, padded with a GIF comment-free trailer the decoder ignores.
const PIXEL = Buffer.concat([Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64'), Buffer.alloc(2048 - 43)]);

function script(n: number, h: PageHostPlan, port: number): string {
  const url = (i: number, path: string) => `http://${pageHost(n, i)}${port === 80 ? '' : `:${port}`}${path}`;
  const next = h.next !== undefined ? pagePlan(n)[h.next]! : undefined;
  let body = `window.dnscostLoaded = (window.dnscostLoaded || 0) + 1;\n`;
  if (next) {
    // A link of a chain: the next host becomes needed only once this script has run.
    body += next.next !== undefined
      ? `(function () { var s = document.createElement('script'); s.src = ${JSON.stringify(url(next.index, '/s.js'))}; document.head.appendChild(s); })();\n`
      : `(function () { var i = new Image(); i.src = ${JSON.stringify(url(next.index, '/i.gif'))}; document.body.appendChild(i); })();\n`;
  }
  return body + pad(2048 - body.length, '//');
}

function documentHtml(n: number, port: number): string {
  const url = (i: number, path: string) => `http://${pageHost(n, i)}${port === 80 ? '' : `:${port}`}${path}`;
  const head: string[] = [];
  const body: string[] = [];
  for (const h of pagePlan(n)) {
    if (h.role === 'css') head.push(`<link rel="stylesheet" href="${url(h.index, '/c.css')}">`);
    else if (h.role === 'sync-script') head.push(`<script src="${url(h.index, '/s.js')}"></script>`);
    else if (h.role === 'async-script') head.push(`<script async src="${url(h.index, '/s.js')}"></script>`);
    else if (h.role === 'image') body.push(`<img alt="" width="1" height="1" src="${url(h.index, '/i.gif')}">`);
  }
  if (n === 1) body.push(`<img alt="" width="1" height="1" src="/i.gif">`);
  const html = `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>page ${n}</title>${head.join('')}</head>` +
    `<body><p>dnscost validation page: ${n} hostnames</p>${body.join('')}<!--`;
  return pad(8192, html) + '--></body></html>';
}

// Bodies are padded so the page has some weight (document 8 KB, each resource 2 KB). Nothing is cacheable.
function route(req: IncomingMessage, res: ServerResponse, port: number): void {
  const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
  const m = /^p(\d+)-h(\d+)\./.exec(host);
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  const send = (status: number, type: string, body: string | Buffer, tao = false) => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...(tao ? { 'timing-allow-origin': '*' } : {}) });
    res.end(body);
  };
  if (!m || !host.endsWith(`.${VALIDATION_ZONE}`)) return send(404, 'text/plain', 'unknown host');
  const n = Number(m[1]);
  const i = Number(m[2]);
  let plan: PageHostPlan[];
  try {
    plan = pagePlan(n);
  } catch {
    return send(404, 'text/plain', 'no such page');
  }
  const h = plan[i];
  if (!h) return send(404, 'text/plain', 'no such host');
  if (path === '/' && i === 0) return send(200, 'text/html; charset=utf-8', documentHtml(n, port), true);
  if (path === '/c.css') return send(200, 'text/css', pad(2048, 'body { margin: 0 }\n/*') + '*/', h.tao);
  if (path === '/s.js') return send(200, 'text/javascript', script(n, h, port), h.tao);
  if (path === '/i.gif') return send(200, 'image/gif', PIXEL, h.tao);
  send(404, 'text/plain', 'not found');
}

/** A running validation site. */
export interface ValidationSite {
  port: number;
  close(): Promise<void>;
}

/** Serves the validation site on `address`:`port` (port 0: a free one). */
export async function startValidationSite(address = '127.0.0.1', port = 0): Promise<ValidationSite> {
  const server: Server = createServer();
  server.keepAliveTimeout = 30_000;
  server.listen(port, address);
  await once(server, 'listening');
  const bound = (server.address() as AddressInfo).port;
  server.on('request', (req, res) => route(req, res, bound));
  return {
    port: bound,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { address: { type: 'string', default: '127.0.0.1' }, port: { type: 'string', default: '0' } } });
  const site = await startValidationSite(values.address, Number(values.port));
  process.stdout.write(`ready ${site.port}\n`);
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => void site.close().then(() => process.exit(0)));
}
