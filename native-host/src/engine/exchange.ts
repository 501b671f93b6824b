// One sequential exchange: opens a connection (cold) or takes the endpoint's warm one, asks one question, times it
// on the run's clock and turns what happened (answer, failure, events, bytes since the previous snapshot) into an
// ExchangeRecord. A failure of the exchange is data in the record, never a throw.
import { CODES, DnscostError, toErrorData, type ErrorData } from '../../../common/errors.js';
import type { ExchangeEvent, ExchangeRecord } from '../../../common/record.js';
import type { Mode } from '../../../common/transports.js';
import type { SetupFailure } from '../dial.js';
import { answerTtl, encodeQuery, parseAnswer, randomId, rcodeError, type Question } from '../dns-wire.js';
import type { Session } from '../transports/transport.js';
import type { MeasuredEndpoint } from './endpoint.js';
import type { Pooled, SessionPool } from './pool.js';
import { deltaOf, minus, ZERO } from './wire.js';

/**
 * Of `span` (an open timed on the engine's clock), what lies outside the set-up a transport with its own clock (the
 * QUIC companion) timed itself: the host↔companion pipe, which no browser or stub has; 0 for every other transport.
 */
function pipeOf(session: Session, span: number): number {
  if (!session.queryMs) return 0;
  return Math.max(0, span - (session.setup.connect ?? 0) - (session.setup.tls ?? 0));
}

/** Runs one exchange on `pool`'s sessions and builds its record; never throws for a failure of the exchange itself. */
export async function exchange(pool: SessionPool, target: MeasuredEndpoint, q: Question, mode: Mode, repeat: number): Promise<ExchangeRecord> {
  const clock = pool.clock;
  const transport = target.transport;
  const events: ExchangeEvent[] = [];
  const id = transport.zeroId ? 0 : randomId();
  const query = encodeQuery(q, id, transport.pad);
  // The first warm exchange on an endpoint opens its connection before the clock starts: "warm" means open.
  let warmupError: unknown = null;
  if (mode === 'warm' && !pool.pooled(target)) {
    await pool.warm(target, events).catch((err: unknown) => (warmupError = err));
  }
  // A socket per query (UDP) has nothing to set up on the network: its session (a bound local socket) opens before
  // the clock starts, so binding it is not timed as the lookup's.
  let local: Session | null = null;
  let localError: unknown = null;
  if (mode === 'cold' && transport.socketPerQuery) local = await pool.open(target).catch((err: unknown) => ((localError = err), null));
  const start = clock();
  let session: Session | null = null;
  let pooled: Pooled | null = null;
  let connection: number | null = null;
  let before = ZERO;
  let reused = false;
  let setupPaid = false;
  let queryMs: number | null = null;
  // Time spent in the pipe to a transport with its own clock: left out of the total, which is the lookup's.
  let pipeMs = 0;
  let error: ErrorData | null = null;
  let answer: ReturnType<typeof parseAnswer> | null = null;
  let failedSetup: SetupFailure | null = null;
  try {
    if (warmupError) throw warmupError;
    if (mode === 'warm') {
      // A warm exchange pays for a connection only when the pooled one had died since.
      setupPaid = !(pool.pooled(target)?.session.usable ?? false);
      const opening = clock();
      pooled = await pool.warm(target, events);
      session = pooled.session;
      if (setupPaid) pipeMs += pipeOf(session, clock() - opening);
      connection = pooled.connection;
      reused = pooled.exchanges > 0;
      // Everything since the previous record on this connection (a delayed ACK, a late server frame) is this one's.
      if (reused) before = pooled.snapshot ?? session.wire();
    } else {
      if (localError) throw localError;
      const opening = clock();
      session = local ?? (await pool.open(target));
      pipeMs += pipeOf(session, clock() - opening);
      connection = pool.nextConnection();
      events.push({ type: 'connection-opened' });
    }
    if (session.tls?.resumed) events.push({ type: 'session-resumed' });
    const remaining = pool.timeoutMs - (clock() - start);
    if (remaining <= 0) throw new DnscostError(CODES.TIMEOUT, `set-up used the whole ${pool.timeoutMs} ms`);
    const qStart = clock();
    const raw = await session.exchange(query, id, remaining);
    const span = clock() - qStart;
    // A transport with its own clock (the QUIC companion) times the query without the pipe to it.
    const own = session.queryMs?.(raw) ?? null;
    queryMs = own ?? span;
    if (own !== null) pipeMs += Math.max(0, span - own);
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
    pool.remember(target, session);
  }
  if (mode === 'cold') session?.close();
  else if (pooled) {
    pooled.exchanges += 1;
    pooled.snapshot = after;
    pool.park(target, pooled);
  }
  const delta = deltaOf(after, before);
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
    ttl: answerTtl(answer?.answers ?? []),
    timings: {
      connect: showSetup ? (session?.setup.connect ?? failedSetup?.setup?.connect ?? null) : null,
      tls: showSetup ? (session?.setup.tls ?? failedSetup?.setup?.tls ?? null) : null,
      query: queryMs,
      total: end - start - pipeMs,
    },
    startedAt: start - pool.origin,
    bytes: delta.bytes,
    packets: delta.packets,
    layers: {
      dns: delta.dns,
      http: transport.splits.http ? (delta.plain ? minus(delta.plain, delta.dns) : null) : null,
      tls: delta.plain ? minus(delta.payload, delta.plain) : null,
      headers: minus(delta.bytes, delta.payload),
    },
    provenance: session || failedSetup?.wire ? delta.provenance : { bytes: 'estimated', packets: 'estimated' },
    reused,
    connection: transport.socketPerQuery ? null : connection,
    tls: session?.tls ?? null,
    events,
  };
}

/** The error an answer amounts to: truncation (recorded as an event too) or an rcode that is not an answer. */
export function answerError(answer: ReturnType<typeof parseAnswer>, events: ExchangeEvent[]): ErrorData | null {
  if (answer.truncated) {
    events.push({ type: 'truncated', detail: 'TC bit set; dnscost does not fall back to TCP by itself' });
    return { code: CODES.TRUNCATED, message: 'answer truncated (TC=1)' };
  }
  const code = rcodeError(answer.rcode);
  return code ? { code, message: `resolver answered ${answer.rcode}` } : null;
}
