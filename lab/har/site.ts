// The server of a page rebuilt from a HAR (lab/har/), run inside the lab's server namespace: every host of the plan
// on one address, HTTPS (HTTP/2 and HTTP/1.1) and plain HTTP on the ports the HAR used (443 and 80 as a rule),
// answering by Host (or :authority) and path. Lifecycle: startHarSite() listens and returns; close() drops every
// connection and stops. As a script, for `net.spawnIn('server', …)`:
//   node dist/lab/har/site.js --har FILE --address 192.0.2.3 [--address 2001:db8::3] --ca-cert F --ca-key F (or --cert F --key F)
// prints `ready` when listening, then one `served {json}` line per response; SIGTERM stops it.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createSecureServer, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { Socket } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { isAddress, literalAddresses } from './address.js';
import { bodyFor, type Body } from './bodies.js';
import { issueGroupCerts, type PemPair } from './host-certs.js';
import { pagePlan, type PagePlan, type PlanResource } from './plan.js';
import { readHarFile } from '../../native-host/src/hosts-input.js';

/** One response the site sent (times in ms since the epoch, sub-millisecond). */
export interface Served {
  /** The plan resource answered, or null (not in the plan: 404). */
  id: number | null;
  scheme: 'http' | 'https';
  host: string;
  path: string;
  method: string;
  status: number;
  /** Body bytes sent. */
  bytes: number;
  httpVersion: string;
  /** When the request had arrived (its body read). */
  requestAt: number;
  /** When the status line and body were handed to the connection (after the wait). */
  firstByteAt: number;
  /** When the last byte was handed to the connection. */
  endAt: number;
}

/** How to serve a plan. */
export interface HarSiteOptions {
  /** Addresses to listen on (an IPv4 and optionally an IPv6 one). */
  addresses: string[];
  /** The lab CA (PEM): each group of hosts gets a certificate of its own (PagePlan.hostGroups). */
  ca?: PemPair;
  /** One certificate and key (PEM) naming every host: for no SNI, and for every host when `ca` is not given. */
  cert?: string | Buffer;
  key?: string | Buffer;
  /** Listen on another port for a port of the plan (e.g. {443: 0} on loopback without root); 0 picks a free one. */
  ports?: Record<number, number>;
  /** Hears every response as it completes. */
  onServe?: (s: Served) => void;
}

/** A running HAR site. */
export interface HarSite {
  /** Where it listens: the plan's scheme and port, and the port actually bound. */
  listeners: { scheme: 'http' | 'https'; address: string; port: number; planPort: number }[];
  /** Every response so far. */
  served(): Served[];
  close(): Promise<void>;
}

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
type Req = IncomingMessage | Http2ServerRequest;
type Res = ServerResponse | Http2ServerResponse;

/** Finds the plan resource for a request: same host and path (same scheme first), else same host and pathname. */
export function resourceIndex(plan: PagePlan): (scheme: string, host: string, path: string) => PlanResource | undefined {
  const exact = new Map<string, PlanResource[]>();
  const loose = new Map<string, PlanResource[]>();
  for (const r of plan.resources) {
    const add = (m: Map<string, PlanResource[]>, k: string) => (m.get(k) ?? m.set(k, []).get(k)!).push(r);
    add(exact, `${r.host} ${r.path}`);
    add(loose, `${r.host} ${r.path.replace(/\?.*$/, '')}`);
  }
  return (scheme, host, path) => {
    const pick = (list: PlanResource[] | undefined) => list?.find((r) => r.scheme === scheme) ?? list?.[0];
    return pick(exact.get(`${host} ${path}`)) ?? pick(loose.get(`${host} ${path.replace(/\?.*$/, '')}`));
  };
}

// The HAR's status as a browser without a cache can take it: no 1xx or 304 as a final answer, no status 0.
function statusOf(r: Pick<PlanResource, 'status'>): number {
  if (r.status === 304 || r.status < 200 || r.status > 599) return 200;
  return r.status;
}

/** Serves `plan` as options say; resolves once every listener is bound. */
export async function startHarSite(plan: PagePlan, o: HarSiteOptions): Promise<HarSite> {
  const find = resourceIndex(plan);
  const bodies = new Map<number, Body>();
  const body = (id: number) => bodies.get(id) ?? bodies.set(id, bodyFor(plan, id)).get(id)!;
  const served: Served[] = [];
  // Requests per connection and resource: a URL the recording answered several times (a 302 to itself, then the page)
  // gives its earlier answers in order, one per request on a connection, then its last one to every request after.
  const asked = new WeakMap<object, Map<number, number>>();
  const nthOn = (conn: object, id: number): number => {
    const m = asked.get(conn) ?? asked.set(conn, new Map()).get(conn)!;
    const n = m.get(id) ?? 0;
    m.set(id, n + 1);
    return n;
  };

  // Each response waits the HAR's `wait`, then sends the HAR's status and exactly its body size (bodies.ts writes
  // what makes a browser discover the page again); redirects carry the HAR's Location. Every response is recorded
  // (what, when asked, first byte, last byte), so a test can check the page loaded the way the HAR says. Nothing is
  // cacheable; every response allows any origin (fonts and no-cors fetches).
  const handle = async (req: Req, res: Res, scheme: 'http' | 'https') => {
    const authority = String(req.headers[':authority'] ?? req.headers.host ?? '');
    // As URL.hostname writes it (an IPv6 address keeps its brackets), without a trailing dot.
    const host = authority.replace(/:\d+$/, '').replace(/\.$/, '').toLowerCase();
    let path = req.url ?? '/';
    try {
      const u = new URL(path, `${scheme}://${host || 'unknown.invalid'}`);
      path = u.pathname + u.search;
    } catch { /* kept as sent */ }
    req.resume();
    if (!req.readableEnded) await once(req, 'end').catch(() => undefined);
    const requestAt = now();
    const r = find(scheme, host, path);
    const method = req.method ?? 'GET';
    let status = 404;
    let payload: Buffer = Buffer.from('not in the HAR\n');
    const headers: Record<string, string> = { 'cache-control': 'no-store', 'access-control-allow-origin': '*' };
    if (r && method === 'OPTIONS' && r.method !== 'OPTIONS') {
      // A CORS preflight the rebuilt page caused: allow everything, as the real server evidently did.
      status = 204;
      payload = Buffer.alloc(0);
      Object.assign(headers, { 'access-control-allow-methods': '*', 'access-control-allow-headers': '*' });
    } else if (r) {
      const conn = 'stream' in req ? req.stream.session ?? req.socket : req.socket;
      const before = r.earlier.length ? r.earlier[nthOn(conn, r.id)] : undefined;
      const answer = before ?? r;
      await sleep(answer.waitMs);
      status = statusOf(answer);
      const b = before ? { body: Buffer.alloc(before.bytes, ' '), contentType: 'text/html' } : body(r.id);
      payload = status === 204 || status === 205 ? Buffer.alloc(0) : b.body;
      headers['content-type'] = b.contentType;
      if (answer.redirectTo) headers.location = answer.redirectTo;
      if (r.tao) headers['timing-allow-origin'] = '*';
    } else headers['content-type'] = 'text/plain';
    if (res.writableEnded || res.destroyed) return;
    if (status !== 204 && status !== 205) headers['content-length'] = String(payload.length);
    const sendBody = method !== 'HEAD' && payload.length > 0;
    res.once('finish', () => {
      const s: Served = {
        id: r?.id ?? null, scheme, host, path, method, status, bytes: sendBody ? payload.length : 0,
        httpVersion: req.httpVersion, requestAt, firstByteAt, endAt: now(),
      };
      served.push(s);
      o.onServe?.(s);
    });
    res.writeHead(status, headers);
    const firstByteAt = now();
    if (sendBody) res.end(payload);
    else res.end();
  };

  // TLS: certificates from the lab CA, on 443 for every host. Given the CA (`ca`, `--ca-cert/--ca-key`), one
  // certificate per group of hosts that shared a server in the recording (host-certs.ts), chosen by SNI, so a browser
  // pools connections only where the real page could have; given one certificate naming every host (`cert`/`key`,
  // makeCerts(dir, names) in lab/certs.ts), a browser may pool every host onto a few connections.
  const contexts = new Map<string, SecureContext>();
  let fallback = o.cert && o.key ? { cert: o.cert, key: o.key } : undefined;
  if (o.ca) {
    const groups = plan.hostGroups.map((g) => g.filter((h) => !isAddress(h))).filter((g) => g.length);
    // Browsers send no SNI to an IP address: those hosts share the certificate served without one.
    const literals = literalAddresses(plan);
    const pems = issueGroupCerts(o.ca, literals.length ? [...groups, literals] : groups);
    groups.forEach((g, i) => {
      const context = createSecureContext({ cert: pems[i]!.certPem, key: pems[i]!.keyPem });
      for (const h of g) contexts.set(h, context);
    });
    if (literals.length && !fallback) fallback = { cert: pems.at(-1)!.certPem, key: pems.at(-1)!.keyPem };
  }
  const tls = contexts.size > 0 || !!fallback;
  if (!tls && plan.resources.some((r) => r.scheme === 'https')) throw new Error('the plan has https URLs: startHarSite needs the lab CA or a certificate');
  // The plan's ports, and always 80 and 443 (where a browser goes when it upgrades or downgrades by itself).
  // HTTPS answers whatever scheme the HAR used: browsers upgrade some http URLs by themselves (the HSTS preload list,
  // which now holds hosts an older HAR reached over http; HTTPS-Upgrades; mixed-content image upgrades), and a
  // declined handshake fails the load outright. A resource is found by host and path, so either scheme gets the same
  // answer. (An http page that ends up over https needs the browser to allow its http subresources: load.ts does.)
  const pairs = new Map<string, { scheme: 'http' | 'https'; port: number }>([['http:80', { scheme: 'http', port: 80 }]]);
  if (tls) pairs.set('https:443', { scheme: 'https', port: 443 });
  for (const r of plan.resources) pairs.set(`${r.scheme}:${r.port}`, { scheme: r.scheme, port: r.port });
  const servers: (Server | Http2SecureServer)[] = [];
  const sockets = new Set<Socket>();
  const listeners: HarSite['listeners'] = [];
  const onError = (res: Res) => (e: unknown) => {
    process.stderr.write(`har site: ${String(e)}\n`);
    if (!res.headersSent) res.writeHead(500).end();
  };
  try {
    for (const address of o.addresses) {
      for (const { scheme, port } of pairs.values()) {
        const server = scheme === 'http'
          ? createServer((req, res) => void handle(req, res, 'http').catch(onError(res)))
          : createSecureServer({
            allowHTTP1: true,
            ...(fallback ?? {}),
            SNICallback: (name, cb) => {
              const context = contexts.get(name.toLowerCase());
              if (context || fallback) cb(null, context);
              else cb(new Error(`no certificate for ${name}`));
            },
          }, (req, res) => void handle(req, res, 'https').catch(onError(res)));
        server.on('connection', (s: Socket) => {
          sockets.add(s);
          s.once('close', () => sockets.delete(s));
        });
        // A browser that gives up on a connection is not the site's failure.
        server.on('tlsClientError', () => undefined);
        server.on('clientError', (_e: unknown, s: Socket) => s.destroy());
        servers.push(server);
        server.listen({ host: address, port: o.ports?.[port] ?? port });
        await once(server, 'listening');
        const bound = server.address();
        listeners.push({ scheme, address, port: typeof bound === 'object' && bound ? bound.port : port, planPort: port });
      }
    }
  } catch (e) {
    for (const s of servers) s.close();
    throw e;
  }
  return {
    listeners,
    served: () => [...served],
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    },
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: {
      har: { type: 'string' }, address: { type: 'string', multiple: true }, cert: { type: 'string' }, key: { type: 'string' },
      'ca-cert': { type: 'string' }, 'ca-key': { type: 'string' },
    },
  });
  try {
    if (!values.har || !values.address?.length) throw new Error('usage: site.js --har FILE --address ADDR [--address ADDR6] [--ca-cert PEM --ca-key PEM] [--cert PEM --key PEM]');
    const { readFile } = await import('node:fs/promises');
    const plan = pagePlan(await readHarFile(values.har));
    const text = (f: string) => readFile(f, 'utf8');
    const site = await startHarSite(plan, {
      addresses: values.address,
      ...(values['ca-cert'] && values['ca-key'] ? { ca: { certPem: await text(values['ca-cert']), keyPem: await text(values['ca-key']) } } : {}),
      ...(values.cert && values.key ? { cert: await text(values.cert), key: await text(values.key) } : {}),
      onServe: (s) => process.stdout.write(`served ${JSON.stringify(s)}\n`),
    });
    process.stdout.write(`ready ${site.listeners.map((l) => `${l.scheme}://${l.address.includes(':') ? `[${l.address}]` : l.address}:${l.port}`).join(' ')}\n`);
    for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => void site.close().then(() => process.exit(0)));
  } catch (e) {
    process.stderr.write(`har site: ${(e as Error).message}\n`);
    process.exit(1);
  }
}
