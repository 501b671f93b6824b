// The result of one DNS exchange: what the native host measures and every other part shows.
import type { ErrorData } from './errors.js';
import type { Mode, QType, TransportId } from './transports.js';

/** Bytes or packets in each direction. */
export interface Pair {
  sent: number;
  received: number;
}

/** Whether a figure was counted (kernel counters, known message sizes) or estimated (a model of what the kernel did). */
export type Provenance = 'counted' | 'estimated';

/** One answer record, in presentation form. */
export interface AnswerData {
  name: string;
  type: string;
  ttl: number;
  data: string;
}

/** Phase timings in milliseconds on one monotonic clock; null where a phase does not apply to this exchange. */
export interface Timings {
  /** TCP three-way handshake (new connections only); null over QUIC, which has no separate connect. */
  connect: number | null;
  /**
   * TLS handshake (new TLS connections only). Over QUIC (doq, doh3) the QUIC handshake, which carries TLS 1.3: until
   * the query could be sent — with 0-RTT that is before the handshake finished.
   */
  tls: number | null;
  /** Query sent → full answer parsed. */
  query: number | null;
  /** Exchange start → end, including any connection set-up this exchange paid for. */
  total: number;
}

/** Negotiated TLS details for exchanges over TLS. */
export interface TlsInfo {
  version: string | null;
  alpn: string | null;
  cipher: string | null;
  resumed: boolean;
  /** QUIC only: the query travelled in 0-RTT early data and the server accepted it. */
  earlyData?: boolean;
}

/** Bytes per protocol layer; a layer that does not apply is null. */
export interface LayerBytes {
  /** DNS messages (with the 2-byte length prefix of TCP, DoT and DoQ). */
  dns: Pair;
  /** HTTP framing: HTTP/2 frames and HPACK headers, or HTTP/1.1 request/status lines and headers. */
  http: Pair | null;
  /** TLS: handshake messages, record headers, AEAD tags, session tickets, alerts. */
  tls: Pair | null;
  /**
   * TCP or UDP headers and IP headers, including segments that carry no data (SYN, ACK, FIN). Over QUIC the rest of
   * the UDP payload (QUIC framing, TLS handshake, HTTP/3, padding, ACKs) is not split further: `http` and `tls` are
   * null and `bytes` minus `dns` minus `headers` is all of it.
   */
  headers: Pair;
}

/** Something a transport did that a proxy would hide: recorded, never smoothed over. */
export interface ExchangeEvent {
  type: 'truncated' | 'connection-opened' | 'connection-closed' | 'session-resumed' | 'goaway' | 'retransmission' | 'early-data';
  detail?: string;
}

/**
 * Where a lookup sat in a replayed page (schedule `replay`). Every time is in ms; `*At` times are on the run's clock
 * (ms since the measurement began), like `startedAt`, so a waterfall can be drawn from records alone.
 */
export interface ReplayInfo {
  /** When this replay of the page started; shared by every lookup of one replay (one repeat × mode × endpoint). */
  pageStartedAt: number;
  /** When the page first needed its host: the offset the lookup was scheduled at, from the page's start. */
  firstNeededMs: number;
  /** When its answer (or failure) arrived: `startedAt + timings.total`. */
  endedAt: number;
  /** How long it waited for a connection another lookup of the page was opening; null when it did not wait. */
  waitedForConnection: number | null;
  /** True for the lookup that opened its connection during the page: its `timings.connect`/`tls` are that set-up. */
  paidSetup: boolean;
  /**
   * Exchanges that shared this lookup's connection during the page (1 for UDP). Above 1 the connection's counted
   * totals are apportioned: `layers.dns` is each exchange's own message bytes, the set-up goes to the lookup that
   * paid it, and the rest (HTTP framing, TLS, headers, packets) is split evenly; `provenance` then says `estimated`.
   * The records of one connection always sum to its counted totals.
   */
  sharedWith: number;
}

/** One record per exchange (one query and its answer, or its failure). */
export interface ExchangeRecord {
  host: string;
  qtype: QType;
  transport: TransportId;
  /** Endpoint URL, e.g. `tls://dns.test:853`. */
  endpoint: string;
  /** Resolver id from the request (e.g. `cloudflare`, `lab`). */
  resolver: string;
  mode: Mode;
  /** 1-based repetition number. */
  repeat: number;
  ok: boolean;
  /** DNS response code name (`NOERROR`, `NXDOMAIN`, …); null when no valid answer arrived. */
  rcode: string | null;
  error: ErrorData | null;
  answers: AnswerData[];
  /**
   * How long a cache may keep the answer (s): the smallest TTL of its answer records, a CNAME chain's included; null
   * when it had none (a failure, NXDOMAIN, no data). Kept when `answers` is not sent (what a cache would save).
   */
  ttl?: number | null;
  timings: Timings;
  /** Start of the exchange in ms since the measurement began (same monotonic clock). */
  startedAt: number;
  /** Wire bytes at IP level; the connection's set-up is counted on its first exchange. */
  bytes: Pair;
  packets: Pair;
  layers: LayerBytes;
  provenance: { bytes: Provenance; packets: Provenance };
  /** True when this exchange used a connection an earlier exchange had opened. */
  reused: boolean;
  /** Connection number within the measurement (null for UDP), so exchanges that shared one can be grouped. */
  connection: number | null;
  tls: TlsInfo | null;
  events: ExchangeEvent[];
  /** Present only when the measurement replayed pages (schedule `replay`). */
  replay?: ReplayInfo;
}
