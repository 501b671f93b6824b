// The collector on every core (collector/workers.ts): one primary and two workers on one port over a real PostgreSQL
// (lab/postgres.ts, loopback). Uploads on fresh connections are spread over both workers (each spends CPU on them) and
// every acknowledged one is stored once; a worker killed with SIGKILL is replaced and the service keeps answering;
// SIGTERM stops the primary and its workers with exit 0. Several workers need PostgreSQL: the embedded store refuses.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { distPath } from '../../lab/paths.js';
import { startPostgres, type LabPostgres } from '../../lab/postgres.js';
import { cpuMs, processTree } from '../../lab/proc.js';
import { batch, batchRows, spawnCollector, upload, type CollectorProcess } from '../support/collector-client.js';

/** The processes below `pid` (its workers), each with its CPU time so far (ms). */
function children(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const p of processTree(pid)) {
    if (p === pid) continue;
    try {
      out.set(p, cpuMs(p));
    } catch { /* gone meanwhile */ }
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, f: () => T | undefined, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(50);
  }
}

describe('the collector with two workers on PostgreSQL', () => {
  let pgServer: LabPostgres;
  let dir: string;
  let c: CollectorProcess | null = null;
  beforeAll(async () => {
    pgServer = await startPostgres();
    dir = mkdtempSync(join(tmpdir(), 'dnscost-workers-'));
  }, 60_000);
  afterAll(async () => {
    await c?.stop();
    await pgServer?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('uploads spread over both workers, all stored once; a killed worker is replaced; SIGTERM stops them all', { timeout: 120_000 }, async () => {
    c = await spawnCollector({ DNSCOST_COLLECTOR_DATABASE_URL: pgServer.url }, join(dir, 'data'), ['--workers', '2']);
    const workers = await until('two workers', () => { const w = children(c!.pid); return w.size === 2 ? w : undefined; });
    // A connection per upload: the primary hands connections to the workers in turn.
    // At most 8 at once: one client's connections are capped (--max-connections-per-client, 32 shared by the workers).
    const fresh = new Agent({ keepAlive: false, maxSockets: 8 });
    const N = 200;
    const replies = await Promise.all(Array.from({ length: N }, () => upload(c!.url, batch(), undefined, {}, fresh)));
    assert.deepEqual([...new Set(replies.map((r) => r.status))], [201]);
    assert.equal(await batchRows(pgServer.url), N);
    const after = children(c.pid);
    for (const [pid, cpu] of workers) assert.ok((after.get(pid) ?? 0) > cpu, `worker ${pid} served none of the ${N} uploads`);

    // SIGKILL one worker: the primary starts another, and uploads go on being acknowledged.
    const [victim] = [...workers.keys()];
    process.kill(victim!, 'SIGKILL');
    const replaced = await until('a replacement worker', () => { const w = children(c!.pid); return w.size === 2 && !w.has(victim!) ? w : undefined; });
    assert.equal(replaced.size, 2);
    const more = await Promise.all(Array.from({ length: 20 }, () => upload(c!.url, batch(), undefined, {}, fresh)));
    assert.deepEqual([...new Set(more.map((r) => r.status))], [201]);
    assert.equal(await batchRows(pgServer.url), N + 20);

    const pids = [...replaced.keys()];
    await c.stop();
    c = null;
    for (const pid of pids) assert.throws(() => process.kill(pid, 0), 'a worker outlived SIGTERM');
  });

  test('several workers need PostgreSQL: with the embedded store it refuses, exit 2', () => {
    const r = spawnSync(process.execPath, [distPath('collector/main.ts'), 'serve', '--workers', '2', '--data', join(dir, 'embedded'), '--port', '0'], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, DNSCOST_COLLECTOR_DATABASE_URL: '' } });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /--workers above 1 needs --database-url/);
  });
});
