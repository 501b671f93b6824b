// Endpoint URLs (`udp://IP:PORT`, `tcp://IP:PORT`, `tls://NAME:PORT`, `https://NAME:PORT/PATH`, `quic://NAME:PORT`,
// `h3://NAME:PORT/PATH`) ↔ endpoint specs. Each transport declares its URL form (scheme, default port, named host,
// path) in its own file; this module reads the registry and knows no transport by name.
import net from 'node:net';
import { CODES, DnscostError } from '../../common/errors.js';
import type { EndpointSpec } from '../../common/schema.js';
import { TRANSPORTS as TRANSPORT_INFO, type TransportId } from '../../common/transports.js';
import { TRANSPORTS } from './transports/registry.js';
import type { Transport } from './transports/transport.js';

/** Options that turn a URL into a spec: name → IP overrides and the HTTP version for https URLs. */
export interface ParseOptions {
  /** Like curl's --resolve: reach NAME at IP without a DNS lookup. */
  connect?: Map<string, string>;
  http1?: boolean;
  method?: 'GET' | 'POST';
}

function bad(message: string): never {
  throw new DnscostError(CODES.BAD_ENDPOINT, message);
}

/** One transport per scheme, in the registry's order (doh1 shares https with doh). */
function bySchemes(transports: Record<TransportId, Transport>): Transport[] {
  const first = new Map<string, Transport>();
  for (const t of Object.values(transports)) if (!first.has(t.url.scheme)) first.set(t.url.scheme, t);
  return [...first.values()];
}

/** The URL forms the registry's transports take, for hints: `udp://IP:PORT, …, quic://NAME:PORT or h3://NAME:PORT/PATH`. */
function forms(transports: Record<TransportId, Transport>): string {
  const all = bySchemes(transports).map(({ url }) => `${url.scheme}://${url.named ? 'NAME' : 'IP'}:PORT${url.path ? '/PATH' : ''}`);
  return all.length > 1 ? `${all.slice(0, -1).join(', ')} or ${all.at(-1)}` : all.join('');
}

/** Parses an endpoint URL; TLS endpoints named by hostname need an address from `connect`. */
export function parseEndpoint(text: string, options: ParseOptions = {}, transports: Record<TransportId, Transport> = TRANSPORTS): EndpointSpec {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    bad(`${JSON.stringify(text)} is not a URL (try ${forms(transports)})`);
  }
  const scheme = url.protocol.replace(/:$/, '');
  const candidates = Object.values(transports).filter((t) => t.url.scheme === scheme);
  // A scheme two transports share (https) names the one that matches the HTTP version asked for.
  const chosen = candidates.find((t) => (t.url.http1 ?? false) === (options.http1 ?? false)) ?? candidates[0];
  if (!chosen) bad(`unknown scheme ${JSON.stringify(scheme)} in ${text} (${bySchemes(transports).map((t) => t.url.scheme).join(', ')})`);
  const { url: form, id: transport } = chosen;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port ? Number(url.port) : form.defaultPort;
  const address = net.isIP(host) ? host : options.connect?.get(host.toLowerCase());
  if (!address) {
    bad(`${host} in ${text} is not an IP address: give one with --connect ${host}=IP (dnscost never looks up its resolvers' names)`);
  }
  if (!form.named && !net.isIP(host)) bad(`${text}: ${TRANSPORT_INFO[transport].short} endpoints take an IP address`);
  const spec: EndpointSpec = { transport, address, port };
  if (form.named) spec.serverName = host;
  if (form.path) {
    spec.path = url.pathname && url.pathname !== '/' ? url.pathname + url.search : '/dns-query';
    spec.method = options.method ?? 'POST';
  }
  return spec;
}

/** The URL form of an endpoint, as shown everywhere (doh1 shows as https with the version in the transport id). */
export function endpointUrl(e: EndpointSpec, transports: Record<TransportId, Transport> = TRANSPORTS): string {
  const host = e.serverName ?? e.address;
  const h = net.isIPv6(host) ? `[${host}]` : host;
  const form = transports[e.transport].url;
  return `${form.scheme}://${h}:${e.port}${form.path ? (e.path ?? '/dns-query') : ''}`;
}
