// The sessions of one measurement. Lifecycle: a SessionPool is created when a measurement starts (that instant is
// the origin of its records' times) and opens every session the run uses, numbering connections as they open. It
// keeps one warm session per endpoint: opened untimed, parked between exchanges, closed after the transport's idle
// time if it declares one (DoT's 10 s, as stub resolvers do), replaced when it died. It remembers each endpoint's
// latest TLS ticket for `resume`. closeAll() ends the warm sessions when the run ends or is cancelled.
import type { ExchangeEvent } from '../../../common/record.js';
import type { Clock, WireTotals } from '../dial.js';
import type { Session } from '../transports/transport.js';
import type { MeasuredEndpoint } from './endpoint.js';

/** A warm session and what the engine knows about it. */
export interface Pooled {
  session: Session;
  connection: number;
  exchanges: number;
  idleTimer: NodeJS.Timeout | null;
  /** Counters at the previous record's snapshot: the next record starts there, so nothing between two is lost. */
  snapshot: WireTotals | null;
  /** Counters right after the (untimed) set-up: what a replay charges to the connection's first exchange. */
  opened: WireTotals;
}

/** One measurement's clock origin and limits, warm sessions, TLS tickets and connection numbering. */
export class SessionPool {
  /** The clock's reading when the measurement started: records' `startedAt` count from it. */
  readonly origin: number;
  private readonly pool = new Map<string, Pooled>();
  private readonly tickets = new Map<string, Buffer>();
  private connections = 0;

  constructor(
    readonly clock: Clock,
    /** What one exchange may take, set-up included. */
    readonly timeoutMs: number,
    private readonly resume: boolean,
  ) {
    this.origin = clock();
  }

  private key(target: MeasuredEndpoint): string {
    // doh and doh1 share a URL: the transport keeps their pooled connections (and tickets) apart.
    return `${target.resolver.id} ${target.transport.id} ${target.url}`;
  }

  /** The number of a connection opening now; records name their connection by it. */
  nextConnection(): number {
    return ++this.connections;
  }

  /** Starts the numbering again: the warm-up's connections are not the measurement's. */
  restartNumbering(): void {
    this.connections = 0;
  }

  /** The warm session of `target`, if one was opened (alive or not). */
  pooled(target: MeasuredEndpoint): Pooled | undefined {
    return this.pool.get(this.key(target));
  }

  /** Opens a session to `target`, resuming its last TLS session when the run resumes. */
  async open(target: MeasuredEndpoint): Promise<Session> {
    const ticket = this.resume ? this.tickets.get(this.key(target)) : undefined;
    return target.transport.open(target.endpoint, {
      timeoutMs: this.timeoutMs,
      clock: this.clock,
      ca: target.resolver.ca,
      tlsSession: ticket,
    });
  }

  /** Keeps the session's TLS ticket, if it has one, for the endpoint's next cold connection (a run that resumes only). */
  remember(target: MeasuredEndpoint, session: Session): void {
    if (!this.resume) return;
    const ticket = session.resumable();
    if (ticket) this.tickets.set(this.key(target), ticket);
  }

  /** A usable warm session for `target`, opened (untimed) when there is none or the last one died. */
  async warm(target: MeasuredEndpoint, events: ExchangeEvent[]): Promise<Pooled> {
    const key = this.key(target);
    const pooled = this.pool.get(key);
    if (pooled?.session.usable) {
      if (pooled.idleTimer) clearTimeout(pooled.idleTimer);
      return pooled;
    }
    if (pooled) {
      for (const e of pooled.session.drainEvents()) events.push(e);
      this.remember(target, pooled.session);
      pooled.session.close();
      this.pool.delete(key);
    }
    const session = await this.open(target);
    const fresh: Pooled = { session, connection: this.nextConnection(), exchanges: 0, idleTimer: null, snapshot: null, opened: session.wire() };
    this.pool.set(key, fresh);
    events.push({ type: 'connection-opened', detail: pooled ? 'the previous connection had closed' : 'warm-up, before timing' });
    return fresh;
  }

  /** Puts a warm session back after use; it closes after the transport's idle time, if it declares one. */
  park(target: MeasuredEndpoint, pooled: Pooled): void {
    const idleMs = target.transport.idleMs;
    if (idleMs === null) return;
    pooled.idleTimer = setTimeout(() => {
      pooled.session.close();
      if (this.pool.get(this.key(target)) === pooled) this.pool.delete(this.key(target));
    }, idleMs);
    pooled.idleTimer.unref();
  }

  /** Closes every warm session. */
  closeAll(): void {
    for (const p of this.pool.values()) {
      if (p.idleTimer) clearTimeout(p.idleTimer);
      p.session.close();
    }
    this.pool.clear();
  }
}
