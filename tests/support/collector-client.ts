// What the collector's integration tests share: HTTP on loopback (one keep-alive agent), valid uploads on the grid,
// and a collector run as its own process (lab/collector-process.ts) so it can be killed with SIGKILL and restarted on
// the same data. Nothing here talks beyond 127.0.0.1.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import pg from 'pg';
import { startCollectorProcess, type CollectorProcess } from '../../lab/collector-process.js';
import type { PublishedRow } from '../../collector/store.js';

export type { CollectorProcess };

/** The keep-alive agent every helper request uses; destroy it after the file's tests. */
export const agent = new Agent({ keepAlive: true, maxSockets: 32 });

export interface Reply {
  status: number;
  body: { ok: boolean; code?: string; path?: string; duplicate?: boolean; [k: string]: unknown };
  headers: Record<string, string | string[] | undefined>;
  /** The body's bytes as they came. */
  raw: Buffer;
}

/** One HTTP exchange on loopback; bodies may be strings, bytes, or `chunks` streamed without a length. */
export function http(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer; chunks?: Buffer[]; agent?: Agent; timeoutMs?: number } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers, agent: opts.agent ?? agent, timeout: opts.timeoutMs ?? 15_000 }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => {
        const raw = Buffer.concat(parts);
        const text = raw.toString();
        let body: Reply['body'];
        try {
          body = JSON.parse(text) as Reply['body'];
        } catch {
          body = { ok: false, code: '(not json)', text };
        }
        resolve({ status: res.statusCode ?? 0, body, headers: res.headers, raw });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    if (opts.chunks) {
      for (const c of opts.chunks) req.write(c);
      req.end();
    } else req.end(opts.body);
  });
}

/** The UTC hour `daysAgo` days before now, as an upload spells it (2026-11-21T14Z). */
export const hourAgo = (daysAgo = 0) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 13) + 'Z';
/** The UTC day (an epoch) `daysAgo` days before now. */
export const dayAgo = (daysAgo: number) => hourAgo(daysAgo).slice(0, 10);
export const randomKey = () => randomBytes(18).toString('base64url');
export const randomToken = () => randomBytes(32).toString('base64url');

/** One result; every number on the upload grid (common/upload-batch.ts coarse, coarseCount). */
export function result(over: Record<string, unknown> = {}) {
  return {
    resolver: 'cloudflare', transport: 'doh', mode: 'cold', lookups: 11, failures: 1, medianMs: 19, p5Ms: 8, p95Ms: 90.5,
    onload: { pointMs: 11.3, lowMs: 4, highMs: 32 }, bytesPerLookup: 4870, packetsPerLookup: 11.3, ...over,
  };
}

/** A valid batch of one page (this hour unless `hour` is given). */
export function batch(over: { key?: string; site?: string; network?: string; hour?: string; results?: object[] } = {}) {
  return {
    version: 3,
    key: over.key ?? randomKey(),
    network: { type: over.network ?? 'wifi' },
    pages: [{ site: over.site ?? 'github.com', hour: over.hour ?? hourAgo(0), hosts: 8, results: over.results ?? [result()] }],
  };
}

/** POST /v1/batches with a deletion token. */
export function upload(url: string, body: object | string, token = randomToken(), headers: Record<string, string> = {}, via?: Agent): Promise<Reply> {
  return http(`${url}/v1/batches`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'dnscost-deletion-token': token, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    agent: via,
  });
}

/** One published cell as /v1/aggregates answers it: the collector's own row (the JSON carries it as it is). */
export type Cell = PublishedRow;

/** The answer of GET /v1/aggregates. */
export interface Published {
  ok: true;
  epsilon: number;
  minPages: number;
  delayHours: number;
  epochs: Array<{ epoch: string; publishedAt: string; epsilon: number; minPages: number }>;
  cells: Cell[];
}

/** GET /v1/aggregates (asserting 200). */
export async function aggregates(url: string, query = ''): Promise<Published> {
  const r = await http(`${url}/v1/aggregates${query}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body as unknown as Published;
}

/**
 * Starts dist/collector/main.js with `--port 0 --data DIR --rate 0 --workers 1` and `extra`; resolves once it listens.
 * One process, so a test's limits, memory and kill -9 are that process's (tests/integration/collector-workers.test.ts
 * runs several).
 */
export function spawnCollector(env: Record<string, string>, dataDir: string, extra: string[] = []): Promise<CollectorProcess> {
  return startCollectorProcess(['--port', '0', '--data', dataDir, '--rate', '0', '--workers', '1', ...extra], env);
}

/** Rows in the batches table of the PostgreSQL database at `url` (what a collector stored there, tombstones too). */
export async function batchRows(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM batches')).rows[0]!.n;
  } finally {
    await client.end();
  }
}
