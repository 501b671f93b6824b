// What `doq` and `doh3` share: a session whose QUIC connection lives in the companion process (quic-companion.ts).
// The companion times the handshake and the query on its monotonic clock and counts every UDP datagram; this file
// turns its replies into the Session interface, so the engine treats QUIC like any other transport.
import { CODES, DnscostError, type ErrorCode } from '../../../common/errors.js';
import type { TlsInfo } from '../../../common/record.js';
import type { EndpointSpec } from '../../../common/schema.js';
import { TRANSPORTS as INFO } from '../../../common/transports.js';
import type { SetupFailure, WireTotals } from '../dial.js';
import type { QuicCompanion } from './quic-companion.js';
import type { CompanionTls, CompanionWire, QuicTransportId } from './quic-protocol.js';
import type { OpenOptions, Session, SessionEvent, SetupTimings, Transport } from './transport.js';

/** Wire totals from the companion's counters: counted per datagram; QUIC's payload is not split into TLS and HTTP. */
export function quicTotals(w: Omit<CompanionWire, 'at' | 'readAt'> | undefined): WireTotals {
  const zero = { sent: 0, received: 0 };
  return {
    bytes: { ...(w?.bytes ?? zero) },
    packets: { ...(w?.packets ?? zero) },
    payload: { ...(w?.payload ?? zero) },
    plain: null,
    dns: { ...(w?.dns ?? zero) },
    provenance: { bytes: 'counted', packets: 'counted' },
  };
}

function tlsInfo(t: CompanionTls): TlsInfo {
  return { version: t.version, alpn: t.alpn, cipher: t.cipher, resumed: t.resumed, earlyData: t.earlyData };
}

/** One QUIC connection held by the companion. */
class QuicSession implements Session {
  readonly setup: SetupTimings;
  private info: CompanionTls;
  private totals: WireTotals;
  private events: SessionEvent[] = [];
  private closedReason: DnscostError | null = null;
  private ticket = false;
  private readonly queryTimes = new WeakMap<Buffer, number>();
  private early: boolean;
  private reportedResumed: boolean;

  constructor(
    private readonly companion: QuicCompanion,
    private readonly conn: number,
    handshakeMs: number,
    early: boolean,
    info: CompanionTls,
    wire: CompanionWire,
  ) {
    // QUIC has no separate connect: its handshake is the transport's and TLS's at once.
    this.setup = { connect: null, tls: handshakeMs };
    this.info = info;
    this.totals = quicTotals(wire);
    this.early = early;
    this.reportedResumed = info.complete && info.resumed;
    companion.onClosed(conn, (detail) => {
      this.closedReason ??= new DnscostError(CODES.CONNECTION_CLOSED, `QUIC connection closed: ${detail}`);
      this.events.push({ type: 'connection-closed', detail });
    });
  }

  get tls(): TlsInfo {
    return tlsInfo(this.info);
  }

  get usable(): boolean {
    return this.closedReason === null;
  }

  queryMs(answer: Buffer): number | null {
    return this.queryTimes.get(answer) ?? null;
  }

  async exchange(query: Buffer, _id: number, timeoutMs: number): Promise<Buffer> {
    if (this.closedReason) throw this.closedReason;
    const reply = await this.companion.request({ type: 'exchange', conn: this.conn, query: query.toString('base64'), timeoutMs: Math.max(1, Math.round(timeoutMs)) }, timeoutMs);
    if (reply.type === 'answer' || reply.type === 'error') {
      if (reply.wire) this.totals = quicTotals(reply.wire);
      if (reply.tls) this.noteTls(reply.tls);
    }
    if (reply.type === 'answer') {
      this.ticket = reply.ticket;
      const answer = Buffer.from(reply.answer, 'base64');
      this.queryTimes.set(answer, reply.queryMs);
      return answer;
    }
    if (reply.type === 'error') {
      const err = new DnscostError(reply.code, reply.message);
      if (reply.code === CODES.CONNECTION_CLOSED) this.closedReason ??= err;
      throw err;
    }
    throw new DnscostError(CODES.INTERNAL, `the QUIC companion answered an exchange with ${reply.type}`);
  }

  /** Tells what an early (0-RTT) connection's handshake turned out to be, once, on the exchange that learnt it. */
  private noteTls(t: CompanionTls): void {
    this.info = t;
    if (!t.complete) return;
    if (t.resumed && !this.reportedResumed) {
      this.reportedResumed = true;
      this.events.push({ type: 'session-resumed', detail: 'the QUIC handshake resumed a previous TLS session' });
    }
    if (this.early) {
      this.early = false;
      this.events.push({
        type: 'early-data',
        detail: t.earlyData ? 'the query was sent in 0-RTT and the server accepted it' : 'the server rejected 0-RTT: the query was sent again after the handshake',
      });
    }
  }

  wire(): WireTotals {
    return quicTotals(this.totals);
  }

  drainEvents(): SessionEvent[] {
    const out = this.events;
    this.events = [];
    return out;
  }

  resumable(): Buffer | null {
    // The ticket stays in the companion; the host only remembers which connection received it.
    return this.ticket ? Buffer.from(String(this.conn)) : null;
  }

  close(): void {
    this.closedReason ??= new DnscostError(CODES.CONNECTION_CLOSED, 'closed by dnscost');
    this.companion.onClosed(this.conn, null);
    this.companion.request({ type: 'close', conn: this.conn }, 5000).catch(() => {});
  }
}

/** What a QUIC transport declares in its own file (`doq.ts`, `doh3.ts`); the rest is QUIC's, given here. */
export interface QuicKind {
  readonly id: QuicTransportId;
  readonly lengthPrefix: Transport['lengthPrefix'];
  /** Whether its queries are padded (Transport['pad']). */
  readonly pad: boolean;
}

/** A transport over QUIC through `companion`; `doq.ts` and `doh3.ts` declare their kind on top of it. */
export function quicTransport(kind: QuicKind, companion: () => QuicCompanion): Transport {
  const { id } = kind;
  return {
    id,
    // RFC 9250 §4.2.1 (DoQ) and RFC 8484 §4.1 (DoH) both want DNS id 0.
    zeroId: true,
    pad: kind.pad,
    lengthPrefix: kind.lengthPrefix,
    idleMs: null,
    socketPerQuery: false,
    // The companion counts datagrams: what QUIC carries is not split into TLS and HTTP (see quicTotals).
    splits: { tls: false, http: false },
    unavailable: () => companion().unavailable(),
    prepare: (options) => companion().prepare(options.ca),
    async open(endpoint: EndpointSpec, options: OpenOptions): Promise<Session> {
      const c = companion();
      const why = c.unavailable();
      if (why) throw new DnscostError(CODES.TRANSPORT_UNAVAILABLE, why);
      const resumeFrom = options.tlsSession ? Number(options.tlsSession.toString()) : undefined;
      const reply = await c.request(
        {
          type: 'open',
          transport: id,
          address: endpoint.address,
          port: endpoint.port,
          ...(endpoint.serverName ? { serverName: endpoint.serverName } : {}),
          ...(INFO[id].url.path ? { path: endpoint.path ?? INFO[id].url.path, method: endpoint.method ?? INFO[id].url.method ?? 'POST' } : {}),
          ...(options.ca ? { ca: options.ca } : {}),
          timeoutMs: Math.max(1, Math.round(options.timeoutMs)),
          ...(resumeFrom !== undefined && Number.isInteger(resumeFrom) && resumeFrom > 0 ? { resumeFrom } : {}),
        },
        options.timeoutMs,
      );
      if (reply.type === 'opened') return new QuicSession(c, reply.conn, reply.handshakeMs, reply.early, reply.tls, reply.wire);
      const code: ErrorCode = reply.type === 'error' ? reply.code : CODES.INTERNAL;
      const failure: SetupFailure = new DnscostError(code, reply.type === 'error' ? reply.message : `the QUIC companion answered open with ${reply.type}`);
      failure.wire = quicTotals(reply.type === 'error' ? reply.wire : undefined);
      failure.setup = { connect: null, tls: reply.type === 'error' ? (reply.handshakeMs ?? null) : null };
      throw failure;
    },
  };
}
