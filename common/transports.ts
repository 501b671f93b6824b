// Transports: ids spelled the same in file names, registry keys, the schema and the UI, with what each one is and how
// its endpoints are written (scheme, default port, DoH's default path and method) — the one table of transport
// facts, read by the host (which also has one file per transport: native-host/src/transports/), its command line, the
// extension's pages and the collector's dashboard (served from this table, not copied).

/** What a transport is, wherever it runs. */
export interface TransportInfo {
  /** For people, in sentences ("DNS over HTTPS (HTTP/2)"). */
  name: string;
  /** For tables and charts ("DoH"). */
  short: string;
  /** Runs over TLS (or QUIC's TLS): the queries cannot be read on the way. */
  encrypted: boolean;
  /** Runs over QUIC (UDP): no TCP connect phase; the QUIC handshake carries TLS. */
  quic: boolean;
  /** DNS over HTTPS (any HTTP version). */
  doh: boolean;
  /** How its endpoints are written as URLs (`tls://NAME:PORT`) and what an endpoint leaves out defaults to. */
  url: UrlForm;
}

/** A transport's URL form and an endpoint's defaults. */
export interface UrlForm {
  /** The URL scheme; two transports may share one (https: doh, or doh1 when HTTP/1.1 is asked for). */
  scheme: string;
  /** The port when none is given: 53 (RFC 1035), 853 (DoT, RFC 7858; DoQ, RFC 9250), 443 (DoH, RFC 8484). */
  defaultPort: number;
  /** The URL's host is a server name (TLS checks it; the address comes from elsewhere); false: an IP address only. */
  named: boolean;
  /** DoH: the request path when the URL names none (`/dns-query`, RFC 8484's example and the public resolvers'); null: no path. */
  path: string | null;
  /** DoH: the method when none is chosen (POST, as Firefox sends; Chromium sends GET); null: not HTTP. */
  method: 'POST' | 'GET' | null;
  /** Chosen for its scheme only when HTTP/1.1 is asked for (`--http1.1`); the scheme's other transport otherwise. */
  http1: boolean;
}

const plain = (scheme: string): UrlForm => ({ scheme, defaultPort: 53, named: false, path: null, method: null, http1: false });
const tls = (scheme: string): UrlForm => ({ scheme, defaultPort: 853, named: true, path: null, method: null, http1: false });
const https = (scheme: string, http1 = false): UrlForm => ({ scheme, defaultPort: 443, named: true, path: '/dns-query', method: 'POST', http1 });

/** Every transport dnscost knows, in the order tables list them; `doq` (RFC 9250) and `doh3` run over QUIC. */
export const TRANSPORTS = {
  udp: { name: 'plain DNS over UDP', short: 'Do53/UDP', encrypted: false, quic: false, doh: false, url: plain('udp') },
  tcp: { name: 'plain DNS over TCP', short: 'Do53/TCP', encrypted: false, quic: false, doh: false, url: plain('tcp') },
  dot: { name: 'DNS over TLS', short: 'DoT', encrypted: true, quic: false, doh: false, url: tls('tls') },
  doh: { name: 'DNS over HTTPS (HTTP/2)', short: 'DoH', encrypted: true, quic: false, doh: true, url: https('https') },
  // Shown and written as https, like doh: the HTTP version is the transport id's.
  doh1: { name: 'DNS over HTTPS (HTTP/1.1)', short: 'DoH (HTTP/1.1)', encrypted: true, quic: false, doh: true, url: https('https', true) },
  doq: { name: 'DNS over QUIC', short: 'DoQ', encrypted: true, quic: true, doh: false, url: tls('quic') },
  doh3: { name: 'DNS over HTTPS (HTTP/3)', short: 'DoH3', encrypted: true, quic: true, doh: true, url: https('h3') },
} as const satisfies Record<string, TransportInfo>;

/** One of the transports this build can measure. */
export type TransportId = keyof typeof TRANSPORTS;

/** Every transport id, in the table's order. */
export const TRANSPORT_IDS = Object.keys(TRANSPORTS) as [TransportId, ...TransportId[]];

/** Connection state for an exchange: `cold` opens a new connection, `warm` reuses an open one. */
export const MODES = ['cold', 'warm'] as const;
export type Mode = (typeof MODES)[number];

/** True when `value` is a known transport id. */
export function isTransportId(value: unknown): value is TransportId {
  return typeof value === 'string' && Object.hasOwn(TRANSPORTS, value);
}

/** True for transports that run over TLS (or QUIC's TLS). */
export function isEncrypted(t: TransportId): boolean {
  return TRANSPORTS[t].encrypted;
}

/** Record types a lookup may ask, by name; HTTPS is type 65 as browsers ask it. */
export const QTYPES = ['A', 'AAAA', 'HTTPS', 'SVCB', 'CNAME', 'TXT', 'MX', 'NS'] as const;
export type QType = (typeof QTYPES)[number];

/** True when `value` is a record type dnscost will ask. */
export function isQType(value: unknown): value is QType {
  return typeof value === 'string' && (QTYPES as readonly string[]).includes(value);
}
