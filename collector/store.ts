// Where the collector keeps batches: one small interface, and one implementation (SqlStore) written once in SQL
// that runs unchanged on embedded PGlite and on a PostgreSQL server; store-pglite.ts and store-postgres.ts only
// adapt a driver to the Sql shape below.
//
// Lifecycle: open*Store() connects and applies the migrations in collector/migrations/ (in name order, each once,
// under an advisory lock so several collectors may start together); putMany/delete resolve only after their
// statement committed durably; close() ends the connections.
import { readdir, readFile } from 'node:fs/promises';
import type { NetworkType, UploadPage } from '../common/upload-batch.js';
import { emptyTally, type CellTally, type PublishedCell, type Tallied } from './publication.js';
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

/** One result of one page of an epoch, as a tally counts it (publisher.ts resultsSource; tests and benchmarks). */
export interface EpochResult {
  network: string;
  site: string;
  resolver: string;
  transport: string;
  mode: string;
  lookups: number;
  failures: number;
  median_ms: number | null;
  onload_ms: number | null;
  bytes: number | null;
  packets: number | null;
}

/** A cell of an epoch: resolver × transport × mode × network type × site (a popular site or "other"). */
export interface CellKey {
  network: string;
  site: string;
  resolver: string;
  transport: string;
  mode: string;
}

/** Only a cell's coordinates (a tally or a result carries more). */
export const cellKey = ({ network, site, resolver, transport, mode }: CellKey): CellKey => ({ network, site, resolver, transport, mode });

/** A cell's coordinates as one string, joined by `sep` (EPOCH_VALUES matches its named cells joined by '/'). */
export const cellLabel = (c: CellKey, sep = '\u0000') => [c.network, c.site, c.resolver, c.transport, c.mode].join(sep);

/** The tally of one cell's pages of an epoch (its rollup; collector/publication.ts). */
export interface EpochTally extends CellKey {
  tally: CellTally;
}

/** One published cell of one epoch: its coordinates and its noisy figures. */
export interface PublishedRow extends PublishedCell {
  epoch: string;
  resolver: string;
  transport: string;
  mode: string;
  network: string;
  /** A popular site whose own noisy page count reached the threshold, otherwise "other". */
  site: string;
}

/** What was published of one epoch (a UTC day), once and for good. */
export interface StoredPublication {
  epoch: string;
  /** ISO time it was first published. */
  publishedAt: string;
  epsilon: number;
  minPages: number;
  cells: PublishedRow[];
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
  /**
   * Every cell of `epoch` (YYYY-MM-DD) with its stored (not deleted) pages' count and failure-share sum (the value
   * counts left empty): one pass over the day's batches, in the database.
   */
  epochCounts(epoch: string): Promise<EpochTally[]>;
  /**
   * The value counts of `cells` of `epoch` (their counts and sums left 0), a page's site kept where its cell is one of
   * `named` and "other" elsewhere (the publisher's folding): a second pass, for the cells that are published only.
   */
  epochValues(epoch: string, named: readonly CellKey[], cells: readonly CellKey[]): Promise<EpochTally[]>;
  /** Those of `epochs` that hold at least one stored page (one index probe each). */
  epochsWithData(epochs: readonly string[]): Promise<string[]>;
  /** The stored publications of those of `epochs` that were published. */
  publications(epochs: readonly string[]): Promise<StoredPublication[]>;
  /** Every published epoch, oldest first (the open data's index). */
  publishedEpochs(): Promise<string[]>;
  /** Stores an epoch's publication unless one is stored already; resolves with the stored one (first writer wins). */
  publish(p: Omit<StoredPublication, 'publishedAt'>): Promise<StoredPublication>;
  /** Stored (not deleted) batches: for operators and tests; never published. */
  count(): Promise<number>;
  /** Removes the raw uploads of every day before `epoch` (YYYY-MM-DD); publications stay. Resolves with how many. */
  prune(epoch: string): Promise<number>;
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
INSERT INTO batches (key, body_sha256, token_sha256, network, pages, epoch)
SELECT key, body_sha256, token_sha256, network, pages, left(pages->0->>'hour', 10)
FROM jsonb_to_recordset($1::jsonb) AS t(key text, body_sha256 text, token_sha256 text, network text, pages jsonb)
ON CONFLICT (key) DO NOTHING
RETURNING key`;

const EXISTING = `
SELECT key, body_sha256, token_sha256 FROM batches
WHERE key IN (SELECT jsonb_array_elements_text($1::jsonb))`;

const DELETE = `
UPDATE batches SET network = NULL, pages = NULL, epoch = NULL
WHERE key = $1 AND token_sha256 = $2
RETURNING key`;

// The rollup publication reads (collector/publication.ts CellTally), in two passes over the epoch's batches (by
// index): every cell's page count and failure-share sum, then, for the cells to be published only (a few hundred, not
// every site's), how many pages had each value (GROUPING tells which value a row counts).
// A batch holds one page (UPLOAD_LIMITS.pages), so its epoch is its page's; the page's own hour is checked too.
const EPOCH_ROWS = `
SELECT b.network, p->>'site' AS site, x->>'resolver' AS resolver, x->>'transport' AS transport, x->>'mode' AS mode,
  CASE WHEN (x->>'lookups')::int > 0 THEN least(1, greatest(0, (x->>'failures')::float8 / (x->>'lookups')::int)) ELSE 0 END
    AS share,
  (x->>'medianMs')::float8 AS median_ms, (x->'onload'->>'pointMs')::float8 AS onload_ms,
  (x->>'bytesPerLookup')::float8 AS bytes, (x->>'packetsPerLookup')::float8 AS packets
FROM batches b
CROSS JOIN LATERAL jsonb_array_elements(b.pages) p
CROSS JOIN LATERAL jsonb_array_elements(p->'results') x
WHERE b.epoch = $1 AND b.pages IS NOT NULL AND left(p->>'hour', 10) = $1`;

const CELL = 'network, site, resolver, transport, mode';

const EPOCH_COUNTS = `
SELECT ${CELL}, count(*)::int AS n, sum(share)::float8 AS share
FROM (${EPOCH_ROWS}) r
GROUP BY ${CELL}`;

// Every page's values by the cell it is published in: its own site's when that cell is named ($2, the cells' labels:
// `= ANY` of a constant list is a hash lookup), else "other"; the store keeps the cells asked for.
const EPOCH_VALUES = `
SELECT network, site, resolver, transport, mode, GROUPING(median_ms, onload_ms, bytes, packets)::int AS g, median_ms,
  onload_ms, bytes, packets, count(*)::int AS n
FROM (
  SELECT network, CASE WHEN concat_ws('/', network, site, resolver, transport, mode) = ANY($2::text[]) THEN site ELSE 'other' END
      AS site, resolver, transport, mode, median_ms, onload_ms, bytes, packets
  FROM (${EPOCH_ROWS}) r
) f
GROUP BY GROUPING SETS ((${CELL}, median_ms), (${CELL}, onload_ms), (${CELL}, bytes), (${CELL}, packets))`;

/** A row of EPOCH_COUNTS (n, share) or of EPOCH_VALUES (g names the value a row counts, n how many pages had it). */
interface TallyRow extends CellKey {
  g?: number;
  median_ms?: number | null;
  onload_ms?: number | null;
  bytes?: number | null;
  packets?: number | null;
  n: number;
  share?: number;
}

/** GROUPING(median_ms, onload_ms, bytes, packets) of the set grouped by each value (its own bit clear). */
const GROUPED_BY: ReadonlyArray<[number, Tallied, 'median_ms' | 'onload_ms' | 'bytes' | 'packets']> = [
  [0b0111, 'medianMs', 'median_ms'],
  [0b1011, 'onloadMs', 'onload_ms'],
  [0b1101, 'bytes', 'bytes'],
  [0b1110, 'packets', 'packets'],
];

/** The tallies of EPOCH_COUNTS' or EPOCH_VALUES' rows (a value's null count is no value: those pages had none). */
function talliesOf(rows: readonly TallyRow[]): EpochTally[] {
  const cells = new Map<string, EpochTally>();
  for (const r of rows) {
    const label = cellLabel(r);
    let c = cells.get(label);
    if (!c) cells.set(label, (c = { ...cellKey(r), tally: emptyTally() }));
    if (r.g === undefined) {
      c.tally.pages = r.n;
      c.tally.failureSum = r.share ?? 0;
      continue;
    }
    const by = GROUPED_BY.find(([g]) => g === r.g);
    const v = by ? r[by[2]] : null;
    if (by && v != null) c.tally.counts[by[1]].set(v, r.n);
  }
  return [...cells.values()];
}

const EPOCHS_WITH_DATA = `
SELECT e AS epoch FROM jsonb_array_elements_text($1::jsonb) e
WHERE EXISTS (SELECT 1 FROM batches b WHERE b.epoch = e AND b.pages IS NOT NULL)`;

const PUBLICATIONS = `
SELECT epoch, to_char(published_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS published_at, epsilon,
  min_pages, cells
FROM publications WHERE epoch IN (SELECT jsonb_array_elements_text($1::jsonb)) ORDER BY epoch`;

const PUBLISH = `
INSERT INTO publications (epoch, epsilon, min_pages, cells) VALUES ($1, $2, $3, $4::jsonb)
ON CONFLICT (epoch) DO NOTHING`;

interface PublicationRow {
  epoch: string;
  published_at: string;
  epsilon: number;
  min_pages: number;
  cells: PublishedRow[] | string;
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

  async epochCounts(epoch: string): Promise<EpochTally[]> {
    return talliesOf(await this.withoutJit(EPOCH_COUNTS, [epoch]));
  }

  async epochValues(epoch: string, named: readonly CellKey[], cells: readonly CellKey[]): Promise<EpochTally[]> {
    if (cells.length === 0) return [];
    const wanted = new Set(cells.map((c) => cellLabel(c)));
    const keep = named.map((c) => cellLabel(c, '/'));
    return talliesOf(await this.withoutJit(EPOCH_VALUES, [epoch, keep])).filter((t) => wanted.has(cellLabel(t)));
  }

  /** A rollup query with JIT compilation off (it costs more than it saves on these). */
  private withoutJit(text: string, params: unknown[]): Promise<TallyRow[]> {
    return this.sql.transaction(async (tx) => {
      await tx.query('SET LOCAL jit = off');
      return tx.query<TallyRow>(text, params);
    });
  }

  async epochsWithData(epochs: readonly string[]): Promise<string[]> {
    if (epochs.length === 0) return [];
    return (await this.sql.query<{ epoch: string }>(EPOCHS_WITH_DATA, [JSON.stringify(epochs)])).map((r) => r.epoch);
  }

  async publications(epochs: readonly string[]): Promise<StoredPublication[]> {
    if (epochs.length === 0) return [];
    const rows = await this.sql.query<PublicationRow>(PUBLICATIONS, [JSON.stringify(epochs)]);
    return rows.map((r) => ({
      epoch: r.epoch,
      publishedAt: r.published_at,
      epsilon: r.epsilon,
      minPages: r.min_pages,
      cells: typeof r.cells === 'string' ? (JSON.parse(r.cells) as PublishedRow[]) : r.cells,
    }));
  }

  async publishedEpochs(): Promise<string[]> {
    return (await this.sql.query<{ epoch: string }>('SELECT epoch FROM publications ORDER BY epoch')).map((r) => r.epoch);
  }

  async publish(p: Omit<StoredPublication, 'publishedAt'>): Promise<StoredPublication> {
    await this.sql.query(PUBLISH, [p.epoch, p.epsilon, p.minPages, JSON.stringify(p.cells)]);
    await this.durable();
    const [stored] = await this.publications([p.epoch]);
    if (!stored) throw new Error(`publication of ${p.epoch} was not stored`);
    return stored;
  }

  async prune(epoch: string): Promise<number> {
    const rows = await this.sql.query('DELETE FROM batches WHERE epoch < $1 RETURNING key', [epoch]);
    await this.durable();
    return rows.length;
  }

  async count(): Promise<number> {
    return (await this.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM batches WHERE pages IS NOT NULL'))[0]?.n ?? 0;
  }

  async ping(): Promise<void> {
    await this.sql.query('SELECT 1');
  }

  close(): Promise<void> {
    return this.sql.close();
  }
}

