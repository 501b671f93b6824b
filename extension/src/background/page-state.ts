// A page being recorded: the reducer from the browser's events (pageAdd*) to a PageState the background keeps and
// stores, and its report (toPageReport: the PageRecord of common/page-record.ts that scripts, the scheduler and the
// popup read). Pure: no browser global; the background's PageRecorder (page-records.ts) feeds it.
//
// Hostile pages are the normal case here: every name is converted to its A-label by the URL parser, checked against
// RFC 1035 lengths, and kept as a plain string (never markup); a page keeps at most PAGE_CAPS.hosts hosts and counts
// the rest. Internal names and IP literals are recorded but flagged not measurable: they never go to a resolver.
import { parseHost } from '../../../common/hostname.js';
import { PAGE_CAPS, PAGE_RECORD_VERSION, type NavigationTimingEntry, type PageDropped, type PageHost, type PageRecord, type PageRedirect } from '../../../common/page-record.js';
import type { PageTimingMessage } from '../messages/page.js';

/** The state of one page as the background keeps it (and stores): absolute times, so it can be rebuilt after a restart. */
export interface PageState {
  version: typeof PAGE_RECORD_VERSION;
  tabId: number;
  /** Random id of this navigation (stable across service-worker restarts). */
  pageId: string;
  url: string;
  host: string;
  /** Navigation start, ms since the epoch (earliest of webNavigation.onBeforeNavigate and the main-frame request). */
  startedAt: number;
  committedAt: number | null;
  /** The main-frame request's id, to follow its redirects. */
  mainRequestId: string | null;
  /** The main-frame response has started: from now on the tab's requests belong to this page. */
  responseStarted: boolean;
  completedAt: number | null;
  /** Hosts in the order first seen, with first-seen epoch times. */
  hosts: Array<Omit<PageHost, 'firstNeededMs' | 'completedMs'> & { firstSeenAt: number; lastCompletedAt?: number | null }>;
  redirects: Array<Omit<PageRedirect, 'atMs'> & { at: number }>;
  dropped: PageDropped;
  navigationTiming: NavigationTimingEntry | null;
  onLoadMs: number | null;
  timeOrigin: number | null;
  resourceTiming: { entries: number; hostsExposed: number } | null;
  /**
   * Resource Timing of hosts the page had not requested yet when the timing came (webRequest events can trail the
   * load event, in Firefox under load): applied when the host's first request arrives. Names as kept, capped.
   */
  timingPending?: Array<TimingResource & { host: string }>;
  /** How long the browser's recorded pages had made no request before this one started (ms); null: none before. */
  idleBeforeMs?: number | null;
}

function emptyDropped(): PageDropped {
  return { hostsOverCap: 0, requestsOverCap: 0, invalidNames: 0, invalidSamples: [], redirectsOverCap: 0, timingHostsIgnored: 0 };
}

/** Cuts a string to at most `n` characters (never markup, so cutting is all that is needed). */
function cut(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

/** The host part of a URL as the URL parser writes it, or null; also the scheme. */
export function hostOfUrl(url: string): { host: string; scheme: string } | null {
  try {
    const u = new URL(url);
    return { host: u.hostname, scheme: u.protocol.replace(/:$/, '') };
  } catch {
    return null;
  }
}

/**
 * A page's address as dnscost keeps it: without query, fragment or user info (they carry search terms, session
 * tokens, e-mail addresses), cut to the cap. Nothing else of a URL is stored.
 */
export function storedUrl(url: string): string {
  try {
    const u = new URL(url);
    u.search = '';
    u.hash = '';
    u.username = '';
    u.password = '';
    return cut(u.href, PAGE_CAPS.url);
  } catch {
    return cut(url.split(/[?#]/, 1)[0]!, PAGE_CAPS.url);
  }
}

/** A new page for `tabId` started at `at` (epoch ms) on `url`. */
export function newPage(tabId: number, url: string, at: number, pageId: string, idleBeforeMs: number | null = null): PageState {
  return {
    version: PAGE_RECORD_VERSION,
    tabId,
    pageId,
    url: storedUrl(url),
    host: hostOfUrl(url)?.host ?? '',
    startedAt: at,
    committedAt: null,
    mainRequestId: null,
    responseStarted: false,
    completedAt: null,
    hosts: [],
    redirects: [],
    dropped: emptyDropped(),
    navigationTiming: null,
    onLoadMs: null,
    timeOrigin: null,
    resourceTiming: null,
    idleBeforeMs,
  };
}

type TimingResource = PageTimingMessage['resources'][number];

/** Merges one Resource Timing entry into its host; true when it exposed the lookup. */
function applyTiming(host: PageState['hosts'][number], r: TimingResource): boolean {
  if (r.nextHopProtocol) addValue(host.protocols, r.nextHopProtocol);
  if (r.lookupStart === null || r.lookupEnd === null || r.lookupStart <= 0 || r.lookupEnd < r.lookupStart) return false;
  host.lookup = { startMs: r.lookupStart, endMs: r.lookupEnd, durationMs: r.lookupEnd - r.lookupStart, nextHopProtocol: r.nextHopProtocol };
  return true;
}

/** Memory-only companions of a PageState: indexes rebuilt from it (and the over-cap names, which are not stored). */
export interface PageIndex {
  byName: Map<string, number>;
  overflow: Set<string>;
}

/** Builds the index of `page` (after loading it from storage). */
export function indexPage(page: PageState): PageIndex {
  return { byName: new Map(page.hosts.map((h, i) => [h.name, i])), overflow: new Set() };
}

/** A request the page made (webRequest.onBeforeRequest / onSendHeaders). */
export interface RequestEvent {
  url: string;
  type: string;
  /** Epoch ms (webRequest's timeStamp). */
  at: number;
  /** 0 for the top-level document, > 0 for a subframe (webRequest's frameId). */
  frameId: number;
  /**
   * The frame's parent (webRequest's parentFrameId): −1 for a top-level frame. It decides what is a subframe where
   * given: Chromium gives a new top document's first requests, while its frame is still being committed, a positive
   * frameId (about 1 load in 5 in the browser tests) but always parentFrameId −1.
   */
  parentFrameId?: number | undefined;
  /** The request is the new leg of a redirect. */
  viaRedirect?: boolean;
}

function refuse(page: PageState, raw: string): void {
  page.dropped.invalidNames++;
  if (page.dropped.invalidSamples.length < PAGE_CAPS.invalidSamples) page.dropped.invalidSamples.push(cut(raw, PAGE_CAPS.sampleLength));
}

/** The kept host of `url`, creating it when the page has room; null when refused or over the cap (counted). */
function hostFor(page: PageState, index: PageIndex, url: string, at: number, viaRedirect: boolean) {
  const parsed = hostOfUrl(url);
  // Only network schemes need a lookup (data:, blob:, extension pages do not).
  if (!parsed || !['http', 'https', 'ws', 'wss'].includes(parsed.scheme)) return null;
  const known = index.byName.get(parsed.host);
  if (known !== undefined) return page.hosts[known]!;
  const c = parseHost(parsed.host);
  if (!c.ok) {
    refuse(page, parsed.host);
    return null;
  }
  const again = index.byName.get(c.name);
  if (again !== undefined) return page.hosts[again]!;
  if (page.hosts.length >= PAGE_CAPS.hosts) {
    page.dropped.requestsOverCap++;
    if (index.overflow.size < PAGE_CAPS.overflowNames) {
      if (!index.overflow.has(c.name)) {
        index.overflow.add(c.name);
        page.dropped.hostsOverCap++;
      }
    } else {
      page.dropped.hostsOverCap++;
    }
    return null;
  }
  const host: PageState['hosts'][number] = {
    name: c.name, kind: c.kind, internal: c.internal, measurable: c.measurable, firstSeenAt: at, requests: 0,
    types: {}, ips: [], protocols: [], schemes: [], fromCache: 0, errors: 0, viaRedirect, fromSubframe: false, lookup: null,
  };
  index.byName.set(c.name, page.hosts.length);
  page.hosts.push(host);
  const pending = page.timingPending?.findIndex((r) => r.host === c.name) ?? -1;
  if (pending >= 0) {
    const [r] = page.timingPending!.splice(pending, 1);
    page.dropped.timingHostsIgnored--;
    if (applyTiming(host, r!) && page.resourceTiming) page.resourceTiming.hostsExposed++;
  }
  return host;
}

function addValue(list: string[], value: string): void {
  if (value && list.length < PAGE_CAPS.perHostValues && !list.includes(value)) list.push(cut(value, 64));
}

/** Records a request of the page; returns false when its host was refused or over the cap. */
export function pageAddRequest(page: PageState, index: PageIndex, e: RequestEvent): boolean {
  const host = hostFor(page, index, e.url, e.at, e.viaRedirect === true);
  if (!host) return false;
  host.requests++;
  // Events can arrive out of their own time order (different processes): keep the earliest time seen.
  if (e.at < host.firstSeenAt) host.firstSeenAt = e.at;
  const type = cut(String(e.type), 32);
  host.types[type] = (host.types[type] ?? 0) + 1;
  const scheme = hostOfUrl(e.url)?.scheme;
  if (scheme) addValue(host.schemes, scheme);
  if (typeof e.parentFrameId === 'number' ? e.parentFrameId >= 0 : e.frameId > 0) host.fromSubframe = true;
  // A request before the recorded navigation start (clock skew between event sources) moves the start back.
  if (e.at < page.startedAt) page.startedAt = e.at;
  return true;
}

/**
 * Records a finished request (onCompleted): server IP, cache use, HTTP version from the status line, and (`at`, its
 * event time) the host's last completion before the page's load event, when the load event is not known yet or
 * came later.
 */
export function pageAddCompleted(page: PageState, index: PageIndex, e: { url: string; at?: number; ip?: string | undefined; fromCache?: boolean | undefined; statusLine?: string | undefined }): void {
  const parsed = hostOfUrl(e.url);
  const i = parsed ? index.byName.get(parsed.host) : undefined;
  if (i === undefined) return;
  const host = page.hosts[i]!;
  if (typeof e.at === 'number' && Number.isFinite(e.at) && (page.completedAt === null || e.at <= page.completedAt)) {
    host.lastCompletedAt = Math.max(host.lastCompletedAt ?? -Infinity, e.at);
  }
  if (e.fromCache) host.fromCache++;
  if (typeof e.ip === 'string') addValue(host.ips, e.ip);
  const version = typeof e.statusLine === 'string' ? /^(HTTP\/[0-9.]+)/.exec(e.statusLine)?.[1] : undefined;
  if (version) addValue(host.protocols, version);
}

/** Records a failed request (onErrorOccurred). */
export function pageAddError(page: PageState, index: PageIndex, e: { url: string }): void {
  const parsed = hostOfUrl(e.url);
  const i = parsed ? index.byName.get(parsed.host) : undefined;
  if (i !== undefined) page.hosts[i]!.errors++;
}

/** Records a redirect (onBeforeRedirect): hostnames and status only. */
export function pageAddRedirect(page: PageState, e: { url: string; redirectUrl: string; statusCode: number; type: string; at: number }): void {
  if (page.redirects.length >= PAGE_CAPS.redirects) {
    page.dropped.redirectsOverCap++;
    return;
  }
  const from = parseHost(hostOfUrl(e.url)?.host);
  const to = parseHost(hostOfUrl(e.redirectUrl)?.host);
  page.redirects.push({
    from: from.ok ? from.name : '(refused)',
    to: to.ok ? to.name : '(refused)',
    status: Number.isInteger(e.statusCode) ? e.statusCode : 0,
    type: cut(String(e.type), 32),
    at: e.at,
  });
}

/** Merges the content script's timing into the page. */
export function pageAddTiming(page: PageState, index: PageIndex, t: PageTimingMessage, at: number): void {
  const nav: NavigationTimingEntry = {};
  // The entry's `name` is the page's address: kept as storedUrl keeps it, like every other string of it.
  for (const [k, value] of Object.entries(t.navigation)) nav[k] = typeof value === 'string' ? (k === 'name' ? storedUrl(value) : cut(value, PAGE_CAPS.url)) : value;
  page.navigationTiming = nav;
  page.onLoadMs = t.onLoadMs;
  page.timeOrigin = t.timeOrigin;
  if (t.onLoadMs !== null && page.completedAt === null) page.completedAt = at;
  let exposed = 0;
  let ignored = 0;
  const pending: PageState['timingPending'] = [];
  for (const [n, r] of t.resources.entries()) {
    const c = n < PAGE_CAPS.timingHosts ? parseHost(r.host) : null;
    const i = c?.ok ? index.byName.get(c.name) : undefined;
    if (i !== undefined) {
      if (applyTiming(page.hosts[i]!, r)) exposed++;
      continue;
    }
    ignored++;
    // Not requested yet (its webRequest event may still be on its way): kept for when it is, if it could be.
    if (c?.ok && page.hosts.length < PAGE_CAPS.hosts) pending.push({ ...r, host: c.name });
  }
  page.dropped.timingHostsIgnored = ignored;
  page.timingPending = pending;
  page.resourceTiming = { entries: t.entries, hostsExposed: exposed };
}

/** The report of a page: relative times, hosts in the order first needed, counts. */
export function toPageReport(page: PageState): PageRecord {
  const start = page.startedAt;
  const hosts = page.hosts
    .map((h, seen) => ({ h, seen }))
    .sort((a, b) => a.h.firstSeenAt - b.h.firstSeenAt || a.seen - b.seen)
    .map(({ h }) => {
      const { firstSeenAt, lastCompletedAt, ...rest } = h;
      return { ...rest, firstNeededMs: Math.max(0, firstSeenAt - start), completedMs: typeof lastCompletedAt === 'number' ? Math.max(0, lastCompletedAt - start) : null };
    });
  return {
    version: PAGE_RECORD_VERSION,
    tabId: page.tabId,
    pageId: page.pageId,
    url: page.url,
    host: page.host,
    startedAt: page.startedAt,
    committed: page.committedAt !== null,
    complete: page.completedAt !== null,
    navigationTiming: page.navigationTiming,
    onLoadMs: page.onLoadMs,
    timeOrigin: page.timeOrigin,
    hosts,
    counts: {
      hosts: hosts.length,
      measurable: hosts.filter((h) => h.measurable).length,
      internal: hosts.filter((h) => h.internal).length,
      ipLiterals: hosts.filter((h) => h.kind === 'ip').length,
      requests: hosts.reduce((s, h) => s + h.requests, 0),
    },
    redirects: page.redirects.map(({ at, ...r }) => ({ ...r, atMs: Math.max(0, at - start) })),
    dropped: { ...page.dropped, invalidSamples: [...page.dropped.invalidSamples] },
    resourceTiming: page.resourceTiming,
    caps: { hosts: PAGE_CAPS.hosts, redirects: PAGE_CAPS.redirects },
    idleBeforeMs: typeof page.idleBeforeMs === 'number' ? page.idleBeforeMs : null,
  };
}

/** The last moment `page` made a request that the browser saw go out or come back (its start when none). */
export function lastActivityOf(page: PageState): number {
  return Math.max(page.startedAt, page.completedAt ?? 0, ...page.hosts.map((h) => Math.max(h.firstSeenAt, h.lastCompletedAt ?? 0)));
}

/** Checks the shape of a stored page state (storage may hold an older or damaged value): true when usable. */
export function isPageState(value: unknown): value is PageState {
  if (typeof value !== 'object' || value === null) return false;
  const p = value as Partial<PageState>;
  return p.version === PAGE_RECORD_VERSION && typeof p.tabId === 'number' && typeof p.pageId === 'string' &&
    typeof p.startedAt === 'number' && Array.isArray(p.hosts) && Array.isArray(p.redirects) && typeof p.dropped === 'object' &&
    p.hosts.length <= PAGE_CAPS.hosts && (p.timingPending === undefined || Array.isArray(p.timingPending));
}
