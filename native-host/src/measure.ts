// The measurement engine: plans exchanges from a request, runs them one at a time on one monotonic clock, and
// turns each into an ExchangeRecord. Lifecycle: a Measurement owns its warm sessions (one per endpoint); they
// are closed when the run ends, is cancelled, or (DoT) after 10 s idle, as stub resolvers do.
import { DnscostError, ERROR_CODES, toErrorData, type ErrorData } from '../../common/errors.js';
import { normalizeHostname } from '../../common/hostname.js';
import type { ExchangeEvent, ExchangeRecord, Pair } from '../../common/record.js';
import type { EndpointSpec, MeasureRequest, ResolverSpec, SummaryRow } from '../../common/schema.js';
import { seededRandom, shuffled, summarize } from '../../common/stats.js';
import { isEncrypted, type Mode, type QType, type TransportId } from '../../common/transports.js';
import { monotonic, secureContextFor, zeroTotals, type Clock, type SetupFailure, type WireTotals } from './dial.js';
import { encodeQuery, parseAnswer, randomId, rcodeError, type Question } from './dns-wire.js';
import { endpointUrl } from './endpoints.js';
import { TRANSPORTS } from './transports/registry.js';
import type { Session, Transport } from './transports/transport.js';

/** Default time one exchange may take, set-up included. */
export const DEFAULT_TIMEOUT_MS = 5000;
/** Idle timeout of a warm DoT connection (RFC 7858 §3.4; stubs such as stubby use 10 s). */
export const DOT_IDLE_MS = 10_000;

/** One endpoint of one resolver, as the engine runs it. */
export interface Target {
  resolver: ResolverSpec;
  endpoint: EndpointSpec;
  url: string;
  transport: Transport;
}

/** What the engine reports while it runs. */
export interface MeasureCallbacks {
  onRecord?(record: ExchangeRecord): void;
  onProgress?(done: number, total: number): void;
}

/** Dependencies, replaceable in tests. */
export interface MeasureDeps {
  clock: Clock;
  transports: Record<TransportId, Transport>;
}

/** The outcome of a whole measurement. */
export interface MeasureResult {
  seed: number;
  primed: boolean;
  warmedUp: boolean;
  order: string[];
  records: ExchangeRecord[];
  summary: SummaryRow[];
  cancelled: boolean;
}

const ZERO: WireTotals = zeroTotals();

const minus = (a: Pair, b: Pair): Pair => ({ sent: a.sent - b.sent, received: a.received - b.received });

/** Every (resolver, endpoint) pair a request names, filtered to the requested transports. */
export function targetsOf(req: Pick<MeasureRequest, 'resolvers' | 'transports'>, transports = TRANSPORTS): Target[] {
  const out: Target[] = [];
  for (const resolver of req.resolvers) {
    for (const endpoint of resolver.endpoints) {
      if (req.transports && !req.transports.includes(endpoint.transport)) continue;
      out.push({ resolver, endpoint, url: endpointUrl(endpoint), transport: transports[endpoint.transport] });
    }
  }
  return out;
}

/** A warm session and what the engine knows about it. */
interface Pooled {
  session: Session;
  connection: number;
  exchanges: number;
  idleTimer: NodeJS.Timeout | null;
  /** Counters at the previous record's snapshot: the next record starts there, so nothing between two is lost. */
  snapshot: WireTotals | null;
}

/** Runs a measure request to the end (or until `signal` aborts), calling back with every record. */
export async function measure(
  req: MeasureRequest,
  callbacks: MeasureCallbacks = {},
  signal?: AbortSignal,
  deps: MeasureDeps = { clock: monotonic, transports: TRANSPORTS },
): Promise<MeasureResult> {
  const hosts = req.hosts.map((h) => normalizeHostname(typeof h === 'string' ? h : h.name));
  const targets = targetsOf(req, deps.transports);
  if (targets.length === 0) throw new DnscostError(ERROR_CODES.BAD_REQUEST, 'no endpoint matches the requested transports');
  const qtypes: QType[] = req.qtypes ?? ['A'];
  const modes: Mode[] = req.modes ?? ['cold'];
  const repeat = req.repeat ?? 1;
  const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const seed = req.seed ?? Math.floor(Math.random() * 0x100000000);
  const random = seededRandom(seed);
  // Build TLS contexts before any clock starts: that is set-up of dnscost, not of the connection.
  for (const t of targets) if (isEncrypted(t.transport.id)) secureContextFor(t.resolver.ca);
  const run = new Run(deps, timeoutMs, req.resume ?? false);
  const records: ExchangeRecord[] = [];
  const total = hosts.length * qtypes.length * modes.length * repeat * targets.length;
  let done = 0;
  let order: string[] = [];
  let cancelled = false;
  try {
    if (req.prime) await run.prime(hosts, qtypes, targets, signal);
    if (req.warmup !== false) await run.warmup({ name: hosts[0]!, qtype: qtypes[0]! }, targets, signal);
    outer: for (let r = 1; r <= repeat; r++) {
      for (const mode of modes) {
        for (const host of hosts) {
          for (const qtype of qtypes) {
            // Shuffled per round so no transport always asks second, after another filled the cache.
            const round = shuffled(targets, random);
            if (order.length === 0) order = round.map((t) => `${t.resolver.id} ${t.url}`);
            for (const target of round) {
              if (signal?.aborted) {
                cancelled = true;
                break outer;
              }
              const record = await run.exchange(target, { name: host, qtype }, mode, r);
              records.push(record);
              callbacks.onRecord?.(record);
              callbacks.onProgress?.(++done, total);
            }
          }
        }
      }
    }
  } finally {
    run.closeAll();
  }
  return { seed, primed: req.prime ?? false, warmedUp: req.warmup !== false, order, records, summary: summarizeRecords(records), cancelled };
}

/** State of one measurement: the clock origin, warm sessions, TLS tickets, connection numbering. */
class Run {
  private readonly origin: number;
  private readonly pool = new Map<string, Pooled>();
  private readonly tickets = new Map<string, Buffer>();
  private connections = 0;

  constructor(
    private readonly deps: MeasureDeps,
    private readonly timeoutMs: number,
    private readonly resume: boolean,
  ) {
    this.origin = deps.clock();
  }

  /** Asks every name once per resolver (over its first endpoint) so no measured exchange fills the cache. */
  async prime(hosts: string[], qtypes: QType[], targets: Target[], signal?: AbortSignal): Promise<void> {
    const first = new Map<string, Target>();
    for (const t of targets) if (!first.has(t.resolver.id)) first.set(t.resolver.id, t);
    for (const target of first.values()) {
      for (const host of hosts) {
        for (const qtype of qtypes) {
          if (signal?.aborted) return;
          await this.exchange(target, { name: host, qtype }, 'warm', 0);
        }
      }
    }
    this.closeAll();
  }

  /** One cold exchange per endpoint, discarded: loads and compiles each transport's code before any clock runs. */
  async warmup(q: Question, targets: Target[], signal?: AbortSignal): Promise<void> {
    for (const target of targets) {
      if (signal?.aborted) return;
      await this.exchange(target, q, 'cold', 0);
    }
    this.connections = 0;
  }

  private key(target: Target): string {
    // doh and doh1 share a URL: the transport keeps their pooled connections (and tickets) apart.
    return `${target.resolver.id} ${target.transport.id} ${target.url}`;
  }

  private async open(target: Target): Promise<Session> {
    const ticket = this.resume ? this.tickets.get(this.key(target)) : undefined;
    return target.transport.open(target.endpoint, {
      timeoutMs: this.timeoutMs,
      clock: this.deps.clock,
      ca: target.resolver.ca,
      tlsSession: ticket,
    });
  }

  private remember(target: Target, session: Session): void {
    const ticket = session.resumable();
    if (ticket) this.tickets.set(this.key(target), ticket);
  }

  /** A usable warm session for `target`, opened (untimed) when there is none or the last one died. */
  private async warm(target: Target, events: ExchangeEvent[]): Promise<Pooled> {
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
    const fresh: Pooled = { session, connection: ++this.connections, exchanges: 0, idleTimer: null, snapshot: null };
    this.pool.set(key, fresh);
    events.push({ type: 'connection-opened', detail: pooled ? 'the previous connection had closed' : 'warm-up, before timing' });
    return fresh;
  }

  private park(target: Target, pooled: Pooled): void {
    if (target.transport.id !== 'dot') return;
    pooled.idleTimer = setTimeout(() => {
      pooled.session.close();
      if (this.pool.get(this.key(target)) === pooled) this.pool.delete(this.key(target));
    }, DOT_IDLE_MS);
    pooled.idleTimer.unref();
  }

  /** Runs one exchange and builds its record; never throws for a failure of the exchange itself. */
  async exchange(target: Target, q: Question, mode: Mode, repeat: number): Promise<ExchangeRecord> {
    const clock = this.deps.clock;
    const transport = target.transport;
    const events: ExchangeEvent[] = [];
    const id = transport.zeroId ? 0 : randomId();
    const query = encodeQuery(q, id, transport.pad);
    // The first warm exchange on an endpoint opens its connection before the clock starts: "warm" means open.
    let warmupError: unknown = null;
    if (mode === 'warm' && !this.pool.has(this.key(target))) {
      await this.warm(target, events).catch((err: unknown) => (warmupError = err));
    }
    const start = clock();
    let session: Session | null = null;
    let pooled: Pooled | null = null;
    let connection: number | null = null;
    let before = ZERO;
    let reused = false;
    let setupPaid = false;
    let queryMs: number | null = null;
    let error: ErrorData | null = null;
    let answer: ReturnType<typeof parseAnswer> | null = null;
    let failedSetup: SetupFailure | null = null;
    try {
      if (warmupError) throw warmupError;
      if (mode === 'warm') {
        // A warm exchange pays for a connection only when the pooled one had died since.
        setupPaid = !(this.pool.get(this.key(target))?.session.usable ?? false);
        pooled = await this.warm(target, events);
        session = pooled.session;
        connection = pooled.connection;
        reused = pooled.exchanges > 0;
        // Everything since the previous record on this connection (a delayed ACK, a late server frame) is this one's.
        if (reused) before = pooled.snapshot ?? session.wire();
      } else {
        session = await this.open(target);
        connection = ++this.connections;
        events.push({ type: 'connection-opened' });
      }
      if (session.tls?.resumed) events.push({ type: 'session-resumed' });
      const remaining = this.timeoutMs - (clock() - start);
      if (remaining <= 0) throw new DnscostError(ERROR_CODES.TIMEOUT, `set-up used the whole ${this.timeoutMs} ms`);
      const qStart = clock();
      const raw = await session.exchange(query, id, remaining);
      queryMs = clock() - qStart;
      answer = parseAnswer(raw, q, id);
      if (answer.truncated) {
        events.push({ type: 'truncated', detail: 'TC bit set; dnscost does not fall back to TCP by itself' });
        error = { code: ERROR_CODES.TRUNCATED, message: 'answer truncated (TC=1)' };
      } else {
        const code = rcodeError(answer.rcode);
        if (code) error = { code, message: `resolver answered ${answer.rcode}` };
      }
    } catch (err) {
      error = toErrorData(err);
      failedSetup = err as SetupFailure;
    }
    const end = clock();
    const after = session ? session.wire() : (failedSetup?.wire ?? ZERO);
    if (session) {
      for (const e of session.drainEvents()) events.push(e);
      this.remember(target, session);
    }
    if (mode === 'cold') session?.close();
    else if (pooled) {
      pooled.exchanges += 1;
      pooled.snapshot = after;
      this.park(target, pooled);
    }
    const delta: WireTotals = {
      bytes: minus(after.bytes, before.bytes),
      packets: minus(after.packets, before.packets),
      payload: minus(after.payload, before.payload),
      plain: after.plain ? minus(after.plain, before.plain ?? ZERO.payload) : null,
      dns: minus(after.dns, before.dns),
      provenance: after.provenance,
    };
    const showSetup = mode === 'cold' || setupPaid;
    return {
      host: q.name,
      qtype: q.qtype,
      transport: transport.id,
      endpoint: target.url,
      resolver: target.resolver.id,
      mode,
      repeat,
      ok: error === null,
      rcode: answer?.rcode ?? null,
      error,
      answers: answer?.answers ?? [],
      timings: {
        connect: showSetup ? (session?.setup.connect ?? failedSetup?.setup?.connect ?? null) : null,
        tls: showSetup ? (session?.setup.tls ?? failedSetup?.setup?.tls ?? null) : null,
        query: queryMs,
        total: end - start,
      },
      startedAt: start - this.origin,
      bytes: delta.bytes,
      packets: delta.packets,
      layers: {
        dns: delta.dns,
        http: transport.id === 'doh' || transport.id === 'doh1' ? (delta.plain ? minus(delta.plain, delta.dns) : null) : null,
        tls: delta.plain ? minus(delta.payload, delta.plain) : null,
        headers: minus(delta.bytes, delta.payload),
      },
      provenance: session || failedSetup?.wire ? delta.provenance : { bytes: 'estimated', packets: 'estimated' },
      reused,
      connection: transport.id === 'udp' ? null : connection,
      tls: session?.tls ?? null,
      events,
    };
  }

  closeAll(): void {
    for (const p of this.pool.values()) {
      if (p.idleTimer) clearTimeout(p.idleTimer);
      p.session.close();
    }
    this.pool.clear();
  }
}

/** Groups records by (resolver, endpoint, mode, qtype) and summarises each group. */
export function summarizeRecords(records: readonly ExchangeRecord[]): SummaryRow[] {
  const groups = new Map<string, ExchangeRecord[]>();
  for (const r of records) {
    const key = [r.resolver, r.endpoint, r.transport, r.mode, r.qtype].join('|');
    const list = groups.get(key);
    if (list) list.push(r);
    else groups.set(key, [r]);
  }
  return [...groups.values()].map((list) => {
    const first = list[0]!;
    const ok = list.filter((r) => r.ok);
    return {
      resolver: first.resolver,
      endpoint: first.endpoint,
      transport: first.transport,
      mode: first.mode,
      qtype: first.qtype,
      total: summarize(ok.map((r) => r.timings.total)),
      query: summarize(ok.map((r) => r.timings.query ?? NaN)),
      ok: ok.length,
      failed: list.length - ok.length,
      bytesPerExchange: summarize(list.map((r) => r.bytes.sent + r.bytes.received)),
    };
  });
}
