// The well-known public resolvers a person gets without configuring anything, with their bootstrap addresses, so
// measuring never needs a lookup of its own. Pure (no `node:` or DOM): the host and the extension both import it.
// The system's own resolver is not here: only the host can read the OS configuration (native-host/src/defaults.ts).
// Never exercised in tests.
import type { ResolverSpec } from './schema.js';

/** Cloudflare, Google and Quad9 with their Do53, DoT and DoH endpoints (IPv4 bootstrap addresses). */
export const PUBLIC_RESOLVERS: readonly ResolverSpec[] = [
  publicResolver('cloudflare', 'Cloudflare', '1.1.1.1', 'cloudflare-dns.com', 'one.one.one.one', '/dns-query'),
  publicResolver('google', 'Google Public DNS', '8.8.8.8', 'dns.google', 'dns.google', '/dns-query'),
  publicResolver('quad9', 'Quad9', '9.9.9.9', 'dns.quad9.net', 'dns.quad9.net', '/dns-query'),
];

/** True when `id` names one of PUBLIC_RESOLVERS (the options page lists those as selectable defaults). */
export function isPublicResolverId(id: string): boolean {
  return PUBLIC_RESOLVERS.some((r) => r.id === id);
}

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
