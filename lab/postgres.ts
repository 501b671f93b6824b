// A throwaway PostgreSQL server for tests and benchmarks: initdb into a temporary directory, listen on a free
// 127.0.0.1 port with its socket in that directory, stop and remove everything after. Needs the Debian package
// `postgresql` (scripts/setup installs it). PostgreSQL refuses to run as root, so as root it runs as the
// `postgres` system user (setpriv execs in place, so the child's pid is the server's own).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

/** A running server: its connection URL, and stop() which shuts it down and removes its files. */
export interface LabPostgres {
  url: string;
  stop(): Promise<void>;
}

/** The newest installed server's bin directory (/usr/lib/postgresql/N/bin), or null. */
export function postgresBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'postgres'))).sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? null : join(root, versions[0], 'bin');
}

/** Starts a fresh server; rejects if it does not accept connections within 30 s. */
export async function startPostgres(): Promise<LabPostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL is not installed (Debian package postgresql; scripts/setup installs it)');
  const dir = await mkdtemp(join(tmpdir(), 'dnscost-pg-'));
  const asRoot = process.getuid?.() === 0;
  const user = asRoot ? 'postgres' : (process.env.USER ?? 'postgres');
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
    await chown(dir, uid, gid);
  }
  const run = (cmd: string, args: string[]): [string, string[]] =>
    asRoot ? ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', '--', cmd, ...args]] : [cmd, args];
  const data = join(dir, 'data');
  // --no-sync only skips initdb's own fsyncs; the server itself keeps fsync on, so commits are durable.
  execFileSync(...run(join(bin, 'initdb'), ['-D', data, '-U', user, '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C']), { stdio: 'ignore' });
  const port = await freePort();
  const [cmd, args] = run(join(bin, 'postgres'), ['-D', data, '-h', '127.0.0.1', '-p', String(port), '-k', dir, '-c', 'max_connections=50']);
  const server: ChildProcess = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  server.stderr!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
  const url = `postgres://${user}@127.0.0.1:${port}/postgres`;
  const stop = async () => {
    if (server.exitCode === null && server.signalCode === null) {
      server.kill('SIGINT'); // fast shutdown
      await Promise.race([once(server, 'exit'), sleep(10_000).then(() => server.kill('SIGKILL'))]);
    }
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return { url, stop };
    } catch (err) {
      await client.end().catch(() => {});
      if (server.exitCode !== null || Date.now() > deadline) {
        await stop();
        throw new Error(`PostgreSQL did not start: ${(err as Error).message}\n${log}`);
      }
      await sleep(100);
    }
  }
}

async function freePort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const { port } = s.address() as AddressInfo;
  s.close();
  return port;
}
