// The collector's HTTP endpoints. Every request passes the checks that cost least first (route, method, rate,
// headers, declared length), then the body is read against the size limit, parsed, and validated by the one batch
// schema before the store sees anything. Every refusal is `{ok: false, code, message}` with a stable code.
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { POPULAR_SITES } from '../common/popular-sites.js';
import { BATCH_KEY, DELETION_TOKEN, DELETION_TOKEN_HEADER, NETWORK_TYPES, UPLOAD_LIMITS, UPLOAD_RESOLVERS, validateBatch } from '../common/upload-batch.js';
import { CODES, type CollectorCode } from '../common/errors.js';
import { MODES, TRANSPORT_IDS, TRANSPORTS } from '../common/transports.js';
import { QueueFull, type GroupCommitter } from './group-commit.js';
import { OPEN_DATA_SCHEMA, type OpenData } from './open-data.js';
import { clientOf, Holdings, type RateLimiter } from './rate-limit.js';
import type { AggregateFilter, PublishedAnswer } from './publisher.js';
import type { BatchRow, PutOutcome, Store } from './store.js';

/** A file the dashboard needs, held in memory. */
export interface Asset {
  type: string;
  body: Buffer;
}

/** What the handlers share; server.ts builds it. */
export interface RouteContext {
  store: Store;
  committer: GroupCommitter<BatchRow, PutOutcome>;
  limiter: RateLimiter | null;
  /** Proxies whose X-Forwarded-For is believed (canonical addresses); empty: the socket's peer is the client. */
  trustedProxies: ReadonlySet<string>;
  /** The published cells matching a filter (collector/publisher.ts); never computed per request. */
  aggregates: (filter: AggregateFilter) => Promise<PublishedAnswer>;
  /** The published days as files (collector/open-data.ts). */
  openData: Pick<OpenData, 'index' | 'file'>;
  /** Called with each stored page's hour, so a due day that just got its first page is published at the next answer. */
  stored: (hour: string) => void;
  assets: ReadonlyMap<string, Asset>;
  now: () => number;
  /** Upload bodies being received now (server.ts, BodyBudget). */
  bodies: BodyBudget;
}

/**
 * Memory for upload bodies being received, by the length each declares (a body without one counts as the largest
 * allowed): at most `budget` bytes over every connection and `perClient` bytes for one client (an IPv4 address, an
 * IPv6 /64), plus a `reserve` only bodies of at most SMALL_BODY bytes may use, so that slow large bodies cannot hold
 * out the small uploads honest clients send. A body is let in only when it fits; it holds its share until it has
 * been read, refused or cut.
 */
export class BodyBudget {
  private inFlight = 0;
  private perClient = new Holdings();
  constructor(readonly opts: { budget: number; perClient: number; reserve: number }) {}

  /** Holds `bytes` for `client`, or returns null when they do not fit; the release function gives them back once. */
  admit(client: string, bytes: number): (() => void) | null {
    const limit = this.opts.budget + (bytes <= SMALL_BODY ? this.opts.reserve : 0);
    if (this.perClient.of(client) + bytes > this.opts.perClient || this.inFlight + bytes > limit) return null;
    this.inFlight += bytes;
    const releaseClient = this.perClient.hold(client, bytes);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.inFlight -= bytes;
      releaseClient();
    };
  }

  /** Bytes held now, over every client. */
  held(): number {
    return this.inFlight;
  }
}

/** A body this small may use the reserve: a few pages' batch is a few kB. */
export const SMALL_BODY = 32 * 1024;

type Handler = (req: IncomingMessage, res: ServerResponse, ctx: RouteContext, match: RegExpExecArray) => Promise<void>;

/** A refusal on its way to the client. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: CollectorCode,
    message: string,
    readonly extra: { path?: string; headers?: Record<string, string> } = {},
  ) {
    super(message);
  }
}

// The rest of a refused body is read and dropped up to this much (so the client sees the answer instead of a
// reset); past it the connection is cut.
const DRAIN_BYTES = 4 * UPLOAD_LIMITS.bodyBytes;

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // Scripts and styles only from files of this origin: the dashboard has no inline script or style.
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

// The dashboard's files and lists may be reused for five minutes.
const ASSET_CACHE = 'public, max-age=300';

const ROUTES: Array<[RegExp, Record<string, Handler>]> = [
  [/^\/v1\/batches$/, { POST: upload }],
  [/^\/v1\/batches\/([^/]*)$/, { DELETE: remove }],
  [/^\/v1\/aggregates$/, { GET: aggregates }],
  [/^\/v1\/vocabulary$/, { GET: vocabulary }],
  [/^\/v1\/open-data$/, { GET: openDataIndex }],
  [/^\/v1\/open-data\/schema\.json$/, { GET: openDataSchema }],
  [/^\/v1\/open-data\/(\d{4}-\d{2}-\d{2})\.jsonl\.gz$/, { GET: openDataFile }],
  [/^\/healthz$/, { GET: health }],
  [/^\/(|dashboard\.js|dashboard\.css|uplot\.min\.js|uplot\.min\.css)$/, { GET: asset }],
];

/**
 * The request's target as a URL on this collector: origin-form (RFC 9112 §3.2.1) read as a path even when it starts
 * with "//" (which new URL(target, base) would take for a host); anything unreadable is a path no route has.
 */
function requestUrl(req: IncomingMessage): URL {
  const target = req.url ?? '/';
  try {
    return new URL(`http://collector${target.startsWith('/') ? target : `/${target}`}`);
  } catch {
    throw new HttpError(404, CODES.NOT_FOUND, 'no such endpoint');
  }
}

/** Answers one request; never throws. */
export async function handle(req: IncomingMessage, res: ServerResponse, ctx: RouteContext): Promise<void> {
  try {
    const path = requestUrl(req).pathname;
    for (const [pattern, methods] of ROUTES) {
      const match = pattern.exec(path);
      if (!match) continue;
      // Own properties only: a method named `valueOf` or `constructor` is no handler (the routing fuzz's second find).
      const handler = Object.hasOwn(methods, req.method ?? '') ? methods[req.method!] : undefined;
      if (!handler) throw new HttpError(405, CODES.METHOD_NOT_ALLOWED, `${req.method} is not allowed here`, { headers: { allow: Object.keys(methods).join(', ') } });
      return await handler(req, res, ctx, match);
    }
    throw new HttpError(404, CODES.NOT_FOUND, 'no such endpoint');
  } catch (err) {
    const e = err instanceof HttpError ? err : new HttpError(500, CODES.INTERNAL, 'internal error');
    if (!(err instanceof HttpError)) console.error(`dnscost-collector: ${req.method} ${req.url?.split('?')[0]}: ${(err as Error)?.stack ?? String(err)}`);
    send(res, e.status, { ok: false, code: e.code, message: e.message, ...(e.extra.path === undefined ? {} : { path: e.extra.path }) }, e.extra.headers);
  }
}

/** Strict UTF-8 (a body that is not is refused); one decoder, as decode() without streaming keeps no state. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

async function upload(req: IncomingMessage, res: ServerResponse, ctx: RouteContext): Promise<void> {
  limit(req, ctx);
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw new HttpError(415, CODES.BAD_CONTENT_TYPE, 'content-type must be application/json');
  const token = deletionToken(req);
  const body = await readBody(req, UPLOAD_LIMITS.bodyBytes, ctx.bodies, clientOf(req.socket.remoteAddress, req.headers['x-forwarded-for'], ctx.trustedProxies));
  let value: unknown;
  try {
    value = JSON.parse(UTF8.decode(body));
  } catch {
    throw new HttpError(400, CODES.BAD_JSON, 'the body is not UTF-8 JSON');
  }
  const checked = validateBatch(value, { now: ctx.now });
  if (!checked.ok) throw new HttpError(400, checked.code, checked.message, { path: checked.path });
  const { batch } = checked;
  // The label is for the person's own view; the collector needs only the network type and never keeps the label.
  // A retry resends the same bytes, so the body's own bytes decide replay vs conflict (no re-serialising).
  const row: BatchRow = { key: batch.key, bodySha256: sha256(body), tokenSha256: sha256(token), network: batch.network.type, pages: batch.pages };
  let outcome: PutOutcome;
  try {
    outcome = await ctx.committer.submit(row);
  } catch (err) {
    if (err instanceof QueueFull) throw new HttpError(503, CODES.UNAVAILABLE, 'too many uploads are waiting; retry later', { headers: { 'retry-after': '5' } });
    console.error(`dnscost-collector: store: ${(err as Error)?.message ?? String(err)}`);
    throw new HttpError(503, CODES.UNAVAILABLE, 'the batch was not stored; retry later', { headers: { 'retry-after': '1' } });
  }
  if (outcome === 'stored') for (const p of batch.pages) ctx.stored(p.hour);
  if (outcome === 'conflict') throw new HttpError(409, CODES.KEY_CONFLICT, 'this key was already used for a different batch or deletion token');
  send(res, outcome === 'stored' ? 201 : 200, { ok: true, key: batch.key, duplicate: outcome === 'duplicate' });
}

async function remove(req: IncomingMessage, res: ServerResponse, ctx: RouteContext, match: RegExpExecArray): Promise<void> {
  limit(req, ctx);
  const token = deletionToken(req);
  const key = match[1]!;
  // Unknown key and wrong token answer alike, so the endpoint tells nobody which keys exist.
  if (!BATCH_KEY.test(key) || !(await ctx.store.delete(key, sha256(token)))) throw new HttpError(404, CODES.NOT_FOUND, 'no batch with this key and deletion token');
  send(res, 200, { ok: true, key, deleted: true });
}

const oneOf = (list: readonly string[]) => (value: string) => list.includes(value);
const FILTERS: Record<keyof AggregateFilter, (value: string) => boolean> = {
  epoch: (value) => /^\d{4}-\d{2}-\d{2}$/.test(value),
  resolver: oneOf(UPLOAD_RESOLVERS),
  transport: oneOf(TRANSPORT_IDS),
  network: oneOf(NETWORK_TYPES),
  site: oneOf([...POPULAR_SITES, 'other']),
};

// Published figures change only when another day is published: a minute of reuse by caches costs nothing.
const AGGREGATES_CACHE = 'public, max-age=60';

async function aggregates(req: IncomingMessage, res: ServerResponse, ctx: RouteContext): Promise<void> {
  limit(req, ctx);
  const filter: AggregateFilter = {};
  for (const [name, value] of requestUrl(req).searchParams) {
    // Own properties only: `?constructor=x` names no filter (it is not Object.prototype's).
    const allowed = Object.hasOwn(FILTERS, name) ? FILTERS[name as keyof AggregateFilter] : undefined;
    if (!allowed) throw new HttpError(400, CODES.BAD_QUERY, `unknown filter; use ${Object.keys(FILTERS).join(', ')}`);
    if (value === '') continue;
    if (!allowed(value)) throw new HttpError(400, CODES.BAD_QUERY, `unknown ${name}`);
    filter[name as keyof AggregateFilter] = value;
  }
  const answer: PublishedAnswer = await published(() => ctx.aggregates(filter));
  // The publisher hands out the same answer until the published days change: serialized once (an unfiltered answer
  // over many days is megabytes).
  let text = ANSWER_TEXT.get(answer);
  if (text === undefined) ANSWER_TEXT.set(answer, (text = JSON.stringify({ ok: true, ...answer })));
  sendText(res, 200, text, { 'cache-control': AGGREGATES_CACHE });
}

const ANSWER_TEXT = new WeakMap<PublishedAnswer, string>();

/**
 * The lists the dashboard draws and filters by, from the tables the upload schema checks against (GET /v1/vocabulary):
 * transports in table order with their names (`name` for sentences, `short` for tables and charts), then resolvers,
 * network types and modes as the aggregates' cells spell them.
 */
export const VOCABULARY = {
  ok: true,
  transports: TRANSPORT_IDS.map((id) => ({ id, name: TRANSPORTS[id].name, short: TRANSPORTS[id].short })),
  resolvers: UPLOAD_RESOLVERS,
  networks: NETWORK_TYPES,
  modes: MODES,
} as const;

// The lists change only with a new collector, like the dashboard's files: cached as long.
async function vocabulary(req: IncomingMessage, res: ServerResponse, ctx: RouteContext): Promise<void> {
  limit(req, ctx);
  send(res, 200, VOCABULARY, { 'cache-control': ASSET_CACHE });
}

/** The open data's index: every published day's file with its size and SHA-256, and what shaped the figures. */
async function openDataIndex(req: IncomingMessage, res: ServerResponse, ctx: RouteContext): Promise<void> {
  limit(req, ctx);
  const days = await published(() => ctx.openData.index());
  send(res, 200, { ok: true, schema: 'v1/open-data/schema.json', privacy: OPEN_DATA_SCHEMA.description, days }, { 'cache-control': AGGREGATES_CACHE });
}

async function openDataSchema(req: IncomingMessage, res: ServerResponse, ctx: RouteContext): Promise<void> {
  limit(req, ctx);
  send(res, 200, OPEN_DATA_SCHEMA, { 'cache-control': ASSET_CACHE, 'content-type': 'application/schema+json' });
}

/** One day's file: immutable once published, so cached for a year and tagged with its SHA-256. */
async function openDataFile(req: IncomingMessage, res: ServerResponse, ctx: RouteContext, match: RegExpExecArray): Promise<void> {
  limit(req, ctx);
  const found = await published(() => ctx.openData.file(match[1]!));
  if (!found) throw new HttpError(404, CODES.NOT_FOUND, `no publication for ${match[1]}`);
  const etag = `"${found.day.sha256}"`;
  const headers = { etag, 'cache-control': 'public, max-age=31536000, immutable', ...SECURITY_HEADERS };
  if (req.headers['if-none-match'] === etag) return void res.writeHead(304, headers).end();
  res.writeHead(200, { ...headers, 'content-type': 'application/gzip', 'content-length': found.body.length, 'content-disposition': `attachment; filename="dnscost-${match[1]}.jsonl.gz"` });
  res.end(found.body);
}

/** Reads published figures; a store that fails is a 503 to retry, as for the aggregates. */
async function published<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    console.error(`dnscost-collector: publication: ${(err as Error)?.message ?? String(err)}`);
    throw new HttpError(503, CODES.UNAVAILABLE, 'the published figures cannot be read now; retry later', { headers: { 'retry-after': '5' } });
  }
}

async function health(_req: IncomingMessage, res: ServerResponse, ctx: RouteContext): Promise<void> {
  try {
    await ctx.store.ping();
  } catch {
    throw new HttpError(503, CODES.UNAVAILABLE, 'the store does not answer');
  }
  send(res, 200, { ok: true, store: ctx.store.kind });
}

async function asset(_req: IncomingMessage, res: ServerResponse, ctx: RouteContext, match: RegExpExecArray): Promise<void> {
  const file = ctx.assets.get(match[1] || 'index.html');
  if (!file) throw new HttpError(404, CODES.NOT_FOUND, 'no such file');
  res.writeHead(200, { 'content-type': file.type, 'content-length': file.body.length, 'cache-control': ASSET_CACHE, ...SECURITY_HEADERS });
  res.end(file.body);
}

function limit(req: IncomingMessage, ctx: RouteContext): void {
  const verdict = ctx.limiter?.take(clientOf(req.socket.remoteAddress, req.headers['x-forwarded-for'], ctx.trustedProxies));
  if (verdict && !verdict.ok) {
    throw new HttpError(429, CODES.RATE_LIMITED, 'too many requests; slow down', { headers: { 'retry-after': String(verdict.retryAfterS) } });
  }
}

function deletionToken(req: IncomingMessage): string {
  const token = req.headers[DELETION_TOKEN_HEADER];
  if (typeof token !== 'string' || !DELETION_TOKEN.test(token)) {
    throw new HttpError(400, CODES.BAD_DELETION_TOKEN, `send a ${DELETION_TOKEN_HEADER} header of 32–128 characters of A–Z a–z 0–9 _ -`);
  }
  return token;
}

/**
 * Reads the body, refusing it (413) as soon as it is known to exceed `max` bytes, or (503, Retry-After) when it does
 * not fit in the memory for bodies being received (BodyBudget): many slow bodies cannot fill the memory.
 */
function readBody(req: IncomingMessage, max: number, bodies: BodyBudget, client: string): Promise<Buffer> {
  const tooLarge = () => {
    let dropped = 0;
    req.on('data', (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > DRAIN_BYTES) req.socket.destroy();
    });
    return new HttpError(413, CODES.BODY_TOO_LARGE, `the body is larger than ${max} bytes`, { headers: { connection: 'close' } });
  };
  const declared = req.headers['content-length'] === undefined ? max : Number(req.headers['content-length']);
  if (declared > max) return Promise.reject(tooLarge());
  const release = bodies.admit(client, declared);
  if (!release) {
    return Promise.reject(new HttpError(503, CODES.UNAVAILABLE, 'too many uploads are being received; retry later', { headers: { 'retry-after': '5', connection: 'close' } }));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      // No more than it declared (a body without a length declared the most allowed).
      if (size <= declared) return void chunks.push(chunk);
      req.off('data', onData);
      req.off('end', onEnd);
      release();
      reject(tooLarge());
    };
    const onEnd = () => {
      release();
      resolve(Buffer.concat(chunks, size));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', (err) => {
      release();
      reject(err);
    });
    req.once('close', release);
  });
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendText(res, status, JSON.stringify(body), headers);
}

/** Sends `text`, a JSON document already serialized. */
function sendText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return void res.destroy();
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store', ...SECURITY_HEADERS, ...headers });
  res.end(text);
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
