// The resolvers a person gets without configuring anything: the system's own (read from the OS configuration)
// and the well-known public ones (common/default-resolvers.ts), so measuring never needs a lookup of its own.
// Never exercised in tests: they are checked against fixture files.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { PUBLIC_RESOLVERS } from '../../common/default-resolvers.js';
import type { ResolverSpec } from '../../common/schema.js';

/** The public defaults (Cloudflare, Google, Quad9) live in common/ so the extension shares them. */
export { PUBLIC_RESOLVERS };

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
