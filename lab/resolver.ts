// Real resolvers for the lab (CoreDNS on every transport, unbound on UDP/TCP/DoT/DoH h2), serving labZone().
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { createSocket } from 'node:dgram';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCerts, type LabCerts } from './certs.js';
import { labZone } from './zone.js';
import { labBin } from './paths.js';

/** Where a lab resolver listens, as URLs; names are dns.test (clients pin it to the address, SNI dns.test). */
export interface LabEndpoints {
  udp: string;
  tcp: string;
  dot: string;
  doh: string;
  doq?: string;
  doh3?: string;
}

/** A running lab resolver; stop() kills it and removes the work dir it created. */
export interface LabResolver {
  name: 'coredns' | 'unbound' | 'bind';
  address: string;
  endpoints: LabEndpoints;
  certs: LabCerts;
  /** Everything the process wrote to stdout/stderr so far (capped), for diagnostics. */
  logs(): string;
  stop(): Promise<void>;
}

/** The three listening port numbers: Do53 (UDP+TCP), TLS (DoT, and DoQ over UDP), HTTPS (DoH, and DoH3 over UDP). */
export type PortName = 'dns' | 'tls' | 'https';

/** How to start a lab resolver; everything is optional. */
export interface StartOptions {
  /** Config, zone and certs go here (kept on stop); default a fresh labDir() removed on stop. */
  workDir?: string;
  /** Address to listen on; 127.0.0.1 by default. */
  address?: string;
  /** Run inside `ip netns exec NS`; ports then default to 53/853/443 since the namespace is fresh. */
  netns?: string;
  /** Reuse certs (e.g. one CA for several servers); default fresh ones in the work dir. */
  certs?: LabCerts;
  /** Fixed ports; unset ones are picked free on the address (or 53/853/443 in a netns). */
  ports?: Partial<Record<PortName, number>>;
  /**
   * CoreDNS only: one more zone whose every name answers these addresses (A, and AAAA when given), e.g. a test site
   * served inside a lab namespace. Names under `*.localhost` never reach a resolver in browsers, hence a zone of its own.
   * A list makes each name a zone (a page rebuilt from a HAR: lab/har/zone.ts).
   */
  siteZone?: { zone: string | string[]; a: string; aaaa?: string };
  /**
   * CoreDNS only: how it answers names outside its zones: REFUSED (default), or NXDOMAIN with a negative TTL, as a
   * person's resolver answers a name it cannot find. A browser retries a refused name of its own (an updater's, a
   * sign-in's) again and again, over the connection a page's load should find idle; a name that does not exist it
   * caches and leaves alone.
   */
  others?: 'refused' | 'nxdomain';
  /**
   * CoreDNS only: how long it keeps an idle DoT, DoH or DoQ connection (s); CoreDNS's default is 10 s, shorter than
   * a browser or a stub keeps theirs.
   */
  idleTimeoutS?: number;
  /**
   * CoreDNS only: log every query as `dnscost-query SCHEME TYPE NAME` (scheme dns, tls, https, …) to its output,
   * names outside the lab's zones too (answered as `others` says).
   */
  logQueries?: boolean;
  /** Called with everything the process writes (stdout and stderr), uncapped, as it arrives. */
  onOutput?: (text: string) => void;
}

const READY_TIMEOUT_MS = 10_000;
const LOG_CAP = 64 * 1024;
// unbound logs ` error: ` / ` fatal error: `; CoreDNS logs `[ERROR]` / `[FATAL]`.
const STARTUP_ERROR = /\b(error|fatal error):|\[(ERROR|FATAL)\]/;
const NETNS_PORTS: Record<PortName, number> = { dns: 53, tls: 853, https: 443 };

/** Makes a fresh temp directory under os.tmpdir() named dnscost-PREFIX-XXXXXX. */
export function labDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `dnscost-${prefix}-`));
}

/** Path of the lab's CoreDNS binary built by lab/build.sh. */
export function coreDNSBinary(): string {
  return labBin('coredns');
}

// Children still running (with the temp dir to remove); killed on exit so a crashed run leaves no servers behind.
const live = new Map<ChildProcess, string | undefined>();
let exitHookInstalled = false;
/** Kills `child` (and removes `ownDir`) when this process exits or dies of a signal: a lab server never outlives its test. */
export function trackLabProcess(child: ChildProcess, ownDir?: string): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    const killAll = () => {
      for (const [c, dir] of live) {
        c.kill('SIGKILL');
        if (dir) rmSync(dir, { recursive: true, force: true });
      }
    };
    process.on('exit', killAll);
    // A signal skips 'exit'; kill the servers, then die of the same signal as if we had not listened.
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      const onSignal = () => {
        killAll();
        process.off(sig, onSignal);
        if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
      };
      process.on(sig, onSignal);
    }
  }
  live.set(child, ownDir);
  child.once('exit', () => live.delete(child));
}

// A kernel-chosen TCP port that UDP can bind too (DoQ/DoH3 need UDP on the TLS/HTTPS ports), or undefined.
async function freePort(address: string): Promise<number | undefined> {
  const tcp = createServer();
  const got = await new Promise<number | undefined>((resolve) => {
    tcp.once('error', () => resolve(undefined));
    tcp.listen({ host: address, port: 0, exclusive: true }, () => {
      const a = tcp.address();
      resolve(typeof a === 'object' && a ? a.port : undefined);
    });
  });
  if (got === undefined) return undefined;
  const udp = createSocket(address.includes(':') ? 'udp6' : 'udp4');
  const ok = await new Promise<boolean>((resolve) => {
    udp.once('error', () => resolve(false));
    udp.bind({ address, port: got, exclusive: true }, () => resolve(true));
  });
  await new Promise<void>((r) => tcp.close(() => r()));
  await new Promise<void>((r) => (ok ? udp.close(() => r()) : r()));
  return ok ? got : undefined;
}

/** The ports a lab server listens on: fixed ones, `netnsPorts` inside a namespace, else free TCP+UDP ports on `address`. */
export async function pickPorts(
  opts: { ports?: Partial<Record<PortName, number>> | undefined; netns?: string | undefined },
  address: string,
  netnsPorts: Record<PortName, number> = NETNS_PORTS,
): Promise<Record<PortName, number>> {
  const out = {} as Record<PortName, number>;
  const taken = new Set<number>();
  for (const name of ['dns', 'tls', 'https'] as const) {
    const fixed = opts.ports?.[name] ?? (opts.netns ? netnsPorts[name] : undefined);
    if (fixed !== undefined) {
      out[name] = fixed;
      taken.add(fixed);
      continue;
    }
    for (let tries = 0; ; tries++) {
      const p = await freePort(address);
      if (p !== undefined && !taken.has(p)) {
        out[name] = p;
        taken.add(p);
        break;
      }
      if (tries > 50) throw new Error(`lab: no free TCP+UDP port on ${address}`);
    }
  }
  return out;
}

/** `address:port`, with brackets for IPv6. */
export function hostPort(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

function wrapNetns(netns: string | undefined, cmd: string, args: string[]): [string, string[]] {
  return netns ? ['ip', ['netns', 'exec', netns, cmd, ...args]] : [cmd, args];
}

/** A lab server process: its output so far (the first LOG_CAP characters) and how to stop it. */
export interface LabChild {
  child: ChildProcess;
  log(): string;
  /** SIGTERM, SIGKILL after 3 s; resolves once it has exited (at once if it had). */
  stop(): Promise<void>;
}

/**
 * Spawns `cmd` (inside `netns` when given) as a tracked lab process (trackLabProcess, with `ownDir`), collecting
 * its output; `onOutput` hears all of it, uncapped, as it arrives.
 */
export function spawnLabChild(cmd: string, args: string[], o: { netns?: string | undefined; cwd?: string; ownDir?: string | undefined; onOutput?: ((text: string) => void) | undefined } = {}): LabChild {
  const [bin, full] = wrapNetns(o.netns, cmd, args);
  const child = spawn(bin, full, { ...(o.cwd ? { cwd: o.cwd } : {}), stdio: ['ignore', 'pipe', 'pipe'] });
  trackLabProcess(child, o.ownDir);
  let log = '';
  const append = (b: Buffer) => {
    if (log.length < LOG_CAP) log += b.toString();
    o.onOutput?.(b.toString());
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  child.once('error', (e) => append(Buffer.from(`spawn error: ${e.message}\n`)));
  const exited = new Promise<void>((r) => child.once('close', () => r()));
  const stop = async () => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(t);
    }
  };
  return { child, log: () => log, stop };
}

function run(cmd: string, args: string[], timeout: number): Promise<{ ok: boolean; out: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout }, (err, stdout, stderr) => resolve({ ok: !err, out: stdout + stderr }));
  });
}

/** The query the lab asks itself to know a resolver is ready (readiness probes land in its query log too). */
export const READY_PROBE = { name: 'test.', type: 'SOA' } as const;

// Ready means this instance's SOA serial over both UDP and TCP: another server sharing the port (SO_REUSEPORT)
// would answer with a different one. kdig also works from inside a netns, where node cannot reach.
async function waitReady(child: ChildProcess, logs: () => string, what: string, opts: StartOptions, s: Setup) {
  const { address, ports: { dns: port } } = s;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = '';
  for (let round = 0; Date.now() < deadline; round++) {
    // The first wait is a tick only: it lets a spawn error (e.g. ENOENT) land in the logs.
    await new Promise((r) => setTimeout(r, round ? 50 : 0));
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`lab: ${what} exited (${child.exitCode ?? child.signalCode ?? 'spawn failed'}) before answering:\n${logs()}`);
    }
    let ok = true;
    for (const proto of ['+tcp', '+notcp']) {
      const [cmd, args] = wrapNetns(opts.netns, 'kdig', [
        `@${address}`, '-p', String(port), READY_PROBE.name, READY_PROBE.type, proto, '+time=1', '+retry=0', '+short',
      ]);
      const r = await run(cmd, args, 3000);
      last = r.out;
      if (!r.ok || r.out.split(/\s+/)[2] !== String(s.serial)) ok = false;
      if (!ok) break;
    }
    if (ok) return;
  }
  throw new Error(`lab: ${what} did not answer on ${hostPort(address, port)} within ${READY_TIMEOUT_MS} ms` +
    `\nlast probe: ${last}\nprocess output:\n${logs()}`);
}

/** How one kind of lab server is started (its config, its command line, its endpoints), for start(). */
export interface Launch {
  name: LabResolver['name'];
  /** Writes the config files and returns the command line. */
  configure(s: Setup): Promise<[string, string[]]>;
  endpoints(address: string, ports: Record<PortName, number>): LabEndpoints;
}

// Picked ports can be taken between the probe and the server's bind; only then is a retry worth it.
const PORT_RACE = /address already in use/i;

/**
 * Starts a lab server of kind `spec` with fresh ports (retried on a port race), certs and a serial, and waits until it
 * answers test. SOA with that serial over UDP and TCP.
 */
export async function start(spec: Launch, opts: StartOptions = {}): Promise<LabResolver> {
  const address = opts.address ?? '127.0.0.1';
  const ownDir = opts.workDir === undefined;
  const dir = opts.workDir ?? labDir(spec.name);
  const cleanup = () => {
    if (ownDir) rmSync(dir, { recursive: true, force: true });
  };
  try {
    const certs = opts.certs ?? (await makeCerts(join(dir, 'certs')));
    const autoPorts = !opts.netns && Object.keys(opts.ports ?? {}).length < 3;
    for (let attempt = 1; ; attempt++) {
      const ports = await pickPorts(opts, address);
      try {
        const r = await launch(spec, opts, { dir, ownDir, address, ports, certs, serial: randomInt(2, 2 ** 31) });
        const stop = async () => {
          await r.stop();
          cleanup();
        };
        return { ...r, stop };
      } catch (e) {
        if (!autoPorts || attempt >= 3 || !PORT_RACE.test(String(e))) throw e;
      }
    }
  } catch (e) {
    cleanup();
    throw e;
  }
}

/** What a server's configure() is given. */
export interface Setup {
  dir: string;
  ownDir: boolean;
  address: string;
  ports: Record<PortName, number>;
  certs: LabCerts;
  serial: number;
}

// Spawns one server and waits until it answers; on failure it is stopped and the error carries its output.
async function launch(spec: Launch, opts: StartOptions, s: Setup): Promise<LabResolver> {
  const [cmd, args] = await spec.configure(s);
  const { child, log: logs, stop } = spawnLabChild(cmd, args, { netns: opts.netns, cwd: s.dir, ownDir: s.ownDir ? s.dir : undefined, onOutput: opts.onOutput });
  try {
    await waitReady(child, logs, spec.name, opts, s);
    // Both servers can start despite some config problems (e.g. a bad zone line): fail loudly instead.
    const bad = logs().split('\n').filter((l) => STARTUP_ERROR.test(l));
    if (bad.length) throw new Error(`lab: ${spec.name} reported errors at startup:\n${bad.join('\n')}`);
  } catch (e) {
    await stop();
    throw e;
  }
  const endpoints = spec.endpoints(s.address, s.ports);
  return { name: spec.name, address: s.address, endpoints, certs: s.certs, logs, stop };
}

/** The browser tests' site zone: CoreDNS answers every name under it with loopback addresses (A and AAAA). */
export const LAB_SITE_ZONE = 'site.localhost';

/** Starts CoreDNS serving labZone() over dns://, tls://, https:// (h2 + HTTP/1.1), quic:// and https3://. */

export function startCoreDNS(opts: StartOptions = {}): Promise<LabResolver> {
  return start(
    {
      name: 'coredns',
      async configure({ dir, address, ports, certs, serial }) {
        const bin = coreDNSBinary();
        if (!existsSync(bin)) throw new Error(`lab: ${bin} missing; run: bash lab/build.sh`);
        const zoneFile = join(dir, 'db.test');
        await writeFile(zoneFile, labZone(serial));
        // One block per scheme, for `test.` and the browser tests' site (`*.site.localhost` → loopback, so a page
        // measured against the lab resolves for real); outside them CoreDNS answers REFUSED and forwards nothing.
        const site = [
          `template IN A ${LAB_SITE_ZONE} {`, `  answer "{{ .Name }} 60 IN A 127.0.0.1"`, '}',
          `template IN AAAA ${LAB_SITE_ZONE} {`, `  answer "{{ .Name }} 60 IN AAAA ::1"`, '}',
          // Other types (the browsers' HTTPS/type-65 queries) get NODATA, not REFUSED.
          `template ANY ANY ${LAB_SITE_ZONE} {`, '  rcode NOERROR', '}',
        ];
        const extraZone = opts.siteZone;
        const extraZones = extraZone ? [extraZone.zone].flat() : [];
        if (extraZone) {
          const z = extraZones.join(' ');
          site.push(`template IN A ${z} {`, `  answer "{{ .Name }} 60 IN A ${extraZone.a}"`, '}');
          if (extraZone.aaaa) site.push(`template IN AAAA ${z} {`, `  answer "{{ .Name }} 60 IN AAAA ${extraZone.aaaa}"`, '}');
          // Other types get NODATA (the browser's HTTPS/type-65 queries), not REFUSED.
          site.push(`template ANY ANY ${z} {`, '  rcode NOERROR', '}');
        }
        const zones = (scheme: string, port: number) =>
          [`test.`, `${LAB_SITE_ZONE}.`, ...extraZones.map((z) => `${z}.`)].map((z) => `${scheme}://${z}:${port}`).join(' ');
        // One server block: its zones, the scheme's own lines, the query log when asked, then what answers.
        const server = (scheme: string, zoneList: string, extra: string[], body: string[]) =>
          [`${zoneList} {`, `bind ${address}`, ...extra, ...(opts.logQueries ? [`log . "dnscost-query ${scheme} {type} {name}"`] : []), ...body]
            .map((l, i) => (i === 0 ? l : `  ${l}`)).concat('}');
        // Every other name: refused (as without a root block) or, with `others: 'nxdomain'`, answered "no such name"
        // with a negative TTL of 300 s. A root block answers it so that the log shows it too (a browser's own lookups).
        const others = ['template ANY ANY {', ...(opts.others === 'nxdomain'
          ? ['  rcode NXDOMAIN', '  authority ". 300 IN SOA ns.lab. hostmaster.lab. 1 300 300 300 300"']
          : ['  rcode REFUSED']), '}'];
        const block = (scheme: string, port: number, extra: string[]) =>
          [...server(scheme, zones(scheme, port), extra, [`file ${zoneFile} test.`, ...site, 'errors']),
            ...(opts.logQueries || opts.others === 'nxdomain' ? server(scheme, `${scheme}://.:${port}`, extra, others) : [])].join('\n');
        const tls = `tls ${certs.certFile} ${certs.keyFile}`;
        const idle = opts.idleTimeoutS ? [`timeouts {`, `  idle ${opts.idleTimeoutS}s`, '}'] : [];
        const corefile = [
          block('dns', ports.dns, []),
          block('tls', ports.tls, [tls, ...idle]),
          block('quic', ports.tls, [tls, 'quic', ...idle]),
          block('https', ports.https, [tls, 'https', ...idle]),
          block('https3', ports.https, [tls, 'https3']),
        ].join('\n') + '\n';
        const conf = join(dir, 'Corefile');
        await writeFile(conf, corefile);
        return [bin, ['-conf', conf]];
      },
      endpoints: (address, p) => ({
        udp: `udp://${hostPort(address, p.dns)}`,
        tcp: `tcp://${hostPort(address, p.dns)}`,
        dot: `tls://dns.test:${p.tls}`,
        doh: `https://dns.test:${p.https}/dns-query`,
        doq: `quic://dns.test:${p.tls}`,
        doh3: `h3://dns.test:${p.https}/dns-query`,
      }),
    },
    opts,
  );
}

/** Root hints naming one root server on loopback: a lab server that recurses never reaches a real root. */
export const LOOPBACK_ROOT_HINTS = '. 3600000 NS nowhere.invalid.\nnowhere.invalid. 3600000 A 127.0.0.1\n';

/** Starts Debian's unbound as an authoritative-only server for labZone() over UDP/TCP, DoT and DoH (h2 only). */
export function startUnbound(opts?: StartOptions): Promise<LabResolver> {
  return start(
    {
      name: 'unbound',
      async configure({ dir, address, ports, certs, serial }) {
        const zoneFile = join(dir, 'test.zone');
        await writeFile(zoneFile, labZone(serial));
        // Root hints pointing at loopback, which do-not-query-localhost forbids: recursion can never leave the box.
        const hints = join(dir, 'root.hints');
        await writeFile(hints, LOOPBACK_ROOT_HINTS);
        const conf = [
          'server:',
          '  verbosity: 1',
          '  do-daemonize: no',
          '  chroot: ""',
          '  username: ""',
          `  directory: "${dir}"`,
          `  pidfile: "${join(dir, 'unbound.pid')}"`,
          '  use-syslog: no',
          '  logfile: ""',
          '  num-threads: 1',
          '  interface-automatic: no',
          // Without this a busy port is shared silently instead of failing the start.
          '  so-reuseport: no',
          ...[ports.dns, ports.tls, ports.https].map((p) => `  interface: ${address}@${p}`),
          `  port: ${ports.dns}`,
          `  tls-port: ${ports.tls}`,
          `  https-port: ${ports.https}`,
          `  tls-service-key: "${certs.keyFile}"`,
          `  tls-service-pem: "${certs.certFile}"`,
          '  http-endpoint: "/dns-query"',
          '  access-control: 0.0.0.0/0 allow',
          '  access-control: ::/0 allow',
          '  module-config: "iterator"',
          `  root-hints: "${hints}"`,
          '  do-not-query-localhost: yes',
          '  local-zone: "." refuse',
          '  local-zone: "test." transparent',
          'auth-zone:',
          '  name: "test."',
          `  zonefile: "${zoneFile}"`,
          '  for-downstream: yes',
          '  for-upstream: no',
          '  fallback-enabled: no',
          'remote-control:',
          '  control-enable: no',
        ].join('\n') + '\n';
        const confFile = join(dir, 'unbound.conf');
        await writeFile(confFile, conf);
        return [existsSync('/usr/sbin/unbound') ? '/usr/sbin/unbound' : 'unbound', ['-d', '-c', confFile]];
      },
      endpoints: tcpTlsEndpoints,
    },
    opts,
  );
}

/** The endpoints of a server on UDP, TCP, DoT and DoH (no QUIC): unbound's and BIND's. */
export function tcpTlsEndpoints(address: string, p: Record<PortName, number>): LabEndpoints {
  return {
    udp: `udp://${hostPort(address, p.dns)}`,
    tcp: `tcp://${hostPort(address, p.dns)}`,
    dot: `tls://dns.test:${p.tls}`,
    doh: `https://dns.test:${p.https}/dns-query`,
  };
}
