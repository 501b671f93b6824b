// The upload batch: what leaves a person's machine when they turn uploads on, and the only shape the collector
// accepts. Pure (no `node:` or DOM): the extension builds and previews batches with it, the collector validates
// every request body with it before anything else looks at the bytes.
//
// Privacy is enforced by shape, not by trust: a page is a per-page aggregate (no URL, path, query, IP address,
// hostname other than a popular `site`, nor any per-lookup record), every object is strict, every number bounded,
// time is cut to the hour, and there is no free text. Every number sits on a coarse log grid (coarse, coarseCount):
// exact figures would single a page out (unpadded Do53 bytes encode the total length of its names), and a batch holds
// one page, so two pages of one person share nothing but what any two pages share. The batch `key` is random per
// batch (never reused) so it cannot link two uploads.
import * as v from 'valibot';
import { POPULAR_SITES } from './popular-sites.js';
import { MODES, TRANSPORT_IDS } from './transports.js';
import { PERSON_CAP } from './privacy-budget.js';
import { CODES, type BatchCode } from './errors.js';

/** Version of the batch shape; the collector refuses any other. */
export const UPLOAD_BATCH_VERSION = 3;

/** Resolver ids an upload may name: the public defaults, the system's own, and any person-configured one. */
export const UPLOAD_RESOLVERS = ['cloudflare', 'google', 'quad9', 'system', 'custom'] as const;
/** Kinds of network a person may say they are on. */
export const NETWORK_TYPES = ['wifi', 'ethernet', 'cellular', 'other', 'unknown'] as const;
export type NetworkType = (typeof NETWORK_TYPES)[number];

/** Bounds of a batch; the collector enforces bodyBytes while reading, before parsing. */
export const UPLOAD_LIMITS = {
  /** Largest request body; a client splits its pages over several batches to stay under it. */
  bodyBytes: 256 * 1024,
  /** One page per batch: pages of one person are not tied together by their batch. */
  pages: 1,
  /** Results per page: a sample of the page's, one per resolver × transport × mode (common/privacy-budget.ts). */
  resultsPerPage: PERSON_CAP.resultsPerPage,
  /** Hosts one page may have needed (common/page-record.ts keeps at most 500; 512 is on the count grid). */
  hostsPerPage: 512,
  lookupsPerResult: 100_000,
  /** Longest lookup time or onLoad change accepted, ms (anything longer is a timeout, not a measurement). */
  ms: 60_000,
  bytesPerLookup: 900_000,
  packetsPerLookup: 10_000,
  /** Oldest hour accepted, in days before now; and how far ahead of the collector's clock a client may be. */
  maxAgeDays: 90,
  maxSkewHours: 2,
} as const;


/** Header carrying a batch's deletion secret (upload and delete); the collector keeps only its SHA-256. */
export const DELETION_TOKEN_HEADER = 'dnscost-deletion-token';
/** A deletion secret: 32–128 characters of A–Z a–z 0–9 _ - (e.g. 32 random bytes, base64url). */
export const DELETION_TOKEN = /^[A-Za-z0-9_-]{32,128}$/;
/** A batch key, as in uploadBatch. */
export const BATCH_KEY = /^[A-Za-z0-9_-]{16,64}$/;

/** Why a batch was refused: a stable code, a message, and where (`pages.3.results.0.p95Ms`; "" for the whole). */
export interface BatchError {
  code: BatchCode;
  message: string;
  path: string;
}

/** Steps per doubling of a continuous value (times, bytes, packets): 4, each about 19 % from the next. */
const GRID_STEPS = 4;
const GRID_MESSAGE = 'not on the upload grid';

/** `x` on the upload grid: 0 under 1, else ±2^(k/4) to three significant digits (…, 9.51, 11.3, 13.5, 16, 19, …). */
export function coarse(x: number): number {
  const a = Math.abs(x);
  if (!(a >= 1)) return 0;
  const v = Number((2 ** (Math.round(Math.log2(a) * GRID_STEPS) / GRID_STEPS)).toPrecision(3));
  return x < 0 ? -v : v;
}

/** `x` on the grid and within ±max: the grid value next to max where coarse(x) would pass it. */
export function coarseWithin(x: number, max: number): number {
  const c = coarse(Math.max(-max, Math.min(max, x)));
  if (Math.abs(c) <= max) return c;
  return Math.sign(c) * coarse(max / 2 ** (1 / GRID_STEPS));
}

/** A count on the grid: exact up to 4, then 2^(k/2) rounded (6, 8, 11, 16, 23, 32, 45, …). */
export function coarseCount(n: number): number {
  if (!(n > 4)) return Math.max(0, Math.round(n || 0));
  return Math.round(2 ** (Math.round(Math.log2(n) * 2) / 2));
}

/**
 * Every value coarse() returns up to ±2^24 (past every bound of an upload): the grid check is a set lookup, the same
 * as `coarse(x) === x` (upload-batch.test.ts) without its string rounding on the collector's hot path.
 */
const GRID = new Set([0, ...Array.from({ length: 24 * GRID_STEPS + 1 }, (_, k) => coarse(2 ** (k / GRID_STEPS))).flatMap((g) => [g, -g])]);
const onGrid = v.check((x: number) => GRID.has(x), `${GRID_MESSAGE} (coarse)`);
const countOnGrid = v.check((n: number) => coarseCount(n) === n, `${GRID_MESSAGE} (coarseCount)`);

const int = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max), countOnGrid);
const num = (min: number, max: number) => v.pipe(v.number(), v.minValue(min), v.maxValue(max), onGrid);
const ms = num(0, UPLOAD_LIMITS.ms);
const list = <T extends v.GenericSchema>(item: T, max: number) => v.pipe(v.array(item), v.minLength(1), v.maxLength(max));

/** A UTC hour, "2026-11-21T14Z": coarse on purpose, so a page's time cannot single out a visit. */
const hour = v.pipe(v.string(), v.regex(/^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3])Z$/, 'a UTC hour like 2026-11-21T14Z'));

/** The estimated change of a page's onLoad time if its lookups had used this resolver × transport, with bounds. */
const onload = v.pipe(
  v.strictObject({ pointMs: num(-UPLOAD_LIMITS.ms, UPLOAD_LIMITS.ms), lowMs: num(-UPLOAD_LIMITS.ms, UPLOAD_LIMITS.ms), highMs: num(-UPLOAD_LIMITS.ms, UPLOAD_LIMITS.ms) }),
  v.check((o) => o.lowMs <= o.pointMs && o.pointMs <= o.highMs, 'needs lowMs ≤ pointMs ≤ highMs'),
);

/** What one resolver × transport × mode did for one page's hostnames. */
const result = v.pipe(
  v.strictObject({
    resolver: v.picklist(UPLOAD_RESOLVERS),
    transport: v.picklist(TRANSPORT_IDS),
    mode: v.picklist(MODES),
    lookups: int(1, UPLOAD_LIMITS.lookupsPerResult),
    failures: int(0, UPLOAD_LIMITS.lookupsPerResult),
    /** Lookup time over the successful lookups; null when every lookup failed. */
    medianMs: v.nullable(ms),
    p5Ms: v.nullable(ms),
    p95Ms: v.nullable(ms),
    /** null when no estimate was made (e.g. the page's onLoad was not seen). */
    onload: v.nullable(onload),
    /** Per lookup, on the wire (set-up included for cold lookups); null when not counted. */
    bytesPerLookup: v.nullable(num(0, UPLOAD_LIMITS.bytesPerLookup)),
    packetsPerLookup: v.nullable(num(0, UPLOAD_LIMITS.packetsPerLookup)),
  }),
  v.check((r) => r.failures <= r.lookups, 'needs failures ≤ lookups'),
  v.check(
    (r) => (r.medianMs !== null || r.failures === r.lookups) &&
      (r.medianMs === null) === (r.p5Ms === null) && (r.p5Ms === null) === (r.p95Ms === null),
    'medianMs, p5Ms and p95Ms are all null or none, and null only when every lookup failed',
  ),
  v.check((r) => r.medianMs === null || (r.p5Ms! <= r.medianMs && r.medianMs <= r.p95Ms!), 'needs p5Ms ≤ medianMs ≤ p95Ms'),
);

/** One page: which popular site (or "other"), when (to the hour), how many hosts, and the results. */
const page = v.pipe(
  v.strictObject({
    site: v.picklist([...POPULAR_SITES, 'other']),
    hour,
    hosts: int(1, UPLOAD_LIMITS.hostsPerPage),
    results: list(result, UPLOAD_LIMITS.resultsPerPage),
  }),
  v.check(
    (p) => new Set(p.results.map((r) => `${r.resolver} ${r.transport} ${r.mode}`)).size === p.results.length,
    'each resolver × transport × mode appears once per page',
  ),
);

/** A whole upload. */
export const uploadBatch = v.strictObject({
  version: v.literal(UPLOAD_BATCH_VERSION),
  /** Idempotency key, random per batch: a retry sends the same key and body, and is stored once. */
  key: v.pipe(v.string(), v.regex(BATCH_KEY, '16–64 characters of A–Z a–z 0–9 _ -')),
  network: v.strictObject({ type: v.picklist(NETWORK_TYPES) }),
  pages: list(page, UPLOAD_LIMITS.pages),
});
export type UploadBatch = v.InferOutput<typeof uploadBatch>;
export type UploadPage = UploadBatch['pages'][number];
export type UploadResult = UploadPage['results'][number];

/** Clock for the hour bounds; a parameter so tests pass a fixed one. */
export interface ValidateOptions {
  now?: () => number;
}

/**
 * Validates an already-parsed body: the batch, or the first problem as `{code, message, path}`. Never throws.
 * Besides the shape, every page's hour must be at most maxAgeDays old and at most maxSkewHours ahead of `now`.
 */
export function validateBatch(value: unknown, { now = Date.now }: ValidateOptions = {}): { ok: true; batch: UploadBatch } | ({ ok: false } & BatchError) {
  // valibot takes an array for an object with missing keys; a batch is never one.
  if (Array.isArray(value)) return { ok: false, code: CODES.BAD_TYPE, message: 'a batch is an object, not an array', path: '' };
  const parsed = v.safeParse(uploadBatch, value, { abortEarly: true });
  if (!parsed.success) return { ok: false, ...toBatchError(parsed.issues[0]) };
  const batch = parsed.output;
  const t = now();
  for (const [i, p] of batch.pages.entries()) {
    const at = Date.parse(`${p.hour.slice(0, -1)}:00:00Z`);
    // Date.parse accepts 2026-02-31 and rolls it over; the round trip refuses such dates.
    const real = Number.isFinite(at) && new Date(at).toISOString().slice(0, 13) === p.hour.slice(0, -1);
    if (!real || at < t - UPLOAD_LIMITS.maxAgeDays * 86_400_000 || at > t + UPLOAD_LIMITS.maxSkewHours * 3_600_000) {
      return { ok: false, code: CODES.OUT_OF_RANGE, message: `hour ${p.hour} is not a real hour within the last ${UPLOAD_LIMITS.maxAgeDays} days`, path: `pages.${i}.hour` };
    }
  }
  return { ok: true, batch };
}

function toBatchError(issue: v.BaseIssue<unknown> | undefined): BatchError {
  const path = (issue?.path ?? []).map((p) => String(p.key)).join('.');
  // valibot messages quote the received value; cut them so a hostile string is not echoed at length.
  const message = `${path || '(batch)'}: ${(issue?.message ?? 'invalid').slice(0, 160)}`;
  return { code: codeOf(issue, path), message, path };
}

function codeOf(issue: v.BaseIssue<unknown> | undefined, path: string): BatchCode {
  switch (issue?.type) {
    case 'literal':
      return path === 'version' ? CODES.BAD_VERSION : CODES.BAD_VALUE;
    case 'strict_object':
      if (issue.expected === 'never') return CODES.UNKNOWN_FIELD;
      return issue.received === 'undefined' && path !== '' ? CODES.MISSING_FIELD : CODES.BAD_TYPE;
    case 'min_value':
    case 'max_value':
    case 'integer':
      return CODES.OUT_OF_RANGE;
    case 'max_length':
      return issue.input !== undefined && Array.isArray(issue.input) ? CODES.TOO_MANY_ITEMS : CODES.BAD_VALUE;
    case 'check':
      // The grid's checks are about one number; every other check relates fields of one object.
      return issue.message.startsWith(GRID_MESSAGE) ? CODES.TOO_PRECISE : CODES.INCONSISTENT;
    case 'picklist':
    case 'regex':
    case 'min_length':
      return CODES.BAD_VALUE;
    default:
      return CODES.BAD_TYPE;
  }
}
