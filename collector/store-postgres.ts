// The server store: a PostgreSQL server through node-postgres, with the same SQL and migrations as the embedded
// store. Durability is the server's: a statement returns after its COMMIT is flushed (synchronous_commit on).
import pg from 'pg';
import { migrate, SqlStore, type Sql, type Store } from './store.js';

/** Connects a pool of `connections` to `url` (postgres://…) and migrates the database. */
export async function openPostgresStore(url: string, connections = 4): Promise<Store> {
  const pool = new pg.Pool({ connectionString: url, max: connections });
  // An idle client's error (the server restarting) must not crash the collector; the next query reports it.
  pool.on('error', (err) => console.error(`dnscost-collector: postgres: ${err.message}`));
  const sql: Sql = {
    query: async (text, params) => (await pool.query(text, params)).rows,
    transaction: async (fn) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn({
          query: async (text, params) => (await client.query(text, params)).rows,
          exec: async (script) => void (await client.query(script)),
        });
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
  await migrate(sql);
  return new SqlStore('postgres', connections, sql);
}
