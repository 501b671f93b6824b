// Where the collector keeps batches: one small interface, and one implementation (SqlStore) written once in SQL
// that runs unchanged on embedded PGlite and on a PostgreSQL server; store-pglite.ts and store-postgres.ts only
// adapt a driver to the Sql shape below.
//
// Lifecycle: open*Store() connects and applies the migrations in collector/migrations/ (in name order, each once,
// under an advisory lock so several collectors may start together); putMany/delete resolve only after their
// statement committed durably; close() ends the connections.
import { readdir, readFile } from 'node:fs/promises';
import type { NetworkType, UploadPage } from '../common/upload-batch.js';
import { MIGRATIONS_DIR } from './paths.js';

/** A validated batch as stored: the hashes that decide replay vs conflict, and the data. */
export interface BatchRow {
  key: string;
  bodySha256: string;
  tokenSha256: string;
  network: NetworkType;
  pages: UploadPage[];
}

/** What became of one batch handed to putMany. */
export type PutOutcome = 'stored' | 'duplicate' | 'conflict';

/** Filters of the aggregates; each absent one means all. */
export interface AggregateFilter {
  resolver?: string;
  transport?: string;
  network?: string;
  site?: string;
}

/** Percentiles (5th, 50th, 95th) of per-page values; null when no page had one. */
export interface Spread {
  p5: number;
  p50: number;
  p95: number;
}

/** One published cell: resolver × transport × mode × network type × site. */
export interface AggregateCell {
  resolver: string;
  transport: string;
  mode: string;
  network: string;
  /** A popular site backed by at least minBatches batches in this cell, otherwise "other". */
  site: string;
  batches: number;
  pages: number;
  lookups: number;
  failures: number;
  /** Spread over pages of each page's median lookup time. */
  lookupMs: Spread | null;
  /** Spread over pages of the estimated onLoad change (point estimates). */
  onloadMs: Spread | null;
  bytesPerLookup: number | null;
  packetsPerLookup: number | null;
}

/** Crowd-wide aggregates: the number of stored batches and the published cells. */
export interface Aggregates {
  batches: number;
  cells: AggregateCell[];
}

/** The collector's storage. */
export interface Store {
  readonly kind: 'pglite' | 'postgres';
  /** Most putMany calls worth running at once (connections). */
  readonly concurrency: number;
  /** Inserts the rows in one statement; resolves, per row, once it is durably committed (or known a replay). */
  putMany(rows: readonly BatchRow[]): Promise<PutOutcome[]>;
  /** Deletes a batch's data if the token hash matches (idempotent); false when no such batch for this token. */
  delete(key: string, tokenSha256: string): Promise<boolean>;
  /** Aggregates over the stored batches; a site is named only in cells backed by ≥ minBatches distinct batches. */
  aggregates(filter: AggregateFilter, minBatches: number): Promise<Aggregates>;
  /** Resolves when the database answers. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The little a driver must offer: parameterised queries, multi-statement scripts and transactions. */
export interface Sql {
  query<T>(text: string, params?: unknown[]): Promise<T[]>;
  /** Runs `fn` in one transaction on one connection; `exec` there runs multi-statement scripts. */
  transaction<T>(fn: (tx: { query: Sql['query']; exec(script: string): Promise<void> }) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

// Any fixed number: every collector takes the same lock while migrating.
const MIGRATION_LOCK = 0x646e73;

/** Applies the migrations not yet applied, in name order; safe to call from several processes at once. */
export async function migrate(sql: Sql, dir = MIGRATIONS_DIR): Promise<string[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
  return sql.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.exec('CREATE TABLE IF NOT EXISTS dnscost_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const done = new Set((await tx.query<{ name: string }>('SELECT name FROM dnscost_migrations')).map((r) => r.name));
    const applied: string[] = [];
    for (const f of files.filter((name) => !done.has(name))) {
      await tx.exec(await readFile(`${dir}/${f}`, 'utf8'));
      await tx.query('INSERT INTO dnscost_migrations (name) VALUES ($1)', [f]);
      applied.push(f);
    }
    return applied;
  });
}

// One statement for a whole group: the rows travel as one JSON parameter, which both drivers pass the same way.
const INSERT = `
INSERT INTO batches (key, body_sha256, token_sha256, network, pages)
SELECT key, body_sha256, token_sha256, network, pages
FROM jsonb_to_recordset($1::jsonb) AS t(key text, body_sha256 text, token_sha256 text, network text, pages jsonb)
ON CONFLICT (key) DO NOTHING
RETURNING key`;

const EXISTING = `
SELECT key, body_sha256, token_sha256 FROM batches
WHERE key IN (SELECT jsonb_array_elements_text($1::jsonb))`;

const DELETE = `
UPDATE batches SET network = NULL, pages = NULL
WHERE key = $1 AND token_sha256 = $2
RETURNING key`;

// Cells are counted before folding, so a site with too few batches in a cell is merged into that cell's "other";
// the site filter applies after folding, so asking for a rare site by name reveals nothing.
const AGGREGATES = `
WITH r AS (
  SELECT b.key, b.network, p->>'site' AS site, x->>'resolver' AS resolver, x->>'transport' AS transport,
    x->>'mode' AS mode, (x->>'lookups')::int AS lookups, (x->>'failures')::int AS failures,
    (x->>'medianMs')::float8 AS median_ms, (x->'onload'->>'pointMs')::float8 AS onload_ms,
    (x->>'bytesPerLookup')::float8 AS bytes, (x->>'packetsPerLookup')::float8 AS packets
  FROM batches b
  CROSS JOIN LATERAL jsonb_array_elements(b.pages) p
  CROSS JOIN LATERAL jsonb_array_elements(p->'results') x
  WHERE b.pages IS NOT NULL
    AND ($1::text IS NULL OR x->>'resolver' = $1)
    AND ($2::text IS NULL OR x->>'transport' = $2)
    AND ($3::text IS NULL OR b.network = $3)
),
cells AS (
  SELECT resolver, transport, mode, network, site, count(DISTINCT key) AS n FROM r GROUP BY 1, 2, 3, 4, 5
),
folded AS (
  SELECT r.*, CASE WHEN c.n >= $5 THEN r.site ELSE 'other' END AS shown
  FROM r JOIN cells c USING (resolver, transport, mode, network, site)
)
SELECT resolver, transport, mode, network, shown AS site,
  count(DISTINCT key)::int AS batches, count(*)::int AS pages,
  sum(lookups)::float8 AS lookups, sum(failures)::float8 AS failures,
  percentile_cont(ARRAY[0.05, 0.5, 0.95]) WITHIN GROUP (ORDER BY median_ms) AS lookup_ms,
  percentile_cont(ARRAY[0.05, 0.5, 0.95]) WITHIN GROUP (ORDER BY onload_ms) AS onload_ms,
  percentile_cont(0.5) WITHIN GROUP (ORDER BY bytes) AS bytes,
  percentile_cont(0.5) WITHIN GROUP (ORDER BY packets) AS packets
FROM folded
WHERE $4::text IS NULL OR shown = $4
GROUP BY 1, 2, 3, 4, 5
ORDER BY 1, 2, 3, 4, 5`;

interface CellRow {
  resolver: string;
  transport: string;
  mode: string;
  network: string;
  site: string;
  batches: number;
  pages: number;
  lookups: number;
  failures: number;
  lookup_ms: (number | null)[] | null;
  onload_ms: (number | null)[] | null;
  bytes: number | null;
  packets: number | null;
}

/** The Store over any Sql; `durable` runs after each write commits and before it is acknowledged. */
export class SqlStore implements Store {
  constructor(
    readonly kind: Store['kind'],
    readonly concurrency: number,
    private readonly sql: Sql,
    private readonly durable: () => Promise<void> = async () => {},
  ) {}

  async putMany(rows: readonly BatchRow[]): Promise<PutOutcome[]> {
    // The first row of each key is inserted; any later row with that key (a concurrent retry) is judged against it.
    const first = new Map<string, BatchRow>();
    for (const r of rows) if (!first.has(r.key)) first.set(r.key, r);
    const payload = [...first.values()].map((r) => ({ key: r.key, body_sha256: r.bodySha256, token_sha256: r.tokenSha256, network: r.network, pages: r.pages }));
    const inserted = new Set((await this.sql.query<{ key: string }>(INSERT, [JSON.stringify(payload)])).map((r) => r.key));
    await this.durable();
    const stored = (r: BatchRow) => inserted.has(r.key) && first.get(r.key) === r;
    const others = rows.filter((r) => !stored(r));
    // Read after the insert committed: a key another collector inserted meanwhile is visible to this new snapshot.
    const existing = others.length === 0 ? [] : await this.sql.query<{ key: string; body_sha256: string; token_sha256: string }>(EXISTING, [JSON.stringify(others.map((r) => r.key))]);
    const byKey = new Map(existing.map((e) => [e.key, e]));
    return rows.map((r) => {
      if (stored(r)) return 'stored';
      const e = byKey.get(r.key);
      return e && e.body_sha256 === r.bodySha256 && e.token_sha256 === r.tokenSha256 ? 'duplicate' : 'conflict';
    });
  }

  async delete(key: string, tokenSha256: string): Promise<boolean> {
    const rows = await this.sql.query(DELETE, [key, tokenSha256]);
    await this.durable();
    return rows.length > 0;
  }

  async aggregates(filter: AggregateFilter, minBatches: number): Promise<Aggregates> {
    const params = [filter.resolver ?? null, filter.transport ?? null, filter.network ?? null, filter.site ?? null, minBatches];
    const [cells, total] = await Promise.all([
      this.sql.query<CellRow>(AGGREGATES, params),
      this.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM batches WHERE pages IS NOT NULL'),
    ]);
    return {
      batches: total[0]?.n ?? 0,
      cells: cells.map((c) => ({
        resolver: c.resolver,
        transport: c.transport,
        mode: c.mode,
        network: c.network,
        site: c.site,
        batches: c.batches,
        pages: c.pages,
        lookups: c.lookups,
        failures: c.failures,
        lookupMs: spread(c.lookup_ms),
        onloadMs: spread(c.onload_ms),
        bytesPerLookup: c.bytes,
        packetsPerLookup: c.packets,
      })),
    };
  }

  async ping(): Promise<void> {
    await this.sql.query('SELECT 1');
  }

  close(): Promise<void> {
    return this.sql.close();
  }
}

function spread(values: (number | null)[] | null): Spread | null {
  const [p5, p50, p95] = values ?? [];
  return p5 == null || p50 == null || p95 == null ? null : { p5, p50, p95 };
}
