// Transport ids: spelled the same in file names, registry keys, the schema and the UI.

/** Every transport id dnscost knows; `doq` and `doh3` are reserved for the QUIC issue. */
export const TRANSPORT_IDS = ['udp', 'tcp', 'dot', 'doh', 'doh1'] as const;

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
  return t === 'dot' || t === 'doh' || t === 'doh1';
}

/** Record types a lookup may ask, by name; HTTPS is type 65 as browsers ask it. */
export const QTYPES = ['A', 'AAAA', 'HTTPS', 'SVCB', 'CNAME', 'TXT', 'MX', 'NS'] as const;
export type QType = (typeof QTYPES)[number];

/** True when `value` is a record type dnscost will ask. */
export function isQType(value: unknown): value is QType {
  return typeof value === 'string' && (QTYPES as readonly string[]).includes(value);
}
