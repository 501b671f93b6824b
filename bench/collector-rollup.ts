// Benchmark (not a test): the collector at scale on PostgreSQL (issue 28 items 4 and 6): how the store grows per
// million uploads, what a day's rollup (collector/publisher.ts publishEpoch: two passes in SQL, then the noise) costs, and how fast
// /v1/aggregates answers once the days are published, over a store of generated uploads. Writes a markdown report.
//
//   node dist/bench/collector-rollup.js [--uploads 10000000] [--days 30] [--requests 2000]
//        [--out bench/results/collector-rollup.md] [--smoke]
//
// Uploads are generated inside PostgreSQL (INSERT … SELECT over generate_series, 50,000 rows a statement) as the
// collector stores a validated batch: one page, 6 results (resolver × transport × mode, distinct), values on the
// upload grid, a site drawn with a skew ("other" most often, then the popular list in order), random keys and hashes; spread evenly over the last
// --days UTC days before yesterday. The server is a lab one (lab/postgres.ts: default settings, fsync on). The rollup
// of each day runs in this process as the collector's publisher runs it and its publication is stored; then the
// packaged entry point (dist/collector/main.js, one worker) serves those days and --requests GETs of
// /v1/aggregates with the dashboard's filters (none, or one network type) and others (a day, a resolver, a site)
// are timed one after another on a keep-alive connection, the answer read whole.
import { mkdtemp, rm } from 'node:fs/promises';
import { writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { reportPath, SMOKE_OPTION } from './smoke.js';
import { startPostgres } from '../lab/postgres.js';
import { startCollectorProcess } from '../lab/collector-process.js';
import { POPULAR_SITES } from '../common/popular-sites.js';
import { TRANSPORT_IDS } from '../common/transports.js';
import { NETWORK_TYPES, UPLOAD_RESOLVERS } from '../common/upload-batch.js';
import { gridValues } from '../collector/publication.js';
import { publishEpoch, type EpochSource } from '../collector/publisher.js';
import { openPostgresStore } from '../collector/store-postgres.js';

const { values } = parseArgs({
  options: {
    uploads: { type: 'string', default: '10000000' },
    days: { type: 'string', default: '30' },
    requests: { type: 'string', default: '2000' },
    out: { type: 'string' },
    ...SMOKE_OPTION,
  },
});
// --smoke: 20,000 uploads over 2 days, 50 requests.
const UPLOADS = values.smoke ? 20_000 : Number(values.uploads);
const DAYS = values.smoke ? 2 : Number(values.days);
const REQUESTS = values.smoke ? 50 : Number(values.requests);
const STATEMENT_ROWS = 50_000;
const RESULTS = 6;
const DAY_MS = 86_400_000;

const COMBOS = UPLOAD_RESOLVERS.flatMap((resolver) => TRANSPORT_IDS.flatMap((transport) => ['cold', 'warm'].map((mode) => [resolver, transport, mode])));
// A stride coprime with the number of combinations picks RESULTS distinct ones from any offset.
const STRIDE = [11, 13, 17, 19, 23].find((s) => COMBOS.length % s !== 0)!;

// One statement: $1 day, $2 rows, $3 key prefix, $4 networks, $5 sites, $6 combos, $7 stride, $8 lookup ms values,
// $9 onLoad change values, $10 bytes values, $11 packets values. Sites are skewed (power 3: the first ones most).
const GENERATE = `
INSERT INTO batches (key, body_sha256, token_sha256, network, pages, epoch)
SELECT $3 || g, md5(g::text || $3) || md5($3 || g::text), md5($3) || md5($3), ($4::jsonb)->>floor(random() * jsonb_array_length($4::jsonb))::int,
  jsonb_build_array(jsonb_build_object(
    'site', ($5::jsonb)->>floor(power(random(), 3) * jsonb_array_length($5::jsonb))::int,
    'hour', $1 || 'T' || lpad(floor(random() * 24)::int::text, 2, '0') || 'Z',
    'hosts', 32,
    'results', (
      SELECT jsonb_agg(jsonb_build_object(
        'resolver', c->>0, 'transport', c->>1, 'mode', c->>2, 'lookups', 24, 'failures', CASE WHEN random() < 0.05 THEN 1 ELSE 0 END,
        'medianMs', m, 'p5Ms', m, 'p95Ms', m,
        'onload', jsonb_build_object('pointMs', o, 'lowMs', o, 'highMs', o),
        'bytesPerLookup', ($10::jsonb)->floor(random() * jsonb_array_length($10::jsonb))::int,
        'packetsPerLookup', ($11::jsonb)->floor(random() * jsonb_array_length($11::jsonb))::int))
      FROM (
        SELECT ($6::jsonb)->(((start + k * $7) % jsonb_array_length($6::jsonb))) AS c,
          ($8::jsonb)->floor(random() * jsonb_array_length($8::jsonb))::int AS m,
          ($9::jsonb)->floor(random() * jsonb_array_length($9::jsonb))::int AS o
        FROM generate_series(0, ${RESULTS - 1}) k, (SELECT floor(random() * jsonb_array_length($6::jsonb))::int + g * 0 AS start) s
      ) r)
  )),
  $1
FROM generate_series(1, $2::int) g`;

/** Uploads generated for day `d` (the remainder of an uneven split on the first days). */
const uploadsOn = (d: number) => Math.floor(UPLOADS / DAYS) + (d < UPLOADS % DAYS ? 1 : 0);
const day = (i: number) => new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - (i + 2) * DAY_MS).toISOString().slice(0, 10);
const ms = (t: number) => Math.round(t * 10) / 10;
const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? NaN;

const dir = await mkdtemp(join(os.tmpdir(), 'dnscost-bench-rollup-'));
const server = await startPostgres();
const lines: string[] = [];
try {
  const store = await openPostgresStore(server.url, 2);
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  const params = [JSON.stringify(NETWORK_TYPES), JSON.stringify(['other', ...POPULAR_SITES]), JSON.stringify(COMBOS), STRIDE,
    JSON.stringify(gridValues(5, 400)), JSON.stringify(gridValues(-200, 2000)), JSON.stringify(gridValues(200, 8000)),
    JSON.stringify(gridValues(2, 30))];

  // ---- generate, and the store's size as it grows ----
  const growth: Array<{ uploads: number; bytes: number; seconds: number }> = [];
  const started = performance.now();
  let stored = 0;
  for (let d = 0; d < DAYS; d++) {
    const perDay = uploadsOn(d);
    for (let done = 0; done < perDay; done += STATEMENT_ROWS) {
      const n = Math.min(STATEMENT_ROWS, perDay - done);
      await client.query(GENERATE, [day(d), n, `k${d}-${done}-`, ...params]);
      stored += n;
    }
    const bytes = Number((await client.query<{ b: string }>("SELECT pg_total_relation_size('batches') AS b")).rows[0]!.b);
    growth.push({ uploads: stored, bytes, seconds: (performance.now() - started) / 1000 });
    console.error(`day ${d + 1}/${DAYS}: ${stored} uploads, ${(bytes / 2 ** 30).toFixed(2)} GiB, ${growth.at(-1)!.seconds.toFixed(0)} s`);
  }
  await client.query('ANALYZE batches');
  const sample = (await client.query<{ n: string; pages: string }>('SELECT count(*) AS n, avg(pg_column_size(pages))::int AS pages FROM batches')).rows[0]!;

  // ---- the rollup of each day, as the publisher runs it, and its publication stored ----
  const rollups: Array<{ epoch: string; uploads: number; countsMs: number; valuesMs: number; totalMs: number; cells: number }> = [];
  const secret = Buffer.alloc(32, 1);
  for (let d = 0; d < DAYS; d++) {
    const epoch = day(d);
    const spent = { counts: 0, values: 0 };
    const timed = <T>(key: keyof typeof spent, run: () => Promise<T>) => async () => {
      const t = performance.now();
      try {
        return await run();
      } finally {
        spent[key] += performance.now() - t;
      }
    };
    const source: EpochSource = {
      epochCounts: (e) => timed('counts', () => store.epochCounts(e))(),
      epochValues: (e, named, cells) => timed('values', () => store.epochValues(e, named, cells))(),
    };
    const t0 = performance.now();
    const cells = await publishEpoch(epoch, source, { secret, epsilon: 4, minPages: 299 });
    const totalMs = performance.now() - t0;
    await store.publish({ epoch, epsilon: 4, minPages: 299, cells });
    const uploads = uploadsOn(d);
    rollups.push({ epoch, uploads, countsMs: spent.counts, valuesMs: spent.values, totalMs, cells: cells.length });
    console.error(`rollup ${epoch}: ${uploads} uploads, ${ms(spent.counts)} + ${ms(spent.values)} ms in SQL, ${ms(totalMs)} ms in all, ${cells.length} cells`);
  }
  await client.end();
  await store.close();

  // ---- /v1/aggregates over the published days, from the collector as deployed ----
  const collector = await startCollectorProcess(['--port', '0', '--data', join(dir, 'data'), '--rate', '0', '--workers', '1', '--publication-delay', '0'], {
    DNSCOST_COLLECTOR_DATABASE_URL: server.url,
  });
  const url = collector.url;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const get = (path: string) =>
    new Promise<{ ms: number; bytes: number; status: number }>((resolve, reject) => {
      const t0 = performance.now();
      const req = request(`${url}${path}`, { agent }, (res) => {
        let bytes = 0;
        res.on('data', (b: Buffer) => (bytes += b.length));
        res.on('end', () => resolve({ ms: performance.now() - t0, bytes, status: res.statusCode ?? 0 }));
      });
      req.on('error', reject);
      req.end();
    });
  const filters: Array<[string, (i: number) => string]> = [
    ['none (the dashboard)', () => '/v1/aggregates'],
    ['a network type (the dashboard)', (i) => `/v1/aggregates?network=${NETWORK_TYPES[i % NETWORK_TYPES.length]}`],
    ['a day', (i) => `/v1/aggregates?epoch=${day(i % DAYS)}`],
    ['a resolver', (i) => `/v1/aggregates?resolver=${UPLOAD_RESOLVERS[i % UPLOAD_RESOLVERS.length]}`],
    ['a site', (i) => `/v1/aggregates?site=${POPULAR_SITES[i % 5]}`],
  ];
  const first = await get('/v1/aggregates?epoch=' + day(0));
  const timed = new Map<string, Array<{ ms: number; bytes: number }>>(filters.map(([name]) => [name, []]));
  let failed = 0;
  for (let i = 0; i < REQUESTS; i++) {
    const [name, path] = filters[i % filters.length]!;
    const r = await get(path(Math.floor(i / filters.length)));
    if (r.status !== 200) failed++;
    timed.get(name)!.push(r);
  }
  agent.destroy();
  await collector.stop();
  const all = [...timed.values()].flat().map((r) => r.ms);

  // ---- report ----
  const perMillion = (growth.at(-1)!.bytes / stored) * 1e6;
  const perDay = rollups[0]!.uploads;
  lines.push(
    `# The collector at scale: the store's growth, the daily rollup, /v1/aggregates (PostgreSQL)`,
    '',
    `\`${['node dist/bench/collector-rollup.js', values.smoke ? '--smoke' : `--uploads ${UPLOADS} --days ${DAYS} --requests ${REQUESTS}`].join(' ')}\``,
    `(${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB; PostgreSQL with default settings, fsync on)`,
    '',
    `## The store: ${stored.toLocaleString('en')} uploads (one page, ${RESULTS} results each) over ${DAYS} days`,
    '',
    '| uploads | table + indexes, GiB | generated in, s |',
    '| ---: | ---: | ---: |',
    ...growth.filter((g, i) => i === growth.length - 1 || (i + 1) % Math.max(1, Math.floor(DAYS / 5)) === 0)
      .map((g) => `| ${g.uploads.toLocaleString('en')} | ${(g.bytes / 2 ** 30).toFixed(2)} | ${g.seconds.toFixed(0)} |`),
    '',
    `Per million uploads: **${(perMillion / 2 ** 30).toFixed(2)} GiB** (a page's jsonb averages ${sample.pages} bytes).`,
    '',
    `## The rollup of a day (${perDay.toLocaleString('en')} uploads a day): two passes in SQL, then the noisy figures`,
    '',
    '| step | median, ms | slowest, ms | per 100,000 uploads (median), ms |',
    '| --- | ---: | ---: | ---: |',
    ...([['every cell\'s page count (SQL, epochCounts)', 'countsMs'], ['the published cells\' values (SQL, epochValues)', 'valuesMs'], ['**the whole publication** (publishEpoch)', 'totalMs']] as const).map(([name, key]) => {
      const xs = rollups.map((r) => r[key]);
      return `| ${name} | ${ms(q(xs, 0.5))} | ${ms(Math.max(...xs))} | ${ms((q(xs, 0.5) / perDay) * 1e5)} |`;
    }),
    '',
    `Cells published a day: ${q(rollups.map((r) => r.cells), 0.5)} (median; ε 4, threshold 299).`,
    '',
    `## /v1/aggregates over ${DAYS} published days (${REQUESTS} requests, one at a time, keep-alive)`,
    '',
    `The first request (loading the ${DAYS} stored publications): ${ms(first.ms)} ms. Failed: ${failed}.`,
    '',
    '| filter | requests | answer, KiB | p50, ms | p99, ms | slowest, ms |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...[...timed].map(([name, rs]) => {
      const t = rs.map((r) => r.ms);
      return `| ${name} | ${rs.length} | ${(q(rs.map((r) => r.bytes), 0.5) / 1024).toFixed(0)} | ${ms(q(t, 0.5))} | ${ms(q(t, 0.99))} | ${ms(Math.max(...t))} |`;
    }),
    `| **all** | ${all.length} | | ${ms(q(all, 0.5))} | **${ms(q(all, 0.99))}** | ${ms(Math.max(...all))} |`,
    '',
  );
} finally {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
}
const report = lines.join('\n');
const out = reportPath(values, 'bench/results/collector-rollup.md');
if (out) writeFileSync(out, report);
console.log(report);
