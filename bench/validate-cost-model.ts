// The cost model's validation experiment (issue 4, part 2): real headless Chromium loads the validation site's pages
// (lab/site/validation-site.ts: 1, 10, 30, 100 hostnames, some chained) under the lab's network profiles, really
// resolving every name through the lab resolver over Do53, DoT (through Debian's `stubby`) and DoH (Chromium's
// secure-DNS policy); from each Do53 visit dnscost predicts the change of onLoad (the native host's replay of that
// page over udp, dot and doh under the same profile, fed to common/cost-model.ts), and the table compares it with
// the measured change (median onLoad with DoT/DoH minus median with Do53).
//
//   node dist/bench/validate-cost-model.js [--profiles fiber,dsl,4g,3g] [--loads 20] [--pages 1,10,30,100]
//        [--browser chromium] [--repeat 1] [--seed 1] [--transports do53,dot,doh] [--stub-nodelay] [--raw FILE]
//        --out bench/results/cost-model-validation.md
//   node dist/bench/validate-cost-model.js --from FILE --out …   (recomputes predictions and the table from a raw file)
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
// - Every load is in a new incognito browser context (its own host cache, socket pools and HTTP cache) with the
//   cache disabled and --disk-cache-size=1; one browser per (round, transport); per round the transports, and within
//   them the pages, in a seeded random order; one unrecorded warm-up load (a data: URL) per browser. The tab exists
//   150 ms before the navigation (renderer start-up is not counted). onLoad is the navigation entry's
//   loadEventStart. (Chromium still reuses or pre-opens a DoH connection across contexts in some loads: the
//   document's lookup then takes under 2 RTT; the results say how often.)
// - dnscost's replay of a Do53 visit asks A and AAAA, as the extension does; in these namespaces (no IPv6 route)
//   Chromium asks A and HTTPS (type 65): the same number of queries per host. Only Chromium is wired in.
// - The page record is read from the page after load (Navigation Timing, Paint Timing, Resource Timing): the
//   fields common/page-cost.ts takes from the extension's record (a host's first-needed time is its first
//   resource's startTime; its lookup where Timing-Allow-Origin exposes it).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import puppeteer, { type Browser } from 'puppeteer-core';
import { storedRecord, type StoredRecord } from '../common/cost-model.js';
import { measuredPageCost, pageCostInput, type PageForCost } from '../common/page-cost.js';
import type { PageHost } from '../common/page-record.js';
import type { MeasureRequest } from '../common/schema.js';
import { percentile, seededRandom, shuffled } from '../common/stats.js';
import { measure } from '../native-host/src/measure.js';
import { findBrowser } from '../lab/browsers.js';
import { distPath } from '../lab/paths.js';
import { createLabNet, type LabNet } from '../lab/netns.js';
import { profileByName, type NetProfile } from '../lab/profiles.js';
import { startCoreDNS, type LabResolver } from '../lab/resolver.js';
import { pagePlan, pageUrl, VALIDATION_ZONE } from '../lab/site/validation-site.js';

/** The browser's transports, as the table names them. */
export const BROWSER_TRANSPORTS = ['do53', 'dot', 'doh'] as const;
export type BrowserTransport = (typeof BROWSER_TRANSPORTS)[number];
/** The real stubs the browser's DoT can go through (resolv.conf → stub on 127.0.0.1 → lab resolver over TLS). */
export const DOT_STUBS = ['stubby', 'unbound'] as const;
export type DotStub = (typeof DOT_STUBS)[number];

/** The CoreDNS log schemes each browser transport must show up on. */
export const SCHEME_OF: Record<BrowserTransport, string> = { do53: 'dns', dot: 'tls', doh: 'https' };

const SERVER = '192.0.2.2';
const REPLAY_PORTS = { dns: 5300, tls: 8530, https: 4430 };
/** As the extension caps replay offsets (extension/src/background/measure-plan.ts MAX_REPLAY_AT_MS). */
const MAX_REPLAY_AT_MS = 10_000;
const LOAD_TIMEOUT_MS = 90_000;

/** What to run. */
export interface ValidationOptions {
  profiles: string[];
  pages: number[];
  loads: number;
  browser: 'chromium';
  /** Replay repeats per Do53 visit (the extension uses 3; 1 keeps the experiment's length bearable). */
  repeat: number;
  /** The browser transports to load with (default all three; Do53 is always included: it is the baseline). */
  transports?: BrowserTransport[];
  /**
   * Force TCP_NODELAY on the DoT stub's sockets (an LD_PRELOAD shim compiled with gcc): Debian 12's stubby (getdns
   * 1.7) and unbound (1.17) both leave Nagle's algorithm on, so a query written while a previous segment is unacknowledged (the TLS Finished,
   * or the previous query of a burst) waits for the server's (delayed) ACK. Off unless asked (`--stub-nodelay`).
   */
  stubNoDelay?: boolean;
  /** The local stub the browser's DoT goes through: Debian's `stubby` (getdns) or `unbound` as a forwarder. */
  dotStub?: DotStub;
  seed: number;
  /** Progress lines (stderr by default). */
  log?: (line: string) => void;
  /** Called with the run so far after each profile (the raw file is written there, so a long run keeps its data). */
  onProfile?: (run: ValidationRun) => void;
}

/** One load of one page over one transport. */
export interface Visit {
  page: number;
  transport: BrowserTransport;
  round: number;
  /** loadEventStart (ms since navigation start); null when the load failed. */
  onLoad: number | null;
  error: string | null;
  /** True when the first attempt was aborted with ERR_NETWORK_CHANGED and this is the second. */
  retried?: boolean;
  /** The page as the extension would record it; Do53 visits also dnscost's replay of it, as the extension stores it. */
  pageRecord?: PageForCost;
  records?: StoredRecord[];
}

/** One profile's run. */
export interface ProfileRun {
  profile: NetProfile;
  visits: Visit[];
  /** Queries the browser's CoreDNS saw for the site's names, per scheme (dns, tls, https) and name. */
  queries: Record<string, Record<string, number>>;
  /** The same queries per scheme and record type (A, AAAA, HTTPS, …): what the browser asked. */
  queryTypes?: Record<string, Record<string, number>>;
  browserVersion: string;
}

/** A whole run, as the raw file keeps it. */
export interface ValidationRun {
  /** The command that made the run (absent in runs made before it was recorded). */
  command?: string;
  options: Omit<ValidationOptions, 'log' | 'onProfile'>;
  startedAt: string;
  finishedAt: string;
  machine: string;
  profiles: ProfileRun[];
}

// ---------------------------------------------------------------------------------------------------------------
// Outer half: namespaces, resolvers and the site; one inner process per profile.

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
      const config = { profile: net.profile, pages: opts.pages, loads: opts.loads, seed: opts.seed + 1000 * k, repeat: opts.repeat, caFile: browserDns.certs.caFile, work, out: join(work, 'visits.json'), transports, stubPreload, dotStub: opts.dotStub ?? 'stubby' };
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

const NODELAY_SHIM = `#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
int connect(int fd, const struct sockaddr *addr, socklen_t len) {
  static int (*real)(int, const struct sockaddr *, socklen_t);
  if (!real) real = dlsym(RTLD_NEXT, "connect");
  int type = 0; socklen_t l = sizeof type;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) == 0 && type == SOCK_STREAM) { int one = 1; setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); }
  return real(fd, addr, len);
}
`;

/** Compiles the TCP_NODELAY shim for the DoT stub (see ValidationOptions.stubNoDelay); needs gcc. */
async function buildNoDelayShim(work: string): Promise<string> {
  const src = join(work, 'nodelay.c');
  const lib = join(work, 'nodelay.so');
  writeFileSync(src, NODELAY_SHIM);
  await sh('gcc', ['-shared', '-fPIC', '-O2', '-o', lib, src, '-ldl'], 60_000).catch((e: unknown) => {
    throw new Error(`--stub-nodelay needs gcc: ${String(e)}`);
  });
  return lib;
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
    `exec '${process.execPath}' '${distPath('bench/validate-cost-model.ts')}'`,
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

// ---------------------------------------------------------------------------------------------------------------
// Inner half.

interface InnerConfig {
  profile: NetProfile;
  pages: number[];
  loads: number;
  seed: number;
  repeat: number;
  caFile: string;
  work: string;
  out: string;
  transports?: BrowserTransport[];
  stubPreload?: string;
  dotStub: DotStub;
}

function sh(cmd: string, args: string[], timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: timeoutMs }, (err, stdout, stderr) => (err ? reject(new Error(`${cmd} ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout)));
  });
}

/**
 * A fresh DoT stub (c.dotStub, with c.stubPreload if given) on 127.0.0.1:53 forwarding over TLS to the lab
 * resolver; resolves once it listens.
 */
async function startDotStub(c: InnerConfig): Promise<ChildProcess> {
  const dir = join(c.work, c.dotStub);
  mkdirSync(dir, { recursive: true });
  const args = c.dotStub === 'unbound' ? unboundArgs(c, dir) : stubbyArgs(c, dir);
  const env = { ...process.env, ...(c.stubPreload ? { LD_PRELOAD: c.stubPreload } : {}) };
  return startListening(spawn(c.dotStub, args, { stdio: ['ignore', 'pipe', 'pipe'], env }), c.dotStub);
}

/**
 * unbound's arguments, its configuration written to `dir`: on 127.0.0.1:53 as a forwarder (no cache carried between
 * loads: a new process per load), every query over TLS to the lab resolver, dns.test authenticated with the lab CA;
 * it pipelines the queries of a burst over a reused TLS stream. Like stubby it leaves Nagle's algorithm on
 * (ValidationOptions.stubNoDelay).
 */
function unboundArgs(c: InnerConfig, dir: string): string[] {
  const conf = join(dir, 'unbound.conf');
  writeFileSync(conf, [
    'server:',
    '  interface: 127.0.0.1',
    '  port: 53',
    '  do-ip6: no',
    '  username: ""',
    '  chroot: ""',
    `  directory: "${dir}"`,
    `  pidfile: "${join(dir, 'unbound.pid')}"`,
    '  use-syslog: no',
    '  logfile: ""',
    '  verbosity: 0',
    '  num-threads: 1',
    '  module-config: "iterator"',
    `  tls-cert-bundle: "${c.caFile}"`,
    '  prefetch: no',
    'remote-control:',
    '  control-enable: no',
    'forward-zone:',
    '  name: "."',
    '  forward-tls-upstream: yes',
    `  forward-addr: ${SERVER}@853#dns.test`,
    '',
  ].join('\n'));
  return ['-d', '-c', conf];
}

/** stubby's arguments, its configuration written to `dir`: on 127.0.0.1:53, every query over TLS to the lab resolver. */
function stubbyArgs(c: InnerConfig, dir: string): string[] {
  const conf = join(dir, 'stubby.yml');
  writeFileSync(conf, [
    'resolution_type: GETDNS_RESOLUTION_STUB',
    'dns_transport_list:',
    '  - GETDNS_TRANSPORT_TLS',
    'tls_authentication: GETDNS_AUTHENTICATION_REQUIRED',
    'tls_query_padding_blocksize: 128',
    'edns_client_subnet_private: 1',
    'round_robin_upstreams: 0',
    'idle_timeout: 10000',
    `tls_ca_file: "${c.caFile}"`,
    `appdata_dir: "${dir}"`,
    'listen_addresses:',
    '  - 127.0.0.1',
    'upstream_recursive_servers:',
    `  - address_data: ${SERVER}`,
    '    tls_port: 853',
    '    tls_auth_name: "dns.test"',
    '',
  ].join('\n'));
  return ['-C', conf];
}

/** Waits until `child` (a stub) listens on 127.0.0.1:53 (UDP); kills it and throws after 5 s or if it exits. */
async function startListening(child: ChildProcess, name: string): Promise<ChildProcess> {
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 5000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}): ${out}`);
    const listening = await sh('ss', ['-Hlnu', 'src', '127.0.0.1:53']).catch(() => '');
    if (listening.trim()) return child;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} not listening on 127.0.0.1:53 after 5 s: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 2000);
  await exited;
  clearTimeout(t);
}

/** Sets the browser's DNS for `transport`: resolv.conf (written in place: it is bind-mounted) and the DoH policy. */
function configureDns(transport: BrowserTransport): void {
  writeFileSync('/etc/resolv.conf', transport === 'do53' ? `nameserver ${SERVER}\n` : 'nameserver 127.0.0.1\n');
  const policy = '/etc/chromium/policies/managed/dnscost-validation.json';
  if (transport === 'doh') {
    writeFileSync(policy, JSON.stringify({ DnsOverHttpsMode: 'secure', DnsOverHttpsTemplates: `https://${SERVER}/dns-query{?dns}` }));
  } else rmSync(policy, { force: true });
}

async function launchChromium(c: InnerConfig, home: string, profileDir: string): Promise<Browser> {
  return puppeteer.launch({
    browser: 'chrome',
    executablePath: findBrowser('chromium')!,
    headless: true,
    userDataDir: profileDir,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disk-cache-size=1', '--disable-features=OptimizationHints,MediaRouter'],
    env: { ...process.env, HOME: home },
    timeout: 60_000,
    protocolTimeout: LOAD_TIMEOUT_MS + 30_000,
  });
}

/** What the page reports after load: the fields the extension's record carries. */
interface PageTimings {
  navigation: Record<string, number>;
  firstPaint: number | null;
  resources: { name: string; startTime: number; domainLookupStart: number; domainLookupEnd: number; responseEnd?: number }[];
}

async function loadOnce(browser: Browser, url: string): Promise<PageTimings> {
  const context = await browser.createBrowserContext();
  try {
    // The tab (and its still unassigned renderer process, which the first navigation takes over) exists before the
    // navigation starts, so process start-up is not counted in onLoad.
    const page = await context.newPage();
    await page.setCacheEnabled(false);
    await new Promise((r) => setTimeout(r, 150));
    await page.goto(url, { waitUntil: 'load', timeout: LOAD_TIMEOUT_MS });
    // loadEventEnd is set after the load handlers return; wait a tick for it.
    await new Promise((r) => setTimeout(r, 50));
    return await page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
      const navigation: Record<string, number> = {};
      for (const [k, v] of Object.entries(nav.toJSON() as Record<string, unknown>)) if (typeof v === 'number') navigation[k] = v;
      const fp = performance.getEntriesByType('paint').find((e) => e.name === 'first-paint');
      const resources = (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).map((r) => ({
        name: r.name, startTime: r.startTime, domainLookupStart: r.domainLookupStart, domainLookupEnd: r.domainLookupEnd, responseEnd: r.responseEnd,
      }));
      return { navigation, firstPaint: fp ? fp.startTime : null, resources };
    });
  } finally {
    await context.close();
  }
}

/** The page as the extension's record would give it to the model (common/page-cost.ts). */
export function pageRecordOf(documentHost: string, t: PageTimings): PageForCost {
  const hosts = new Map<string, PageHost>();
  // When each host's last response before onLoad ended (Resource Timing responseEnd, exposed for every resource;
  // the extension takes it from webRequest.onCompleted).
  const onLoadAt = t.navigation.loadEventStart ?? Infinity;
  const ends = new Map<string, number>();
  for (const r of t.resources) {
    if (!r.responseEnd || r.responseEnd > onLoadAt) continue;
    try {
      const name = new URL(r.name).hostname;
      ends.set(name, Math.max(ends.get(name) ?? 0, r.responseEnd));
    } catch { /* not a URL */ }
  }
  for (const r of [...t.resources].sort((a, b) => a.startTime - b.startTime)) {
    let name: string;
    try {
      name = new URL(r.name).hostname;
    } catch {
      continue;
    }
    if (hosts.has(name)) continue;
    const exposed = r.domainLookupStart > 0 && r.domainLookupEnd >= r.domainLookupStart;
    hosts.set(name, {
      name, kind: 'name', internal: false, measurable: true, firstNeededMs: r.startTime, requests: 1, types: {}, ips: [], protocols: [], schemes: ['http'],
      fromCache: 0, errors: 0, viaRedirect: false, fromSubframe: false,
      lookup: exposed ? { startMs: r.domainLookupStart, endMs: r.domainLookupEnd, durationMs: r.domainLookupEnd - r.domainLookupStart, nextHopProtocol: null } : null,
      completedMs: ends.get(name) ?? null,
    });
  }
  if (!hosts.has(documentHost)) {
    hosts.set(documentHost, {
      name: documentHost, kind: 'name', internal: false, measurable: true, firstNeededMs: 0, requests: 1, types: {}, ips: [], protocols: [], schemes: ['http'],
      fromCache: 0, errors: 0, viaRedirect: false, fromSubframe: false, lookup: null, completedMs: null,
    });
  }
  const navigationTiming = { ...t.navigation, ...(t.firstPaint !== null ? { firstPaint: t.firstPaint } : {}) };
  return { host: documentHost, hosts: [...hosts.values()], navigationTiming, onLoadMs: t.navigation.loadEventStart ?? null };
}

/** dnscost's replay of a page (as the extension asks the host, cold only) against the replay resolver. */
async function replay(c: InnerConfig, page: PageForCost, caPem: string, seed: number): Promise<StoredRecord[]> {
  const names = [{ name: page.host, at: 0 }, ...page.hosts.filter((h) => h.name !== page.host).map((h) => ({ name: h.name, at: Math.min(MAX_REPLAY_AT_MS, Math.max(0, Math.round(h.firstNeededMs))) }))];
  const req: MeasureRequest = {
    id: 1,
    type: 'measure',
    hosts: names,
    resolvers: [{
      id: 'lab', name: 'lab', ca: caPem,
      endpoints: [
        { transport: 'udp', address: SERVER, port: REPLAY_PORTS.dns },
        { transport: 'dot', address: SERVER, port: REPLAY_PORTS.tls, serverName: 'dns.test' },
        // Chromium's DoH asks with GET (its template has {?dns}).
        { transport: 'doh', address: SERVER, port: REPLAY_PORTS.https, serverName: 'dns.test', path: '/dns-query', method: 'GET' },
      ],
    }],
    qtypes: ['A', 'AAAA'],
    modes: ['cold'],
    repeat: c.repeat,
    // CoreDNS answers the zone itself (no recursion, no cache): there is nothing to prime.
    prime: false,
    schedule: 'replay',
    seed,
  };
  const result = await measure(req);
  // Stored as the extension stores them, so the prediction runs the model exactly as the popup does.
  return result.records.map(storedRecord);
}

async function inner(configFile: string): Promise<void> {
  const c = JSON.parse(readFileSync(configFile, 'utf8')) as InnerConfig;
  const progress = (s: string) => process.stdout.write(`progress ${c.profile.name}: ${s}\n`);
  const caPem = readFileSync(c.caFile, 'utf8');
  // The browser's HOME: an NSS db trusting the lab CA (Chromium on Linux trusts roots added there).
  const home = join(c.work, 'home');
  const nssdb = join(home, '.pki', 'nssdb');
  mkdirSync(nssdb, { recursive: true });
  await sh('certutil', ['-N', '-d', `sql:${nssdb}`, '--empty-password']);
  await sh('certutil', ['-A', '-d', `sql:${nssdb}`, '-t', 'C,,', '-n', 'dnscost-lab-ca', '-i', c.caFile]);
  const random = seededRandom(c.seed);
  const visits: Visit[] = [];
  let browserVersion = '';
  const started = Date.now();
  for (let round = 1; round <= c.loads; round++) {
    for (const transport of shuffled(c.transports ?? BROWSER_TRANSPORTS, random)) {
      configureDns(transport);
      const profileDir = mkdtempSync(join(c.work, 'profile-'));
      const browser = await launchChromium(c, home, profileDir);
      browserVersion ||= await browser.version();
      try {
        // Warm-up: process start-up and first compilation, not counted; no name is looked up.
        const warm = await browser.createBrowserContext();
        await (await warm.newPage()).goto('data:text/html,<p>warm-up</p>', { waitUntil: 'load' });
        await warm.close();
        for (const n of shuffled(c.pages, random)) {
          let stubby = transport === 'dot' ? await startDotStub(c) : null;
          let visit: Visit;
          let retried = false;
          try {
            // Chromium aborts a navigation with ERR_NETWORK_CHANGED when it sees a netlink event in its fresh
            // namespace (seen once in 960 loads): not a DNS result, so that load is made once more (with a fresh
            // stubby, so a DoT retry is cold too), and the visit says so.
            const t = await loadOnce(browser, pageUrl(n)).catch(async (e: unknown) => {
              if (!String(e).includes('ERR_NETWORK_CHANGED')) throw e;
              retried = true;
              if (stubby) {
                await stop(stubby);
                stubby = await startDotStub(c);
              }
              return loadOnce(browser, pageUrl(n));
            });
            visit = { page: n, transport, round, onLoad: t.navigation.loadEventStart ?? null, error: null, ...(retried ? { retried } : {}) };
            // Every visit keeps its page record (the lookups the browser exposed show what each transport cost it).
            visit.pageRecord = pageRecordOf(pagePlan(n)[0]!.name, t);
            {
              const missing = pagePlan(n).filter((h) => !visit.pageRecord!.hosts.some((x) => x.name === h.name) && h.name !== visit.pageRecord!.host);
              if (missing.length) visit.error = `page record lacks ${missing.length} host(s): ${missing[0]!.name}`;
            }
          } catch (e) {
            visit = { page: n, transport, round, onLoad: null, error: String(e).slice(0, 300) };
          } finally {
            if (stubby) await stop(stubby);
          }
          if (transport === 'do53' && visit.pageRecord && !visit.error) visit.records = await replay(c, visit.pageRecord, caPem, c.seed * 1000 + round * 10 + n);
          visits.push(visit);
          progress(`round ${round}/${c.loads} ${transport} page ${n}: ${visit.onLoad?.toFixed(0) ?? visit.error} (${Math.round((Date.now() - started) / 1000)} s)`);
        }
      } finally {
        await browser.close();
        rmSync(profileDir, { recursive: true, force: true });
      }
    }
  }
  writeFileSync(c.out, JSON.stringify({ visits, browserVersion }));
}

// ---------------------------------------------------------------------------------------------------------------
// Analysis: predictions from the Do53 visits (with the current model), measured changes, errors; the report.

/** The document's own lookup as the browser observed it (Navigation Timing), ms. */
function documentLookup(page: PageForCost): number {
  const n = pageCostInput(page).navigation;
  return n.domainLookupEnd - n.domainLookupStart;
}

/** One model estimate: the change of onLoad with its bounds (ms). */
export interface Estimate {
  delta: number;
  lower: number;
  upper: number;
}

/** The model's estimate for one Do53 visit, per encrypted transport (null when it could not compare). */
export function predict(visit: Visit): Record<'dot' | 'doh', Estimate | null> {
  const out: Record<'dot' | 'doh', Estimate | null> = { dot: null, doh: null };
  if (!visit.pageRecord || !visit.records) return out;
  for (const cell of measuredPageCost(visit.pageRecord, visit.records)) {
    if ((cell.transport === 'dot' || cell.transport === 'doh') && cell.mode === 'cold' && cell.onLoad.delta !== null) {
      out[cell.transport] = { delta: cell.onLoad.delta, lower: cell.onLoad.lower!, upper: cell.onLoad.upper! };
    }
  }
  return out;
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const med = (xs: number[]) => percentile(sorted(xs), 50);

/** A seeded bootstrap 95 % interval of median(b) − median(a). */
export function bootstrapDiff(a: number[], b: number[], seed = 1, rounds = 2000): [number, number] | null {
  if (a.length < 2 || b.length < 2) return null;
  const random = seededRandom(seed);
  const draw = (xs: number[]) => med(Array.from({ length: xs.length }, () => xs[Math.floor(random() * xs.length)]!))!;
  const diffs = sorted(Array.from({ length: rounds }, () => draw(b) - draw(a)));
  return [percentile(diffs, 2.5)!, percentile(diffs, 97.5)!];
}

/** One row of the table: a page × profile × encrypted transport. */
export interface Row {
  profile: string;
  rttMs: number;
  page: number;
  transport: 'dot' | 'doh';
  loads: { do53: number; other: number; failed: number };
  onLoad: { do53: [number, number, number]; other: [number, number, number] } | null;
  measured: number | null;
  measuredCi: [number, number] | null;
  predicted: Estimate | null;
  /** The document's lookup (Navigation Timing): measured change of the medians, and the model's median delta. */
  doc: { measured: number | null; predicted: number | null };
  /** Median over Do53 visits of |prediction − measured change|. */
  medianAbsError: number | null;
  target: number | null;
  pass: boolean | null;
}

/** The table's rows from a run, with the current model. */
export function analyse(run: ValidationRun): Row[] {
  const rows: Row[] = [];
  for (const p of run.profiles) {
    for (const page of run.options.pages) {
      const ok = (t: BrowserTransport) => p.visits.filter((v) => v.page === page && v.transport === t && v.onLoad !== null && !v.error).map((v) => v.onLoad!);
      const base = ok('do53');
      const preds = p.visits.filter((v) => v.page === page && v.transport === 'do53').map(predict);
      for (const transport of (['dot', 'doh'] as const).filter((t) => !run.options.transports || run.options.transports.includes(t))) {
        const other = ok(transport);
        const q = (xs: number[]): [number, number, number] => [percentile(sorted(xs), 50)!, percentile(sorted(xs), 25)!, percentile(sorted(xs), 75)!];
        const measured = base.length && other.length ? med(other)! - med(base)! : null;
        const ests = preds.map((x) => x[transport]).filter((x): x is Estimate => x !== null);
        const predicted = ests.length ? { delta: med(ests.map((e) => e.delta))!, lower: med(ests.map((e) => e.lower))!, upper: med(ests.map((e) => e.upper))! } : null;
        const mae = measured !== null && ests.length ? med(ests.map((e) => Math.abs(e.delta - measured))) : null;
        const target = measured !== null ? Math.max(0.1 * Math.abs(measured), p.profile.rttMs) : null;
        const docOf = (t: BrowserTransport) => p.visits.filter((v) => v.page === page && v.transport === t && v.pageRecord && !v.error).map((v) => documentLookup(v.pageRecord!));
        const docPred = p.visits.filter((v) => v.page === page && v.transport === 'do53' && v.records && v.pageRecord)
          .map((v) => measuredPageCost(v.pageRecord!, v.records!).find((c) => c.transport === transport && c.mode === 'cold')?.hosts.find((h) => h.reason === 'document')?.delta)
          .filter((x): x is number => typeof x === 'number');
        const docBase = docOf('do53');
        const docOther = docOf(transport);
        rows.push({
          profile: p.profile.name, rttMs: p.profile.rttMs, page, transport,
          doc: { measured: docBase.length && docOther.length ? med(docOther)! - med(docBase)! : null, predicted: docPred.length ? med(docPred) : null },
          loads: { do53: base.length, other: other.length, failed: p.visits.filter((v) => v.page === page && (v.transport === transport || v.transport === 'do53') && (v.onLoad === null || v.error)).length },
          onLoad: base.length && other.length ? { do53: q(base), other: q(other) } : null,
          measured,
          measuredCi: bootstrapDiff(base, other, page * 7 + (transport === 'dot' ? 1 : 2)),
          predicted,
          medianAbsError: mae,
          target,
          pass: mae !== null && target !== null ? mae <= target : null,
        });
      }
    }
  }
  return rows;
}

const f = (x: number | null | undefined, d = 0) => (x === null || x === undefined ? '—' : x.toFixed(d));

const WHAT_RAN = (stub: DotStub): Record<BrowserTransport, string> => ({
  do53: '**Do53** (resolv.conf → CoreDNS over UDP)',
  dot: `**DoT** (resolv.conf → a fresh \`${stub}\` per load → CoreDNS over TLS; so every DoT load is cold)`,
  doh: "**DoH** (Chromium's DnsOverHttpsMode=secure policy, GET template on the resolver's address, lab CA in the NSS db; a new context per load)",
});

/** The markdown report of a run. */
export function report(run: ValidationRun, command: string): string {
  const rows = analyse(run);
  const ran = BROWSER_TRANSPORTS.filter((t) => t === 'do53' || !run.options.transports || run.options.transports.includes(t));
  const lines = rows.map((r) =>
    `| ${r.profile} | ${r.page} | ${r.transport} | ${r.loads.do53}/${r.loads.other}${r.loads.failed ? ` (${r.loads.failed} failed)` : ''} | ` +
    `${r.onLoad ? `${f(r.onLoad.do53[0])} [${f(r.onLoad.do53[1])}–${f(r.onLoad.do53[2])}]` : '—'} | ` +
    `${r.onLoad ? `${f(r.onLoad.other[0])} [${f(r.onLoad.other[1])}–${f(r.onLoad.other[2])}]` : '—'} | ` +
    `**${f(r.measured)}** [${r.measuredCi ? `${f(r.measuredCi[0])}…${f(r.measuredCi[1])}` : '—'}] | ` +
    `**${f(r.predicted?.delta)}** [${f(r.predicted?.lower)}…${f(r.predicted?.upper)}] | ${f(r.medianAbsError)} | ${f(r.target)} | ${r.pass === null ? '—' : r.pass ? '✓' : '✗'} | ` +
    `${f(r.doc.measured)} / ${f(r.doc.predicted)} |`);
  const passed = rows.filter((r) => r.pass).length;
  const judged = rows.filter((r) => r.pass !== null).length;
  const queries = run.profiles.map((p) => `${p.profile.name}: ${Object.entries(p.queries).map(([s, per]) => `${s} ${Object.values(per).reduce((a, b) => a + b, 0)} queries for ${Object.keys(per).length} names` +
    (p.queryTypes?.[s] ? ` (${Object.entries(p.queryTypes[s]!).map(([t, n]) => `${t} ${n}`).join(', ')})` : '')).join(', ')}`);
  return `# Cost model validation: predicted vs measured onLoad change (headless ${run.options.browser})

Command: \`${command}\` (as root, after \`scripts/setup\`)
Run: ${run.startedAt} → ${run.finishedAt}; machine: ${run.machine} (shared with other work while it ran);
browser: ${run.profiles[0]?.browserVersion ?? '?'}; replay repeats per Do53 visit: ${run.options.repeat}; seed ${run.options.seed}.

What ran: per profile, each page loaded ${run.options.loads} times per transport (fresh incognito context per
load, cache disabled; rounds of the transports in a seeded random order, pages shuffled within each), the
browser resolving every name through the lab resolver: ${ran.map((t) => WHAT_RAN(run.options.dotStub ?? 'stubby')[t]).join(', ')}.
Queries the browser's resolver saw for the site's names, per scheme: ${queries.join('; ')}.${run.options.stubNoDelay ?? (run.options as { stubbyNoDelay?: boolean }).stubbyNoDelay ? `
**${run.options.dotStub ?? 'stubby'} ran with TCP_NODELAY forced on its sockets** (\`--stub-nodelay\`: an LD_PRELOAD shim; Debian's stubby and unbound leave Nagle on).` : ''}
The prediction: from every Do53 visit, the page record (Navigation/Paint/Resource Timing, as the extension keeps
it) and dnscost's cold replay of its hosts (A and AAAA, at their first-needed offsets) over udp, dot and doh under
the same profile, through \`common/cost-model.ts\`; the table shows the median over visits (point [lower…upper]).

Columns: onLoad medians [p25–p75] in ms; measured change = median(transport) − median(Do53) [bootstrap 95 %
interval]; MAE = median over the Do53 visits of |predicted − measured change|; target = max(10 % of |measured|,
one RTT). ${passed}/${judged} rows within target.

| profile | page hosts | transport | loads Do53/T | onLoad Do53 | onLoad T | measured Δ | predicted Δ | MAE | target | ok | document lookup Δ measured / predicted |
| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | :---: | ---: |
${lines.join('\n')}

## The papers' shapes, measured

${shapes(run)}
`;
}

/** The measured numbers behind the papers' shapes: cold handshakes in RTTs, the gap against RTT, loss. */
export function shapes(run: ValidationRun): string {
  const docOf = (p: ProfileRun, t: BrowserTransport) => p.visits.filter((v) => v.transport === t && v.pageRecord && !v.error).map((v) => documentLookup(v.pageRecord!));
  const handshake = run.profiles.map((p) => {
    const [u, t, h] = [med(docOf(p, 'do53')), med(docOf(p, 'dot')), med(docOf(p, 'doh'))];
    const rtt = p.profile.rttMs;
    const inRtt = (x: number | null) => (x !== null && u !== null && rtt > 0 ? ` (+${((x - u) / rtt).toFixed(1)} RTT)` : '');
    return `| ${p.profile.name} | ${rtt} | ${p.profile.lossPct} | ${f(u, 1)} | ${f(t, 1)}${inRtt(t)} | ${f(h, 1)}${inRtt(h)} |`;
  });
  const rows = analyse(run);
  const gap = run.options.pages.flatMap((page) => (['dot', 'doh'] as const).map((t) =>
    `| ${page} | ${t} | ${run.profiles.map((p) => f(rows.find((r) => r.profile === p.profile.name && r.page === page && r.transport === t)?.measured)).join(' | ')} |`));
  // A Do53 load whose browser waited ≥ 1 s for some exposed lookup (the document's, or a Timing-Allow-Origin host's).
  const stalls = run.profiles.map((p) => {
    const per = BROWSER_TRANSPORTS.map((t) => {
      const vs = p.visits.filter((v) => v.transport === t && v.pageRecord && !v.error);
      const slow = vs.filter((v) => documentLookup(v.pageRecord!) >= 1000 || v.pageRecord!.hosts.some((h) => (h.lookup?.durationMs ?? 0) >= 1000));
      return `${slow.length}/${vs.length}`;
    });
    return `| ${p.profile.name} | ${p.profile.lossPct} | ${per.join(' | ')} |`;
  });
  return `Cold handshake: the document's lookup (Navigation Timing, median over every load of every page), ms:

| profile | RTT ms | loss % | Do53 | DoT (${run.options.dotStub ?? 'stubby'}) | DoH (Chromium) |
| --- | ---: | ---: | ---: | ---: | ---: |
${handshake.join('\n')}

Gap against RTT: measured onLoad change (ms) per page, profiles in the order run:

| page hosts | transport | ${run.profiles.map((p) => `${p.profile.name} (${p.profile.rttMs} ms)`).join(' | ')} |
| ---: | --- | ${run.profiles.map(() => '---:').join(' | ')} |
${gap.join('\n')}

Loss: loads in which some exposed lookup (the document's, or a Timing-Allow-Origin host's) took ≥ 1 s:

| profile | loss % | Do53 | DoT | DoH |
| --- | ---: | ---: | ---: | ---: |
${stalls.join('\n')}`;
}

// ---------------------------------------------------------------------------------------------------------------

function csv(s: string): string[] {
  return s.split(',').map((x) => x.trim()).filter(Boolean);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      profiles: { type: 'string', default: 'fiber,dsl,4g,3g' },
      loads: { type: 'string', default: '20' },
      pages: { type: 'string', default: '1,10,30,100' },
      browser: { type: 'string', default: 'chromium' },
      repeat: { type: 'string', default: '1' },
      transports: { type: 'string', default: 'do53,dot,doh' },
      'stub-nodelay': { type: 'boolean', default: false },
      'dot-stub': { type: 'string', default: 'stubby' },
      seed: { type: 'string', default: '1' },
      raw: { type: 'string' },
      from: { type: 'string' },
      out: { type: 'string' },
    },
  });
  let run: ValidationRun;
  let command = `node dist/bench/validate-cost-model.js ${process.argv.slice(2).join(' ')}`.trim();
  if (values.from) {
    run = JSON.parse(readFileSync(values.from, 'utf8')) as ValidationRun;
    command = `${run.command ?? '(the run\'s command was not recorded)'}\`, analysed with the current model by \`${command}`;
  }
  else {
    if (values.browser !== 'chromium') throw new Error(`--browser ${values.browser}: only chromium is implemented (see the bench's header)`);
    for (const p of csv(values.profiles)) profileByName(p);
    if (!(DOT_STUBS as readonly string[]).includes(values['dot-stub']!)) throw new Error(`--dot-stub: unknown ${values['dot-stub']} (${DOT_STUBS.join(', ')})`);
    for (const t of csv(values.transports)) if (!(BROWSER_TRANSPORTS as readonly string[]).includes(t)) throw new Error(`--transports: unknown ${t} (${BROWSER_TRANSPORTS.join(', ')})`);
    const raw = values.raw ?? join(tmpdir(), `dnscost-validation-${Date.now()}.json`);
    process.stderr.write(`raw data (written after each profile): ${raw}\n`);
    run = await runValidation({
      profiles: csv(values.profiles), pages: csv(values.pages).map(Number), loads: Number(values.loads), browser: 'chromium',
      repeat: Number(values.repeat), seed: Number(values.seed), transports: csv(values.transports) as BrowserTransport[], stubNoDelay: values['stub-nodelay'], dotStub: values['dot-stub'] as DotStub, onProfile: (r) => writeFileSync(raw, JSON.stringify({ command, ...r })),
    });
    run.command = command;
    writeFileSync(raw, JSON.stringify(run));
  }
  const text = report(run, command);
  process.stdout.write(text);
  if (values.out) writeFileSync(values.out, text);
}

if (process.env.DNSCOST_VALIDATION_INNER) await inner(process.env.DNSCOST_VALIDATION_INNER);
else if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
