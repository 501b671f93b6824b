// Endpoint URLs (`udp://IP:PORT`, `tcp://IP:PORT`, `tls://NAME:PORT`, `https://NAME:PORT/PATH`, `quic://NAME:PORT`,
// `h3://NAME:PORT/PATH`) ↔ endpoint specs. Each transport's URL form (scheme, default port, named host, DoH's path
// and method) is its line in common/transports.ts; this module reads that table and knows no transport by name.
import net from 'node:net';
import { CODES, DnscostError } from '../../common/errors.js';
import type { EndpointSpec } from '../../common/schema.js';
import { TRANSPORT_IDS, TRANSPORTS, type TransportId } from '../../common/transports.js';

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

/** One transport per scheme, in the table's order (doh1 shares https with doh). */
function bySchemes(): TransportId[] {
  const first = new Map<string, TransportId>();
  for (const id of TRANSPORT_IDS) if (!first.has(TRANSPORTS[id].url.scheme)) first.set(TRANSPORTS[id].url.scheme, id);
  return [...first.values()];
}

/** The URL forms there are, for hints: `udp://IP:PORT, …, quic://NAME:PORT or h3://NAME:PORT/PATH`. */
function forms(): string {
  const all = bySchemes().map((id) => TRANSPORTS[id].url).map((u) => `${u.scheme}://${u.named ? 'NAME' : 'IP'}:PORT${u.path ? '/PATH' : ''}`);
  return all.length > 1 ? `${all.slice(0, -1).join(', ')} or ${all.at(-1)}` : all.join('');
}

/** Parses an endpoint URL; TLS endpoints named by hostname need an address from `connect`. */
export function parseEndpoint(text: string, options: ParseOptions = {}): EndpointSpec {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    bad(`${JSON.stringify(text)} is not a URL (try ${forms()})`);
  }
  const scheme = url.protocol.replace(/:$/, '');
  const candidates = TRANSPORT_IDS.filter((id) => TRANSPORTS[id].url.scheme === scheme);
  // A scheme two transports share (https) names the one that matches the HTTP version asked for.
  const transport = candidates.find((id) => TRANSPORTS[id].url.http1 === (options.http1 ?? false)) ?? candidates[0];
  if (!transport) bad(`unknown scheme ${JSON.stringify(scheme)} in ${text} (${bySchemes().map((id) => TRANSPORTS[id].url.scheme).join(', ')})`);
  const form = TRANSPORTS[transport].url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port ? Number(url.port) : form.defaultPort;
  const address = net.isIP(host) ? host : options.connect?.get(host.toLowerCase());
  if (!address) {
    bad(`${host} in ${text} is not an IP address: give one with --connect ${host}=IP (dnscost never looks up its resolvers' names)`);
  }
  if (!form.named && !net.isIP(host)) bad(`${text}: ${TRANSPORTS[transport].short} endpoints take an IP address`);
  const spec: EndpointSpec = { transport, address, port };
  if (form.named) spec.serverName = host;
  if (form.path) {
    spec.path = url.pathname && url.pathname !== '/' ? url.pathname + url.search : form.path;
    spec.method = options.method ?? form.method ?? 'POST';
  }
  return spec;
}

/** The URL form of an endpoint, as shown everywhere (doh1 shows as https with the version in the transport id). */
export function endpointUrl(e: EndpointSpec): string {
  const host = e.serverName ?? e.address;
  const h = net.isIPv6(host) ? `[${host}]` : host;
  const form = TRANSPORTS[e.transport].url;
  return `${form.scheme}://${h}:${e.port}${form.path ? (e.path ?? form.path) : ''}`;
}
