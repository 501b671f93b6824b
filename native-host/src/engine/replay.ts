// The replay schedule: one page's lookups against one endpoint, each at its offset from the page's start,
// concurrently, as a browser asks them. A page's connection (its own, or the pool's warm one) is shared by the
// lookups that need it; what the connection's counters counted is then split over them (wire.ts). Lifecycle: a
// page's cold connections live for that page only and are closed when its records are built; a warm one goes back
// to the pool.
import { CODES, DnscostError, toErrorData, type ErrorData } from '../../../common/errors.js';
import type { ExchangeEvent, ExchangeRecord, Pair, Provenance } from '../../../common/record.js';
import type { Mode, QType } from '../../../common/transports.js';
import { deadline, type SetupFailure, type WireTotals } from '../dial.js';
import { answerTtl, encodeQuery, parseAnswer, randomId, type Question } from '../dns-wire.js';
import type { Session } from '../transports/transport.js';
import type { MeasuredEndpoint } from './endpoint.js';
import { answerError } from './exchange.js';
import type { Pooled, SessionPool } from './pool.js';
import { minus, minusParts, partsOf, plus, plusParts, splitPair, sumParts, ZERO, type Parts } from './wire.js';

/** One lookup of a replayed page: a host, a record type and when the page first needed the host (ms). */
export interface Lookup {
  name: string;
  qtype: QType;
  firstNeededMs: number;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Replays one page against one endpoint: every lookup starts at its `firstNeededMs` after the page's start, concurrently.
 * With a socket per query (UDP) each has its own; otherwise they share one connection as a browser's would: cold, the first
 * lookup opens it and those that start before it is up wait for it; warm, it was open before the page started.
 * A connection that dies during the page is replaced by the next lookup that needs one (recorded, never silent).
 * Never throws for a failure of a lookup; returns the records in schedule order.
 */
export async function replay(
  pool: SessionPool,
  target: MeasuredEndpoint,
  lookups: readonly Lookup[],
  mode: Mode,
  repeat: number,
  sleep: (ms: number) => Promise<void> = defaultSleep,
): Promise<ExchangeRecord[]> {
  const clock = pool.clock;
  const page: ReplayedPage = { connections: [], warmError: null, start: 0, preEvents: [] };
  if (mode === 'warm' && !target.transport.socketPerQuery) {
    try {
      const pooled = await pool.warm(target, page.preEvents);
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
      const due = page.start + lookup.firstNeededMs;
      // setTimeout has millisecond granularity and may fire a little early: wait again until due.
      for (let wait = due - clock(); wait > 0; wait = due - clock()) await sleep(wait);
      return pageLookup(pool, target, lookup, index, page);
    }),
  );
  // The warm connection's opening (before the page, untimed) is told on the page's first record.
  outcomes[0]?.events.unshift(...page.preEvents);
  return pageRecords(pool, target, mode, repeat, page, outcomes);
}

/** The connection a lookup starting now uses: the page's current one, or a new one it opens (and pays for). */
function connectionFor(pool: SessionPool, target: MeasuredEndpoint, page: ReplayedPage, index: number, events: ExchangeEvent[]): PageConnection {
  const current = page.connections.at(-1);
  if (current && !current.failure && (current.session === null || current.session.usable)) return current;
  const c: PageConnection = {
    number: pool.nextConnection(),
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
  c.ready = pool.open(target).then(
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
async function pageLookup(pool: SessionPool, target: MeasuredEndpoint, lookup: Lookup, index: number, page: ReplayedPage): Promise<PageOutcome> {
  const clock = pool.clock;
  const transport = target.transport;
  const q: Question = { name: lookup.name, qtype: lookup.qtype };
  const out: PageOutcome = {
    lookup, index, start: clock(), end: 0, session: null, connection: null, waited: null, paid: false, reused: false,
    queryMs: null, outside: 0, error: null, answer: null, failedSetup: null, events: [], dns: { sent: 0, received: 0 },
  };
  try {
    if (page.warmError) throw page.warmError;
    let session: Session;
    if (transport.socketPerQuery) {
      session = await pool.open(target);
    } else {
      const c = connectionFor(pool, target, page, index, out.events);
      out.connection = c;
      if (c.payer === index) {
        out.paid = true;
        session = await c.ready;
      } else if (c.session) {
        session = c.session;
      } else {
        const limit = deadline(Math.max(1, pool.timeoutMs - (clock() - out.start)), 'waiting for the connection another lookup is opening');
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
    const remaining = pool.timeoutMs - (clock() - out.start);
    if (remaining <= 0) throw new DnscostError(CODES.TIMEOUT, `set-up used the whole ${pool.timeoutMs} ms`);
    const id = transport.zeroId ? 0 : freshId(out.connection?.ids);
    const query = encodeQuery(q, id, transport.pad);
    const qStart = clock();
    const raw = await session.exchange(query, id, remaining);
    const span = clock() - qStart;
    // A transport that knows where its bytes were (the QUIC companion's clock; HTTP/2's request leaving and answer's
    // last byte) times the query itself: the rest of the span is the client's own stepping, not the lookup's.
    const own = session.queryMs?.(raw) ?? null;
    out.queryMs = own ?? span;
    if (own !== null) out.outside = Math.max(0, span - own);
    // Exact per exchange: the DNS messages, with the transport's length prefix (TCP, DoT, DoQ) as the session counts them.
    const prefix = transport.lengthPrefix;
    out.dns = { sent: query.length + prefix, received: raw.length + prefix };
    out.answer = parseAnswer(raw, q, id);
    out.error = answerError(out.answer, out.events);
  } catch (err) {
    out.error = toErrorData(err);
    if (out.paid || transport.socketPerQuery) out.failedSetup = err as SetupFailure;
  }
  out.end = clock() - out.outside;
  // A socket-per-query session is this lookup's alone: closed here (its socket, if it never sent, is still bound).
  if (transport.socketPerQuery) out.session?.close();
  if (out.session) {
    for (const e of out.session.drainEvents()) out.events.push(e);
    pool.remember(target, out.session);
  }
  return out;
}

/** Builds a page's records: splits each connection's counted totals over its exchanges, then closes or parks it. */
function pageRecords(pool: SessionPool, target: MeasuredEndpoint, mode: Mode, repeat: number, page: ReplayedPage, outcomes: PageOutcome[]): ExchangeRecord[] {
  const transport = target.transport;
  const http = transport.splits.http;
  const shares = new Map<number, { parts: Parts; provenance: { bytes: Provenance; packets: Provenance }; sharedWith: number }>();
  for (const c of page.connections) {
    const end = c.session ? c.session.wire() : (c.failure?.wire ?? ZERO);
    if (c.pooled) {
      c.pooled.exchanges += c.members.length;
      c.pooled.snapshot = end;
      pool.park(target, c.pooled);
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
  const origin = pool.origin;
  return outcomes.map((o) => {
    const own = transport.socketPerQuery ? (o.session?.wire() ?? o.failedSetup?.wire ?? ZERO) : null;
    const share = own
      ? { parts: partsOf(own), provenance: own.provenance, sharedWith: 1 }
      : (shares.get(o.index) ?? { parts: partsOf(ZERO), provenance: ZERO.provenance, sharedWith: o.connection?.members.length ?? 0 });
    const p = share.parts;
    const tlsLayer = transport.splits.tls;
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
      ttl: answerTtl(o.answer?.answers ?? []),
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
        firstNeededMs: o.lookup.firstNeededMs,
        endedAt: o.end - origin,
        waitedForConnection: o.waited,
        paidSetup: o.paid,
        sharedWith: share.sharedWith,
      },
    } satisfies ExchangeRecord;
  });
}

/** What one replayed page knows while it runs. */
interface ReplayedPage {
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
  /** Of the exchange's span, what the transport's own timing puts outside the query (left out of `end`). */
  outside: number;
  error: ErrorData | null;
  answer: ReturnType<typeof parseAnswer> | null;
  failedSetup: SetupFailure | null;
  events: ExchangeEvent[];
  /** Its own DNS message bytes, known exactly. */
  dns: Pair;
}

/** A DNS id not yet used on this connection during the page (pipelined answers are matched by id). */
function freshId(used: Set<number> | undefined): number {
  let id = randomId();
  // 500 hosts × 3 types is 1,500 ids of 65,536: a few retries at most.
  while (used?.has(id)) id = randomId();
  used?.add(id);
  return id;
}
