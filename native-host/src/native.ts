// The native messaging host. Lifecycle: the browser starts the process and keeps stdin open while its port lives;
// every frame on stdin is one request, validated before any handler sees it; replies (and measure's streamed
// progress and records) go to stdout as frames, nothing else ever does; when stdin ends, running measurements are
// cancelled and the process exits once its last frame is written. A framing error (a frame over the limit, or one
// that stopped arriving) ends the process too, after its error frame: the stream can no longer be trusted to be in
// step, and the browser's port reports the disconnect, so every request still open ends there. When stdout closes
// (the browser is gone), running measurements stop. Each measurement has a deadline (MEASURE_DEADLINE_MS) and
// repeats its progress every HEARTBEAT_MS while it runs.
import type { Readable, Writable } from 'node:stream';
import { CODES, DnscostError, failure, toErrorData, type ErrorCode } from '../../common/errors.js';
import { normalizeHostname } from '../../common/hostname.js';
import type { ExchangeRecord } from '../../common/record.js';
import { MAX_FRAME_BYTES, parseRequest, PROTOCOL_VERSION, REQUEST_TYPES, type BrowserDoh, type CurrentDns, type Handlers, type Reply, type RequestId } from '../../common/schema.js';
import { discoverBrowserDoh } from './current-dns/browser-doh.js';
import { discoverCurrentDns } from './current-dns/discover.js';
import { ipv6Reachable } from './ipv6.js';
import { encodeFrame, FrameDecoder, type FrameEvent } from './framing.js';
import { measure } from './engine/measure.js';
import { cappedAnswers } from './dns-wire.js';
import { currentNetwork } from './network.js';
import { currentDnsLookup, withholdPrivateNames } from './private-names.js';
import { caFor, dohLookup, keepsNamesEncrypted, refuseCleartext, withEndpoint } from './browser-resolver.js';
import { ExchangeBudget } from './exchange-budget.js';
import { availableTransports } from './transports/registry.js';
import { VERSION } from './paths.js';
import { probe } from './probe/probe.js';
import { edgeRows } from './edges.js';
import { DEFAULT_PROBE_NAMES, type ResolverProbe } from '../../common/probe.js';
import { isEncrypted } from '../../common/transports.js';

/** Largest request accepted from the browser; bigger ones are skipped unread. */
export const MAX_REQUEST_BYTES = 1024 * 1024;
/** A frame that stops arriving for this long is truncated: the browser writes whole frames at once. */
export const FRAME_STALL_MS = 1000;
/** Most measurements running at once. */
export const MAX_CONCURRENT_MEASURES = 4;
/** Bound on each of a probe's handshakes and exchanges. */
const PROBE_TIMEOUT_MS = 3000;
/** Records are sent in frames of about this size, well under the browser's 1 MiB limit. */
const RECORD_BATCH_BYTES = 256 * 1024;
/** Longest a measurement may run; then it stops and its request fails with `deadline` (its records so far were sent). */
export const MEASURE_DEADLINE_MS = 10 * 60_000;
/**
 * A running measurement repeats its latest progress at least this often, so the extension hears a live host even
 * where nothing finishes for long (priming and warming up send no record, and where UDP 53 is black-holed each
 * endpoint waits out its timeout): the extension's stall watchdog (HOST_STALL_MS, 60 s) then only ever fires on a
 * host that stopped.
 */
export const HEARTBEAT_MS = 10_000;

/** Streams and limits the host runs with; tests pass their own. */
export interface NativeOptions {
  input: Readable;
  output: Writable;
  log?: (line: string) => void;
  stallMs?: number;
  deadlineMs?: number;
  heartbeatMs?: number;
  /** Tests: how the current DNS is found and which network the machine is on (its id), instead of the machine's. */
  discover?: { currentDns(): Promise<CurrentDns>; networkId(): string | null };
  /** Tests: the DoH of the browser that started the host (with its endpoint), instead of the machine's. */
  browserDoh?: (currentDns: Promise<CurrentDns>) => Promise<BrowserDoh | null>;
}

interface Ctx {
  send(reply: Reply): void;
  deadlineMs: number;
  heartbeatMs: number;
  running: Map<RequestId, AbortController>;
  /** A framing error ends the host: running work stops and is not reported `done` (nobody cancelled it). */
  ending: boolean;
  /** The person's current DNS (discovery starts with the host, before the first hello; again when the network changes). */
  currentDns(): Promise<CurrentDns>;
  /** The DoH of the browser that started the host (null when none did), found once beside the current DNS. */
  browserDoh(): Promise<BrowserDoh | null>;
  /** Exchanges sent to each public resolver in the last hour (exchange-budget.ts). */
  budget: ExchangeBudget;
  /** A probe is running (one at a time: each asks every endpoint some thirty questions and handshakes). */
  probing: boolean;
}

const handlers: Handlers<Ctx> = {
  async hello(req, ctx) {
    ctx.send({
      id: req.id, type: 'hello', version: VERSION, protocol: PROTOCOL_VERSION, transports: availableTransports(),
      currentDns: await ctx.currentDns(), ipv6: await ipv6Reachable(), browserDoh: await ctx.browserDoh(),
    });
  },
  async measure(req, ctx) {
    if (ctx.running.size >= MAX_CONCURRENT_MEASURES) {
      throw new DnscostError(CODES.BUSY, `${MAX_CONCURRENT_MEASURES} measurements are already running`);
    }
    if (ctx.running.has(req.id)) throw new DnscostError(CODES.BAD_REQUEST, `a measurement with id ${JSON.stringify(req.id)} is running`);
    // Every name checked before anything waits (a bad one fails its request at once, holding no slot).
    for (const h of req.hosts) normalizeHostname(typeof h === 'string' ? h : h.name);
    const abort = new AbortController();
    ctx.running.set(req.id, abort);
    let pastDeadline = false;
    const deadline = setTimeout(() => {
      pastDeadline = true;
      abort.abort();
    }, ctx.deadlineMs);
    let progress = { done: 0, total: 0 };
    const heartbeat = setInterval(() => ctx.send({ id: req.id, type: 'progress', ...progress }), ctx.heartbeatMs);
    let batch: ExchangeRecord[] = [];
    let batchBytes = 0;
    const flush = (): void => {
      if (batch.length) ctx.send({ id: req.id, type: 'records', records: batch });
      batch = [];
      batchBytes = 0;
    };
    try {
      // Never weaker than the browser: while it resolves over DoH or sends its requests through a proxy (Chromium's
      // configuration, or a Firefox page that went through one), no plain DNS
      // at all, and the split-horizon check asks only the browser's own DoH server (none: every name bound for a
      // global resolver stays home).
      const dns = await ctx.currentDns().catch(() => null);
      const browser = await ctx.browserDoh().catch(() => null);
      const encrypts = keepsNamesEncrypted(browser, req.noCleartext);
      if (encrypts) refuseCleartext(req, browser);
      const overDoh = encrypts && browser?.endpoint ? dohLookup(browser.endpoint, caFor(req, browser.endpoint)) : null;
      const check = encrypts ? overDoh : dns ? currentDnsLookup(dns) : null;
      // Names private to the person's network go to no resolver outside it (native-host/src/private-names.ts).
      const { request, withheld } = await withholdPrivateNames(req, dns, check).finally(() => overDoh?.close());
      if (request.hosts.length === 0) {
        throw new DnscostError(CODES.NO_MEASURABLE_HOSTS, `every name is kept from these resolvers: ${withheld.slice(0, 5).map((w) => `${w.name} (${w.reason})`).join(', ')}`);
      }
      // However many pages ask, a public resolver gets at most the hourly budget from this host (exchange-budget.ts).
      ctx.budget.spend(request);
      // The network at the start: what the measurement's numbers are about (native-host/src/network.ts).
      const network = currentNetwork();
      const result = await measure(
        request,
        {
          onRecord(record) {
            // Answer records only when asked (a hostile server's thousands would fill frames the extension never reads).
            record = { ...record, answers: req.answers ? cappedAnswers(record.answers) : [] };
            batch.push(record);
            batchBytes += JSON.stringify(record).length;
            if (batchBytes >= RECORD_BATCH_BYTES) flush();
          },
          onProgress(done, total) {
            progress = { done, total };
            flush();
            ctx.send({ id: req.id, type: 'progress', done, total });
          },
        },
        abort.signal,
      );
      flush();
      // The host is ending on a framing error: what was measured went out above; no `done` (cancelled) follows, the
      // port's close tells the extension the measurement was interrupted.
      if (ctx.ending) return;
      if (pastDeadline) throw new DnscostError(CODES.DEADLINE, `the measurement ran past the host's ${Math.round(ctx.deadlineMs / 1000)} s deadline and was stopped after ${result.records.length} exchanges`);
      // The CDN check (edges.ts), when asked: never for a page behind a proxy, whose browser reached no address itself.
      const edges = req.edges && !req.noCleartext && !browser?.proxy && !result.cancelled ? await edgeRows(result.records, request.hosts, abort.signal) : [];
      ctx.send({
        id: req.id,
        type: 'done',
        seed: result.seed,
        primed: result.primed,
        warmedUp: result.warmedUp,
        order: result.order,
        exchanges: result.records.length,
        cancelled: result.cancelled,
        summary: result.summary,
        ...(result.unavailable.length ? { unavailable: result.unavailable } : {}),
        ...(network ? { network } : {}),
        ...(withheld.length ? { withheld } : {}),
        ...(edges.length ? { edges } : {}),
      });
    } finally {
      clearTimeout(deadline);
      clearInterval(heartbeat);
      ctx.running.delete(req.id);
    }
  },
  async probe(req, ctx) {
    if (ctx.probing) throw new DnscostError(CODES.BUSY, 'a probe is already running');
    ctx.probing = true;
    try {
      // Never weaker than the browser (as measure): while it encrypts its DNS or goes through a proxy, the probe's
      // fixed names go to the encrypted endpoints only.
      const browser = await ctx.browserDoh().catch(() => null);
      const plainLeftOut = keepsNamesEncrypted(browser, req.noCleartext);
      const resolvers = req.resolvers
        .map((r) => (plainLeftOut ? { ...r, endpoints: r.endpoints.filter((e) => isEncrypted(e.transport)) } : r))
        .filter((r) => r.endpoints.length > 0);
      const out: ResolverProbe[] = [];
      for (const r of resolvers) out.push({ id: r.id, rows: await probe(r, { names: DEFAULT_PROBE_NAMES, timeoutMs: PROBE_TIMEOUT_MS }) });
      ctx.send({ id: req.id, type: 'probe-result', resolvers: out, plainLeftOut });
    } finally {
      ctx.probing = false;
    }
  },
  cancel(req, ctx) {
    const target = ctx.running.get(req.target);
    if (!target) throw new DnscostError(CODES.BAD_REQUEST, `no running measurement has id ${JSON.stringify(req.target)}`);
    target.abort();
  },
};

/** DNSCOST_FRAME_STALL_MS overrides the stall limit (tests shorten it); anything invalid keeps the default. */
function stallFromEnv(): number {
  const v = Number(process.env.DNSCOST_FRAME_STALL_MS);
  return Number.isInteger(v) && v >= 10 && v <= 60_000 ? v : FRAME_STALL_MS;
}

/** DNSCOST_HEARTBEAT_MS overrides the heartbeat (tests shorten it); anything invalid keeps the default. */
function heartbeatFromEnv(): number {
  const v = Number(process.env.DNSCOST_HEARTBEAT_MS);
  return Number.isInteger(v) && v >= 10 && v <= 60_000 ? v : HEARTBEAT_MS;
}

/** The id of a request that failed validation, when it has a usable one, so the error can echo it. */
function salvageId(value: unknown): RequestId | null {
  if (typeof value !== 'object' || value === null) return null;
  const id = (value as { id?: unknown }).id;
  if (typeof id === 'string' && id.length > 0 && id.length <= 128) return id;
  if (typeof id === 'number' && Number.isInteger(id) && id >= 0) return id;
  return null;
}

/** Runs the host until its input ends (true) or a framing error ends it (false). */
export async function runNative(options: NativeOptions): Promise<boolean> {
  const { input, output } = options;
  const log = options.log ?? ((line: string) => process.stderr.write(`dnscost-host: ${line}\n`));
  const decoder = new FrameDecoder(MAX_REQUEST_BYTES);
  const inflight = new Set<Promise<void>>();
  let writing: Promise<void> = Promise.resolve();
  let outputClosed = false;
  // The browser is gone: nothing can be delivered, so running work stops.
  const closed = (): void => {
    outputClosed = true;
    for (const abort of ctx.running.values()) abort.abort();
  };
  output.on('error', closed);
  output.on('close', closed);

  const send = (reply: Reply): void => {
    if (outputClosed) return;
    let body = JSON.stringify(reply);
    if (Buffer.byteLength(body) > MAX_FRAME_BYTES) {
      body = JSON.stringify({ id: reply.id, type: 'error', ...failure(CODES.INTERNAL, 'reply larger than 1 MiB was not sent') });
    }
    const frame = encodeFrame(body);
    if (!output.write(frame)) writing = writing.then(() => new Promise<void>((resolve) => output.once('drain', resolve)));
  };
  // The current DNS is found when the host starts and found again whenever the network has changed since (another
  // Wi-Fi, a VPN up or down): a split-horizon check must ask the DNS of the network the person is on now.
  const discover = options.discover ?? { currentDns: discoverCurrentDns, networkId: () => currentNetwork()?.id ?? null };
  let foundOn = discover.networkId();
  let found = discover.currentDns();
  const findBrowserDoh = options.browserDoh ?? ((dns: Promise<CurrentDns>) => withEndpoint(discoverBrowserDoh(dns)));
  let browserDoh = findBrowserDoh(found);
  const currentDns = (): Promise<CurrentDns> => {
    const now = discover.networkId();
    if (now !== foundOn) {
      foundOn = now;
      found = discover.currentDns();
      browserDoh = findBrowserDoh(found);
    }
    return found;
  };
  const ctx: Ctx = { send, deadlineMs: options.deadlineMs ?? MEASURE_DEADLINE_MS, heartbeatMs: options.heartbeatMs ?? heartbeatFromEnv(), running: new Map(), ending: false, currentDns, browserDoh: () => (currentDns(), browserDoh), budget: new ExchangeBudget(), probing: false };
  const error = (id: RequestId | null, code: ErrorCode, message: string): void => send({ id, type: 'error', ...failure(code, message) });

  let endInput: () => void = () => undefined;
  let framingFailed = false;
  const dispatch = (event: FrameEvent): void => {
    if (framingFailed) return;
    if (event.kind === 'too-large' || event.kind === 'truncated') {
      framingFailed = true;
      ctx.ending = true;
      if (event.kind === 'too-large') error(null, CODES.FRAME_TOO_LARGE, `frame of ${event.length} bytes is over the ${MAX_REQUEST_BYTES}-byte limit; the host stops`);
      else error(null, CODES.BAD_FRAME, `truncated frame: ${event.received} of ${event.expected} bytes arrived; the host stops`);
      for (const abort of ctx.running.values()) abort.abort();
      endInput();
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(event.body));
    } catch (err) {
      return error(null, CODES.BAD_JSON, `frame is not UTF-8 JSON: ${(err as Error).message}`);
    }
    const parsed = parseRequest(value);
    if (!parsed.ok) {
      const id = salvageId(value);
      const type = (value as { type?: unknown } | null)?.type;
      if (typeof type === 'string' && !REQUEST_TYPES.has(type)) {
        return error(id, CODES.UNKNOWN_TYPE, `unknown request type ${JSON.stringify(type.slice(0, 64))}`);
      }
      return error(id, CODES.BAD_REQUEST, parsed.problems.join('; '));
    }
    const req = parsed.request;
    const handler = handlers[req.type] as (r: typeof req, c: Ctx) => Promise<void> | void;
    const task = (async () => {
      try {
        await handler(req, ctx);
      } catch (err) {
        const data = toErrorData(err);
        if (data.code === CODES.INTERNAL) log(`internal error on ${req.type}: ${(err as Error)?.stack ?? String(err)}`);
        error(req.id, data.code, data.message);
      }
    })();
    inflight.add(task);
    void task.finally(() => inflight.delete(task));
  };

  let stall: NodeJS.Timeout | null = null;
  let chunks = 0;
  const armStall = (): void => {
    if (stall) clearTimeout(stall);
    stall = null;
    if (!decoder.pending) return;
    stall = setTimeout(() => {
      // A process that was stopped (SIGSTOP, a suspended machine) wakes with this timer overdue and runs it before it
      // reads the input that arrived meanwhile (timers come before I/O in the event loop): the rest of the frame may
      // already be waiting. Decide after the next I/O phase (setImmediate runs after it), when no chunk came since.
      const seen = chunks;
      setImmediate(() => {
        if (chunks !== seen || framingFailed) return;
        const event = decoder.abandon();
        if (event) dispatch(event);
      });
    }, options.stallMs ?? stallFromEnv());
  };

  await new Promise<void>((resolve) => {
    endInput = () => {
      input.removeAllListeners('data');
      input.pause();
      resolve();
    };
    input.on('data', (chunk: Buffer) => {
      chunks++;
      for (const event of decoder.push(chunk)) dispatch(event);
      if (!framingFailed) armStall();
    });
    input.on('end', resolve);
    input.on('close', resolve);
    input.on('error', (err) => {
      log(`stdin: ${err.message}`);
      resolve();
    });
  });
  if (stall) clearTimeout(stall);
  const last = framingFailed ? null : decoder.abandon();
  if (last) dispatch(last);
  for (const abort of ctx.running.values()) abort.abort();
  await Promise.allSettled([...inflight]);
  await writing;
  await new Promise<void>((resolve) => (outputClosed ? resolve() : output.write(Buffer.alloc(0), () => resolve())));
  return !framingFailed;
}
