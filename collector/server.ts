// The collector service: wires a store, the group committer, the rate limiter, the publisher (per-epoch noisy
// figures, publisher.ts) and the dashboard files to an HTTP server (routes.ts holds the endpoints).
//
// Lifecycle: startCollector() loads the dashboard files and listens; close() stops accepting connections, lets
// every queued upload commit (so nothing acknowledged is lost and nothing accepted is dropped), then closes the
// store.
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { GroupCommitter, type GroupOptions } from './group-commit.js';
import { clientOf, Holdings, RateLimiter, type RateOptions } from './rate-limit.js';
import { BodyBudget, handle, type Asset, type RouteContext } from './routes.js';
import { OpenData } from './open-data.js';
import { Publisher, type PublicationOptions } from './publisher.js';
import type { Store } from './store.js';
import { DASHBOARD_DIR } from './paths.js';
import { canonicalIp } from '../common/ip-address.js';

/** How to run a collector; only `store` is required. */
export interface CollectorOptions {
  store: Store;
  /** Listen address (default 127.0.0.1: exposing the collector is a deliberate choice). */
  host?: string;
  /** Port (default 0: any free one). */
  port?: number;
  /** Per-client limit on /v1 requests; null turns it off (benchmarks). */
  rate?: RateOptions | null;
  /** Addresses of proxies in front whose X-Forwarded-For names the client (default none). */
  trustedProxies?: readonly string[];
  /** Connections open at once, at most (default 4,096); more are refused at once. */
  maxConnections?: number;
  /**
   * Connections open at once from one client (an IPv4 address, an IPv6 /64; a trusted proxy is not counted), at most
   * (default 32): one address cannot hold all of maxConnections, nor can a hundred of them.
   */
  maxConnectionsPerClient?: number;
  /**
   * Upload body bytes being received at once, by declared length, over every connection (default 64 MiB; one client
   * at most 1 MiB; 16 MiB more only small bodies may use): past it uploads get 503 (routes.ts BodyBudget).
   */
  bodyBudgetBytes?: number;
  /** Publication: the secret (keep it: collector/secret.ts), ε, threshold, delay; defaults in publisher.ts. */
  publication?: Partial<PublicationOptions>;
  group?: Partial<GroupOptions>;
  /**
   * Days raw uploads are kept (each page by its own day); older ones are removed at start and every hour, while the
   * publications made from them stay. Null (default) keeps them; at least UPLOAD_LIMITS.maxAgeDays + 1, so a retried
   * upload of a removed batch is refused as too old rather than stored again.
   */
  keepDays?: number | null;
  now?: () => number;
}

/** The day (YYYY-MM-DD, UTC) before which raw uploads go when they are kept `keepDays` days. */
export function pruneBefore(now: number, keepDays: number): string {
  return new Date(now - keepDays * 86_400_000).toISOString().slice(0, 10);
}

/** A running collector. */
export interface Collector {
  url: string;
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);

/** How long a new connection may stay silent (no byte of a request) before it is closed. */
const SILENT_MS = 5_000;

/** Starts a collector and resolves once it listens. */
export async function startCollector(opts: CollectorOptions): Promise<Collector> {
  const { store } = opts;
  const publisher = new Publisher(store, { now: opts.now, ...opts.publication });
  const committer = new GroupCommitter(
    (rows: Parameters<Store['putMany']>[0]) => store.putMany(rows),
    { maxItems: 1000, windowMs: 2, concurrency: store.concurrency, ...opts.group },
  );
  const ctx: RouteContext = {
    store,
    committer,
    limiter: opts.rate === null ? null : new RateLimiter(opts.rate ?? { perSecond: 5, burst: 20 }),
    trustedProxies: new Set((opts.trustedProxies ?? []).map(canonicalIp)),
    aggregates: (filter) => publisher.answer(filter),
    openData: new OpenData(store, () => publisher.ready()),
    stored: (hour) => publisher.noteStored(hour),
    assets: await loadAssets(),
    now: opts.now ?? Date.now,
    bodies: new BodyBudget({ budget: opts.bodyBudgetBytes ?? 64 * 1024 * 1024, perClient: 1024 * 1024, reserve: 16 * 1024 * 1024 }),
  };
  // A client that sends its headers or body slowly must not hold a connection for long: 5 s for the headers, 15 s for
  // the whole request, checked every second (Node checks every 30 s by default, so a slow socket would live up to
  // 35 s); an idle one goes after 5 s; past maxConnections new ones are refused (Node closes them at once).
  const server = createServer({ headersTimeout: 5_000, requestTimeout: 15_000, connectionsCheckingInterval: 1_000 }, (req, res) => void handle(req, res, ctx));
  server.keepAliveTimeout = 5_000;
  server.maxConnections = opts.maxConnections ?? 4_096;
  // Node's headers timeout starts with the first byte: a connection that sends nothing would be held until its
  // client gives up. One that has sent nothing after 5 s is closed.
  // And one client may hold at most maxConnectionsPerClient of them (a proxy we trust speaks for many: not counted).
  const perClient = new Holdings();
  const maxPerClient = opts.maxConnectionsPerClient ?? 32;
  server.on('connection', (socket) => {
    const peer = canonicalIp(socket.remoteAddress ?? '');
    const client = ctx.trustedProxies.has(peer) ? null : clientOf(peer, undefined, ctx.trustedProxies);
    if (client !== null) {
      if (perClient.of(client) >= maxPerClient) return void socket.destroy();
      socket.once('close', perClient.hold(client, 1));
    }
    const silent = setTimeout(() => socket.bytesRead === 0 && socket.destroy(), SILENT_MS);
    silent.unref();
    socket.once('close', () => clearTimeout(silent));
  });
  // Retention: raw uploads of days older than keepDays go (publications stay); a failure is logged and tried again.
  const prune = async () => {
    if (!opts.keepDays) return;
    try {
      const removed = await store.prune(pruneBefore(ctx.now(), opts.keepDays));
      if (removed) console.error(`dnscost-collector: retention: removed ${removed} uploads older than ${opts.keepDays} days`);
    } catch (err) {
      console.error(`dnscost-collector: retention: ${(err as Error)?.message ?? String(err)}`);
    }
  };
  await prune();
  const pruning = setInterval(() => void prune(), 3_600_000);
  pruning.unref();
  server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1');
  await once(server, 'listening');
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address.includes(':') ? `[${address}]` : address}:${port}`,
    async close() {
      clearInterval(pruning);
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeIdleConnections();
      await committer.drain();
      await closed;
      await store.close();
    },
  };
}

/** One of uPlot's files: beside the dashboard when packaged (scripts/package put it there), else from its npm package. */
function uplot(packaged: string, fromNpm: () => string): string {
  const beside = `${DASHBOARD_DIR}/${packaged}`;
  return existsSync(beside) ? beside : fromNpm();
}

async function loadAssets(): Promise<Map<string, Asset>> {
  const files: Array<[string, string, string]> = [
    ['index.html', `${DASHBOARD_DIR}/index.html`, 'text/html; charset=utf-8'],
    ['dashboard.js', `${DASHBOARD_DIR}/dashboard.js`, 'text/javascript; charset=utf-8'],
    ['dashboard.css', `${DASHBOARD_DIR}/dashboard.css`, 'text/css; charset=utf-8'],
    // uPlot from npm, served by the collector itself: the dashboard loads nothing from another origin (packaged,
    // scripts/package put its two files beside the dashboard's).
    ['uplot.min.js', uplot('uplot.min.js', () => require.resolve('uplot/dist/uPlot.iife.min.js')), 'text/javascript; charset=utf-8'],
    ['uplot.min.css', uplot('uplot.min.css', () => require.resolve('uplot/dist/uPlot.min.css')), 'text/css; charset=utf-8'],
  ];
  return new Map(await Promise.all(files.map(async ([name, path, type]) => [name, { type, body: await readFile(path) }] as const)));
}
