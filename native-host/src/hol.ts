// `dnscost-host hol`: head-of-line blocking, measured (Böttger et al., Fig. 2). On one open connection per endpoint,
// one slow query goes first and N fast ones right after it; each answer's arrival is timed from when its own query
// left. A transport that multiplexes (DoT pipelining with out-of-order answers, HTTP/2, QUIC streams) delivers the
// fast answers while the slow one is pending; one that does not (DoH over HTTP/1.1: one request at a time, as every
// browser) holds them behind it. The slow name must be slow every time: the lab's fault server answers
// `delay-MS.ANYTHING` after MS ms, with no cache in front.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { CODES, DnscostError, toErrorData } from '../../common/errors.js';
import { parseHost } from '../../common/hostname.js';
import type { EndpointSpec } from '../../common/schema.js';
import type { TransportId } from '../../common/transports.js';
import { monotonic } from './dial.js';
import { encodeQuery, parseAnswer, randomId, type Question } from './dns-wire.js';
import { endpointUrl, parseEndpoint } from './endpoints.js';
import { REGISTRY } from './transports/registry.js';
import type { Session, Transport } from './transports/transport.js';

/** What `hol` was asked. */
export interface HolArgs {
  endpoints: EndpointSpec[];
  ca?: string;
  slow: string;
  fast: string[];
  rounds: number;
  /** Between the slow query and the fast ones, ms. */
  gapMs: number;
  timeoutMs: number;
  json: boolean;
}

/** One round on one endpoint: the slow answer's time and each fast answer's, ms from its own query (null: failed). */
export interface HolRound {
  slowMs: number | null;
  fastMs: (number | null)[];
  /** Fast answers that arrived after the slow answer: held behind it. */
  held: number;
  errors: string[];
}

/** An endpoint's rounds and their summary. */
export interface HolResult {
  transport: TransportId;
  endpoint: string;
  rounds: HolRound[];
  /** Medians over every round: the slow answer, the fast answers; the fast answers' largest; held of sent. */
  slowMedianMs: number | null;
  fastMedianMs: number | null;
  fastMaxMs: number | null;
  held: number;
  fast: number;
  /** Why the endpoint could not be measured (no round ran), or null. */
  error: string | null;
}

/** `hol`'s options, as `dnscost-host --help` lists them. */
export const HOL_OPTIONS = `Hol options (one connection per endpoint; each round: the slow query, then every FAST name at once):
  --endpoint URL      as for measure: tls://, https:// (--http1.1 for HTTP/1.1), quic://, h3://, tcp://;
                      repeatable (udp:// has no connection to block on)
  --slow NAME         a name the resolver answers slowly every time, with no cache in front (the lab's
                      fault server answers delay-MS.ANY.NAME after MS ms)
  --rounds N          rounds per endpoint (default 5)      --gap MS   slow query to fast ones (default 5)
  --connect NAME=IP, --ca FILE, --http1.1, --timeout MS (default 5000) as for measure
  --json              one JSON object per endpoint (every round's times) instead of the table
  Exit: 0 measured, 1 no endpoint could be measured, 2 bad usage.
`;

const bad = (message: string): never => {
  throw new DnscostError(CODES.BAD_REQUEST, message);
};

function name(raw: string, what: string): string {
  const h = parseHost(raw);
  if (!h.ok || h.kind !== 'name') bad(`${what}: ${JSON.stringify(raw)} is not a hostname`);
  return (h as { name: string }).name;
}

function count(raw: string | undefined, fallback: number, what: string, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) bad(`${what} takes a whole number from ${min} to ${max}, not ${JSON.stringify(raw)}`);
  return n;
}

/** Parses `hol` arguments; a mistake is a bad-request error (exit 2). */
export function parseHolArgs(argv: string[]): HolArgs {
  let values: Record<string, string | string[] | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv, allowPositionals: true, strict: true,
      options: {
        endpoint: { type: 'string', multiple: true }, connect: { type: 'string', multiple: true }, ca: { type: 'string' },
        'http1.1': { type: 'boolean' }, slow: { type: 'string' }, rounds: { type: 'string' }, gap: { type: 'string' },
        timeout: { type: 'string' }, json: { type: 'boolean' },
      },
    }));
  } catch (err) {
    return bad((err as Error).message);
  }
  const connect = new Map<string, string>();
  for (const pair of (values.connect as string[] | undefined) ?? []) {
    const [n, ip] = pair.split('=');
    if (!n || !ip) bad(`--connect takes NAME=IP, not ${JSON.stringify(pair)}`);
    connect.set(n!.toLowerCase(), ip!);
  }
  const urls = (values.endpoint as string[] | undefined) ?? [];
  if (!urls.length) bad('hol needs at least one --endpoint');
  const endpoints = urls.map((u) => parseEndpoint(u, { connect, http1: values['http1.1'] === true }));
  const udp = endpoints.find((e) => REGISTRY[e.transport].socketPerQuery);
  if (udp) bad(`${endpointUrl(udp)}: ${udp.transport} has no connection to block on`);
  if (typeof values.slow !== 'string') bad('hol needs --slow NAME');
  if (!positionals.length) bad('hol needs at least one fast name');
  if (positionals.length > 100) bad(`at most 100 fast names, not ${positionals.length}`);
  let ca: string | undefined;
  if (typeof values.ca === 'string') {
    try {
      ca = readFileSync(values.ca, 'utf8');
    } catch (err) {
      bad(`cannot read --ca ${values.ca}: ${(err as Error).message}`);
    }
  }
  return {
    endpoints, ...(ca ? { ca } : {}), slow: name(values.slow as string, '--slow'), fast: positionals.map((p) => name(p, 'fast name')),
    rounds: count(values.rounds as string | undefined, 5, '--rounds', 1, 50), gapMs: count(values.gap as string | undefined, 5, '--gap', 0, 1000),
    timeoutMs: count(values.timeout as string | undefined, 5000, '--timeout', 100, 60_000), json: values.json === true,
  };
}

const median = (xs: readonly number[]): number | null => {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Sends `q` on `session` and resolves with when its answer arrived (ms after it was sent); rejects on any failure. */
async function timed(session: Session, transport: Transport, q: Question, id: number, timeoutMs: number): Promise<{ sent: number; at: number }> {
  const query = encodeQuery(q, id, transport.pad);
  const sent = monotonic();
  const answer = await session.exchange(query, id, timeoutMs);
  const at = monotonic();
  parseAnswer(answer, q, id);
  return { sent, at };
}

/** One round: the slow query, after `gapMs` every fast one at once; times from each query's own send. */
async function round(session: Session, transport: Transport, a: HolArgs, firstId: number): Promise<HolRound> {
  const errors: string[] = [];
  const ids = (i: number) => (transport.zeroId ? 0 : (firstId + i) & 0xffff);
  const slow = timed(session, transport, { name: a.slow, qtype: 'A' }, ids(0), a.timeoutMs).catch((e: unknown) => (errors.push(`slow: ${toErrorData(e).message}`), null));
  await new Promise((r) => setTimeout(r, a.gapMs));
  const fast = await Promise.all(a.fast.map((n, i) => timed(session, transport, { name: n, qtype: 'A' }, ids(i + 1), a.timeoutMs)
    .catch((e: unknown) => (errors.push(`${n}: ${toErrorData(e).message}`), null))));
  const s = await slow;
  return {
    slowMs: s ? s.at - s.sent : null,
    fastMs: fast.map((f) => (f ? f.at - f.sent : null)),
    // Without a slow answer (it failed), every fast answer came before it.
    held: s ? fast.filter((f) => f && f.at > s.at).length : 0,
    errors,
  };
}

/** Runs every round on one endpoint over one connection (opened, and used once, before the first round). */
async function onEndpoint(e: EndpointSpec, a: HolArgs): Promise<HolResult> {
  const transport = REGISTRY[e.transport];
  const result: HolResult = { transport: e.transport, endpoint: endpointUrl(e), rounds: [], slowMedianMs: null, fastMedianMs: null, fastMaxMs: null, held: 0, fast: 0, error: null };
  await transport.prepare?.({ ...(a.ca ? { ca: a.ca } : {}) });
  const why = transport.unavailable?.() ?? null;
  if (why) return { ...result, error: why };
  let session: Session | null = null;
  try {
    session = await transport.open(e, { timeoutMs: a.timeoutMs, clock: monotonic, ...(a.ca ? { ca: a.ca } : {}) });
    // The connection's first exchange pays its set-up and loads the code paths; the rounds find it warm.
    await timed(session, transport, { name: a.fast[0]!, qtype: 'A' }, transport.zeroId ? 0 : randomId(), a.timeoutMs);
    for (let i = 0; i < a.rounds; i++) {
      if (!session.usable) throw new DnscostError(CODES.CONNECTION_CLOSED, `the connection closed before round ${i + 1}`);
      result.rounds.push(await round(session, transport, a, randomId()));
    }
  } catch (err) {
    result.error = toErrorData(err).message;
  } finally {
    session?.close();
  }
  const fast = result.rounds.flatMap((r) => r.fastMs.filter((x): x is number => x !== null));
  result.slowMedianMs = median(result.rounds.flatMap((r) => (r.slowMs === null ? [] : [r.slowMs])));
  result.fastMedianMs = median(fast);
  result.fastMaxMs = fast.length ? Math.max(...fast) : null;
  result.held = result.rounds.reduce((s, r) => s + r.held, 0);
  result.fast = result.rounds.reduce((s, r) => s + r.fastMs.length, 0);
  return result;
}

/** Measures every endpoint in turn (never two at once: they would share the machine's time). */
export async function hol(a: HolArgs): Promise<HolResult[]> {
  const out: HolResult[] = [];
  for (const e of a.endpoints) out.push(await onEndpoint(e, a));
  return out;
}

/** The results as a table: per endpoint, the slow answer, the fast answers, how many were held behind the slow one. */
export function formatHol(results: readonly HolResult[]): string {
  const f = (x: number | null) => (x === null ? '—' : x.toFixed(1));
  const rows = [['transport', 'endpoint', 'slow ms', 'fast median ms', 'fast max ms', 'held behind the slow answer']];
  for (const r of results) rows.push([r.transport, r.endpoint, f(r.slowMedianMs), f(r.fastMedianMs), f(r.fastMaxMs), r.error && !r.rounds.length ? `error: ${r.error}` : `${r.held} of ${r.fast}`]);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = rows.map((row) => row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]!))).join('  '));
  const failed = results.flatMap((r) => [...(r.error && r.rounds.length ? [`${r.endpoint}: ${r.error}`] : []), ...r.rounds.flatMap((x) => x.errors.map((m) => `${r.endpoint}: ${m}`))]);
  return `${lines.join('\n')}\n${failed.length ? `\nfailed:\n${failed.slice(0, 20).map((l) => `  ${l}`).join('\n')}\n` : ''}`;
}

/** `dnscost-host hol ARGS`: the exit code. */
export async function runHol(argv: string[], out = process.stdout): Promise<number> {
  const a = parseHolArgs(argv);
  const results = await hol(a);
  out.write(a.json ? results.map((r) => JSON.stringify(r)).join('\n') + '\n' : formatHol(results));
  return results.some((r) => r.rounds.length > 0) ? 0 : 1;
}
