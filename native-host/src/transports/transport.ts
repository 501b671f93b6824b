// The one interface every transport implements. A transport opens sessions (a connection, or for UDP a
// socket per query) and sends one query at a time or several at once; it never retries, falls back or
// reconnects on its own: the engine records what happened instead. It also declares what it is (framing, idle
// lifetime, socket per query, the layers its counters split): the engine reads these, never its id, so a new
// transport is its file, its test, a registry line and its line in common/transports.ts (names, URL form, defaults).
import type { TlsInfo } from '../../../common/record.js';
import type { EndpointSpec } from '../../../common/schema.js';
import type { TransportId } from '../../../common/transports.js';
import type { Clock, WireTotals } from '../dial.js';

/** What opening a session may use. */
export interface OpenOptions {
  timeoutMs: number;
  clock: Clock;
  /** Extra trusted CA (PEM). */
  ca?: string;
  /** TLS session to resume; omitted for a full handshake. */
  tlsSession?: Buffer;
}

/** What the session's set-up cost, in ms; null for phases the transport does not have. */
export interface SetupTimings {
  connect: number | null;
  tls: number | null;
}

/** An event the session noticed by itself (a GOAWAY, the peer closing), reported on the next record. */
export interface SessionEvent {
  type: 'goaway' | 'connection-closed' | 'session-resumed' | 'early-data';
  detail: string;
}

/** One open connection (or UDP socket) to an endpoint. */
export interface Session {
  readonly setup: SetupTimings;
  readonly tls: TlsInfo | null;
  /** False once the peer closed, sent GOAWAY or a fatal error happened: the engine then opens a new one. */
  readonly usable: boolean;
  /**
   * The query phase of the exchange that returned `answer`, as the transport's own clock measured it (the QUIC
   * companion's, without the host↔companion pipe); absent or null when the engine's clock is the measure.
   */
  queryMs?(answer: Buffer): number | null;
  /** Sends one DNS message and resolves with the answer's DNS message bytes; rejects with a DnscostError. */
  exchange(query: Buffer, id: number, timeoutMs: number): Promise<Buffer>;
  /** Cumulative wire totals since the session opened. */
  wire(): WireTotals;
  /** Events since the last call. */
  drainEvents(): SessionEvent[];
  /** A TLS session ticket to resume with later, if the server sent one. */
  resumable(): Buffer | null;
  close(): void;
}

/** Which layers of an exchange's bytes the transport's wire counters tell apart (each becomes a record layer). */
export interface LayerSplit {
  /** TLS records from the plaintext they carry: TCP-based TLS (dot, doh, doh1); QUIC's datagrams are not split. */
  readonly tls: boolean;
  /** HTTP framing from the DNS messages inside it: DoH over TCP (doh, doh1), not doh3, whose counts are QUIC's. */
  readonly http: boolean;
}

/** A DNS transport: one file each, one registry line each. What it is, the engine reads here, never by its id. */
export interface Transport {
  readonly id: TransportId;
  /** DoH uses DNS id 0 (RFC 8484 §4.1) so answers cache well; the others a random id. */
  readonly zeroId: boolean;
  /** Whether queries are padded (RFC 8467) as browsers do on encrypted transports. */
  readonly pad: boolean;
  /** Bytes of framing before each DNS message, counted with it as DNS: 2 for a length prefix (RFC 7766 §8), else 0. */
  readonly lengthPrefix: number;
  /** How long a warm connection may idle before the engine closes it, in ms; null: open until the run ends. */
  readonly idleMs: number | null;
  /**
   * Every query has a socket of its own (UDP): nothing is shared between queries, so records name no connection,
   * a replayed page opens a session per lookup and each lookup's bytes are its socket's own.
   */
  readonly socketPerQuery: boolean;
  /** Which layers the wire counters split: which of a record's `layers.tls` and `layers.http` can be given (else null). */
  readonly splits: LayerSplit;
  open(endpoint: EndpointSpec, options: OpenOptions): Promise<Session>;
  /** Why this transport cannot run in this installation (e.g. a missing companion), or null; absent: always can. */
  unavailable?(): string | null;
  /** Loads what the transport needs (a companion process, a trust store) before any clock runs; never throws. */
  prepare?(options: { ca?: string }): Promise<void>;
}
