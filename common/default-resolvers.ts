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

/** Cloudflare, Google and Quad9 with their Do53, DoT and DoH endpoints (IPv4 bootstrap addresses, standard ports, `/dns-query`). */
export const PUBLIC_RESOLVERS: readonly ResolverSpec[] = [
  publicResolver('cloudflare', 'Cloudflare', '1.1.1.1', 'cloudflare-dns.com', 'one.one.one.one'),
  publicResolver('google', 'Google Public DNS', '8.8.8.8', 'dns.google', 'dns.google'),
  publicResolver('quad9', 'Quad9', '9.9.9.9', 'dns.quad9.net', 'dns.quad9.net'),
];

/** True when `id` names one of PUBLIC_RESOLVERS (the options page lists those as selectable defaults). */
export function isPublicResolverId(id: string): boolean {
  return PUBLIC_RESOLVERS.some((r) => r.id === id);
}

/** An endpoint of `transport` at `address` with the table's defaults: its port, and DoH's path and method. */
function standard(transport: TransportId, address: string, serverName?: string): EndpointSpec {
  const { defaultPort, path, method } = TRANSPORTS[transport].url;
  return { transport, address, port: defaultPort, ...(serverName ? { serverName } : {}), ...(path && method ? { path, method } : {}) };
}

function publicResolver(id: string, name: string, address: string, dohName: string, dotName: string): ResolverSpec {
  return {
    id,
    name,
    endpoints: [standard('udp', address), standard('tcp', address), standard('dot', address, dotName), standard('doh', address, dohName), standard('doh1', address, dohName)],
  };
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
