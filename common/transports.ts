// Transports: ids spelled the same in file names, registry keys, the schema and the UI, with what each one is — one
// table, read by the host (which also has one file per transport: native-host/src/transports/), the extension's
// pages and the collector's dashboard (served from this table, not copied).

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
}

/** Every transport dnscost knows, in the order tables list them; `doq` (RFC 9250) and `doh3` run over QUIC. */
export const TRANSPORTS = {
  udp: { name: 'plain DNS over UDP', short: 'Do53/UDP', encrypted: false, quic: false, doh: false },
  tcp: { name: 'plain DNS over TCP', short: 'Do53/TCP', encrypted: false, quic: false, doh: false },
  dot: { name: 'DNS over TLS', short: 'DoT', encrypted: true, quic: false, doh: false },
  doh: { name: 'DNS over HTTPS (HTTP/2)', short: 'DoH', encrypted: true, quic: false, doh: true },
  doh1: { name: 'DNS over HTTPS (HTTP/1.1)', short: 'DoH (HTTP/1.1)', encrypted: true, quic: false, doh: true },
  doq: { name: 'DNS over QUIC', short: 'DoQ', encrypted: true, quic: true, doh: false },
  doh3: { name: 'DNS over HTTPS (HTTP/3)', short: 'DoH3', encrypted: true, quic: true, doh: true },
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
