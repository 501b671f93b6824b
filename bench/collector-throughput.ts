// Benchmark (not a test): collector uploads per second and upload latency, embedded (PGlite) and PostgreSQL, with N
// concurrent keep-alive clients on loopback. Writes a markdown report.
//
//   node dist/bench/collector-throughput.js [--clients 64] [--seconds 10] [--results 6]
//        [--store pglite,postgres] [--workers 1,2] [--out bench/results/collector-throughput.md] [--smoke]
//
// The collector runs as its own process (as deployed: `dnscost-collector --rate 0`; with PostgreSQL once per
// --workers count, the embedded store always with one), its CPU (the primary's and its workers', from /proc) counted
// over the same seconds as the uploads. PostgreSQL as a lab server
// (lab/postgres.ts, fsync on); this process only generates load. Every upload is a new, valid batch of
// one page × `results` results (a batch holds one page); an upload counts when it was acknowledged (201: committed). One warm-up
// second is not counted.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { reportPath, SMOKE_OPTION } from './smoke.js';
import { startPostgres } from '../lab/postgres.js';
import { startCollectorProcess } from '../lab/collector-process.js';
import { treeCpuMs } from '../lab/proc.js';
import { coarse, UPLOAD_BATCH_VERSION, UPLOAD_LIMITS } from '../common/upload-batch.js';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '64' },
    seconds: { type: 'string', default: '10' },
    results: { type: 'string', default: String(UPLOAD_LIMITS.resultsPerPage) },
    store: { type: 'string', default: 'pglite,postgres' },
    workers: { type: 'string', default: '1,2' },
    out: { type: 'string' },
    ...SMOKE_OPTION,
  },
});
// --smoke: 4 clients for 1 s on each store.
const CLIENTS = values.smoke ? 4 : Number(values.clients);
const SECONDS = values.smoke ? 1 : Number(values.seconds);
const RESULTS = Number(values.results);

/** A body template with KEY where each upload's own key goes (building JSON per request would load this process). */
function template(): string {
  const resolvers = ['cloudflare', 'google', 'quad9', 'system', 'custom'];
  const transports = ['udp', 'tcp', 'dot', 'doh', 'doh1', 'doq', 'doh3'];
  const results = Array.from({ length: RESULTS }, (_, i) => ({
    resolver: resolvers[i % 5], transport: transports[Math.floor(i / 5) % 7], mode: i >= 35 ? 'warm' : 'cold',
    // On the upload grid, as the extension sends them.
    lookups: 23, failures: 1, medianMs: coarse(18.5 + i), p5Ms: coarse(9.25), p95Ms: coarse(120.5 + i), onload: { pointMs: coarse(14.5), lowMs: coarse(2.5), highMs: coarse(44) },
    bytesPerLookup: coarse(5234.5), packetsPerLookup: coarse(13.5),
  }));
  const hour = new Date().toISOString().slice(0, 13) + 'Z';
  const sites = ['github.com', 'wikipedia.org', 'youtube.com', 'other', 'reddit.com'];
  return JSON.stringify({
    version: UPLOAD_BATCH_VERSION, key: 'KEY', network: { type: 'wifi' },
    pages: [{ site: sites[Math.floor(Math.random() * sites.length)], hour, hosts: 32, results }],
  });
}

interface Run {
  store: string;
  workers: number;
  /** The collector's CPU (all its processes) per acknowledged upload, ms. */
  cpuMs: number;
  acked: number;
  failed: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
}

async function measure(store: string, workers: number, env: Record<string, string>, dataDir: string): Promise<Run> {
  const collector = await startCollectorProcess(['--port', '0', '--data', dataDir, '--rate', '0', '--max-connections-per-client', String(CLIENTS), '--workers', String(workers)], env);
  const url = collector.url;
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const body = template();
  const token = randomBytes(32).toString('base64url');
  const post = () =>
    new Promise<number>((resolve, reject) => {
      const data = body.replace('KEY', randomBytes(18).toString('base64url'));
      const req = request(`${url}/v1/batches`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), 'dnscost-deletion-token': token } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(data);
    });
  const latencies: number[] = [];
  let failed = 0;
  const start = performance.now();
  const countFrom = start + 1000;
  const end = countFrom + SECONDS * 1000;
  let cpuFrom = 0;
  setTimeout(() => (cpuFrom = treeCpuMs(collector.pid)), countFrom - performance.now());
  const client = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      const status = await post().catch(() => 0);
      const t1 = performance.now();
      if (t0 < countFrom) continue;
      if (status === 201) latencies.push(t1 - t0);
      else failed++;
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  const elapsed = (performance.now() - countFrom) / 1000;
  const cpu = treeCpuMs(collector.pid) - cpuFrom;
  agent.destroy();
  await collector.stop();
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return { store, workers, cpuMs: cpu / Math.max(1, latencies.length), acked: latencies.length, failed, perSecond: latencies.length / elapsed, p50: q(0.5), p99: q(0.99), max: latencies.at(-1) ?? NaN };
}

const runs: Run[] = [];
for (const store of values.store.split(',')) {
  // The embedded store belongs to one process.
  for (const workers of store === 'postgres' ? values.workers.split(',').map(Number) : [1]) {
    const dir = await mkdtemp(join(os.tmpdir(), 'dnscost-bench-collector-'));
    const pg = store === 'postgres' ? await startPostgres() : null;
    try {
      const run = await measure(store, workers, pg ? { DNSCOST_COLLECTOR_DATABASE_URL: pg.url } : {}, join(dir, 'data'));
      runs.push(run);
      console.error(`${store} × ${workers}: ${run.perSecond.toFixed(0)} uploads/s, p50 ${run.p50.toFixed(1)} ms, p99 ${run.p99.toFixed(1)} ms, ${run.cpuMs.toFixed(2)} ms CPU each`);
    } finally {
      await pg?.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }
}

const bytes = Buffer.byteLength(template().replace('KEY', 'x'.repeat(24)));
const cpu = os.cpus();
const report = `# Benchmark: collector upload throughput

Command: \`node dist/bench/collector-throughput.js --clients ${CLIENTS} --seconds ${SECONDS} --results ${RESULTS} --workers ${values.workers}\` (after \`scripts/setup\`)
Date: ${new Date().toISOString()}; machine: ${cpu.length} × ${cpu[0]?.model ?? '?'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}.
The collector, PostgreSQL and this load generator share the machine's ${cpu.length} cores (load average at the start
${os.loadavg()[0]!.toFixed(2)}): the numbers are a floor, not a capacity.

Each upload: a new batch of one page × ${RESULTS} results (${bytes} bytes), ${CLIENTS} concurrent keep-alive clients on
loopback, ${SECONDS} s counted after 1 s of warm-up; an upload counts when acknowledged (201, after COMMIT).

| store | workers | uploads/s | acknowledged | failed | p50 ms | p99 ms | max ms | collector CPU ms per upload |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
${runs.map((r) => `| ${r.store} | ${r.workers} | ${r.perSecond.toFixed(0)} | ${r.acked} | ${r.failed} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.max.toFixed(1)} | ${r.cpuMs.toFixed(2)} |`).join('\n')}
`;
const out = reportPath(values);
if (out) writeFileSync(out, report);
process.stdout.write(report);
if (values.smoke && runs.some((r) => r.acked === 0 || r.failed > 0)) process.exit(1);
