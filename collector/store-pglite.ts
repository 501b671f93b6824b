// The embedded store: PostgreSQL compiled to WebAssembly (PGlite) in this process, its data directory on disk. No
// server and no native build, and the same SQL and migrations as store-postgres.ts.
import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { migrate, SqlStore, type Sql, type Store } from './store.js';

/** Opens (creating if needed) the embedded database in `dataDir` and migrates it. */
export async function openPgliteStore(dataDir: string): Promise<Store> {
  const db = await PGlite.create(dataDir);
  const sql: Sql = {
    query: async (text, params) => (await db.query<never>(text, params)).rows,
    transaction: (fn) =>
      db.transaction((tx) =>
        fn({
          query: async (text, params) => (await tx.query<never>(text, params)).rows,
          exec: async (script) => void (await tx.exec(script)),
        }),
      ),
    close: () => db.close(),
  };
  await migrate(sql);
  // One connection: PGlite runs one statement at a time on this thread.
  return new SqlStore('pglite', 1, sql, () => syncWal(dataDir));
}

/**
 * Flushes the write-ahead log to disk. PGlite's file system layer (Emscripten NODEFS) has no fsync, so Postgres's
 * own WAL flush at COMMIT stops in the OS page cache: it survives the process being killed, not a power loss. The
 * WAL segments and their directory (a new segment is a new directory entry) are fsynced after each commit; the data
 * files a checkpoint writes are not, so the embedded store is NOT crash-safe against power loss (README: use
 * PostgreSQL for that; the start-up log says so).
 */
async function syncWal(dataDir: string): Promise<void> {
  const wal = join(dataDir, 'pg_wal');
  for (const name of await readdir(wal)) {
    if (!/^[0-9A-F]{24}$/.test(name)) continue;
    await syncPath(join(wal, name), 'r+');
  }
  // A directory cannot be opened for fsync everywhere (Windows): there the segments' own fsync is what there is.
  await syncPath(wal, 'r').catch((e: NodeJS.ErrnoException) => {
    if (!['EISDIR', 'EPERM', 'EINVAL', 'EACCES'].includes(e.code ?? '')) throw e;
  });
}

async function syncPath(path: string, flags: 'r' | 'r+'): Promise<void> {
  const f = await open(path, flags);
  try {
    await f.sync();
  } finally {
    await f.close();
  }
}

/** What the start-up log says of the embedded store's durability. */
export const PGLITE_DURABILITY = 'the embedded store is not crash-safe against power loss (a killed collector loses nothing); use PostgreSQL (DNSCOST_COLLECTOR_DATABASE_URL) for uploads you cannot lose';
