// Endpoint URLs (`udp://IP:PORT`, `tcp://IP:PORT`, `tls://NAME:PORT`, `https://NAME:PORT/PATH`, `quic://NAME:PORT`,
// `h3://NAME:PORT/PATH`) ↔ endpoint specs.
import net from 'node:net';
import { CODES, DnscostError } from '../../common/errors.js';
import type { EndpointSpec } from '../../common/schema.js';
import type { TransportId } from '../../common/transports.js';

// DoQ's port is 853 over UDP (RFC 9250 §4.1.1); DoH3's is HTTPS's 443 over UDP.
const DEFAULT_PORTS: Record<string, number> = { udp: 53, tcp: 53, tls: 853, https: 443, quic: 853, h3: 443 };

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

/** Parses an endpoint URL; TLS endpoints named by hostname need an address from `connect`. */
export function parseEndpoint(text: string, options: ParseOptions = {}): EndpointSpec {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    bad(`${JSON.stringify(text)} is not a URL (try udp://IP:PORT, tcp://IP:PORT, tls://NAME:PORT, https://NAME:PORT/PATH, quic://NAME:PORT or h3://NAME:PORT/PATH)`);
  }
  const scheme = url.protocol.replace(/:$/, '');
  const transports: Record<string, TransportId> = { udp: 'udp', tcp: 'tcp', tls: 'dot', https: options.http1 ? 'doh1' : 'doh', quic: 'doq', h3: 'doh3' };
  const transport = transports[scheme];
  if (!transport) bad(`unknown scheme ${JSON.stringify(scheme)} in ${text} (udp, tcp, tls, https, quic, h3)`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port ? Number(url.port) : DEFAULT_PORTS[scheme]!;
  const address = net.isIP(host) ? host : options.connect?.get(host.toLowerCase());
  if (!address) {
    bad(`${host} in ${text} is not an IP address: give one with --connect ${host}=IP (dnscost never looks up its resolvers' names)`);
  }
  if ((transport === 'udp' || transport === 'tcp') && !net.isIP(host)) bad(`${text}: Do53 endpoints take an IP address`);
  const spec: EndpointSpec = { transport, address, port };
  if (transport !== 'udp' && transport !== 'tcp') spec.serverName = host;
  if (transport === 'doh' || transport === 'doh1' || transport === 'doh3') {
    spec.path = url.pathname && url.pathname !== '/' ? url.pathname + url.search : '/dns-query';
    spec.method = options.method ?? 'POST';
  }
  return spec;
}

/** The URL form of an endpoint, as shown everywhere (doh1 shows as https with the version in the transport id). */
export function endpointUrl(e: EndpointSpec): string {
  const host = e.serverName ?? e.address;
  const h = net.isIPv6(host) ? `[${host}]` : host;
  switch (e.transport) {
    case 'udp':
    case 'tcp':
      return `${e.transport}://${h}:${e.port}`;
    case 'dot':
      return `tls://${h}:${e.port}`;
    case 'doh':
    case 'doh1':
      return `https://${h}:${e.port}${e.path ?? '/dns-query'}`;
    case 'doq':
      return `quic://${h}:${e.port}`;
    case 'doh3':
      return `h3://${h}:${e.port}${e.path ?? '/dns-query'}`;
  }
}
