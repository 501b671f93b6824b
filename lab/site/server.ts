// A small local test site for the page-record browser tests and the demo: one node:http server that answers by Host
// header, so every name under its domain is a distinct host of one site. By default on loopback (127.0.0.1, and ::1
// on the same port where it exists) under `*.site.localhost`, which Chromium and Firefox resolve to loopback with no
// configuration; the demo serves it under a domain the lab resolver answers instead. See lab/site/README.md.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The parent domain of the site's hosts. */
export const SITE_DOMAIN = 'site.localhost';
/** The demo's parent domain (lab/demo.ts): an ordinary public-looking name (RFC 2606 reserves it) the product measures. */
export const DEMO_DOMAIN = 'example.com';

/** The hosts the normal page (`/` on start.DOMAIN) needs under `domain`, in the order a browser first needs them. */
export function pageHosts(domain: string) {
  return {
    /** The address typed: answers 302 to the page on `page`. */
    start: `start.${domain}`,
    page: `a.${domain}`,
    /** An image with Timing-Allow-Origin: its lookup is visible to Resource Timing. */
    img: `img1.${domain}`,
    /** A stylesheet and a script without Timing-Allow-Origin. */
    css: `css.${domain}`,
    js: `js.${domain}`,
    /** An image whose URL redirects (302) to the same path on `redirected`. */
    redirector: `r1.${domain}`,
    redirected: `r2.${domain}`,
    /** An iframe, whose own image is on `inner`. */
    frame: `frame.${domain}`,
    inner: `inner.${domain}`,
  } as const;
}

/** The normal page's hosts under `*.site.localhost`. */
export const NORMAL_PAGE_HOSTS = pageHosts(SITE_DOMAIN);

/** The hostile page's generated names (under a `.test` name, so they are public-looking, measurable names). */
export const HOSTILE = {
  host: `hostile.${SITE_DOMAIN}`,
  /** Distinct image hosts h0…h(count-1).many.test. */
  count: 5000,
  /** A 250-character label (over 63: must be refused). */
  longLabel: `${'l'.repeat(250)}.hostile.test`,
  /** A name over 253 characters made of valid labels (must be refused). */
  longName: `${Array.from({ length: 5 }, () => 'n'.repeat(60)).join('.')}.test`,
  /** An IDN, and its A-label as the report must show it. */
  idn: 'bücher.hostile.test',
  idnALabel: 'xn--bcher-kva.hostile.test',
  /** A valid name that reads like script, and markup that is not a host at all (the URL parser refuses it). */
  scriptLike: 'script.alert-1.hostile.test',
  markup: '<script>alert(1)</script>.hostile.test',
} as const;

// A 1×1 transparent GIF.
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

function html(body: string): string {
  // data: icon: no favicon request to an extra host or path.
  return `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>dnscost test site</title></head><body>${body}</body></html>`;
}

function escapeAttr(s: string): string {
  return s.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** The hostile page: odd names first (so the host cap does not hide them), then HOSTILE.count distinct hosts. */
export function hostilePage(): string {
  const odd = [HOSTILE.longLabel, HOSTILE.longName, HOSTILE.idn, HOSTILE.scriptLike, HOSTILE.markup]
    .map((h) => `<img alt="" src="${escapeAttr(`http://${h}/x.gif`)}">`)
    .join('');
  const many = Array.from({ length: HOSTILE.count }, (_, i) => `<img alt="" width="1" height="1" src="http://h${i}.many.test/x.gif">`).join('');
  return html(`<p>hostile</p>${odd}${many}`);
}

/** `http://HOST:PORT/PATH`, the port left out when it is 80. */
const siteUrl = (port: number, host: string, path: string) => `http://${host}${port === 80 ? '' : `:${port}`}${path}`;

function route(req: IncomingMessage, res: ServerResponse, port: number, H: ReturnType<typeof pageHosts>): void {
  const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  const at = (h: string, p: string) => siteUrl(port, h, p);
  const send = (status: number, type: string, body: string | Buffer, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...headers });
    res.end(body);
  };
  if (host === H.start && path === '/') return send(302, 'text/plain', '', { location: at(H.page, '/page.html') });
  if (path === '/page.html') {
    return send(200, 'text/html; charset=utf-8', html(
      `<link rel="stylesheet" href="${at(H.css, '/s.css')}"><script src="${at(H.js, '/app.js')}"></script>` +
      `<img alt="" src="${at(H.img, '/px.gif')}"><img alt="" src="${at(H.redirector, '/redirect')}">` +
      `<iframe src="${at(H.frame, '/frame.html')}"></iframe>`,
    ));
  }
  if (path === '/redirect') return send(302, 'text/plain', '', { location: at(H.redirected, '/px.gif') });
  if (path === '/frame.html') return send(200, 'text/html; charset=utf-8', html(`<img alt="" src="${at(H.inner, '/px.gif')}">`));
  if (path === '/px.gif') return send(200, 'image/gif', PIXEL, host === H.img ? { 'timing-allow-origin': '*' } : {});
  if (path === '/s.css') return send(200, 'text/css', 'body { margin: 0 }');
  if (path === '/app.js') return send(200, 'text/javascript', 'window.loaded = true;');
  if (path === '/hostile.html') return send(200, 'text/html; charset=utf-8', hostilePage());
  if (path === '/plain.html') return send(200, 'text/html; charset=utf-8', html(`<img alt="" src="${at(H.img, '/px.gif?plain')}">`));
  send(404, 'text/plain', 'not found');
}

/** A running site. */
export interface Site {
  port: number;
  /** `http://HOST:PORT/PATH` (no port when it is 80). */
  url(host: string, path: string): string;
  close(): Promise<void>;
}

/** Where the site is served: its hosts' parent domain, its address and port. */
export interface SiteOptions {
  /** The parent of the page's hosts (default `site.localhost`, which browsers resolve to loopback by themselves). */
  domain?: string;
  /** Address to listen on (default 127.0.0.1, and ::1 on the same port where it exists). */
  address?: string;
  /** Port (default 0: a free one). */
  port?: number;
}

/** Starts the site (by default on loopback, port 0: a free port, hosts under `site.localhost`). */
export async function startSite(o: SiteOptions = {}): Promise<Site> {
  const hosts = pageHosts(o.domain ?? SITE_DOMAIN);
  const servers: Server[] = [];
  const first = createServer();
  first.listen(o.port ?? 0, o.address ?? '127.0.0.1');
  await once(first, 'listening');
  servers.push(first);
  const port = (first.address() as AddressInfo).port;
  // Browsers may try ::1 first for *.localhost; answer there too when the address exists.
  if (!o.address) {
    const v6 = createServer();
    v6.on('error', () => {});
    v6.listen(port, '::1');
    const v6Up = await new Promise<boolean>((resolve) => {
      v6.once('listening', () => resolve(true));
      v6.once('error', () => resolve(false));
    });
    if (v6Up) servers.push(v6);
  }
  for (const s of servers) s.on('request', (req, res) => route(req, res, port, hosts));
  return {
    port,
    url: (host, path) => siteUrl(port, host, path),
    close: async () => {
      for (const s of servers) s.closeAllConnections();
      await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    },
  };
}
