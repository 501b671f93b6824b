// Workers on every core: with a PostgreSQL server the collector runs as a primary process and N workers (node:cluster),
// each a whole collector (server.ts) on the one listening socket, which the primary hands connections from in turn.
// Nothing is shared in memory: PostgreSQL holds every state (uploads are idempotent; a day's first publication is its
// only one, whichever worker makes it), and each worker enforces its share of the per-client and global limits. One
// worker, the lead, also runs retention and says where the service listens; the primary only starts the workers,
// starts one again when it dies (at most MAX_RESTARTS a minute, else it stops them all) and stops them on SIGINT and
// SIGTERM, each finishing its queued uploads.
import cluster, { type Worker } from 'node:cluster';
import { isSea } from 'node:sea';

/** Restarts of dead workers allowed in a minute before the primary gives up and stops the service. */
export const MAX_RESTARTS = 5;
/** How long workers have to finish after SIGTERM before the primary exits anyway. */
const STOP_GRACE_MS = 15_000;
/** The environment variable that tells a worker it is the lead. */
const LEAD = 'DNSCOST_COLLECTOR_LEAD';

/** This process's part: the primary of several workers, a worker (the lead or not), or the one process there is. */
export function role(): { worker: boolean; lead: boolean } {
  return cluster.isWorker ? { worker: true, lead: process.env[LEAD] === '1' } : { worker: false, lead: true };
}

/** A worker's share of a limit shared by `workers` (whole numbers rounded up, never below `min`). */
export function shareOf(total: number, workers: number, whole = true, min = 1): number {
  const part = total / workers;
  return Math.max(min, whole ? Math.ceil(part) : part);
}

/** Runs the primary: `n` workers, restarted when they die, stopped on SIGINT/SIGTERM; the process exits when they have. */
export function runPrimary(n: number, log: (message: string) => void): void {
  const leads = new Set<Worker>();
  const restarts: number[] = [];
  let stopping = false;
  let worst = 0;
  const fork = (lead: boolean) => {
    const w = cluster.fork({ [LEAD]: lead ? '1' : '0' });
    if (lead) leads.add(w);
  };
  const stopAll = (code: number) => {
    stopping = true;
    worst = Math.max(worst, code);
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
    setTimeout(() => process.exit(1), STOP_GRACE_MS).unref();
    if (!Object.keys(cluster.workers ?? {}).length) process.exit(worst);
  };
  cluster.on('exit', (w, code, signal) => {
    const lead = leads.delete(w);
    if (stopping) {
      if (code !== 0) worst = Math.max(worst, 1);
      if (!Object.keys(cluster.workers ?? {}).length) process.exit(worst);
      return;
    }
    const now = Date.now();
    restarts.push(now);
    while (restarts.length && restarts[0]! < now - 60_000) restarts.shift();
    if (restarts.length > MAX_RESTARTS) {
      log(`worker ${w.process.pid} exited (${code ?? signal}); ${restarts.length} restarts in a minute: stopping`);
      return stopAll(1);
    }
    log(`worker ${w.process.pid} exited (${code ?? signal}); starting another`);
    fork(lead);
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      log(`${signal}: stopping ${n} workers, each finishing its queued uploads`);
      stopAll(0);
    });
  }
  // A worker runs the primary's command line. The packaged single executable takes what cluster passes as the script's
  // path for its first argument: pass the command there (main.ts takes `serve` twice as once).
  if (isSea()) cluster.setupPrimary({ exec: 'serve', args: process.argv.slice(2) });
  for (let i = 0; i < n; i++) fork(i === 0);
}
