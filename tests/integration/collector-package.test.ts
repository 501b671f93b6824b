// The packaged collector as an operator gets it: the linux-x64 archive scripts/package built is unpacked inside a
// mount namespace where no node, no go and no checkout can be seen (lab/no-checkout.ts), and the executable from it
// migrates a fresh PostgreSQL database (lab/postgres.ts, on loopback), accepts an upload, serves its dashboard and
// health check, and stops on SIGTERM. Without a database it refuses to start with a clear message (it has no embedded
// store); every archive's executable is built for its platform.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { noCheckoutPrelude } from '../../lab/no-checkout.js';
import { ROOT } from '../../lab/paths.js';
import { startPostgres, type LabPostgres } from '../../lab/postgres.js';
import { wrongArch } from '../../scripts/packaging/arch.mjs';
import { batch, batchRows, http, upload } from '../support/collector-client.js';

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const OUT = join(ROOT, 'build', 'package');
const LINUX = join(OUT, `dnscost-collector-${VERSION}-linux-x64.tar.gz`);
const notBuilt = existsSync(LINUX) ? null : `${LINUX} is not built: run scripts/package first`;
const notRoot = process.getuid?.() === 0 ? null : 'needs root: unshare -m hides node, go and the checkout';
const TOP = `dnscost-collector-${VERSION}-linux-x64`;

describe('the packaged linux-x64 collector, with no node, go or checkout in sight', () => {
  let root: string;
  let prelude: string;
  let pgServer: LabPostgres;

  /** `script` (sh) in a new mount namespace after the prelude, PATH=/usr/bin:/bin and only `env` besides. */
  const inNamespace = (script: string, env: Record<string, string> = {}) =>
    spawn('/usr/bin/unshare', ['-m', 'sh', '-c', `${prelude}\ncd ${root}\n${script}`], { env: { PATH: '/usr/bin:/bin', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });

  beforeAll(async () => {
    if (notBuilt || notRoot) return;
    root = mkdtempSync(join(tmpdir(), 'dnscost-collector-package-'));
    mkdirSync(join(root, 'download'));
    copyFileSync(LINUX, join(root, 'download', 'collector.tar.gz'));
    execFileSync('tar', ['-xzf', join(root, 'download', 'collector.tar.gz'), '-C', root]);
    prelude = noCheckoutPrelude(root);
    pgServer = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await pgServer?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  test('every collector archive: its executable for its platform, the migrations and the dashboard beside it', (t) => {
    if (notBuilt) return t.skip(notBuilt);
    const archives = readdirSync(OUT).filter((f) => f.startsWith(`dnscost-collector-${VERSION}-`));
    assert.deepEqual(archives.sort(), ['linux-arm64', 'linux-x64'].map((p) => `dnscost-collector-${VERSION}-${p}.tar.gz`));
    for (const a of archives) {
      const target = /-(linux-\w+)\.tar\.gz$/.exec(a)![1]!;
      const dir = mkdtempSync(join(tmpdir(), 'dnscost-arch-'));
      try {
        execFileSync('tar', ['-xzf', join(OUT, a), '-C', dir]);
        const top = join(dir, `dnscost-collector-${VERSION}-${target}`);
        assert.deepEqual(readdirSync(top).sort(), ['LICENSE', 'LICENSE.node', 'README.md', 'dashboard', 'dnscost-collector', 'migrations']);
        assert.deepEqual(readdirSync(join(top, 'migrations')), readdirSync(join(ROOT, 'collector', 'migrations')));
        assert.deepEqual(readdirSync(join(top, 'dashboard')).sort(), [...readdirSync(join(ROOT, 'collector', 'dashboard')), 'uplot.min.css', 'uplot.min.js'].sort());
        assert.equal(wrongArch(target, readFileSync(join(top, 'dnscost-collector')).subarray(0, 4096)), null, a);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });

  test('it says its version; without a database it refuses to start and says why', (t) => {
    if (notBuilt || notRoot) return t.skip((notBuilt ?? notRoot)!);
    const run = (args: string) => spawnSync('/usr/bin/unshare', ['-m', 'sh', '-c', `${prelude}\n${root}/${TOP}/dnscost-collector ${args}`], { env: { PATH: '/usr/bin:/bin', HOME: root }, encoding: 'utf8', timeout: 30_000 });
    const version = run('--version');
    assert.equal(version.status, 0, version.stderr);
    assert.equal(version.stdout.trim(), VERSION);
    const bare = run('serve --port 0');
    assert.equal(bare.status, 2, bare.stderr);
    assert.match(bare.stderr, /no embedded store .* give --database-url or DNSCOST_COLLECTOR_DATABASE_URL/);
    assert.doesNotMatch(bare.stderr, /\n\s+at /, 'no stack trace');
  });

  test('it migrates a fresh PostgreSQL database, accepts an upload, serves the dashboard, and stops on SIGTERM', { timeout: 120_000 }, async (t) => {
    if (notBuilt || notRoot) return t.skip((notBuilt ?? notRoot)!);
    const child = inNamespace(`exec ${TOP}/dnscost-collector serve --port 0 --rate 0`, { HOME: root, DNSCOST_COLLECTOR_DATABASE_URL: pgServer.url, DNSCOST_COLLECTOR_DATA: join(root, 'data') });
    let log = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the packaged collector did not start:\n${log}`)), 60_000);
      child.stderr.on('data', (d: Buffer) => {
        log += d.toString();
        const m = /listening on (http:\/\/\S+)/.exec(log);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      child.on('exit', (code) => reject(new Error(`the packaged collector exited (${code}):\n${log}`)));
    });
    try {
      assert.match(log, /store postgres/);
      // With PostgreSQL it starts a worker per core (collector/workers.ts), the packaged executable too.
      if (availableParallelism() > 1) assert.match(log, new RegExp(`listening on \\S+ \\(${availableParallelism()} workers\\)`));
      const stored = await upload(url, batch());
      assert.equal(stored.status, 201, JSON.stringify(stored.body));
      assert.deepEqual((await http(`${url}/healthz`)).body, { ok: true, store: 'postgres' });
      const page = await http(`${url}/`);
      assert.equal(page.status, 200);
      assert.match(page.raw.toString(), /dnscost: what encrypted DNS costs, crowd-wide/);
      assert.equal((await http(`${url}/uplot.min.js`)).status, 200, 'uPlot beside the dashboard');
      // The database it migrated holds the upload.
      assert.equal(await batchRows(pgServer.url), 1);
    } finally {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      assert.equal(code, 0, `stopped on SIGTERM:\n${log}`);
    }
  });
});
