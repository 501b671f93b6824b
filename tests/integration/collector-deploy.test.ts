// The collector's deployment recipe (collector/deploy/), its real pieces on this machine: the systemd unit's
// sandboxing as systemd itself rates it (systemd-analyze security, offline), PostgreSQL set up by the recipe's SQL, the
// packaged collector run with the unit's environment, and Caddy with the recipe's Caddyfile terminating TLS in front
// (its own CA for a `.localhost` name, as it does for names no public CA will certify). An upload goes in through https,
// the aggregates and a published day's open-data file come back through the proxy, and the extension's own uploader,
// in real Chromium with the real host, sends a measured page's batch to the https address and it is stored. Everything runs in a
// loopback-only network namespace (the file re-runs itself under `unshare --net`): Caddy takes ports 80 and 443 there.
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { test } from 'vitest';
import type { ResolverSpec } from '../../common/schema.js';
import { DELETION_TOKEN_HEADER } from '../../common/upload-batch.js';
import type { MeasureStatus } from '../../extension/src/messages/measure.js';
import type { UploadStatus } from '../../extension/src/messages/upload.js';
import { launchWithExtension, poll } from '../../lab/browsers.js';
import { requireBuiltExtension } from '../../lab/extension-build.js';
import { labResolverSpec, loadRecordedPage, sendFromPage } from '../../lab/extension-pages.js';
import { ROOT } from '../../lab/paths.js';
import { startPostgres } from '../../lab/postgres.js';
import { startCoreDNS } from '../../lab/resolver.js';
import { startSite } from '../../lab/site/server.js';
import { batch, batchRows, dayAgo, hourAgo, randomToken } from '../support/collector-client.js';
import { runInNamespace, vitestCommand } from '../support/namespace.js';

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const ARCHIVE = join(ROOT, 'build', 'package', `dnscost-collector-${VERSION}-linux-x64.tar.gz`);
const DEPLOY = join(ROOT, 'collector', 'deploy');
const DOMAIN = 'collector.localhost';
const INNER = process.env.DNSCOST_DEPLOY_INNER === '1';
const caddy = ['/usr/bin/caddy'].find((c) => existsSync(c));

/** The unit's Environment= assignments. */
function unitEnvironment(unit: string): Record<string, string> {
  return Object.fromEntries([...unit.matchAll(/^Environment=(\w+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));
}

/** One https exchange with Caddy on 127.0.0.1:443 for DOMAIN, trusting `ca`. */
function https(ca: string, path: string, opts: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; body: Buffer; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: 443, servername: DOMAIN, ca, path, method: opts.method ?? 'GET', headers: { host: DOMAIN, ...opts.headers }, timeout: 15_000 }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts), headers: res.headers }));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end(opts.body);
  });
}

/**
 * The extension's uploader in Chromium: a page of www.ikea.com (a name on the popular list, served by the lab site)
 * measured against the lab resolver and its batch sent to https://DOMAIN/ with "Send now". Chromium trusts Caddy's
 * CA by its keys' hashes (--ignore-certificate-errors-spki-list); `.localhost` names are loopback to it.
 */
async function uploadFromChromium(work: string, caFiles: string[]): Promise<void> {
  const spki = caFiles.map((f) => createHash('sha256').update(new X509Certificate(readFileSync(f)).publicKey.export({ type: 'spki', format: 'der' })).digest('base64'));
  const site = await startSite();
  const lab = await startCoreDNS();
  const b = await launchWithExtension('chromium', {
    extensionDir: requireBuiltExtension('chromium'), workDir: join(work, 'chromium'),
    chromiumArgs: ['--host-resolver-rules=MAP www.ikea.com 127.0.0.1', `--ignore-certificate-errors-spki-list=${spki.join(',')}`],
  });
  try {
    const options = await b.openExtensionPage('options/options.html');
    const full = labResolverSpec(lab);
    const spec: ResolverSpec = { ...full, endpoints: full.endpoints.filter((e) => e.transport === 'udp') };
    const ok = async (m: unknown) => assert.equal(((await sendFromPage(options, m)) as { ok: boolean }).ok, true, JSON.stringify(m));
    await ok({ type: 'settings-set', changes: { resolvers: [spec], currentDns: false, lab: true } });
    await ok({ type: 'consent-give' });
    await ok({ type: 'settings-set', changes: { upload: { enabled: true, paused: false, collector: `https://${DOMAIN}/`, network: { type: 'wifi' } } } });
    await poll('the host connects', 30_000, async () => (((await sendFromPage(options, { type: 'host-status' })) as { ok: boolean }).ok ? true : undefined));
    const tab = await b.browser.newPage();
    const { tabId } = await loadRecordedPage(options, tab, site.url('www.ikea.com', '/plain.html'), site.url('www.ikea.com', '/'), 2);
    await ok({ type: 'measure-start', tabId });
    await poll('the measurement finishes', 40_000, async () => ((await sendFromPage(options, { type: 'measure-status', tabId })) as MeasureStatus).measurement?.state === 'done' || undefined);
    const status = async () => (await sendFromPage(options, { type: 'upload-status' })) as UploadStatus;
    await poll('the page waits for upload', 10_000, async () => ((await status()).pendingPages === 1 ? true : undefined));
    await ok({ type: 'upload-flush' });
    const sent = await poll('the batch is acknowledged through https', 30_000, async () => {
      const s = await status();
      if (s.queued[0]?.lastError) throw new Error(`upload failed: ${JSON.stringify(s.queued[0].lastError)}`);
      return s.sent.length === 1 ? s : undefined;
    });
    assert.equal(sent.refused.length, 0);
  } finally {
    await b.close();
    await lab.stop();
    await site.close();
  }
}

if (INNER) {
  test('inside: PostgreSQL from the recipe, the packaged collector with the unit\'s environment, Caddy with the recipe\'s Caddyfile', { timeout: 240_000 }, async (t) => {
    const work = mkdtempSync(join(tmpdir(), 'dnscost-deploy-'));
    const children: ChildProcess[] = [];
    t.onTestFinished(async () => {
      for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
      rmSync(work, { recursive: true, force: true });
    });
    // PostgreSQL, set up by the recipe's SQL as the superuser.
    const server = await startPostgres();
    t.onTestFinished(() => server.stop());
    execFileSync('psql', [server.url, '-v', 'ON_ERROR_STOP=1', '-q', '-f', join(DEPLOY, 'postgres-setup.sql')], { stdio: 'pipe' });
    const db = new URL(server.url);
    db.username = 'dnscost-collector';
    db.pathname = '/dnscost';
    // The packaged collector, with the unit's environment (its database on this server's TCP port instead of
    // /run/postgresql, its data directory a temporary one: the unit's StateDirectory).
    execFileSync('tar', ['-xzf', ARCHIVE, '-C', work]);
    const env: Record<string, string> = { ...unitEnvironment(readFileSync(join(DEPLOY, 'dnscost-collector.service'), 'utf8')), DNSCOST_COLLECTOR_DATABASE_URL: db.href, DNSCOST_COLLECTOR_DATA: join(work, 'state'), PATH: '/usr/bin:/bin' };
    assert.equal(env.DNSCOST_COLLECTOR_PORT, '8787');
    const collector = spawn(join(work, `dnscost-collector-${VERSION}-linux-x64`, 'dnscost-collector'), ['serve'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    children.push(collector);
    let log = '';
    collector.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    await poll('the collector listens', 30_000, async () => (/listening on http:\/\/127\.0\.0\.1:8787/.test(log) ? true : (collector.exitCode !== null ? Promise.reject(new Error(log)) : undefined)));
    // Caddy with the recipe's Caddyfile; its own CA for the .localhost name, its files in a temporary home.
    const caddyHome = join(work, 'caddy');
    const front = spawn(caddy!, ['run', '--config', join(DEPLOY, 'Caddyfile'), '--adapter', 'caddyfile'], {
      env: { PATH: '/usr/bin:/bin', HOME: caddyHome, XDG_DATA_HOME: join(caddyHome, 'data'), XDG_CONFIG_HOME: join(caddyHome, 'config'), DNSCOST_COLLECTOR_DOMAIN: DOMAIN },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(front);
    let caddyLog = '';
    front.stderr!.on('data', (d: Buffer) => (caddyLog = (caddyLog + d.toString()).slice(-20_000)));
    const rootFile = join(caddyHome, 'data', 'caddy', 'pki', 'authorities', 'local', 'root.crt');
    const ca = await poll('Caddy made its CA and serves https', 60_000, async () => {
      if (front.exitCode !== null) throw new Error(`caddy exited:\n${caddyLog}`);
      if (!existsSync(rootFile)) return undefined;
      const root = readFileSync(rootFile, 'utf8');
      return (await https(root, '/healthz')).status === 200 ? root : undefined;
    }, 500);
    // An upload through the proxy: stored; the health check names the store.
    const up = await https(ca, '/v1/batches', { method: 'POST', body: JSON.stringify(batch({ hour: hourAgo(2) })), headers: { 'content-type': 'application/json', [DELETION_TOKEN_HEADER]: randomToken() } });
    assert.equal(up.status, 201, up.body.toString());
    assert.equal(JSON.parse((await https(ca, '/healthz')).body.toString()).store, 'postgres');
    // The aggregates, and the day it was measured published as a file (the unit's defaults: 6 h after the day ended).
    const agg = JSON.parse((await https(ca, '/v1/aggregates')).body.toString()) as { ok: boolean; epochs: { epoch: string }[] };
    assert.ok(agg.ok && agg.epochs.some((e) => e.epoch === dayAgo(2)), JSON.stringify(agg));
    const index = JSON.parse((await https(ca, '/v1/open-data')).body.toString()) as { days: { epoch: string; file: string; sha256: string }[] };
    const day = index.days.find((d) => d.epoch === dayAgo(2))!;
    const file = await https(ca, `/${day.file}`);
    assert.equal(file.status, 200);
    gunzipSync(file.body);
    assert.equal(execFileSync('sha256sum', { input: file.body }).toString().split(' ')[0], day.sha256);
    assert.match(String(file.headers['strict-transport-security']), /max-age=31536000/);
    // The extension's uploader through the proxy; the collector's database is the recipe's: owned by its role.
    const pki = join(caddyHome, 'data', 'caddy', 'pki', 'authorities', 'local');
    await uploadFromChromium(work, [join(pki, 'root.crt'), join(pki, 'intermediate.crt')]);
    assert.equal(await batchRows(db.href), 2, 'the test\'s upload and the extension\'s');
    // SIGTERM, as systemd stops it: exit 0.
    const exited = once(collector, 'exit');
    collector.kill('SIGTERM');
    assert.equal(((await exited) as [number | null])[0], 0, log);
  });
} else {
  test('the unit\'s sandboxing as systemd rates it: exposure at most 2.5 ("OK")', (t) => {
    if (!existsSync('/usr/bin/systemd-analyze')) return t.skip('no systemd-analyze on this machine');
    const out = execFileSync('systemd-analyze', ['security', '--offline=yes', join(DEPLOY, 'dnscost-collector.service')], { encoding: 'utf8' });
    const level = Number(/Overall exposure level for \S+: ([\d.]+)/.exec(out)?.[1]);
    assert.ok(level <= 2.5, `exposure ${level}:\n${out}`);
  });

  test('the recipe\'s pieces run: PostgreSQL, the packaged collector, Caddy with TLS in front, the extension\'s uploader (loopback-only network namespace)', { timeout: 280_000 }, async (t) => {
    if (process.getuid?.() !== 0) return t.skip('needs root: unshare --net, and Caddy on ports 80 and 443');
    if (!existsSync(ARCHIVE)) assert.fail(`${ARCHIVE} is not built: scripts/setup runs scripts/package`);
    if (!caddy) assert.fail('caddy is not installed: scripts/setup installs it');
    const out = await runInNamespace(`ip link set lo up && ${vitestCommand(fileURLToPath(import.meta.url))}`, { DNSCOST_DEPLOY_INNER: '1' }, 270_000);
    assert.equal(out.code, 0, out.text.slice(-8000));
  });
}
