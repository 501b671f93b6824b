// Transport ids: spelled the same in file names, registry keys, the schema and the UI.

/** Every transport id dnscost knows; `doq` (RFC 9250) and `doh3` (DoH over HTTP/3) run over QUIC. */
export const TRANSPORT_IDS = ['udp', 'tcp', 'dot', 'doh', 'doh1', 'doq', 'doh3'] as const;

/** One of the transports this build can measure. */
export type TransportId = (typeof TRANSPORT_IDS)[number];

/** Connection state for an exchange: `cold` opens a new connection, `warm` reuses an open one. */
export const MODES = ['cold', 'warm'] as const;
export type Mode = (typeof MODES)[number];

/** True when `value` is a known transport id. */
export function isTransportId(value: unknown): value is TransportId {
  return typeof value === 'string' && (TRANSPORT_IDS as readonly string[]).includes(value);
}

/** True for transports that run over TLS. */
export function isEncrypted(t: TransportId): boolean {
  return t === 'dot' || t === 'doh' || t === 'doh1' || t === 'doq' || t === 'doh3';
}

/** True for transports that run over QUIC (UDP): no TCP connect phase, the QUIC handshake carries TLS. */
export function isQuic(t: TransportId): boolean {
  return t === 'doq' || t === 'doh3';
}

/** True for the DNS-over-HTTPS transports (any HTTP version). */
export function isDoh(t: TransportId): boolean {
  return t === 'doh' || t === 'doh1' || t === 'doh3';
}

/** Record types a lookup may ask, by name; HTTPS is type 65 as browsers ask it. */
export const QTYPES = ['A', 'AAAA', 'HTTPS', 'SVCB', 'CNAME', 'TXT', 'MX', 'NS'] as const;
export type QType = (typeof QTYPES)[number];

/** True when `value` is a record type dnscost will ask. */
export function isQType(value: unknown): value is QType {
  return typeof value === 'string' && (QTYPES as readonly string[]).includes(value);
}
