// Reading a HAR 1.2 file: one validator where the bytes enter (the lab's rebuilt pages, `dnscost-host measure --har`),
// turning Chrome DevTools, chrome-har, WebPageTest and Firefox exports into one normalised list of requests of the
// first page. Anything malformed is a HarError with a stable code and a message naming the problem (the entry, the
// field); never a crash. Pure (no `node:`): the file is read by native-host/src/hosts-input.ts.
//
// Initiators come in several dialects, all read here and nowhere else:
// - chrome-har: `_initiator_detail` (a JSON string {type, url, lineNumber, stack}), `_initiator_type`, `_initiator`
//   (the initiator's URL as a string);
// - Chrome DevTools' own export: `_initiator` as an object {type, url, stack};
// - WebPageTest: `_initiator` (URL string) and `_initiator_type`;
// - Firefox: optionally `_cause` {type, loadingDocumentUri, stacktrace[{filename}]}; often nothing at all.
// A request with no initiator at all counts as found by the document ("other").

/** Why a HAR was refused. */
export type HarErrorCode = 'unreadable' | 'not-json' | 'not-har' | 'no-entries' | 'bad-entry' | 'no-requests';

/** A HAR that cannot be used, with a stable code and a message naming the problem. */
export class HarError extends Error {
  override name = 'HarError';
  /** Makes an error with `code` and a message a person can act on. */
  constructor(
    readonly code: HarErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** How a request was found, normalised across dialects; `frames` are script URLs, innermost first. */
export interface HarInitiator {
  kind: 'parser' | 'script' | 'other' | 'preflight';
  url: string | null;
  frames: string[];
}

/** One request of the page as the HAR gives it (missing numbers are null, never guessed here). */
export interface HarRequest {
  /** Position in the HAR's log.entries. */
  index: number;
  url: string;
  method: string;
  /** The response's status; 0 when the HAR has none (a failed or blocked request). */
  status: number;
  /** Absolute redirect target (redirectURL or the Location header, resolved against url), or null. */
  redirectURL: string | null;
  /** `_resourceType` (Chrome) or `_cause.type` (Firefox), lower-cased; null when absent. */
  resourceType: string | null;
  mimeType: string;
  /** Start, in ms on the HAR's clock (`_requestTime` when every entry has one, else startedDateTime). */
  startMs: number;
  /** Total time of the request (entry.time, else the sum of its timings), ≥ 0. */
  timeMs: number;
  /**
   * When this request's own DNS lookup began, on the HAR's clock: startMs + timings.blocked (its wait in the browser's
   * queue), when it made one (timings.dns > 0); else null.
   */
  dnsStartMs: number | null;
  /** timings.wait (waiting for the first byte), or null. */
  waitMs: number | null;
  contentSize: number | null;
  transferSize: number | null;
  bodySize: number | null;
  initiator: HarInitiator;
  /** The response had `Timing-Allow-Origin`. */
  timingAllowOrigin: boolean;
  /** serverIPAddress (without brackets), or null. */
  serverIp: string | null;
}

/** A validated HAR: its first page's requests in the file's order. */
export interface Har {
  creator: string;
  pageTitle: string | null;
  /** pages[0].pageTimings.onLoad (ms after the page started), when given. */
  onLoadMs: number | null;
  onContentLoadMs: number | null;
  requests: HarRequest[];
}

type Json = Record<string, unknown>;
/** The WHATWG URL parser, a global wherever this runs (browsers, workers, Node) but in no library this folder loads. */
interface WhatwgUrl {
  href: string;
}
const Url = (globalThis as unknown as { URL: new (input: string, base?: string) => WhatwgUrl }).URL;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
// HAR uses -1 for "not applicable" in sizes and timings.
const size = (v: unknown): number | null => { const n = num(v); return n !== null && n >= 0 ? n : null; };

/** Validates HAR text (`name` labels messages) and returns its first page's requests. */
export function parseHar(text: string, name = 'HAR'): Har {
  let doc: unknown;
  try {
    doc = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (e) {
    throw new HarError('not-json', `${name} is not JSON: ${(e as Error).message}`);
  }
  if (!isObject(doc) || !isObject(doc.log)) throw new HarError('not-har', `${name} has no "log" object: not a HAR file`);
  const log = doc.log;
  if (!Array.isArray(log.entries)) throw new HarError('no-entries', `${name} has no log.entries array`);
  const pages = Array.isArray(log.pages) ? log.pages.filter(isObject) : [];
  const page = pages[0];
  const pageId = page ? str(page.id) : null;
  const timings = page && isObject(page.pageTimings) ? page.pageTimings : {};
  const raw: { entry: Json; index: number }[] = [];
  log.entries.forEach((entry: unknown, index: number) => {
    if (!isObject(entry)) throw new HarError('bad-entry', `${name}: entry ${index} is not an object`);
    // Only the first page: entries of other pages are another load; entries without a pageref belong to no page.
    if (pageId !== null && typeof entry.pageref === 'string' && entry.pageref !== pageId) return;
    raw.push({ entry, index });
  });
  if (raw.length === 0) throw new HarError('no-requests', `${name} has no entries${pageId ? ` for its first page "${pageId}"` : ''}`);
  const useRequestTime = raw.every(({ entry }) => num(entry._requestTime) !== null);
  const requests = raw.map(({ entry, index }) => request(entry, index, name, useRequestTime));
  const creator = isObject(log.creator) ? [str(log.creator.name), str(log.creator.version)].filter(Boolean).join(' ') : '';
  return {
    creator,
    pageTitle: page ? str(page.title) : null,
    onLoadMs: size(timings.onLoad),
    onContentLoadMs: size(timings.onContentLoad),
    requests,
  };
}

function request(e: Json, index: number, name: string, useRequestTime: boolean): HarRequest {
  const where = `${name}: entry ${index}`;
  if (!isObject(e.request)) throw new HarError('bad-entry', `${where} has no request object`);
  const url = str(e.request.url);
  if (!url) throw new HarError('bad-entry', `${where} has no request.url`);
  let parsed: WhatwgUrl;
  try {
    parsed = new Url(url);
  } catch {
    throw new HarError('bad-entry', `${where} has a request.url that is not a URL: ${JSON.stringify(url.slice(0, 200))}`);
  }
  const res = isObject(e.response) ? e.response : {};
  const content = isObject(res.content) ? res.content : {};
  const t = isObject(e.timings) ? e.timings : {};
  let startMs: number;
  if (useRequestTime) startMs = num(e._requestTime)! * 1000;
  else {
    const started = str(e.startedDateTime);
    const ms = started ? Date.parse(started) : NaN;
    if (!Number.isFinite(ms)) throw new HarError('bad-entry', `${where} has no valid startedDateTime`);
    startMs = ms;
  }
  const sum = ['blocked', 'dns', 'connect', 'send', 'wait', 'receive'].reduce((a, k) => a + (size(t[k]) ?? 0), 0);
  const headers = Array.isArray(res.headers) ? res.headers.filter(isObject) : [];
  const header = (h: string) => str(headers.find((x) => str(x.name)?.toLowerCase() === h)?.value);
  const redirect = str(res.redirectURL) || header('location');
  let redirectURL: string | null = null;
  if (redirect) {
    try {
      redirectURL = new Url(redirect, parsed.href).href;
    } catch { /* an unusable Location is no redirect to follow */ }
  }
  const cause = isObject(e._cause) ? e._cause : null;
  const type = str(e._resourceType) ?? (cause ? str(cause.type) : null);
  return {
    index,
    url: parsed.href,
    method: (str(e.request.method) ?? 'GET').toUpperCase(),
    status: num(res.status) ?? 0,
    redirectURL,
    resourceType: type ? type.toLowerCase() : null,
    mimeType: (str(content.mimeType) ?? header('content-type') ?? '').toLowerCase(),
    startMs,
    timeMs: size(e.time) ?? sum,
    dnsStartMs: (size(t.dns) ?? 0) > 0 ? startMs + (size(t.blocked) ?? 0) : null,
    waitMs: size(t.wait),
    contentSize: size(content.size),
    transferSize: size(res._transferSize),
    bodySize: size(res.bodySize),
    initiator: initiator(e, cause),
    timingAllowOrigin: header('timing-allow-origin') !== null,
    serverIp: str(e.serverIPAddress)?.replace(/^\[(.*)\]$/, '$1') || null,
  };
}

// The script URLs of a DevTools stack, innermost first, then its async parents'; empty URLs (eval, inline
// code without a name) are left out.
function stackUrls(stack: unknown, depth = 0): string[] {
  if (!isObject(stack) || depth > 20) return [];
  const frames = Array.isArray(stack.callFrames) ? stack.callFrames.filter(isObject) : [];
  const own = frames.map((f) => str(f.url)).filter((u): u is string => !!u);
  return [...own, ...stackUrls(stack.parent, depth + 1)];
}

function kindOf(type: string | null, hasUrl: boolean): HarInitiator['kind'] {
  switch (type?.toLowerCase()) {
    case 'parser':
    case 'preload':
      return 'parser';
    case 'script':
      return 'script';
    case 'preflight':
      return 'preflight';
    case null:
    case undefined:
      // WebPageTest without a type: a URL is the document or script that named it.
      return hasUrl ? 'parser' : 'other';
    default:
      return 'other';
  }
}

function initiator(e: Json, cause: Json | null): HarInitiator {
  let detail: unknown = e._initiator_detail;
  if (typeof detail === 'string') {
    try {
      detail = JSON.parse(detail);
    } catch {
      detail = null;
    }
  }
  if (!isObject(detail) && isObject(e._initiator)) detail = e._initiator;
  const plainUrl = str(e._initiator);
  if (isObject(detail)) {
    const frames = stackUrls(detail.stack);
    const url = str(detail.url) ?? (frames[0] ?? plainUrl);
    const kind = kindOf(str(detail.type) ?? str(e._initiator_type), !!url);
    return { kind, url: url || null, frames: frames.length ? frames : kind === 'script' && url ? [url] : [] };
  }
  if (plainUrl) {
    const kind = kindOf(str(e._initiator_type), true);
    return { kind, url: plainUrl, frames: kind === 'script' ? [plainUrl] : [] };
  }
  if (cause) {
    const trace = Array.isArray(cause.stacktrace) ? cause.stacktrace.filter(isObject) : [];
    const frames = trace.map((f) => str(f.filename)).filter((u): u is string => !!u);
    if (frames.length) return { kind: 'script', url: frames[0]!, frames };
    const doc = str(cause.loadingDocumentUri);
    if (doc && str(cause.type) !== 'document') return { kind: 'parser', url: doc, frames: [] };
  }
  return { kind: kindOf(str(e._initiator_type), false), url: null, frames: [] };
}
