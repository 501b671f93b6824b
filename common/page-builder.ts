// The page record's only writer: one top-level navigation, built from the browser's events (its requests, redirects,
// completions and errors, the content script's timing, its commit and load) into the PageRecord itself, with relative
// times from one epoch start. The extension's recorder routes a tab's events here; the validation builds its pages
// from a load's timings the same way (bench/validate/browser.ts). Pure; hostile input is the normal case: every name
// goes through parseHost, every string is cut, every list capped (PAGE_CAPS).
import { parseHost } from './hostname.js';
import { PAGE_CAPS, PAGE_RECORD_VERSION, type NavigationTimingEntry, type PageHost, type PageRecord } from './page-record.js';
import type { RecordingBrowser } from './browser-queries.js';

/** The WHATWG URL parser (a global wherever this runs, in no library this folder loads): the parts used here. */
interface WhatwgUrlParts {
  href: string;
  protocol: string;
  hostname: string;
  search: string;
  hash: string;
  username: string;
  password: string;
}
const WhatwgUrl = (globalThis as unknown as { URL: new (input: string) => WhatwgUrlParts }).URL;

/** The host part of a URL as the URL parser writes it, and its scheme; null when it is no URL. */
export function hostOfUrl(url: string): { host: string; scheme: string } | null {
  try {
    const u = new WhatwgUrl(url);
    return { host: u.hostname, scheme: u.protocol.replace(/:$/, '') };
  } catch {
    return null;
  }
}

/** A deep copy of JSON data (a record is JSON: what storage and messages carry). */
const copy = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

/** Cuts a string to at most `n` characters (never markup, so cutting is all that is needed). */
function cut(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

/**
 * A page's address as dnscost keeps it: without query, fragment or user info (they carry search terms, session
 * tokens, e-mail addresses), cut to the cap. Nothing else of a URL is stored.
 */
export function storedUrl(url: string): string {
  try {
    const u = new WhatwgUrl(url);
    u.search = '';
    u.hash = '';
    u.username = '';
    u.password = '';
    return cut(u.href, PAGE_CAPS.url);
  } catch {
    return cut(url.split(/[?#]/, 1)[0]!, PAGE_CAPS.url);
  }
}

/** A request the page made (webRequest.onBeforeRequest). */
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

/** The content script's timing of a page: its Navigation Timing entry, onLoad and the lookups Resource Timing shows. */
export interface PageTiming {
  timeOrigin: number;
  navigation: Record<string, number | string | boolean | null>;
  onLoadMs: number | null;
  /** Resource Timing entries seen in all. */
  entries: number;
  /** Per host: the first entry's exposed lookup (ms from timeOrigin), or null. */
  resources: ReadonlyArray<{
    host: string; lookupStart: number | null; lookupEnd: number | null; nextHopProtocol: string | null;
    /** Where the recorder has no webRequest (resourcesSeen): the first entry's origin, startTime and initiatorType. */
    origin?: string | undefined; startTime?: number | undefined; initiator?: string | undefined;
    /** The latest responseEnd before the load event (ms from timeOrigin), if any ended by then. */
    responseEnd?: number | null | undefined;
  }>;
}

type TimingResource = PageTiming['resources'][number];

/** What the builder keeps beside the record, stored with it: the navigation's progress (epoch ms). */
export interface Building {
  /** The main-frame request, to follow its redirects. */
  mainRequestId: string | null;
  /** The main-frame response has started: from now on the tab's requests belong to this page. */
  responseStarted: boolean;
  committedAt: number | null;
  completedAt: number | null;
  /** Resource Timing of hosts not requested yet when the timing came (webRequest events can trail the load event). */
  timingPending: Array<TimingResource & { host: string }>;
}

/** The page record as kept while building and in storage: the record itself, with how far its navigation got. */
export type StoredPage = PageRecord & { building: Building };

function emptyRecord(tabId: number, url: string, at: number, pageId: string, idleBeforeMs: number | null): StoredPage {
  return {
    version: PAGE_RECORD_VERSION, tabId, pageId, url: storedUrl(url), host: hostOfUrl(url)?.host ?? '', startedAt: at, committed: false, complete: false,
    navigationTiming: null, onLoadMs: null, timeOrigin: null, hosts: [],
    counts: { hosts: 0, measurable: 0, internal: 0, ipLiterals: 0, requests: 0 },
    redirects: [],
    dropped: { hostsOverCap: 0, requestsOverCap: 0, invalidNames: 0, invalidSamples: [], redirectsOverCap: 0, timingHostsIgnored: 0 },
    resourceTiming: null, caps: { hosts: PAGE_CAPS.hosts, redirects: PAGE_CAPS.redirects }, idleBeforeMs,
    building: { mainRequestId: null, responseStarted: false, committedAt: null, completedAt: null, timingPending: [] },
  };
}

/** True when `value` reads back as a stored page of this version (storage may hold an older or damaged value). */
function isStoredPage(value: unknown): value is StoredPage {
  if (typeof value !== 'object' || value === null) return false;
  const p = value as Partial<StoredPage>;
  const b = p.building as Partial<Building> | undefined;
  return p.version === PAGE_RECORD_VERSION && typeof p.tabId === 'number' && typeof p.pageId === 'string' && typeof p.startedAt === 'number' &&
    Array.isArray(p.hosts) && p.hosts.length <= PAGE_CAPS.hosts && Array.isArray(p.redirects) && typeof p.dropped === 'object' &&
    typeof b === 'object' && b !== null && Array.isArray(b.timingPending);
}

/**
 * One page being recorded: the events go in through its methods, the record comes out of `record()`. Times are kept
 * relative to `startedAt` (an event seen earlier than the start moves the start back and every time with it) and
 * only made ≥ 0 when the record is read. Memory is bounded by PAGE_CAPS (the names over the host cap are remembered
 * only to count them, and not stored).
 */
export class PageBuilder {
  private readonly byName: Map<string, number>;
  private readonly overflow = new Set<string>();

  private constructor(private readonly p: StoredPage) {
    this.byName = new Map(p.hosts.map((h, i) => [h.name, i]));
  }

  /** A new page of tab `tabId` on `url`, its navigation started at `at` (epoch ms). */
  static start(o: { tabId: number; url: string; at: number; pageId: string; idleBeforeMs?: number | null }): PageBuilder {
    return new PageBuilder(emptyRecord(o.tabId, o.url, o.at, o.pageId, o.idleBeforeMs ?? null));
  }

  /** A page read back from storage, or null when the value is not one (another version, damage). */
  static revive(value: unknown): PageBuilder | null {
    return isStoredPage(value) ? new PageBuilder(copy(value)) : null;
  }

  /** The same navigation with nothing recorded of it (a page that failed the gate keeps only its progress). */
  blank(): PageBuilder {
    const b = emptyRecord(this.p.tabId, '', this.p.startedAt, this.p.pageId, null);
    const { mainRequestId, responseStarted, committedAt } = this.p.building;
    Object.assign(b.building, { mainRequestId, responseStarted, committedAt });
    return new PageBuilder(b);
  }

  // ---- what the recorder reads ----

  get tabId(): number { return this.p.tabId; }
  get pageId(): string { return this.p.pageId; }
  get url(): string { return this.p.url; }
  get host(): string { return this.p.host; }
  get startedAt(): number { return this.p.startedAt; }
  get mainRequestId(): string | null { return this.p.building.mainRequestId; }
  get responseStarted(): boolean { return this.p.building.responseStarted; }
  get committedAt(): number | null { return this.p.building.committedAt; }
  get completedAt(): number | null { return this.p.building.completedAt; }

  /** The last moment the page made a request the browser saw go out or come back (its start when none). */
  lastActivity(): number {
    const start = this.p.startedAt;
    return Math.max(start, this.p.building.completedAt ?? 0, ...this.p.hosts.map((h) => start + Math.max(h.firstNeededMs, h.completedMs ?? -Infinity)));
  }

  /** What storage keeps: the record and its progress (a copy). */
  stored(): StoredPage {
    return copy(this.p);
  }

  /** The page record: times relative to the start, hosts in the order first needed, counts. */
  record(browser?: RecordingBrowser): PageRecord {
    const { building, ...rec } = copy(this.p);
    const hosts = rec.hosts
      .map((h, seen) => ({ h, seen }))
      .sort((a, b) => a.h.firstNeededMs - b.h.firstNeededMs || a.seen - b.seen)
      .map(({ h }): PageHost => ({ ...h, firstNeededMs: Math.max(0, h.firstNeededMs), completedMs: typeof h.completedMs === 'number' ? Math.max(0, h.completedMs) : null }));
    return {
      ...rec,
      committed: building.committedAt !== null,
      complete: building.completedAt !== null,
      hosts,
      counts: {
        hosts: hosts.length,
        measurable: hosts.filter((h) => h.measurable).length,
        internal: hosts.filter((h) => h.internal).length,
        ipLiterals: hosts.filter((h) => h.kind === 'ip').length,
        requests: hosts.reduce((s, h) => s + h.requests, 0),
      },
      redirects: rec.redirects.map((r) => ({ ...r, atMs: Math.max(0, r.atMs) })),
      idleBeforeMs: typeof rec.idleBeforeMs === 'number' ? rec.idleBeforeMs : null,
      ...(rec.proxied === true ? { proxied: true } : {}),
      ...(browser ? { browser } : {}),
    };
  }

  // ---- the navigation ----

  /** The navigation was seen starting earlier (another event source's earlier time): every time moves with the start. */
  startedEarlier(at: number): void {
    const d = this.p.startedAt - at;
    if (!(d > 0)) return;
    this.p.startedAt = at;
    for (const h of this.p.hosts) {
      h.firstNeededMs += d;
      if (h.completedMs !== null) h.completedMs += d;
    }
    for (const r of this.p.redirects) r.atMs += d;
  }

  /** The main-frame request of this navigation (its redirects are followed by its id). */
  mainRequest(requestId: string, at: number): void {
    this.p.building.mainRequestId = requestId;
    this.startedEarlier(at);
  }

  /** A redirect leg of the main frame (or the commit) gives the page its address. */
  moved(url: string): void {
    this.p.url = storedUrl(url);
    this.p.host = hostOfUrl(url)?.host ?? '';
  }

  /** The main frame's response started: from now on the tab's requests are this page's. */
  responseStart(): void {
    this.p.building.responseStarted = true;
  }

  /** The page committed at `at` on `url`. */
  commit(url: string, at: number): void {
    this.p.building.committedAt = at;
    this.moved(url);
  }

  /** The page's load event (webNavigation.onCompleted), if not seen before. */
  complete(at: number): boolean {
    if (this.p.building.completedAt !== null) return false;
    this.p.building.completedAt = at;
    return true;
  }

  // ---- the page's requests ----

  private refuse(raw: string): void {
    const d = this.p.dropped;
    d.invalidNames++;
    if (d.invalidSamples.length < PAGE_CAPS.invalidSamples) d.invalidSamples.push(cut(raw, PAGE_CAPS.sampleLength));
  }

  /** The kept host of `url`, creating it when the page has room; null when refused or over the cap (counted). */
  private hostFor(url: string, at: number, viaRedirect: boolean): PageHost | null {
    const parsed = hostOfUrl(url);
    // Only network schemes need a lookup (data:, blob:, extension pages do not).
    if (!parsed || !['http', 'https', 'ws', 'wss'].includes(parsed.scheme)) return null;
    const known = this.byName.get(parsed.host);
    if (known !== undefined) return this.p.hosts[known]!;
    const c = parseHost(parsed.host);
    if (!c.ok) {
      this.refuse(parsed.host);
      return null;
    }
    const again = this.byName.get(c.name);
    if (again !== undefined) return this.p.hosts[again]!;
    if (this.p.hosts.length >= PAGE_CAPS.hosts) {
      const d = this.p.dropped;
      d.requestsOverCap++;
      if (this.overflow.size < PAGE_CAPS.overflowNames) {
        if (!this.overflow.has(c.name)) {
          this.overflow.add(c.name);
          d.hostsOverCap++;
        }
      } else d.hostsOverCap++;
      return null;
    }
    const { ok: _, ...classified } = c;
    const host: PageHost = {
      ...classified, firstNeededMs: at - this.p.startedAt, requests: 0,
      types: {}, ips: [], protocols: [], schemes: [], fromCache: 0, errors: 0, viaRedirect, fromSubframe: false, lookup: null, completedMs: null,
    };
    this.byName.set(c.name, this.p.hosts.length);
    this.p.hosts.push(host);
    const pending = this.p.building.timingPending.findIndex((r) => r.host === c.name);
    if (pending >= 0) {
      const [r] = this.p.building.timingPending.splice(pending, 1);
      this.p.dropped.timingHostsIgnored--;
      if (applyTiming(host, r!) && this.p.resourceTiming) this.p.resourceTiming.hostsExposed++;
    }
    return host;
  }

  /** A request of the page (onBeforeRequest); false when its host was refused or over the cap. */
  request(e: RequestEvent): boolean {
    const host = this.hostFor(e.url, e.at, e.viaRedirect === true);
    if (!host) return false;
    host.requests++;
    // A request before the recorded navigation start (clock skew between event sources) moves the start back.
    this.startedEarlier(e.at);
    // Events can arrive out of their own time order (different processes): keep the earliest time seen.
    host.firstNeededMs = Math.min(host.firstNeededMs, e.at - this.p.startedAt);
    const type = cut(String(e.type), 32);
    host.types[type] = (host.types[type] ?? 0) + 1;
    const scheme = hostOfUrl(e.url)?.scheme;
    if (scheme) addValue(host.schemes, scheme);
    if (typeof e.parentFrameId === 'number' ? e.parentFrameId >= 0 : e.frameId > 0) host.fromSubframe = true;
    return true;
  }

  private known(url: string): PageHost | null {
    const parsed = hostOfUrl(url);
    const i = parsed ? this.byName.get(parsed.host) : undefined;
    return i === undefined ? null : this.p.hosts[i]!;
  }

  /**
   * A finished request (onCompleted): server IP, cache use, HTTP version from the status line, and (`at`, its event
   * time) the host's last completion before the page's load event, when that is not known yet or came later.
   */
  completed(e: { url: string; at?: number; ip?: string | undefined; fromCache?: boolean | undefined; statusLine?: string | undefined; proxyInfo?: unknown }): void {
    this.proxiedBy(e.proxyInfo);
    const host = this.known(e.url);
    if (!host) return;
    const b = this.p.building;
    if (typeof e.at === 'number' && Number.isFinite(e.at) && (b.completedAt === null || e.at <= b.completedAt)) {
      host.completedMs = Math.max(host.completedMs ?? -Infinity, e.at - this.p.startedAt);
    }
    if (e.fromCache) host.fromCache++;
    if (typeof e.ip === 'string') addValue(host.ips, e.ip);
    const version = typeof e.statusLine === 'string' ? /^(HTTP\/[0-9.]+)/.exec(e.statusLine)?.[1] : undefined;
    if (version) addValue(host.protocols, version);
  }

  /** A failed request (onErrorOccurred). */
  error(e: { url: string; proxyInfo?: unknown }): void {
    this.proxiedBy(e.proxyInfo);
    const host = this.known(e.url);
    if (host) host.errors++;
  }

  /** Firefox's `proxyInfo` of a request: any proxy but `direct` marks the page proxied (PageRecord.proxied). */
  private proxiedBy(info: unknown): void {
    const type = typeof info === 'object' && info !== null ? (info as { type?: unknown }).type : undefined;
    if (typeof type === 'string' && type !== 'direct') this.p.proxied = true;
  }

  /** A redirect (onBeforeRedirect): hostnames and status only. */
  redirect(e: { url: string; redirectUrl: string; statusCode: number; type: string; at: number }): void {
    if (this.p.redirects.length >= PAGE_CAPS.redirects) {
      this.p.dropped.redirectsOverCap++;
      return;
    }
    const from = parseHost(hostOfUrl(e.url)?.host);
    const to = parseHost(hostOfUrl(e.redirectUrl)?.host);
    this.p.redirects.push({
      from: from.ok ? from.name : '(refused)', to: to.ok ? to.name : '(refused)',
      status: Number.isInteger(e.statusCode) ? e.statusCode : 0, type: cut(String(e.type), 32), atMs: e.at - this.p.startedAt,
    });
  }

  /**
   * The hosts a frame's Resource Timing shows, for a recorder without webRequest: each new host as a request at its
   * first entry's start (on the frame's clock, `t.timeOrigin`), the latest response end before the load as its
   * completion; `frameId` 0 is the top document, whose fetch start and response end time the page's host. A frame
   * reports again as it sees more: a host already known only moves its first-needed time earlier.
   */
  resourcesSeen(t: Pick<PageTiming, 'timeOrigin' | 'resources' | 'navigation'>, frameId: number): void {
    for (const r of t.resources.slice(0, PAGE_CAPS.timingHosts)) {
      if (typeof r.startTime !== 'number' || typeof r.origin !== 'string') continue;
      const at = t.timeOrigin + r.startTime;
      const known = this.known(r.origin);
      if (!known) this.request({ url: r.origin, type: r.initiator || 'other', at, frameId });
      else if (at - this.p.startedAt < known.firstNeededMs) {
        this.startedEarlier(at);
        known.firstNeededMs = at - this.p.startedAt;
      }
      if (typeof r.responseEnd === 'number') this.completed({ url: r.origin, at: t.timeOrigin + r.responseEnd });
    }
    if (frameId !== 0) return;
    // The document's final request (after any redirect) starts at fetchStart and ends at responseEnd.
    const docUrl = `https://${this.p.host}/`;
    const doc = this.known(docUrl);
    const { fetchStart, responseEnd } = t.navigation;
    if (doc && typeof fetchStart === 'number' && fetchStart > 0) doc.firstNeededMs = Math.min(doc.firstNeededMs, t.timeOrigin + fetchStart - this.p.startedAt);
    if (typeof responseEnd === 'number' && responseEnd > 0) this.completed({ url: docUrl, at: t.timeOrigin + responseEnd });
  }

  /** The content script's timing (or the validation's reading of the same), `at` when it came. */
  timing(t: PageTiming, at: number): void {
    const nav: NavigationTimingEntry = {};
    // The entry's `name` is the page's address: kept as storedUrl keeps it, like every other string of it.
    for (const [k, value] of Object.entries(t.navigation)) nav[k] = typeof value === 'string' ? (k === 'name' ? storedUrl(value) : cut(value, PAGE_CAPS.url)) : value;
    this.p.navigationTiming = nav;
    this.p.onLoadMs = t.onLoadMs;
    this.p.timeOrigin = t.timeOrigin;
    if (t.onLoadMs !== null && this.p.building.completedAt === null) this.p.building.completedAt = at;
    let exposed = 0;
    let ignored = 0;
    const pending: Building['timingPending'] = [];
    for (const [n, r] of t.resources.entries()) {
      const c = n < PAGE_CAPS.timingHosts ? parseHost(r.host) : null;
      const i = c?.ok ? this.byName.get(c.name) : undefined;
      if (i !== undefined) {
        if (applyTiming(this.p.hosts[i]!, r)) exposed++;
        continue;
      }
      ignored++;
      // Not requested yet (its webRequest event may still be on its way): kept for when it is, if it could be.
      if (c?.ok && this.p.hosts.length < PAGE_CAPS.hosts) pending.push({ ...r, host: c.name });
    }
    this.p.dropped.timingHostsIgnored = ignored;
    this.p.building.timingPending = pending;
    this.p.resourceTiming = { entries: t.entries, hostsExposed: exposed };
  }
}

function addValue(list: string[], value: string): void {
  if (value && list.length < PAGE_CAPS.perHostValues && !list.includes(value)) list.push(cut(value, 64));
}

/** Merges one Resource Timing entry into its host; true when it exposed the lookup. */
function applyTiming(host: PageHost, r: TimingResource): boolean {
  if (r.nextHopProtocol) addValue(host.protocols, r.nextHopProtocol);
  if (r.lookupStart === null || r.lookupEnd === null || r.lookupStart <= 0 || r.lookupEnd < r.lookupStart) return false;
  host.lookup = { startMs: r.lookupStart, endMs: r.lookupEnd, durationMs: r.lookupEnd - r.lookupStart, nextHopProtocol: r.nextHopProtocol };
  return true;
}
