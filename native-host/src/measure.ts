// The measurement engine: plans exchanges from a request, runs them on one monotonic clock — one at a time
// (schedule `sequential`) or as a page asked for them (`replay`: every lookup at its offset, concurrently, on one
// connection per endpoint) — and turns each into an ExchangeRecord. Lifecycle: a Measurement owns its warm sessions
// (one per endpoint); they are closed when the run ends, is cancelled, or (DoT) after 10 s idle, as stub resolvers
// do. A replay's cold connections live for that replay only.
import { CODES, DnscostError, toErrorData, type ErrorData } from '../../common/errors.js';
import { normalizeHostname } from '../../common/hostname.js';
import type { ExchangeEvent, ExchangeRecord, Pair, Provenance } from '../../common/record.js';
import type { EndpointSpec, MeasureRequest, ResolverSpec, SummaryRow, UnavailableEndpoint } from '../../common/schema.js';
import { seededRandom, shuffled, summarize } from '../../common/stats.js';
import { isEncrypted, type Mode, type QType, type TransportId } from '../../common/transports.js';
import { deadline, monotonic, secureContextFor, zeroTotals, type Clock, type SetupFailure, type WireTotals } from './dial.js';
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
  /** Waits about `ms` (replay's schedule); setTimeout by default. */
  sleep?: (ms: number) => Promise<void>;
}

/** One lookup of a replayed page: a host, a record type and when the page first needed the host (ms). */
export interface Lookup {
  name: string;
  qtype: QType;
  at: number;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The outcome of a whole measurement. */
export interface MeasureResult {
  seed: number;
  primed: boolean;
  warmedUp: boolean;
  order: string[];
  records: ExchangeRecord[];
  summary: SummaryRow[];
  cancelled: boolean;
  /** Endpoints whose transport cannot run in this installation: left out of the run, not counted as failures. */
  unavailable: UnavailableEndpoint[];
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
  /** Counters right after the (untimed) set-up: what a replay charges to the connection's first exchange. */
  opened: WireTotals;
}

/** Runs a measure request to the end (or until `signal` aborts), calling back with every record. */
export async function measure(
  req: MeasureRequest,
  callbacks: MeasureCallbacks = {},
  signal?: AbortSignal,
  deps: MeasureDeps = { clock: monotonic, transports: TRANSPORTS },
): Promise<MeasureResult> {
  const plan = req.hosts.map((h) => ({ name: normalizeHostname(typeof h === 'string' ? h : h.name), at: typeof h === 'string' ? 0 : (h.at ?? 0) }));
  const hosts = plan.map((h) => h.name);
  const candidates = targetsOf(req, deps.transports);
  if (candidates.length === 0) throw new DnscostError(CODES.BAD_REQUEST, 'no endpoint matches the requested transports');
  // Companions and trust stores load before any clock runs; then what cannot run here is set aside, not failed.
  for (const t of candidates) await t.transport.prepare?.({ ca: t.resolver.ca });
  const unavailable: UnavailableEndpoint[] = [];
  const targets = candidates.filter((t) => {
    const why = t.transport.unavailable?.() ?? null;
    if (why) unavailable.push({ resolver: t.resolver.id, endpoint: t.url, transport: t.transport.id, code: CODES.TRANSPORT_UNAVAILABLE, message: why });
    return !why;
  });
  if (targets.length === 0) {
    throw new DnscostError(CODES.TRANSPORT_UNAVAILABLE, `no requested endpoint can run here: ${[...new Set(unavailable.map((u) => u.message))].join('; ')}`);
  }
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
    if (req.schedule === 'replay') {
      // A browser asks a host's record types together, in the order it first needed the hosts.
      const lookups: Lookup[] = plan.flatMap((h) => qtypes.map((qtype) => ({ name: h.name, qtype, at: h.at }))).sort((a, b) => a.at - b.at);
      replay: for (let r = 1; r <= repeat; r++) {
        for (const mode of modes) {
          // Endpoints in a seeded shuffled order, one endpoint's page at a time (the cache-fairness of sequential).
          const round = shuffled(targets, random);
          if (order.length === 0) order = round.map((t) => `${t.resolver.id} ${t.url}`);
          for (const target of round) {
            if (signal?.aborted) {
              cancelled = true;
              break replay;
            }
            for (const record of await run.replay(target, lookups, mode, r)) {
              records.push(record);
              callbacks.onRecord?.(record);
              callbacks.onProgress?.(++done, total);
            }
          }
        }
      }
    } else outer: for (let r = 1; r <= repeat; r++) {
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
  return { seed, primed: req.prime ?? false, warmedUp: req.warmup !== false, order, records, summary: summarizeRecords(records), cancelled, unavailable };
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
    const fresh: Pooled = { session, connection: ++this.connections, exchanges: 0, idleTimer: null, snapshot: null, opened: session.wire() };
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
      if (remaining <= 0) throw new DnscostError(CODES.TIMEOUT, `set-up used the whole ${this.timeoutMs} ms`);
      const qStart = clock();
      const raw = await session.exchange(query, id, remaining);
      // A transport with its own clock (the QUIC companion) times the query without the pipe to it.
      queryMs = session.queryMs?.(raw) ?? clock() - qStart;
      answer = parseAnswer(raw, q, id);
      error = answerError(answer, events);
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

  /**
   * Replays one page against one endpoint: every lookup starts at its `at` after the page's start, concurrently.
   * Over UDP each has its own socket; otherwise they share one connection as a browser's would: cold, the first
   * lookup opens it and those that start before it is up wait for it; warm, it was open before the page started.
   * A connection that dies during the page is replaced by the next lookup that needs one (recorded, never silent).
   * Never throws for a failure of a lookup; returns the records in schedule order.
   */
  async replay(target: Target, lookups: readonly Lookup[], mode: Mode, repeat: number): Promise<ExchangeRecord[]> {
    const clock = this.deps.clock;
    const sleep = this.deps.sleep ?? defaultSleep;
    const page: PageState = { connections: [], warmError: null, start: 0, preEvents: [] };
    if (mode === 'warm' && target.transport.id !== 'udp') {
      try {
        const pooled = await this.warm(target, page.preEvents);
        const fresh = pooled.exchanges === 0;
        page.connections.push({
          number: pooled.connection,
          ready: Promise.resolve(pooled.session),
          session: pooled.session,
          failure: null,
          // A fresh pooled connection's set-up is counted on its first exchange, as in sequential warm runs.
          base: fresh ? ZERO : (pooled.snapshot ?? pooled.session.wire()),
          setup: fresh ? pooled.opened : null,
          payer: null,
          setupTo: null,
          members: [],
          ids: new Set(),
          pooled,
        });
      } catch (err) {
        page.warmError = err;
      }
    }
    page.start = clock();
    const outcomes: PageOutcome[] = await Promise.all(
      lookups.map(async (lookup, index) => {
        const due = page.start + lookup.at;
        // setTimeout has millisecond granularity and may fire a little early: wait again until due.
        for (let wait = due - clock(); wait > 0; wait = due - clock()) await sleep(wait);
        return this.pageLookup(target, lookup, index, mode, page);
      }),
    );
    // The warm connection's opening (before the page, untimed) is told on the page's first record.
    outcomes[0]?.events.unshift(...page.preEvents);
    return this.pageRecords(target, mode, repeat, page, outcomes);
  }

  /** The connection a lookup starting now uses: the page's current one, or a new one it opens (and pays for). */
  private connectionFor(target: Target, page: PageState, index: number, events: ExchangeEvent[]): PageConnection {
    const current = page.connections.at(-1);
    if (current && !current.failure && (current.session === null || current.session.usable)) return current;
    const c: PageConnection = {
      number: ++this.connections,
      ready: null as unknown as Promise<Session>,
      session: null,
      failure: null,
      base: ZERO,
      setup: null,
      payer: index,
      setupTo: index,
      members: [],
      ids: new Set(),
      pooled: null,
    };
    c.ready = this.open(target).then(
      (session) => {
        c.session = session;
        c.setup = session.wire();
        return session;
      },
      (err: unknown) => {
        c.failure = err as SetupFailure;
        throw err;
      },
    );
    c.ready.catch(() => {});
    events.push(current ? { type: 'connection-opened', detail: 'the previous connection had closed' } : { type: 'connection-opened' });
    page.connections.push(c);
    return c;
  }

  /** One lookup of a replayed page; never throws. */
  private async pageLookup(target: Target, lookup: Lookup, index: number, mode: Mode, page: PageState): Promise<PageOutcome> {
    const clock = this.deps.clock;
    const transport = target.transport;
    const q: Question = { name: lookup.name, qtype: lookup.qtype };
    const out: PageOutcome = {
      lookup, index, start: clock(), end: 0, session: null, connection: null, waited: null, paid: false, reused: false,
      queryMs: null, error: null, answer: null, failedSetup: null, events: [], dns: { sent: 0, received: 0 },
    };
    try {
      if (page.warmError) throw page.warmError;
      let session: Session;
      if (transport.id === 'udp') {
        session = await this.open(target);
      } else {
        const c = this.connectionFor(target, page, index, out.events);
        out.connection = c;
        if (c.payer === index) {
          out.paid = true;
          session = await c.ready;
        } else if (c.session) {
          session = c.session;
        } else {
          const limit = deadline(Math.max(1, this.timeoutMs - (clock() - out.start)), 'waiting for the connection another lookup is opening');
          try {
            session = await Promise.race([c.ready, limit.promise]);
          } catch (err) {
            // The set-up failed for the lookup that paid it (its record carries the bytes) or outlived our limit.
            throw err instanceof DnscostError && err.code !== CODES.TIMEOUT
              ? new DnscostError(err.code, `the connection this lookup waited for failed: ${err.message}`)
              : err;
          } finally {
            limit.cancel();
            out.waited = clock() - out.start;
          }
        }
        if (c.setupTo === null) c.setupTo = index;
        out.reused = c.setupTo !== index;
        c.members.push(index);
      }
      out.session = session;
      if (out.paid && session.tls?.resumed) out.events.push({ type: 'session-resumed' });
      const remaining = this.timeoutMs - (clock() - out.start);
      if (remaining <= 0) throw new DnscostError(CODES.TIMEOUT, `set-up used the whole ${this.timeoutMs} ms`);
      const id = transport.zeroId ? 0 : freshId(out.connection?.ids);
      const query = encodeQuery(q, id, transport.pad);
      const qStart = clock();
      const raw = await session.exchange(query, id, remaining);
      out.queryMs = session.queryMs?.(raw) ?? clock() - qStart;
      // Exact per exchange: the DNS messages (with the 2-byte prefix on TCP, DoT and DoQ, as the session counts them).
      const prefix = transport.id === 'tcp' || transport.id === 'dot' || transport.id === 'doq' ? 2 : 0;
      out.dns = { sent: query.length + prefix, received: raw.length + prefix };
      out.answer = parseAnswer(raw, q, id);
      out.error = answerError(out.answer, out.events);
    } catch (err) {
      out.error = toErrorData(err);
      if (out.paid || transport.id === 'udp') out.failedSetup = err as SetupFailure;
    }
    out.end = clock();
    if (out.session) {
      for (const e of out.session.drainEvents()) out.events.push(e);
      this.remember(target, out.session);
    }
    return out;
  }

  /** Builds a page's records: splits each connection's counted totals over its exchanges, then closes or parks it. */
  private pageRecords(target: Target, mode: Mode, repeat: number, page: PageState, outcomes: PageOutcome[]): ExchangeRecord[] {
    const transport = target.transport;
    const http = transport.id === 'doh' || transport.id === 'doh1';
    const shares = new Map<number, { parts: Parts; provenance: { bytes: Provenance; packets: Provenance }; sharedWith: number }>();
    for (const c of page.connections) {
      const end = c.session ? c.session.wire() : (c.failure?.wire ?? ZERO);
      if (c.pooled) {
        c.pooled.exchanges += c.members.length;
        c.pooled.snapshot = end;
        this.park(target, c.pooled);
      } else c.session?.close();
      if (!c.session) {
        // Set-up failed: what the attempt cost is the paying lookup's alone.
        if (c.payer !== null) shares.set(c.payer, { parts: partsOf(end), provenance: end.provenance, sharedWith: 1 });
        continue;
      }
      const members = c.members;
      const total = minusParts(partsOf(end), partsOf(c.base));
      const setup = c.setup && c.setupTo !== null ? minusParts(partsOf(c.setup), partsOf(c.base)) : null;
      const rest = setup ? minusParts(total, setup) : total;
      const known = members.map((i) => outcomes[i]!.dns);
      const dnsResidual = minus(rest.dns, known.reduce((a, b) => ({ sent: a.sent + b.sent, received: a.received + b.received }), { sent: 0, received: 0 }));
      const split = {
        dns: splitPair(dnsResidual, members.length),
        app: splitPair(rest.app, members.length),
        tls: splitPair(rest.tls, members.length),
        headers: splitPair(rest.headers, members.length),
        packets: splitPair(rest.packets, members.length),
      };
      const provenance = members.length > 1 ? { bytes: 'estimated' as const, packets: 'estimated' as const } : end.provenance;
      members.forEach((i, k) => {
        let parts: Parts = {
          dns: plus(known[k]!, split.dns[k]!),
          app: split.app[k]!,
          tls: split.tls[k]!,
          headers: split.headers[k]!,
          packets: split.packets[k]!,
        };
        if (setup && c.setupTo === i) parts = plusParts(parts, setup);
        shares.set(i, { parts, provenance, sharedWith: members.length });
      });
    }
    const origin = this.origin;
    return outcomes.map((o) => {
      const own = transport.id === 'udp' ? (o.session?.wire() ?? o.failedSetup?.wire ?? ZERO) : null;
      const share = own
        ? { parts: partsOf(own), provenance: own.provenance, sharedWith: 1 }
        : (shares.get(o.index) ?? { parts: partsOf(ZERO), provenance: ZERO.provenance, sharedWith: o.connection?.members.length ?? 0 });
      const p = share.parts;
      const tlsLayer = transport.id === 'dot' || http;
      const setup = o.paid ? (o.connection?.session?.setup ?? o.failedSetup?.setup ?? null) : null;
      return {
        host: o.lookup.name,
        qtype: o.lookup.qtype,
        transport: transport.id,
        endpoint: target.url,
        resolver: target.resolver.id,
        mode,
        repeat,
        ok: o.error === null,
        rcode: o.answer?.rcode ?? null,
        error: o.error,
        answers: o.answer?.answers ?? [],
        timings: { connect: setup?.connect ?? null, tls: setup?.tls ?? null, query: o.queryMs, total: o.end - o.start },
        startedAt: o.start - origin,
        bytes: sumParts(p),
        packets: p.packets,
        layers: { dns: p.dns, http: http ? p.app : null, tls: tlsLayer ? p.tls : null, headers: p.headers },
        provenance: share.provenance,
        reused: o.reused,
        connection: o.connection?.number ?? null,
        tls: o.session?.tls ?? null,
        events: o.events,
        replay: {
          pageStartedAt: page.start - origin,
          scheduledAt: o.lookup.at,
          endedAt: o.end - origin,
          waitedForConnection: o.waited,
          paidSetup: o.paid,
          sharedWith: share.sharedWith,
        },
      } satisfies ExchangeRecord;
    });
  }

  closeAll(): void {
    for (const p of this.pool.values()) {
      if (p.idleTimer) clearTimeout(p.idleTimer);
      p.session.close();
    }
    this.pool.clear();
  }
}

/** What one replayed page knows while it runs. */
interface PageState {
  connections: PageConnection[];
  /** Opening the warm connection before the page failed: every lookup of the page reports it. */
  warmError: unknown;
  /** The page's start on the clock. */
  start: number;
  /** Events from before the page (the warm connection's opening). */
  preEvents: ExchangeEvent[];
}

/** A connection one replayed page uses: opened by the lookup that first needed it (cold), or before the page (warm). */
interface PageConnection {
  number: number;
  ready: Promise<Session>;
  session: Session | null;
  failure: SetupFailure | null;
  /** Counters the page's share of this connection starts from: zero when new, the last snapshot when pooled. */
  base: WireTotals;
  /** Counters right after set-up, charged to `setupTo`; null when no exchange of this page is charged for it. */
  setup: WireTotals | null;
  /** The lookup that opened it during the page (its timings carry the set-up); null for a warm connection. */
  payer: number | null;
  /** The lookup whose bytes include the set-up: the payer, or a fresh warm connection's first exchange. */
  setupTo: number | null;
  /** Lookups that exchanged on it, in the order they got it. */
  members: number[];
  /** DNS ids in flight or used on it this page: pipelined answers are matched by id (RFC 7766 §6.2.1.1). */
  ids: Set<number>;
  pooled: Pooled | null;
}

/** What one lookup of a replayed page did, before its bytes are known. */
interface PageOutcome {
  lookup: Lookup;
  index: number;
  start: number;
  end: number;
  session: Session | null;
  connection: PageConnection | null;
  waited: number | null;
  paid: boolean;
  reused: boolean;
  queryMs: number | null;
  error: ErrorData | null;
  answer: ReturnType<typeof parseAnswer> | null;
  failedSetup: SetupFailure | null;
  events: ExchangeEvent[];
  /** Its own DNS message bytes, known exactly. */
  dns: Pair;
}

/** Wire totals as disjoint parts that add up to the IP-level bytes: DNS, HTTP framing (app), TLS, headers. */
interface Parts {
  dns: Pair;
  /** TLS plaintext (or TCP payload) beyond the DNS messages: HTTP framing for DoH, normally 0 otherwise. */
  app: Pair;
  tls: Pair;
  headers: Pair;
  packets: Pair;
}

const plus = (a: Pair, b: Pair): Pair => ({ sent: a.sent + b.sent, received: a.received + b.received });

function partsOf(w: WireTotals): Parts {
  const inner = w.plain ?? w.payload;
  return {
    dns: w.dns,
    app: minus(inner, w.dns),
    tls: w.plain ? minus(w.payload, w.plain) : { sent: 0, received: 0 },
    headers: minus(w.bytes, w.payload),
    packets: w.packets,
  };
}

function minusParts(a: Parts, b: Parts): Parts {
  return { dns: minus(a.dns, b.dns), app: minus(a.app, b.app), tls: minus(a.tls, b.tls), headers: minus(a.headers, b.headers), packets: minus(a.packets, b.packets) };
}

function plusParts(a: Parts, b: Parts): Parts {
  return { dns: plus(a.dns, b.dns), app: plus(a.app, b.app), tls: plus(a.tls, b.tls), headers: plus(a.headers, b.headers), packets: plus(a.packets, b.packets) };
}

function sumParts(p: Parts): Pair {
  return plus(plus(p.dns, p.app), plus(p.tls, p.headers));
}

/** Splits an integer `total` into `n` integer shares that add up to it exactly (the first ones get the remainder). */
export function splitEvenly(total: number, n: number): number[] {
  if (n <= 0) return [];
  const base = Math.floor(total / n);
  const extra = total - base * n;
  return Array.from({ length: n }, (_, i) => base + (i < extra ? 1 : 0));
}

function splitPair(total: Pair, n: number): Pair[] {
  const sent = splitEvenly(total.sent, n);
  const received = splitEvenly(total.received, n);
  return sent.map((s, i) => ({ sent: s, received: received[i]! }));
}

/** A DNS id not yet used on this connection during the page (pipelined answers are matched by id). */
function freshId(used: Set<number> | undefined): number {
  let id = randomId();
  // 500 hosts × 3 types is 1,500 ids of 65,536: a few retries at most.
  while (used?.has(id)) id = randomId();
  used?.add(id);
  return id;
}

/** The error an answer amounts to: truncation (recorded as an event too) or an rcode that is not an answer. */
function answerError(answer: ReturnType<typeof parseAnswer>, events: ExchangeEvent[]): ErrorData | null {
  if (answer.truncated) {
    events.push({ type: 'truncated', detail: 'TC bit set; dnscost does not fall back to TCP by itself' });
    return { code: CODES.TRUNCATED, message: 'answer truncated (TC=1)' };
  }
  const code = rcodeError(answer.rcode);
  return code ? { code, message: `resolver answered ${answer.rcode}` } : null;
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
