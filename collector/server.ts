// The collector service: wires a store, the group committer, the rate limiter, the aggregates cache and the
// dashboard files to an HTTP server (routes.ts holds the endpoints).
//
// Lifecycle: startCollector() loads the dashboard files and listens; close() stops accepting connections, lets
// every queued upload commit (so nothing acknowledged is lost and nothing accepted is dropped), then closes the
// store.
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { GroupCommitter, type GroupOptions } from './group-commit.js';
import { RateLimiter, type RateOptions } from './rate-limit.js';
import { handle, type Asset, type RouteContext } from './routes.js';
import type { Aggregates, AggregateFilter, Store } from './store.js';
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
  /** Connections open at once, at most (default 1,000); more are refused at once. */
  maxConnections?: number;
  /** How long an aggregates answer is reused (default 10 s); 0 computes every request. */
  aggregatesTtlMs?: number;
  /** Distinct batches a site needs in a cell before it is named (default 5). */
  minBatches?: number;
  group?: Partial<GroupOptions>;
  now?: () => number;
}

/** A running collector. */
export interface Collector {
  url: string;
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);

/** Starts a collector and resolves once it listens. */
export async function startCollector(opts: CollectorOptions): Promise<Collector> {
  const { store, aggregatesTtlMs = 10_000, minBatches = 5 } = opts;
  const committer = new GroupCommitter(
    (rows: Parameters<Store['putMany']>[0]) => store.putMany(rows),
    { maxItems: 1000, windowMs: 2, concurrency: store.concurrency, ...opts.group },
  );
  const ctx: RouteContext = {
    store,
    committer,
    limiter: opts.rate === null ? null : new RateLimiter(opts.rate ?? { perSecond: 5, burst: 20 }),
    trustedProxies: new Set((opts.trustedProxies ?? []).map(canonicalIp)),
    aggregates: cachedAggregates(store, aggregatesTtlMs, minBatches),
    aggregatesTtlMs,
    minBatches,
    assets: await loadAssets(),
    now: opts.now ?? Date.now,
  };
  const server = createServer((req, res) => void handle(req, res, ctx));
  // A client that sends its headers or body slowly must not hold a connection for long; an idle one goes after 5 s;
  // past maxConnections new ones are refused (Node closes them at once), so slow sockets cannot starve the rest.
  server.headersTimeout = 5_000;
  server.requestTimeout = 15_000;
  server.keepAliveTimeout = 5_000;
  server.maxConnections = opts.maxConnections ?? 1_000;
  server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1');
  await once(server, 'listening');
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address.includes(':') ? `[${address}]` : address}:${port}`,
    async close() {
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeIdleConnections();
      await committer.drain();
      await closed;
      await store.close();
    },
  };
}

/** Aggregates reused for ttlMs per filter; concurrent requests for the same filter share one query. */
function cachedAggregates(store: Store, ttlMs: number, minBatches: number): (filter: AggregateFilter) => Promise<Aggregates> {
  const cache = new Map<string, { at: number; value: Promise<Aggregates> }>();
  return (filter) => {
    const key = JSON.stringify([filter.resolver, filter.transport, filter.network, filter.site]);
    const hit = cache.get(key);
    if (hit && Date.now() - hit.at < ttlMs) return hit.value;
    // Filters are few (resolvers × transports × networks × sites); the bound only guards memory.
    if (cache.size > 10_000) cache.clear();
    const value = store.aggregates(filter, minBatches);
    cache.set(key, { at: Date.now(), value });
    value.catch(() => cache.delete(key));
    return value;
  };
}

async function loadAssets(): Promise<Map<string, Asset>> {
  const files: Array<[string, string, string]> = [
    ['index.html', `${DASHBOARD_DIR}/index.html`, 'text/html; charset=utf-8'],
    ['dashboard.js', `${DASHBOARD_DIR}/dashboard.js`, 'text/javascript; charset=utf-8'],
    ['dashboard.css', `${DASHBOARD_DIR}/dashboard.css`, 'text/css; charset=utf-8'],
    // uPlot from npm, served by the collector itself: the dashboard loads nothing from another origin.
    ['uplot.min.js', require.resolve('uplot/dist/uPlot.iife.min.js'), 'text/javascript; charset=utf-8'],
    ['uplot.min.css', require.resolve('uplot/dist/uPlot.min.css'), 'text/css; charset=utf-8'],
  ];
  return new Map(await Promise.all(files.map(async ([name, path, type]) => [name, { type, body: await readFile(path) }] as const)));
}
