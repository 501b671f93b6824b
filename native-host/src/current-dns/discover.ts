// The person's current DNS, found on the OS the host runs on: what their browser's lookups really go to, so it can be
// the baseline every candidate is compared with. Behind a local caching stub (systemd-resolved, dnsmasq, unbound,
// stubby) that is the stub's upstreams, with the stub itself reported beside them; where the stub already speaks an
// encrypted transport upstream, that is reported too, so nobody is priced a switch that already happened.
import { execFile } from 'node:child_process';
import { getServers } from 'node:dns';
import { readdirSync, readFileSync } from 'node:fs';
import type { CurrentDns } from '../../../common/schema.js';
import { isLoopback, parseDnsmasqConf, parseIpconfigAll, parseNrptPolicy, parseResolvConf, parseResolvectl, parseScutilDns, parseStubbyYml, parseUnboundConf, type ServerAddress } from './parse.js';

/**
 * What discovery reads, replaceable in tests. Every read and command goes through `deps`, so each OS is tested with
 * fixture files (parse.ts, discover.test.ts).
 */
export interface DiscoverDeps {
  platform: NodeJS.Platform;
  /** A file's text, or null when it cannot be read. */
  read(path: string): string | null;
  /** The names of the files in a directory (empty when none or unreadable). */
  list(dir: string): string[];
  /** A command's standard output when it ran and exited 0 within a few seconds; null otherwise. */
  run(cmd: string, args: string[]): Promise<string | null>;
  /** The command names (`/proc/PID/comm`) of the running processes (Linux). */
  processes(): string[];
  /** node:dns getServers(). */
  nodeServers(): string[];
}

/** Longest any discovery command may take. */
const COMMAND_TIMEOUT_MS = 3000;

/** The real machine's reads. */
export const realDeps: DiscoverDeps = {
  platform: process.platform,
  read: (path) => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return null;
    }
  },
  list: (dir) => {
    try {
      return readdirSync(dir).sort();
    } catch {
      return [];
    }
  },
  run: (cmd, args) =>
    new Promise((resolve) => {
      execFile(cmd, args, { timeout: COMMAND_TIMEOUT_MS, windowsHide: true, maxBuffer: 1 << 20 }, (err, stdout) => resolve(err ? null : String(stdout)));
    }),
  processes: () =>
    realDeps.list('/proc').filter((p) => /^\d+$/.test(p)).map((p) => realDeps.read(`/proc/${p}/comm`)?.trim() ?? '').filter(Boolean),
  nodeServers: () => getServers(),
};

const serverText = (servers: readonly ServerAddress[]) => servers.map((s) => (s.port === 53 ? s.address : `${s.address} port ${s.port}`)).join(', ');

/** The concatenated text of a configuration file and the `*.conf` files of its drop-in directory. */
function withDropIns(deps: DiscoverDeps, file: string, dir: string): string {
  return [deps.read(file) ?? '', ...deps.list(dir).filter((f) => f.endsWith('.conf')).map((f) => deps.read(`${dir}/${f}`) ?? '')].join('\n');
}

/**
 * The person's current DNS on this machine; `servers` empty when none could be found. Where it looks:
 * - Linux: see linux().
 * - macOS: `scutil --dns` (the first resolver not for one domain; the domains of the others are split DNS).
 * - Windows: `ipconfig /all` (connected adapters with a default gateway); node:dns getServers() when that fails —
 *   c-ares asks the adapters that are up, in route-metric order, but drops a link-local server's zone. Split DNS:
 *   the NRPT rules' namespaces (`Get-DnsClientNrptPolicy`).
 */
export async function discoverCurrentDns(deps: DiscoverDeps = realDeps): Promise<CurrentDns> {
  if (deps.platform === 'darwin') {
    const out = await deps.run('scutil', ['--dns']);
    const parsed = out ? parseScutilDns(out) : { servers: [], search: [], split: [] };
    return { ...plain('scutil --dns', parsed.servers, parsed.search), splitDomains: parsed.split };
  }
  if (deps.platform === 'win32') {
    const [out, nrpt] = await Promise.all([deps.run('ipconfig', ['/all']), deps.run('powershell', ['-NoProfile', '-NonInteractive', '-Command', 'Get-DnsClientNrptPolicy | Format-List Namespace'])]);
    const splitDomains = nrpt ? parseNrptPolicy(nrpt) : [];
    const parsed = out ? parseIpconfigAll(out) : { servers: [], search: [] };
    if (parsed.servers.length) return { ...plain('ipconfig /all', parsed.servers, parsed.search, WINDOWS_FIRST_TIMEOUT_MS), splitDomains };
    return { ...plain('node:dns getServers()', deps.nodeServers().map((a) => ({ address: a.replace(/^\[(.*)\](:\d+)?$/, '$1'), port: 53 })), [], WINDOWS_FIRST_TIMEOUT_MS), splitDomains };
  }
  const found = await linux(deps);
  // Where a stub's upstreams cannot be seen (or it recurses itself), the stub is the current DNS: it is what the
  // browser's lookups go to.
  if (found.servers.length === 0 && found.stub) return { ...found, servers: [{ address: found.stub.address, port: 53 }] };
  return found;
}

/** The Windows DNS Client's first wait for an answer (registry DNSQueryTimeouts: 1, 1, 2, 4, 4 s by default). */
const WINDOWS_FIRST_TIMEOUT_MS = 1000;

function plain(source: string, servers: ServerAddress[], search: string[], retryMs: number | null = null): CurrentDns {
  return { source, servers, search, stub: null, encrypted: null, retryMs, description: servers.length ? `your current DNS (${serverText(servers)})` : 'no DNS server found' };
}

// Where it looks on Linux: /etc/resolv.conf; when it names a loopback stub, the stub that runs (/proc/*/comm) and its
// configuration: systemd-resolved (`resolvectl status`, else /run/systemd/resolve/resolv.conf), dnsmasq
// (/etc/dnsmasq.conf and /etc/dnsmasq.d, its resolv-file, NetworkManager's /run/NetworkManager/no-stub-resolv.conf),
// unbound (/etc/unbound/unbound.conf and unbound.conf.d: its root forward-zone), stubby (/etc/stubby/stubby.yml).
async function linux(deps: DiscoverDeps): Promise<CurrentDns> {
  const resolv = parseResolvConf(deps.read('/etc/resolv.conf') ?? '');
  const local = resolv.servers.filter((s) => isLoopback(s.address));
  // No stub between: glibc asks the servers itself, and asks a lost query again after its timeout.
  if (resolv.servers.length === 0 || local.length === 0) return plain('/etc/resolv.conf', resolv.servers, resolv.search, resolv.retryMs);
  const stubAddress = local[0]!.address;
  const running = new Set(deps.processes());
  const stub = (software: string) => ({ address: stubAddress, software });
  const described = (what: string, servers: ServerAddress[]) => (servers.length ? `your current DNS (${serverText(servers)}, through ${what} on ${stubAddress})` : `your current DNS (${what} on ${stubAddress}; its upstreams unknown)`);

  // systemd-resolved: 127.0.0.53/54 or the process; its upstreams from resolvectl, else its upstream resolv.conf.
  if (/^127\.0\.0\.5[34]$/.test(stubAddress) || running.has('systemd-resolve')) {
    const status = await deps.run('resolvectl', ['status', '--no-pager']);
    const fromStatus = status ? parseResolvectl(status) : null;
    const upstream = parseResolvConf(deps.read('/run/systemd/resolve/resolv.conf') ?? '');
    const servers = fromStatus?.servers.length ? fromStatus.servers : upstream.servers.filter((s) => !isLoopback(s.address));
    const dot = fromStatus?.dot ?? 'no';
    return {
      source: fromStatus ? 'resolvectl status' : '/run/systemd/resolve/resolv.conf',
      servers,
      search: [...new Set([...resolv.search, ...(fromStatus?.search ?? upstream.search)])],
      splitDomains: fromStatus?.split ?? [],
      stub: stub('systemd-resolved'),
      encrypted: dot === 'no' ? null : { transport: 'dot', by: 'systemd-resolved', opportunistic: dot === 'opportunistic' },
      description: described('systemd-resolved', servers),
    };
  }
  if (running.has('dnsmasq')) {
    const conf = parseDnsmasqConf(withDropIns(deps, '/etc/dnsmasq.conf', '/etc/dnsmasq.d'));
    const files = conf.noResolv ? [] : [conf.resolvFile, '/run/NetworkManager/no-stub-resolv.conf', '/run/dnsmasq/resolv.conf', '/var/run/dnsmasq/resolv.conf'].filter((f): f is string => f !== null);
    const fromFile = files.map((f) => parseResolvConf(deps.read(f) ?? '').servers.filter((s) => !isLoopback(s.address))).find((s) => s.length) ?? [];
    const servers = [...conf.servers, ...fromFile].filter((s, i, all) => all.findIndex((x) => x.address === s.address && x.port === s.port) === i);
    return { source: 'dnsmasq configuration', servers, search: resolv.search, splitDomains: conf.split, stub: stub('dnsmasq'), encrypted: null, description: described('dnsmasq', servers) };
  }
  if (running.has('unbound')) {
    const conf = parseUnboundConf(withDropIns(deps, '/etc/unbound/unbound.conf', '/etc/unbound/unbound.conf.d'));
    const servers = conf.recursive ? [] : conf.servers;
    return {
      source: 'unbound configuration',
      servers,
      search: resolv.search,
      splitDomains: conf.split,
      stub: stub(conf.recursive ? 'unbound (recursive)' : 'unbound'),
      encrypted: conf.tls ? { transport: 'dot', by: 'unbound', opportunistic: false } : null,
      description: conf.recursive ? `your computer's own resolver (unbound on ${stubAddress}, resolving from the root)` : described('unbound', servers),
    };
  }
  if (running.has('stubby')) {
    const conf = parseStubbyYml(deps.read('/etc/stubby/stubby.yml') ?? '');
    return { source: 'stubby configuration', servers: conf.servers, search: resolv.search, stub: stub('stubby'), encrypted: { transport: 'dot', by: 'stubby', opportunistic: false }, description: described('stubby', conf.servers) };
  }
  // A resolver on this machine we cannot see behind: it is the current DNS as far as anyone can tell, not a cache of
  // something else (so it is not measured twice).
  return { ...plain('/etc/resolv.conf', resolv.servers, resolv.search), description: `your current DNS (${serverText(resolv.servers)}, a resolver on this computer)` };
}
