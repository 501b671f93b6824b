// The well-known public resolvers a person gets without configuring anything, with their bootstrap addresses, so
// measuring never needs a lookup of its own. Pure (no `node:` or DOM): the host and the extension both import it.
// The person's current DNS becomes resolvers here too (currentDnsResolvers), from what the host found on the machine
// (native-host/src/current-dns/): the public ones are never exercised in tests, the current DNS only with lab ones.
import type { BrowserDoh, CurrentDns, EndpointSpec, ResolverSpec } from './schema.js';
import { TRANSPORTS, type TransportId } from './transports.js';

/** The resolver id of the person's current DNS: the baseline whenever it was measured. */
export const CURRENT_DNS_ID = 'system';
/** The resolver id of the browser's own DoH server: the baseline while the browser resolves over DoH. */
export const BROWSER_DOH_ID = 'browser';
/** The resolver id of the local caching stub in front of it (systemd-resolved, dnsmasq, …), measured beside it. */
export const LOCAL_STUB_ID = 'system-stub';
/**
 * The records of Firefox's own resolver path (extension/src/background/firefox-path.ts): not a resolver the person
 * could switch to, so never a baseline, a verdict's choice, a history cell or an upload; a row of its own in the panel.
 */
export const FIREFOX_NOW_ID = 'firefox-now';

/**
 * Cloudflare, Google and Quad9: each with the transports it offers today (standard ports, `/dns-query`) at its
 * bootstrap addresses. Cloudflare serves DoH over HTTP/3 too; Quad9 DoQ and DoH over HTTP/3 (since 2026), and no
 * longer DoH over HTTP/1.1 (since 2025-12-15); Google neither QUIC transport.
 */
const PRESETS = [
  { id: 'cloudflare', name: 'Cloudflare', v4: '1.1.1.1', v6: '2606:4700:4700::1111', doh: 'cloudflare-dns.com', dot: 'one.one.one.one', transports: ['udp', 'tcp', 'dot', 'doh', 'doh1', 'doh3'] },
  { id: 'google', name: 'Google Public DNS', v4: '8.8.8.8', v6: '2001:4860:4860::8888', doh: 'dns.google', dot: 'dns.google', transports: ['udp', 'tcp', 'dot', 'doh', 'doh1'] },
  { id: 'quad9', name: 'Quad9', v4: '9.9.9.9', v6: '2620:fe::fe', doh: 'dns.quad9.net', dot: 'dns.quad9.net', transports: ['udp', 'tcp', 'dot', 'doh', 'doq', 'doh3'] },
] as const satisfies ReadonlyArray<{ id: string; name: string; v4: string; v6: string; doh: string; dot: string; transports: readonly TransportId[] }>;

/** The public resolvers at their IPv4 addresses, or (family 6) their IPv6 ones. */
export function publicResolvers(family: 4 | 6 = 4): ResolverSpec[] {
  return PRESETS.map((p) => ({
    id: p.id,
    name: p.name,
    endpoints: p.transports.map((t) => standard(t, family === 6 ? p.v6 : p.v4, TRANSPORTS[t].doh ? p.doh : TRANSPORTS[t].encrypted ? p.dot : undefined)),
  }));
}

/** The public resolvers at their IPv4 addresses: the defaults a person can turn on. */
export const PUBLIC_RESOLVERS: readonly ResolverSpec[] = publicResolvers(4);

/**
 * `resolvers` with each public resolver as this version defines it (a person's settings keep the copy made when they
 * turned it on: what a resolver stopped or started offering since reaches them here), at its IPv6 addresses when the
 * machine reaches the IPv6 internet (`ipv6`, as the host found it: the browser then reaches the resolver over IPv6, as
 * Happy Eyeballs prefers), else at its IPv4 ones. Other resolvers are left as they are.
 */
export function currentPresets(resolvers: readonly ResolverSpec[], ipv6: boolean | null): ResolverSpec[] {
  const now = publicResolvers(ipv6 ? 6 : 4);
  return resolvers.map((r) => now.find((p) => p.id === r.id) ?? r);
}

/** True when `id` names one of PUBLIC_RESOLVERS (the options page lists those as selectable defaults). */
export function isPublicResolverId(id: string): boolean {
  return PUBLIC_RESOLVERS.some((r) => r.id === id);
}

/** An endpoint of `transport` at `address` with the table's defaults: its port, and DoH's path and method. */
function standard(transport: TransportId, address: string, serverName?: string): EndpointSpec {
  const { defaultPort, path, method } = TRANSPORTS[transport].url;
  return { transport, address, port: defaultPort, ...(serverName ? { serverName } : {}), ...(path && method ? { path, method } : {}) };
}


/**
 * The person's current DNS as resolvers to measure: `system`, the servers their lookups go to (over DoT where the
 * local stub already encrypts, else Do53 over UDP and TCP), and `system-stub`, the caching stub on this machine in
 * front of them (Do53 over UDP), labelled as such. Empty when nothing was found.
 */
export function currentDnsResolvers(current: CurrentDns): ResolverSpec[] {
  const dot = current.encrypted?.transport === 'dot';
  const endpoints = current.servers.slice(0, 4).flatMap((s): EndpointSpec[] =>
    dot
      ? [{ transport: 'dot', address: s.address, port: s.port === TRANSPORTS.udp.url.defaultPort ? TRANSPORTS.dot.url.defaultPort : s.port, serverName: s.tlsName ?? s.address.replace(/%.*$/, '') }]
      : [{ transport: 'udp', address: s.address, port: s.port }, { transport: 'tcp', address: s.address, port: s.port }],
  );
  const out: ResolverSpec[] = endpoints.length ? [{ id: CURRENT_DNS_ID, name: current.description.slice(0, 128), endpoints }] : [];
  if (current.stub) {
    out.push({ id: LOCAL_STUB_ID, name: `your computer's DNS cache (${current.stub.software} on ${current.stub.address})`.slice(0, 128), endpoints: [{ transport: 'udp', address: current.stub.address, port: 53 }] });
  }
  return out;
}

/**
 * The resolvers to measure while the browser resolves over DoH, or for a page that went through a proxy (never weaker
 * than the browser: no name in clear text): the browser's own DoH server first when it is active (`browser`, the
 * baseline; absent when the host found no endpoint for it),
 * then every other resolver with its encrypted endpoints only (one left with none is dropped: the person's current
 * DNS over plain DNS, a public resolver's Do53).
 */
export function encryptedOnly(resolvers: readonly ResolverSpec[], doh: BrowserDoh | null): ResolverSpec[] {
  const own: ResolverSpec[] = doh?.active && doh.endpoint ? [{ id: BROWSER_DOH_ID, name: `${doh.product}'s DNS over HTTPS (${doh.endpoint.serverName ?? doh.endpoint.address})`.slice(0, 128), endpoints: [{ ...doh.endpoint }] }] : [];
  const others = resolvers
    .filter((r) => r.id !== BROWSER_DOH_ID)
    .map((r) => ({ ...r, endpoints: r.endpoints.filter((e) => TRANSPORTS[e.transport].encrypted) }))
    .filter((r) => r.endpoints.length > 0);
  return [...own, ...others];
}
