// The measurement engine's entry: plans exchanges from a request and runs them on one monotonic clock, one at a
// time (schedule `sequential`: exchange.ts) or as a page asked for them (`replay`: every lookup at its offset,
// concurrently, on one connection per endpoint: replay.ts), in a seeded shuffled order, calling back with each
// ExchangeRecord. Lifecycle: a measurement owns one SessionPool (pool.ts) for its warm sessions, TLS tickets and
// connection numbering; its warm sessions are closed when the run ends or is cancelled, or after their transport's
// idle time (DoT's 10 s), as stub resolvers do. A replay's cold connections live for that replay only.
import { CODES, DnscostError } from '../../../common/errors.js';
import { normalizeHostname } from '../../../common/hostname.js';
import type { ExchangeRecord } from '../../../common/record.js';
import { MAX_EXCHANGES_PER_REQUEST, type MeasureRequest, type SummaryRow, type UnavailableEndpoint } from '../../../common/schema.js';
import { seededRandom, shuffled, summarize } from '../../../common/stats.js';
import { TRANSPORTS as TRANSPORT_INFO, type Mode, type QType, type TransportId } from '../../../common/transports.js';
import { monotonic, secureContextFor, type Clock } from '../dial.js';
import type { Question } from '../dns-wire.js';
import { REGISTRY } from '../transports/registry.js';
import type { Transport } from '../transports/transport.js';
import { targetsOf, type MeasuredEndpoint } from './endpoint.js';
import { exchange } from './exchange.js';
import { SessionPool } from './pool.js';
import { replay, type Lookup } from './replay.js';

export { targetsOf, type MeasuredEndpoint } from './endpoint.js';
export { type Lookup } from './replay.js';
export { splitEvenly } from './wire.js';

/** Default time one exchange may take, set-up included. */
export const DEFAULT_TIMEOUT_MS = 5000;

/** What the engine reports while it runs. */
export interface MeasureCallbacks {
  onRecord?(record: ExchangeRecord): void;
  onProgress?(done: number, total: number): void;
}

/** The engine's dependencies, replaceable in tests. */
export interface EngineDeps {
  clock: Clock;
  transports: Record<TransportId, Transport>;
  /** Waits about `ms` (replay's schedule); setTimeout by default. */
  sleep?: (ms: number) => Promise<void>;
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
  /** Endpoints whose transport cannot run in this installation: left out of the run, not counted as failures. */
  unavailable: UnavailableEndpoint[];
}

/**
 * Each host of a request with its offset and record types: its own where the request names them (what the recording
 * browser asked for it), else the request's, else A.
 */
export function requestPlan(req: Pick<MeasureRequest, 'hosts' | 'qtypes'>): Array<{ name: string; firstNeededMs: number; qtypes: QType[] }> {
  const qtypes: QType[] = req.qtypes ?? ['A'];
  return req.hosts.map((h) => (typeof h === 'string' ? { name: normalizeHostname(h), firstNeededMs: 0, qtypes } : { name: normalizeHostname(h.name), firstNeededMs: h.firstNeededMs ?? 0, qtypes: h.qtypes ?? qtypes }));
}

/** Runs a measure request to the end (or until `signal` aborts), calling back with every record. */
export async function measure(
  req: MeasureRequest,
  callbacks: MeasureCallbacks = {},
  signal?: AbortSignal,
  deps: EngineDeps = { clock: monotonic, transports: REGISTRY },
): Promise<MeasureResult> {
  const plan = requestPlan(req);
  const questions = plan.flatMap((h) => h.qtypes.map((qtype) => ({ name: h.name, qtype })));
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
  const modes: Mode[] = req.modes ?? ['cold'];
  const repeat = req.repeat ?? 1;
  const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const seed = req.seed ?? Math.floor(Math.random() * 0x100000000);
  const random = seededRandom(seed);
  // Build TLS contexts before any clock starts: that is set-up of dnscost, not of the connection.
  for (const t of targets) if (TRANSPORT_INFO[t.transport.id].encrypted) secureContextFor(t.resolver.ca);
  const pool = new SessionPool(deps.clock, timeoutMs, req.resume ?? false);
  const records: ExchangeRecord[] = [];
  const total = questions.length * modes.length * repeat * targets.length;
  if (total > MAX_EXCHANGES_PER_REQUEST) {
    throw new DnscostError(CODES.BAD_REQUEST, `the request asks ${total} exchanges (questions × modes × repeats × endpoints); at most ${MAX_EXCHANGES_PER_REQUEST}`);
  }
  let done = 0;
  let order: string[] = [];
  let cancelled = false;
  // The total at once: priming and warming up may take a while before the first exchange counts.
  callbacks.onProgress?.(0, total);
  try {
    if (req.prime) await prime(pool, questions, targets, signal);
    if (req.warmup !== false) await warmup(pool, questions[0]!, targets, signal);
    if (req.schedule === 'replay') {
      // A browser asks a host's record types together, in the order it first needed the hosts.
      const lookups: Lookup[] = plan.flatMap((h) => h.qtypes.map((qtype) => ({ name: h.name, qtype, firstNeededMs: h.firstNeededMs }))).sort((a, b) => a.firstNeededMs - b.firstNeededMs);
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
            for (const record of await replay(pool, target, lookups, mode, r, deps.sleep)) {
              records.push(record);
              callbacks.onRecord?.(record);
              callbacks.onProgress?.(++done, total);
            }
          }
        }
      }
    } else outer: for (let r = 1; r <= repeat; r++) {
      for (const mode of modes) {
        for (const question of questions) {
          // Shuffled per round so no transport always asks second, after another filled the cache.
          const round = shuffled(targets, random);
          if (order.length === 0) order = round.map((t) => `${t.resolver.id} ${t.url}`);
          for (const target of round) {
            if (signal?.aborted) {
              cancelled = true;
              break outer;
            }
            const record = await exchange(pool, target, question, mode, r);
            records.push(record);
            callbacks.onRecord?.(record);
            callbacks.onProgress?.(++done, total);
          }
        }
      }
    }
  } finally {
    pool.closeAll();
  }
  return { seed, primed: req.prime ?? false, warmedUp: req.warmup !== false, order, records, summary: summarizeRecords(records), cancelled, unavailable };
}

/** Priming asks this many questions at once over UDP, and gives a resolver up after this many timeouts in a row. */
export const PRIME_CONCURRENCY = 8;
export const PRIME_TIMEOUTS_TO_STOP = 2;

/**
 * Asks every name once per resolver (over its first endpoint) so no measured exchange fills the cache: the resolvers
 * at once, each one's questions PRIME_CONCURRENCY at a time where each query has its own socket (UDP), one at a time
 * on a connection; a resolver that times out PRIME_TIMEOUTS_TO_STOP times in a row is not asked the rest (where UDP
 * 53 is blocked, priming ends in seconds instead of timing out every name).
 */
async function prime(pool: SessionPool, questions: readonly Question[], targets: MeasuredEndpoint[], signal?: AbortSignal): Promise<void> {
  const first = new Map<string, MeasuredEndpoint>();
  for (const t of targets) if (!first.has(t.resolver.id)) first.set(t.resolver.id, t);
  await Promise.all([...first.values()].map(async (target) => {
    let next = 0;
    let timeoutsInARow = 0;
    const worker = async () => {
      while (next < questions.length && timeoutsInARow < PRIME_TIMEOUTS_TO_STOP && !signal?.aborted) {
        const record = await exchange(pool, target, questions[next++]!, 'warm', 0);
        timeoutsInARow = record.error?.code === CODES.TIMEOUT ? timeoutsInARow + 1 : 0;
      }
    };
    // The first question alone opens the endpoint's pooled session; the rest share it.
    if (questions.length && !signal?.aborted) {
      const record = await exchange(pool, target, questions[next++]!, 'warm', 0);
      if (record.error?.code === CODES.TIMEOUT) timeoutsInARow++;
    }
    await Promise.all(Array.from({ length: target.transport.socketPerQuery ? PRIME_CONCURRENCY : 1 }, worker));
  }));
  pool.closeAll();
}

/** One cold exchange per endpoint, discarded: loads and compiles each transport's code before any clock runs. */
async function warmup(pool: SessionPool, q: Question, targets: MeasuredEndpoint[], signal?: AbortSignal): Promise<void> {
  for (const target of targets) {
    if (signal?.aborted) return;
    await exchange(pool, target, q, 'cold', 0);
  }
  pool.restartNumbering();
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
