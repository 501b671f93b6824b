// The resolvers a person gets without configuring anything: the system's own (read from the OS configuration)
// and the well-known public ones with their bootstrap addresses, so measuring never needs a lookup of its own.
// Never exercised in tests: they are checked against fixture files.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import type { ResolverSpec } from '../../common/schema.js';

/** Cloudflare, Google and Quad9 with their Do53, DoT and DoH endpoints (IPv4 bootstrap addresses). */
export const PUBLIC_RESOLVERS: readonly ResolverSpec[] = [
  publicResolver('cloudflare', 'Cloudflare', '1.1.1.1', 'cloudflare-dns.com', 'one.one.one.one', '/dns-query'),
  publicResolver('google', 'Google Public DNS', '8.8.8.8', 'dns.google', 'dns.google', '/dns-query'),
  publicResolver('quad9', 'Quad9', '9.9.9.9', 'dns.quad9.net', 'dns.quad9.net', '/dns-query'),
];

function publicResolver(id: string, name: string, address: string, dohName: string, dotName: string, path: string): ResolverSpec {
  return {
    id,
    name,
    endpoints: [
      { transport: 'udp', address, port: 53 },
      { transport: 'tcp', address, port: 53 },
      { transport: 'dot', address, port: 853, serverName: dotName },
      { transport: 'doh', address, port: 443, serverName: dohName, path, method: 'POST' },
      { transport: 'doh1', address, port: 443, serverName: dohName, path, method: 'POST' },
    ],
  };
}

/** Nameserver addresses from resolv.conf text (RFC-less but universal format: `nameserver IP`, `#`/`;` comments). */
export function parseResolvConf(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*nameserver\s+(\S+)/.exec(line.replace(/[#;].*$/, ''));
    if (!m) continue;
    const addr = m[1]!.replace(/%.*$/, ''); // drop an IPv6 zone id
    if (net.isIP(addr) && !out.includes(addr)) out.push(addr);
  }
  return out;
}

/**
 * The system resolver as a Do53 resolver (UDP and TCP to each nameserver), or null when none is configured.
 * systemd-resolved's stub 127.0.0.53 is kept: it is what the browser's own lookups go through.
 */
export function systemResolver(resolvConfPath = '/etc/resolv.conf', read = (p: string) => readFileSync(p, 'utf8')): ResolverSpec | null {
  let text: string;
  try {
    text = read(resolvConfPath);
  } catch {
    return null;
  }
  const servers = parseResolvConf(text);
  if (servers.length === 0) return null;
  return {
    id: 'system',
    name: `System resolver (${servers.join(', ')})`,
    endpoints: servers.flatMap((address) => [
      { transport: 'udp' as const, address, port: 53 },
      { transport: 'tcp' as const, address, port: 53 },
    ]),
  };
}

/** The default resolvers by id: `system` (when configured), `cloudflare`, `google`, `quad9`. */
export function defaultResolvers(system = systemResolver()): ResolverSpec[] {
  return [...(system ? [system] : []), ...PUBLIC_RESOLVERS];
}
