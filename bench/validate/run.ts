// The validation experiment's outer half: per profile, the lab network, the resolvers and the site, then one inner
// process (inner.ts, re-executed from dist/ as main.js) that loads the pages; it collects the browser resolver's
// query log and the inner half's visits into the raw run. Importable from the sources (the browser test runs it
// under vitest); the inner half always runs compiled.
//
// Layout, per profile (as root; nothing leaves loopback and the namespaces it creates):
// - createLabNet: a client and a server namespace joined by the emulated link (delay, jitter, loss, rate).
// - Server namespace: CoreDNS for the browser on 192.0.2.2 ports 53/853/443 (UDP+TCP, DoT, DoH), logging every
//   query with its scheme (the proof of which transport the browser used); a second CoreDNS with the same
//   configuration on other ports for dnscost's replays (so replays never show in the browser's counts); the
//   validation site on 192.0.2.2:80. Every name of the site's zone answers 192.0.2.2.
// - Client namespace, plus a private mount namespace: the browser, `stubby` and the replays. /etc/resolv.conf and
//   /etc/chromium are bind-mounted from per-run files (never touching the machine's own):
//   Do53: resolv.conf `nameserver 192.0.2.2`; Chromium's own resolver (or getaddrinfo) asks CoreDNS over UDP.
//   DoT:  resolv.conf `nameserver 127.0.0.1`, where a fresh stubby (started per load, so every load is cold, as
//         the replay's `cold` mode) forwards over TLS to 192.0.2.2:853, authenticating dns.test with the lab CA.
//   DoH:  managed policy DnsOverHttpsMode=secure, DnsOverHttpsTemplates=https://192.0.2.2/dns-query{?dns} (GET, an
//         IP literal: no bootstrap lookup); the lab CA trusted through an NSS db in the browser's HOME; resolv.conf
//         points at 127.0.0.1 with nothing listening, so a fallback to Do53 would fail the load.
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findBrowser } from '../../lab/browsers.js';
import { distPath } from '../../lab/paths.js';
import { createLabNet, type LabNet } from '../../lab/netns.js';
import { startCoreDNS, type LabResolver } from '../../lab/resolver.js';
import { VALIDATION_ZONE } from '../../lab/site/validation-site.js';
import { buildNoDelayShim } from './stubs.js';
import { BROWSER_TRANSPORTS, REPLAY_PORTS, SERVER, type InnerConfig, type ProfileRun, type ValidationOptions, type ValidationRun, type Visit } from './types.js';

/** The compiled entry the inner half is started from (main.ts dispatches to inner.ts on DNSCOST_VALIDATION_INNER). */
const INNER_ENTRY = distPath('bench/validate/main.ts');

function wait(child: ChildProcess, what: string, pattern: RegExp, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error(`${what}: not ready in ${timeoutMs} ms: ${out}`)), timeoutMs);
    const on = (d: Buffer) => {
      out += d.toString();
      if (pattern.test(out)) {
        clearTimeout(t);
        resolve();
      }
    };
    child.stdout?.on('data', on);
    child.stderr?.on('data', on);
    child.once('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`${what} exited (${code}): ${out}`));
    });
  });
}

/** Runs the experiment for every profile; returns the raw run (predictions are computed from it by `analyse`). */
export async function runValidation(opts: ValidationOptions): Promise<ValidationRun> {
  const log = opts.log ?? ((l: string) => process.stderr.write(l + '\n'));
  if (process.getuid?.() !== 0) throw new Error('the validation experiment needs root (network and mount namespaces)');
  if (!findBrowser(opts.browser)) throw new Error(`${opts.browser} is not installed: scripts/setup installs it`);
  for (const bin of [opts.dotStub ?? 'stubby', 'certutil']) {
    if (!['/usr/bin', '/usr/sbin', '/bin'].some((d) => existsSync(join(d, bin)))) throw new Error(`${bin} is missing: scripts/setup installs it (Debian stubby, unbound, libnss3-tools)`);
  }
  const startedAt = new Date().toISOString();
  const profiles: ProfileRun[] = [];
  for (const [k, name] of opts.profiles.entries()) {
    const work = mkdtempSync(join(tmpdir(), 'dnscost-validation-'));
    let net: LabNet | undefined;
    const resolvers: LabResolver[] = [];
    let site: ChildProcess | undefined;
    const queries: Record<string, Record<string, number>> = {};
    const queryTypes: Record<string, Record<string, number>> = {};
    let pending = '';
    const count = (text: string) => {
      pending += text;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const m = /dnscost-query (\w+) (\S+) (\S+?)\.?$/.exec(line.trim());
        if (!m || !m[3]!.endsWith(VALIDATION_ZONE)) continue;
        const per = (queries[m[1]!] ??= {});
        per[m[3]!] = (per[m[3]!] ?? 0) + 1;
        const t = (queryTypes[m[1]!] ??= {});
        t[m[2]!] = (t[m[2]!] ?? 0) + 1;
      }
    };
    try {
      net = await createLabNet({ profile: name, seed: opts.seed + k });
      const siteZone = { zone: VALIDATION_ZONE, a: SERVER };
      for (const d of ['coredns-browser', 'coredns-replay']) mkdirSync(join(work, d));
      const browserDns = await startCoreDNS({ netns: net.server.ns, address: SERVER, siteZone, logQueries: true, onOutput: count, workDir: join(work, 'coredns-browser') });
      resolvers.push(browserDns);
      const replayDns = await startCoreDNS({ netns: net.server.ns, address: SERVER, siteZone, certs: browserDns.certs, ports: REPLAY_PORTS, workDir: join(work, 'coredns-replay') });
      resolvers.push(replayDns);
      site = net.spawnIn('server', process.execPath, [distPath('lab/site/validation-site.ts'), '--address', SERVER, '--port', '80'], { stdio: ['ignore', 'pipe', 'pipe'] });
      await wait(site, 'validation site', /ready \d+/, 10_000);
      const transports = BROWSER_TRANSPORTS.filter((t) => t === 'do53' || !opts.transports || opts.transports.includes(t));
      const stubPreload = opts.stubNoDelay ? await buildNoDelayShim(work) : undefined;
      const config: InnerConfig = { profile: net.profile, pages: opts.pages, loads: opts.loads, seed: opts.seed + 1000 * k, repeat: opts.repeat, caFile: browserDns.certs.caFile, work, out: join(work, 'visits.json'), transports, stubPreload, dotStub: opts.dotStub ?? 'stubby' };
      writeFileSync(join(work, 'config.json'), JSON.stringify(config));
      log(`${name}: RTT ${net.profile.rttMs} ms, ${opts.pages.length} pages × ${transports.length} transports × ${opts.loads} loads`);
      await runInner(net, work, log);
      const inner = JSON.parse(readFileSync(config.out, 'utf8')) as { visits: Visit[]; browserVersion: string };
      profiles.push({ profile: net.profile, visits: inner.visits, queries, queryTypes, browserVersion: inner.browserVersion });
      opts.onProfile?.(snapshot(opts, startedAt, profiles));
    } finally {
      site?.kill('SIGTERM');
      for (const r of resolvers) await r.stop().catch(() => undefined);
      await net?.destroy();
      rmSync(work, { recursive: true, force: true });
    }
  }
  return snapshot(opts, startedAt, profiles);
}
function snapshot(opts: ValidationOptions, startedAt: string, profiles: ProfileRun[]): ValidationRun {
  return {
    options: { profiles: opts.profiles, pages: opts.pages, loads: opts.loads, browser: opts.browser, repeat: opts.repeat, seed: opts.seed, ...(opts.transports ? { transports: opts.transports } : {}), ...(opts.stubNoDelay ? { stubNoDelay: true } : {}), ...(opts.dotStub ? { dotStub: opts.dotStub } : {}) },
    startedAt,
    finishedAt: new Date().toISOString(),
    machine: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GB, Linux ${os.release()}`,
    profiles: [...profiles],
  };
}

// The inner half runs in the client namespace and a private mount namespace whose /etc/resolv.conf and
// /etc/chromium are this run's files.
function runInner(net: LabNet, work: string, log: (l: string) => void): Promise<void> {
  const etc = join(work, 'etc-chromium');
  mkdirSync(join(etc, 'policies', 'managed'), { recursive: true });
  if (existsSync('/etc/chromium/master_preferences')) copyFileSync('/etc/chromium/master_preferences', join(etc, 'master_preferences'));
  writeFileSync(join(work, 'resolv.conf'), `nameserver ${SERVER}\n`);
  const script = [
    `mount --bind '${join(work, 'resolv.conf')}' /etc/resolv.conf`,
    `mkdir -p /etc/chromium && mount --bind '${etc}' /etc/chromium`,
    // The inner half runs compiled (the outer half may be running from the sources under vitest).
    `exec '${process.execPath}' '${INNER_ENTRY}'`,
  ].join(' && ');
  return new Promise((resolve, reject) => {
    const child = net.spawnIn('client', 'unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script], {
      env: { ...process.env, DNSCOST_VALIDATION_INNER: join(work, 'config.json') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let tail = '';
    const on = (d: Buffer) => {
      const text = d.toString();
      tail = (tail + text).slice(-8000);
      for (const line of text.split('\n')) if (line.startsWith('progress ')) log(line.slice(9));
    };
    child.stdout!.on('data', on);
    child.stderr!.on('data', on);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`validation inner run failed (${code}):\n${tail}`))));
  });
}
