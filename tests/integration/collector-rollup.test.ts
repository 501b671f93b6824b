// The rollup publication reads (collector/store.ts epochCounts and epochValues: two SQL passes per day) against the
// pages themselves, on both stores: for a day of varied pages (sites, networks, every value null somewhere, failures, a
// deleted batch, pages of other days) the database's counts and values equal publisher.ts resultsSource's over the same
// pages, and so do the published figures. Nothing leaves 127.0.0.1; PostgreSQL is a lab server (lab/postgres.ts).
import { afterAll, beforeAll, describe, test } from 'vitest';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { publishEpoch, resultsSource } from '../../collector/publisher.js';
import type { BatchRow, EpochTally, Store } from '../../collector/store.js';
import { openPgliteStore } from '../../collector/store-pglite.js';
import { openPostgresStore } from '../../collector/store-postgres.js';
import { startPostgres, type LabPostgres } from '../../lab/postgres.js';
import { coarse, type UploadPage } from '../../common/upload-batch.js';
import { randomKey } from '../support/collector-client.js';

const EPOCH = '2026-10-02';
const SITES = ['github.com', 'wikipedia.org', 'other'];
const NETWORKS = ['wifi', 'cellular'] as const;
const CELLS = [['cloudflare', 'doh', 'cold'], ['cloudflare', 'doh', 'warm'], ['quad9', 'dot', 'cold'], ['google', 'doq', 'warm']] as const;

/** A seeded stream of uniforms in [0, 1), so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
}

/** `n` pages of varied values, each as an upload page and as the results a tally counts. */
function pages(n: number, hour: string, u: () => number): Array<{ network: (typeof NETWORKS)[number]; page: UploadPage; results: Parameters<typeof resultsSource>[0][number][] }> {
  return Array.from({ length: n }, () => {
    const network = NETWORKS[Math.floor(u() * NETWORKS.length)]!;
    const site = SITES[Math.floor(u() * SITES.length)]!;
    const results = CELLS.filter((_, i) => i === 0 || u() < 0.8).map(([resolver, transport, mode]) => {
      const lookups = 1 + Math.floor(u() * 20);
      const failures = u() < 0.2 ? lookups : u() < 0.3 ? Math.floor(u() * lookups) : 0;
      const medianMs = failures === lookups ? null : coarse(5 + u() * 200);
      const onload = u() < 0.3 ? null : coarse(-50 + u() * 300);
      return {
        resolver, transport, mode, lookups, failures, medianMs, p5Ms: medianMs, p95Ms: medianMs,
        onload: onload === null ? null : { pointMs: onload, lowMs: onload, highMs: onload },
        bytesPerLookup: u() < 0.2 ? null : coarse(300 + u() * 5000), packetsPerLookup: u() < 0.2 ? null : coarse(2 + u() * 12),
      };
    });
    const page = { site, hour, hosts: 8, results } as UploadPage;
    return {
      network, page,
      results: results.map((r) => ({
        network, site, resolver: r.resolver, transport: r.transport, mode: r.mode, lookups: r.lookups, failures: r.failures,
        median_ms: r.medianMs, onload_ms: r.onload?.pointMs ?? null, bytes: r.bytesPerLookup, packets: r.packetsPerLookup,
      })),
    };
  });
}

const row = (network: (typeof NETWORKS)[number], page: UploadPage): BatchRow => ({
  key: randomKey(), bodySha256: createHash('sha256').update(randomBytes(8)).digest('hex'), tokenSha256: 'a'.repeat(64), network, pages: [page],
});

/** Tallies in one order, values sorted, the failure sum to 9 digits (the database adds in its own order). */
function canonical(tallies: readonly EpochTally[]) {
  return tallies
    .map((t) => ({
      cell: [t.network, t.site, t.resolver, t.transport, t.mode].join('/'), pages: t.tally.pages, failureSum: t.tally.failureSum.toFixed(9),
      counts: Object.fromEntries(Object.entries(t.tally.counts).map(([k, m]) => [k, [...m].sort((a, b) => a[0] - b[0])])),
    }))
    .sort((a, b) => (a.cell < b.cell ? -1 : 1));
}

for (const kind of ['pglite', 'postgres'] as const) {
  describe(`the rollup on ${kind}`, () => {
    let dir: string;
    let pg: LabPostgres | null = null;
    let store: Store;

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'dnscost-rollup-'));
      if (kind === 'postgres') pg = await startPostgres();
      store = pg ? await openPostgresStore(pg.url, 2) : await openPgliteStore(dir);
    });

    afterAll(async () => {
      await store?.close();
      await pg?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    test('a day\'s tallies from the database equal the tallies of its pages; so do the published figures', async () => {
      const u = random(kind === 'pglite' ? 7 : 11);
      const day = pages(400, `${EPOCH}T13Z`, u);
      const otherDays = [...pages(30, '2026-10-01T23Z', u), ...pages(30, '2026-10-03T00Z', u)];
      const deleted = pages(20, `${EPOCH}T08Z`, u);
      const rows = [...day, ...otherDays, ...deleted].map((p) => row(p.network, p.page));
      for (let i = 0; i < rows.length; i += 100) assert.ok((await store.putMany(rows.slice(i, i + 100))).every((o) => o === 'stored'));
      for (const r of rows.slice(day.length + otherDays.length)) assert.equal(await store.delete(r.key, r.tokenSha256), true);

      const memory = resultsSource(day.flatMap((p) => p.results));
      const counts = await memory.epochCounts(EPOCH);
      assert.ok(counts.length >= 20, `${counts.length} cells`);
      assert.deepEqual(canonical(await store.epochCounts(EPOCH)), canonical(counts));
      // Values with every other site folded into "other", for every cell there is (named or folded).
      const named = counts.filter((c, i) => c.site !== 'other' && i % 2 === 0);
      const cells = [...named, ...counts.filter((c) => c.site === 'other')];
      const values = await memory.epochValues(EPOCH, named, cells);
      assert.ok(values.some((v) => v.site === 'other' && v.tally.counts.medianMs.size > 5));
      assert.deepEqual(canonical(await store.epochValues(EPOCH, named, cells)), canonical(values));
      // Published from either: the same cells and figures (ε 1 and a threshold of 5, so noise and folding both show).
      const opts = { secret: randomBytes(32), epsilon: 1, minPages: 5 };
      const published = await publishEpoch(EPOCH, store, opts);
      assert.ok(published.some((c) => c.site === 'other') && published.some((c) => c.site !== 'other'), JSON.stringify(published.map((c) => c.site)));
      assert.deepEqual(published, await publishEpoch(EPOCH, memory, opts));
      assert.deepEqual(await store.epochCounts('2026-09-30'), [], 'a day without pages');
    });
  });
}
