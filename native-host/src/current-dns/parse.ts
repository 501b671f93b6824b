// Readers of the OS's DNS configuration, one pure function per file format: resolv.conf, `resolvectl status`, dnsmasq,
// unbound and stubby configuration, macOS `scutil --dns`, Windows `ipconfig /all`. Each takes the text and returns
// what it says; none reads a file or runs a command (discover.ts does), so every format is tested with fixtures.
import net from 'node:net';

/** A DNS server as a configuration names it: an IP literal (IPv6 link-local keeps its zone), a port, a TLS name. */
export interface ServerAddress {
  address: string;
  port: number;
  /** The name its certificate must carry, where the configuration gives one (DoT upstreams). */
  tlsName?: string;
}

/** True for 127.0.0.0/8 and ::1: a resolver on this machine (a caching stub, or the machine's own recursor). */
export function isLoopback(address: string): boolean {
  const a = address.replace(/%.*$/, '').toLowerCase();
  return a === '::1' || /^127\./.test(a) || /^::ffff:127\./.test(a);
}

/** An IP literal (with an optional `%zone` on IPv6), or null. */
function ip(text: string): string | null {
  const [addr, zone] = text.trim().split('%', 2) as [string, string | undefined];
  const kind = net.isIP(addr);
  if (kind === 0) return null;
  // A zone is an interface's name or index (fuzzing found a NUL in one, which the hello's schema then refused).
  return kind === 6 && zone ? (/^[\w.-]{1,32}$/.test(zone) ? `${addr}%${zone}` : null) : addr;
}

/** A port as a configuration writes it: digits for 1–65535, else null (the server is skipped; the fuzz's find). */
function portOf(text: string | undefined, otherwise: number): number | null {
  if (text === undefined || text === '') return otherwise;
  const n = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  return n >= 1 && n <= 65535 ? n : null;
}

const uniq = (xs: ServerAddress[]): ServerAddress[] => xs.filter((x, i) => xs.findIndex((y) => y.address === x.address && y.port === x.port) === i);

/** glibc's stub waits this long for an answer before asking again (resolv.h RES_TIMEOUT), unless `options timeout:`. */
export const GLIBC_RETRY_MS = 5000;
/** The most glibc's `options timeout:` can set (resolv.h RES_MAXRETRANS). */
const GLIBC_MAX_TIMEOUT_S = 30;

/**
 * resolv.conf: `nameserver IP` lines in order, once each (zone ids kept), the search domains (`search`/`domain`), and
 * how long glibc waits for an answer before asking again (`options timeout:n`, 5 s unless set; the last one wins).
 */
export function parseResolvConf(text: string): { servers: ServerAddress[]; search: string[]; retryMs: number } {
  const servers: ServerAddress[] = [];
  let search: string[] = [];
  let retryMs = GLIBC_RETRY_MS;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    const m = /^(nameserver|search|domain|options)\s+(.+)$/.exec(line);
    if (!m) continue;
    if (m[1] === 'options') {
      for (const o of m[2]!.split(/\s+/)) {
        const t = /^timeout:(\d{1,3})$/.exec(o);
        if (t) retryMs = Math.min(Math.max(Number(t[1]), 1), GLIBC_MAX_TIMEOUT_S) * 1000;
      }
      continue;
    }
    if (m[1] === 'nameserver') {
      const a = ip(m[2]!.split(/\s+/)[0]!);
      if (a) servers.push({ address: a, port: 53 });
    } else {
      // The last search or domain line wins (resolv.conf(5)); "." means none.
      search = m[2]!.split(/\s+/).filter((d) => d && d !== '.').map((d) => d.toLowerCase().replace(/\.$/, ''));
    }
  }
  return { servers: uniq(servers), search, retryMs };
}

/** `IP[#name]` or `IP:port` as systemd-resolved prints servers. */
function resolvedServer(token: string): ServerAddress | null {
  const [hostPart, name] = token.split('#', 2) as [string, string | undefined];
  let host = hostPart;
  let port: number | null = 53;
  const v6port = /^\[(.+)\]:(\d+)$/.exec(hostPart);
  const v4port = /^(\d+\.\d+\.\d+\.\d+):(\d+)$/.exec(hostPart);
  if (v6port) [host, port] = [v6port[1]!, portOf(v6port[2], 53)];
  else if (v4port) [host, port] = [v4port[1]!, portOf(v4port[2], 53)];
  if (port === null) return null;
  const address = ip(host);
  return address ? { address, port, ...(name ? { tlsName: name } : {}) } : null;
}

/**
 * `resolvectl status`: the servers of the links with a default route (else the global ones), the current one first,
 * the search domains, and whether DNS over TLS is on (`+DNSOverTLS` in the Protocols line; `opportunistic` when the
 * line says so).
 */
export function parseResolvectl(text: string): { servers: ServerAddress[]; search: string[]; split: string[]; dot: 'yes' | 'opportunistic' | 'no' } {
  type Block = { defaultRoute: boolean; current: ServerAddress[]; servers: ServerAddress[]; domains: string[]; dot: 'yes' | 'opportunistic' | 'no' | null };
  const blocks: Block[] = [];
  let block: Block | null = null;
  let last = '';
  for (const raw of text.split('\n')) {
    if (/^(Global|Link \d+)/.test(raw)) {
      block = { defaultRoute: raw.startsWith('Global'), current: [], servers: [], domains: [], dot: null };
      blocks.push(block);
      last = '';
      continue;
    }
    if (!block) continue;
    const m = /^\s*([A-Za-z. ]+?):\s*(.*)$/.exec(raw);
    const key = m ? m[1]!.trim() : last;
    const value = m ? m[2]! : raw.trim();
    if (!value) continue;
    last = key;
    const tokens = value.split(/\s+/);
    if (key === 'Protocols') {
      if (tokens.includes('+DefaultRoute')) block.defaultRoute = true;
      if (tokens.includes('-DefaultRoute') && !raw.startsWith('Global')) block.defaultRoute = false;
      if (tokens.includes('+DNSOverTLS')) block.dot = 'yes';
      else if (tokens.some((t) => /^DNSOverTLS=opportunistic/i.test(t))) block.dot = 'opportunistic';
      else if (tokens.includes('-DNSOverTLS')) block.dot = 'no';
    } else if (key === 'Current DNS Server') block.current.push(...tokens.map(resolvedServer).filter((s): s is ServerAddress => s !== null));
    else if (key === 'DNS Servers') block.servers.push(...tokens.map(resolvedServer).filter((s): s is ServerAddress => s !== null));
    // A routing-only domain (`~corp.example`) is not searched: it only sends its names to this link (split, below).
    else if (key === 'DNS Domain') block.domains.push(...tokens.filter((d) => !d.startsWith('~')).map((d) => d.toLowerCase()).filter((d) => d && d !== '.'));
  }
  const links = blocks.slice(1).filter((b) => b.defaultRoute && b.servers.length);
  const chosen = links.length ? links : blocks.filter((b) => b.servers.length);
  const servers = uniq(chosen.flatMap((b) => [...b.current, ...b.servers]));
  const search = [...new Set(blocks.flatMap((b) => b.domains))];
  // Routing-only domains (`~corp.example`) and every domain of a link without the default route (a VPN's): their
  // names go to that link's servers (split DNS).
  const split = [...new Set([...text.matchAll(/~([A-Za-z0-9.-]+)/g)].map((m) => m[1]!.toLowerCase()).concat(blocks.slice(1).filter((b) => !b.defaultRoute).flatMap((b) => b.domains)))]
    .filter((d) => d && d !== '.');
  const dots = blocks.map((b) => b.dot).filter((d) => d !== null);
  const dot = dots.includes('yes') ? 'yes' : dots.includes('opportunistic') ? 'opportunistic' : 'no';
  return { servers, search, split, dot };
}

/**
 * dnsmasq's configuration: its default upstreams (`server=IP[#port]`), `no-resolv`, `resolv-file`, and the domains of
 * its per-domain servers (`server=/corp.example/10.0.0.1`: split DNS; `local=/d/` and `address=/d/…` too).
 */
export function parseDnsmasqConf(text: string): { servers: ServerAddress[]; noResolv: boolean; resolvFile: string | null; split: string[] } {
  const servers: ServerAddress[] = [];
  const split = new Set<string>();
  let noResolv = false;
  let resolvFile: string | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#(?![0-9]).*$/, '').trim();
    if (line === 'no-resolv') noResolv = true;
    const rf = /^resolv-file=(.+)$/.exec(line);
    if (rf) resolvFile = rf[1]!.trim();
    const per = /^(?:server|nameserver|local|address)=\/(.+)\/[^/]*$/.exec(line);
    for (const d of per ? per[1]!.split('/') : []) if (d && d !== '#' && !/\s/.test(d)) split.add(d.toLowerCase().replace(/^\./, ''));
    const m = /^(?:server|nameserver)=([^/].*)$/.exec(line);
    if (!m) continue;
    const [host, port] = m[1]!.split('#', 2) as [string, string | undefined];
    const address = ip(host.split('@')[0]!);
    const p = portOf(port, 53);
    if (address && p !== null) servers.push({ address, port: p });
  }
  return { servers: uniq(servers), noResolv, resolvFile, split: [...split] };
}

/**
 * unbound's configuration: the root forward-zone's upstreams (`forward-addr: IP[@port][#name]`), whether they are over
 * TLS, or recursion; and the names of its other forward and stub zones (split DNS).
 */
export function parseUnboundConf(text: string): { servers: ServerAddress[]; tls: boolean; recursive: boolean; split: string[] } {
  const servers: ServerAddress[] = [];
  const split = new Set<string>();
  let inRootForward = false;
  let sawRootForward = false;
  let tls = false;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*$/, (c) => (/@\d+#/.test(raw) ? c : '')).trim();
    if (/^[a-z-]+:\s*$/.test(line)) {
      inRootForward = false;
      continue;
    }
    const name = /^name:\s*"?([^"\s]+)"?/.exec(line);
    if (name && /^(forward-zone)?/.test(line)) {
      inRootForward = name[1] === '.';
      if (inRootForward) sawRootForward = true;
      else split.add(name[1]!.toLowerCase().replace(/\.$/, ''));
      continue;
    }
    if (!inRootForward) continue;
    if (/^forward-(tls|ssl)-upstream:\s*yes/.test(line)) tls = true;
    const fa = /^forward-addr:\s*(\S+)/.exec(raw.trim());
    if (fa) {
      const [hostPort, tlsName] = fa[1]!.split('#', 2) as [string, string | undefined];
      const [host, port] = hostPort.split('@', 2) as [string, string | undefined];
      const address = ip(host);
      const p = portOf(port, 0);
      if (address && p !== null) servers.push({ address, port: p, ...(tlsName ? { tlsName } : {}) });
    }
  }
  const fixed = servers.map((s) => ({ ...s, port: s.port || (tls ? 853 : 53) }));
  return { servers: uniq(fixed), tls, recursive: !sawRootForward, split: [...split] };
}

/** stubby's YAML: its upstreams (`address_data`, `tls_auth_name`, `tls_port`); stubby speaks DoT to them. */
export function parseStubbyYml(text: string): { servers: ServerAddress[] } {
  const servers: ServerAddress[] = [];
  let inUpstreams = false;
  let current: ServerAddress | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*$/, '');
    if (/^\S/.test(line)) {
      inUpstreams = /^upstream_recursive_servers:/.test(line);
      continue;
    }
    if (!inUpstreams) continue;
    const addr = /address_data:\s*"?([^"\s]+)"?/.exec(line);
    if (addr) {
      const address = ip(addr[1]!);
      current = address ? { address, port: 853 } : null;
      if (current) servers.push(current);
      continue;
    }
    const name = /tls_auth_name:\s*"?([^"\s]+)"?/.exec(line);
    if (name && current) current.tlsName = name[1]!;
    const port = /tls_port:\s*(\d+)/.exec(line);
    const p = port ? portOf(port[1], 853) : null;
    if (p !== null && current) current.port = p;
  }
  return { servers };
}

/**
 * macOS `scutil --dns`: the servers of the first resolver of the main section that is not for one domain
 * (no `domain`, not Supplemental), in order, link-local zones kept (`fe80::1%en0`); its search domains; and the
 * domains of the resolvers for one domain or Supplemental (a VPN's split DNS: `domain`, and a supplemental
 * resolver's search domains), whose names go to servers of their own.
 */
export function parseScutilDns(text: string): { servers: ServerAddress[]; search: string[]; split: string[] } {
  const main = text.split(/^DNS configuration \(for scoped queries\)/m)[0] ?? '';
  const domainsOf = (block: string, key: RegExp) => [...block.matchAll(key)].map((m) => m[1]!.toLowerCase().replace(/\.$/, ''));
  const split = new Set<string>();
  let chosen: { servers: ServerAddress[]; search: string[] } | null = null;
  for (const block of main.split(/^resolver #\d+/m).slice(1)) {
    if (/^\s*domain\s*:/m.test(block) || /flags\s*:.*Supplemental/.test(block)) {
      for (const d of [...domainsOf(block, /^\s*domain\s*:\s*(\S+)/gm), ...domainsOf(block, /^\s*search domain\[\d+\]\s*:\s*(\S+)/gm)]) split.add(d);
      continue;
    }
    const servers = [...block.matchAll(/^\s*nameserver\[\d+\]\s*:\s*(\S+)/gm)].map((m) => ip(m[1]!)).filter((a): a is string => a !== null);
    if (!servers.length || chosen) continue;
    chosen = { servers: uniq(servers.map((address) => ({ address, port: 53 }))), search: domainsOf(block, /^\s*search domain\[\d+\]\s*:\s*(\S+)/gm) };
  }
  return { ...(chosen ?? { servers: [], search: [] }), split: [...split] };
}

/**
 * Windows `Get-DnsClientNrptPolicy` (Format-List): every rule's Namespace — a suffix `.corp.example.com`, or a name —
 * whose names Windows sends to the rule's own servers (DirectAccess, a VPN's split DNS). Several in braces are split.
 */
export function parseNrptPolicy(text: string): string[] {
  const names = [...text.replace(/\r/g, '').matchAll(/^\s*Namespace\s*:\s*(.+)$/gm)]
    .flatMap((m) => m[1]!.replace(/[{}]/g, '').split(/[,\s]+/))
    .map((n) => n.trim().toLowerCase().replace(/^\./, '').replace(/\.$/, ''))
    .filter((n) => n && n !== '.');
  return [...new Set(names)];
}

/**
 * Windows `ipconfig /all`: the DNS servers of the connected adapters that have a default gateway (the ones a
 * lookup goes out through), in adapter order, link-local zones kept (`fe80::1%12`); and the suffix search list.
 */
export function parseIpconfigAll(text: string): { servers: ServerAddress[]; search: string[] } {
  const lines = text.replace(/\r/g, '').split('\n');
  type Adapter = { up: boolean; gateway: boolean; servers: string[] };
  const adapters: Adapter[] = [];
  let adapter: Adapter | null = null;
  let key = '';
  let search: string[] = [];
  for (const raw of lines) {
    if (/^\S.*adapter .*:\s*$/.test(raw)) {
      adapter = { up: true, gateway: false, servers: [] };
      adapters.push(adapter);
      key = '';
      continue;
    }
    const m = /^\s+([^.:]+?)[ .]*:\s*(.*)$/.exec(raw);
    const value = (m ? m[2]! : raw).trim().replace(/\(Preferred\)/, '').trim();
    if (m) key = m[1]!.trim();
    else if (!/^\s{20,}\S/.test(raw)) key = '';
    if (!adapter) {
      if (key === 'DNS Suffix Search List' && value) search = [...search, value.toLowerCase()];
      continue;
    }
    if (key === 'Media State' && /disconnected/i.test(value)) adapter.up = false;
    if (key === 'Default Gateway' && value) adapter.gateway = true;
    if (key === 'DNS Servers' && value) adapter.servers.push(value);
  }
  const chosen = adapters.filter((a) => a.up && a.gateway);
  const servers = (chosen.length ? chosen : adapters.filter((a) => a.up)).flatMap((a) => a.servers).map(ip).filter((a): a is string => a !== null);
  return { servers: uniq(servers.map((address) => ({ address, port: 53 }))), search };
}
