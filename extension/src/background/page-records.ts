// Page records of the background: routes webNavigation / webRequest events and the content script's timing reports
// into one page record per tab (common/page-builder.ts is its only writer), keeps them in storage.session, answers
// `page-report`. Without webRequest (optional in Chromium, where its mere grant slows every page: extension/README.md)
// a page's hosts come from webNavigation (the document, its redirect's final host, subframes) and from each frame's
// Resource Timing as its content script reports it.
// Lifecycle: events wait for `ready` (the tab states read back from storage), then are handled in arrival order; a
// top-level navigation starts a *pending* page, onCommitted makes it the tab's *current* page. While any page loads,
// the events are only noted in memory: the privacy gate's reads and the storage writes wait for its end (quiet.ts).
import type { MessageSender } from '../messages/index.js';
import { type PageCode, type PageReplies, type PageTimingMessage } from '../messages/page.js';
import { isExcluded } from '../settings.js';
import { CODES, failure, type Failure } from '../../../common/errors.js';
import { hostOfUrl, PageBuilder, storedUrl } from '../../../common/page-builder.js';
import { QueuedArea } from './storage.js';
import { LoadQuiet } from './quiet.js';
import type { Entry, PageRecorderDeps, RequestDetails, TabState } from './page-state.js';
import { fallbackOf, lateMainRequest, resumes } from './navigation-order.js';

export type { PageRecorderDeps, RequestDetails } from './page-state.js';

/** storage.session key prefix of a tab's pages. */
export const TAB_KEY_PREFIX = 'pages:tab:';
/** Debounce of a tab's storage write while its page is still loading. */
export const WRITE_DELAY_MS = 250;
/** Delay of the write when a page finishes: its load and its timing report arrive together and make one write. */
export const FINISH_WRITE_DELAY_MS = 100;
/**
 * Requests remembered as redirected (to mark the next leg), at most: redirect bookkeeping is cleared as requests end
 * and capped.
 */
const MAX_REDIRECTING = 10_000;

const NETWORK_URL = /^(https?|wss?):/i;

/**
 * The page records of all tabs (see the lifecycle note at the top).
 *
 * The background registers the browser listeners synchronously (index.ts) and hands each event to this module, which
 * first waits for `ready` (the tab states read back from storage after a killed service worker or an unloaded event
 * page) and then handles events strictly in arrival order, synchronously. A top-level navigation starts a *pending*
 * page (webNavigation.onBeforeNavigate or the main-frame request, whichever comes first); the tab's requests go to it
 * once its response started (before that the old document still runs); onCommitted makes it the tab's *current* page
 * and the previous one is forgotten (a measurement keeps its own copy).
 */
export class PageRecorder {
  private readonly tabs = new Map<number, TabState>();
  private readonly privateTabs = new Set<number>();
  private readonly redirecting = new Set<string>();
  private readonly writes: QueuedArea;
  /** The gate's reads and the storage writes wait while a page loads (quiet.ts). */
  private readonly quiet: LoadQuiet;
  /** The latest request any recorded page made (ms since epoch): what a new page's idle time is measured from. */
  private lastActivityAt: number | null = null;
  /** webRequest's events come in (its permission granted, its listeners registered): they name every request. */
  private requestsObserved = true;
  /** Resolves once the stored tab states are back in memory. */
  readonly ready: Promise<void>;

  constructor(private readonly deps: PageRecorderDeps) {
    this.writes = new QueuedArea(deps.area, (err) => deps.log(`page records: storage write failed: ${String(err)}`));
    this.quiet = new LoadQuiet(deps);
    this.ready = this.hydrate().catch((err) => deps.log(`page records: could not read storage: ${String(err)}`));
  }

  /** Runs `fn` once no page is loading (at once if none is; quiet.ts): work of the background's own that can wait. */
  whenQuiet(fn: () => void): void {
    this.quiet.run(fn);
  }

  /** Whether webRequest's events come in; without them webNavigation and Resource Timing name the page's hosts. */
  observeRequests(on: boolean): void {
    this.requestsObserved = on;
  }

  // ---- browser events (index.ts registers the listeners and calls these) ----

  /** webNavigation.onBeforeNavigate. */
  onBeforeNavigate(d: { tabId: number; frameId: number; parentFrameId?: number; url: string; timeStamp: number }): void {
    if (d.tabId < 0 || !NETWORK_URL.test(d.url)) return;
    const tab = this.tab(d.tabId);
    if (d.frameId !== 0) {
      // A subframe's document: its own request, where no webRequest event names it.
      const entry = this.requestsObserved ? null : this.entryForRequest(tab);
      if (entry) this.add(d.tabId, entry, (page) => page.request({ url: d.url, type: 'sub_frame', at: d.timeStamp, frameId: d.frameId, parentFrameId: d.parentFrameId }));
      return;
    }
    this.quiet.started(d.tabId);
    const p = tab.pending;
    // The main-frame request may have been dispatched first (separate event sources): then this is the same navigation.
    if (p && !p.navigateSeen && p.page.mainRequestId !== null && p.page.committedAt === null && d.timeStamp - p.page.startedAt < 2000) {
      p.navigateSeen = true;
      p.page.startedEarlier(d.timeStamp);
      return;
    }
    // Firefox's HTTPS-First, refused over https, navigates again to the same address over http: the same page.
    if (p && fallbackOf(p, d.url, d.timeStamp)) {
      p.navigateSeen = true;
      return;
    }
    tab.pending = this.startEntry(d.tabId, d.url, d.timeStamp, undefined);
    tab.pending.navigateSeen = true;
    if (!this.requestsObserved) this.add(d.tabId, tab.pending, (page) => page.request({ url: d.url, type: 'main_frame', at: d.timeStamp, frameId: 0 }));
    // Its webRequest events may still be on their way (Firefox under load): a redirect of its main request to this
    // navigation's address, delivered late, shows this navigation was HTTPS-First's fallback of it (resumeReplaced).
    tab.replaced = p && p.page.committedAt === null && p.page.mainRequestId !== null ? { entry: p, by: tab.pending } : null;
  }

  /** A late main-frame event of a replaced pending page puts it back where HTTPS-First's fallback had replaced it. */
  private resumeReplaced(tab: TabState, requestId: string, url: string): void {
    const r = tab.replaced;
    if (!r || r.entry.page.mainRequestId !== requestId) return;
    tab.replaced = null;
    if (!resumes(r, url)) return;
    r.entry.navigateSeen = true;
    if (tab.pending === r.by) {
      tab.pending = r.entry;
    } else if (tab.current === r.by && r.by.page.committedAt !== null) {
      r.entry.page.commit(r.by.page.url, r.by.page.committedAt);
      tab.current = r.entry;
      this.checkGate(r.entry, undefined);
    }
  }

  /** webRequest.onBeforeRequest (every request the browser makes for a tab). */
  onBeforeRequest(d: RequestDetails): void {
    if (d.tabId < 0) return;
    if (d.incognito === true) this.privateTabs.add(d.tabId);
    const tab = this.tab(d.tabId);
    const viaRedirect = this.redirecting.delete(d.requestId);
    if (d.type === 'main_frame') {
      this.quiet.started(d.tabId);
      this.resumeReplaced(tab, d.requestId, d.url);
      let p = tab.pending;
      if (p && p.page.mainRequestId === d.requestId) {
        // The next leg of a redirected navigation: same page, new address.
        p.page.moved(d.url);
        this.checkGate(p, d.incognito);
      } else if (!p && tab.current && tab.current.page.mainRequestId === d.requestId) {
        // A late redirect leg of a page that has already committed (see lateMainRequest): its address is final.
        p = tab.current;
      } else if (p && p.page.committedAt === null && (p.page.mainRequestId === null || fallbackOf(p, d.url, d.timeStamp))) {
        // The navigation's request, or HTTPS-First's new request over http after https was refused.
        p.page.mainRequest(d.requestId, d.timeStamp);
      } else if (!p && lateMainRequest(tab.current, d)) {
        // Firefox under a flood of requests delivers webRequest events after webNavigation's: the navigation this
        // request belongs to has already committed as the current page.
        p = tab.current!;
        p.page.mainRequest(d.requestId, d.timeStamp);
        p.page.responseStart();
      } else {
        p = this.startEntry(d.tabId, d.url, d.timeStamp, d.incognito);
        p.page.mainRequest(d.requestId, d.timeStamp);
        tab.pending = p;
      }
      this.add(d.tabId, p, (page) => page.request({ url: d.url, type: d.type, at: d.timeStamp, frameId: 0, viaRedirect }));
      return;
    }
    const entry = this.entryForRequest(tab);
    if (entry) this.add(d.tabId, entry, (page) => page.request({ url: d.url, type: d.type, at: d.timeStamp, frameId: d.frameId, parentFrameId: d.parentFrameId, viaRedirect }));
  }

  /** webRequest.onBeforeRedirect. */
  onBeforeRedirect(d: RequestDetails & { redirectUrl: string; statusCode: number }): void {
    if (d.tabId < 0) return;
    if (this.redirecting.size < MAX_REDIRECTING) this.redirecting.add(d.requestId);
    const tab = this.tab(d.tabId);
    if (d.type === 'main_frame') this.resumeReplaced(tab, d.requestId, d.redirectUrl);
    const entry = d.type === 'main_frame' ? this.mainFrameEntry(tab, d.requestId) : this.entryForRequest(tab);
    if (entry) this.add(d.tabId, entry, (page) => page.redirect({ url: d.url, redirectUrl: d.redirectUrl, statusCode: d.statusCode, type: d.type, at: d.timeStamp }));
  }

  /** webRequest.onResponseStarted: once the main frame's response starts, the tab's requests are the new page's. */
  onResponseStarted(d: RequestDetails): void {
    if (d.type !== 'main_frame' || d.tabId < 0) return;
    const p = this.tabs.get(d.tabId)?.pending;
    if (p && p.page.mainRequestId === d.requestId) p.page.responseStart();
  }

  /** webRequest.onCompleted. */
  onCompleted(d: RequestDetails & { ip?: string | undefined; fromCache?: boolean | undefined; statusLine?: string | undefined; statusCode?: number }): void {
    this.redirecting.delete(d.requestId);
    if (d.tabId < 0) return;
    const tab = this.tab(d.tabId);
    const entry = d.type === 'main_frame' ? tab.pending ?? tab.current : this.entryForRequest(tab);
    if (entry) this.add(d.tabId, entry, (page) => page.completed({ ...d, at: d.timeStamp }));
    // A main-frame answer with no document (204, 205, a download) leaves the old page in the tab.
    if (d.type === 'main_frame' && tab.pending?.page.mainRequestId === d.requestId && (d.statusCode === 204 || d.statusCode === 205)) tab.pending = null;
  }

  /** webRequest.onErrorOccurred. */
  onErrorOccurred(d: RequestDetails & { error?: string }): void {
    this.redirecting.delete(d.requestId);
    if (d.tabId < 0) return;
    const tab = this.tab(d.tabId);
    if (d.type === 'main_frame') {
      // An aborted navigation (stopped, replaced, a download) never commits: the old page stays.
      if (tab.pending?.page.mainRequestId === d.requestId && /ABORTED|BINDING_ABORTED/i.test(d.error ?? '')) {
        tab.pending = null;
        this.quiet.ended(d.tabId);
        return;
      }
    }
    const entry = d.type === 'main_frame' ? tab.pending ?? tab.current : this.entryForRequest(tab);
    if (entry) this.add(d.tabId, entry, (page) => page.error(d));
  }

  /** webNavigation.onCommitted: the pending page becomes the tab's current page. */
  onCommitted(d: { tabId: number; frameId: number; url: string; timeStamp: number }): void {
    if (d.frameId !== 0 || d.tabId < 0) return;
    const tab = this.tab(d.tabId);
    const previous = tab.current;
    if (!NETWORK_URL.test(d.url)) {
      // A new tab's about:blank can commit after the navigation that replaces it has started (Chromium, now and then,
      // delivers that commit late): it ends nothing that started after it.
      if (tab.pending && d.timeStamp < tab.pending.page.startedAt) return;
      // about:blank, an extension page, a file: the tab shows no web page.
      tab.current = null;
      tab.pending = null;
      this.quiet.ended(d.tabId);
    } else if (tab.pending) {
      if (!this.requestsObserved) this.committedElsewhere(tab.pending, d);
      tab.current = tab.pending;
      tab.pending = null;
    } else if (!tab.current || tab.current.page.url !== storedUrl(d.url)) {
      // A page restored without a request (back/forward cache): a page whose hosts are not known.
      tab.current = this.startEntry(d.tabId, d.url, d.timeStamp, undefined);
    }
    if (tab.current && tab.current !== previous) {
      tab.current.page.commit(d.url, d.timeStamp);
      this.checkGate(tab.current, undefined);
    }
    // Written once the burst of the load's first requests has passed: storage work competes with the page.
    this.scheduleWrite(d.tabId, WRITE_DELAY_MS);
  }

  /**
   * Without webRequest: a navigation that commits on another host than it started on was redirected there (its
   * intermediate legs, if any, are not seen); the final host is needed by the commit at the latest.
   */
  private committedElsewhere(entry: Entry, d: { tabId: number; url: string; timeStamp: number }): void {
    if (hostOfUrl(d.url)?.host === entry.page.host) return;
    const from = `https://${entry.page.host}/`;
    this.add(d.tabId, entry, (page) => {
      page.redirect({ url: from, redirectUrl: d.url, statusCode: 0, type: 'main_frame', at: d.timeStamp });
      page.request({ url: d.url, type: 'main_frame', at: d.timeStamp, frameId: 0, viaRedirect: true });
    });
  }

  /** webNavigation.onCompleted (the load event of the top frame, as the browser saw it). */
  onNavigationCompleted(d: { tabId: number; frameId: number; timeStamp: number }): void {
    if (d.frameId !== 0 || d.tabId < 0) return;
    if (this.tabs.get(d.tabId)?.current?.page.complete(d.timeStamp)) this.scheduleWrite(d.tabId, FINISH_WRITE_DELAY_MS);
    this.quiet.ended(d.tabId);
  }

  /** tabs.onRemoved. */
  onTabRemoved(tabId: number): void {
    const tab = this.tabs.get(tabId);
    this.privateTabs.delete(tabId);
    this.quiet.ended(tabId);
    if (!tab) return;
    if (tab.writeTimer !== null) this.deps.clearTimer(tab.writeTimer);
    this.tabs.delete(tabId);
    this.queueWrite(() => this.deps.area.remove(TAB_KEY_PREFIX + tabId));
  }

  /** The settings changed: pages of sites excluded now are dropped from memory and storage. */
  applyExclusions(exclusions: string[]): void {
    for (const [tabId, tab] of this.tabs) {
      for (const e of [tab.current, tab.pending]) {
        if (e && e.gate === 'ok' && isExcluded({ exclusions }, e.page.host)) this.exclude(e);
      }
      this.scheduleWrite(tabId, 0, true);
    }
  }

  /** data-clear: forgets every page, in memory and in storage. */
  async clear(): Promise<void> {
    for (const tab of this.tabs.values()) if (tab.writeTimer !== null) this.deps.clearTimer(tab.writeTimer);
    this.tabs.clear();
    await this.queueWrite(async () => {
      const keys = Object.keys(await this.deps.area.get(null)).filter((k) => k.startsWith(TAB_KEY_PREFIX));
      if (keys.length > 0) await this.deps.area.remove(keys);
    });
  }

  // ---- messages ----

  /**
   * page-timing from the content script of a tab's frame: the top frame's gives the page its timing; every frame's
   * gives, without webRequest, the hosts its Resource Timing shows.
   */
  async timing(message: PageTimingMessage, sender: MessageSender): Promise<PageReplies['page-timing']> {
    if (sender.tabId === undefined || sender.frameId === undefined || !sender.url || !NETWORK_URL.test(sender.url)) {
      return failure(CODES.BAD_SENDER, 'page-timing is accepted only from the content script of a tab\'s frame');
    }
    await this.ready;
    if (sender.incognito) this.privateTabs.add(sender.tabId);
    const tab = this.tabs.get(sender.tabId);
    const frameId = sender.frameId;
    const host = hostOfUrl(sender.url)?.host;
    const entry = frameId === 0 ? [tab?.current, tab?.pending].find((e) => e && e.page.host === host) ?? null : tab ? this.entryForRequest(tab) : null;
    if (!entry) return this.missing(sender.tabId);
    // Not waiting for a gate still being decided (it waits for the loads to end): the report stays in memory until then.
    const why = this.refusal(entry);
    if (why) return why;
    if (!this.requestsObserved) this.add(sender.tabId, entry, (page) => page.resourcesSeen(message, frameId));
    if (frameId !== 0) return { ok: true };
    entry.page.timing(message, this.deps.now());
    this.scheduleWrite(sender.tabId, FINISH_WRITE_DELAY_MS);
    return { ok: true };
  }

  /** page-report: the record of the tab's current page, for the extension's own pages. */
  async report(tabId: number, sender: MessageSender): Promise<PageReplies['page-report']> {
    if (!sender.url || !sender.url.startsWith(this.deps.extensionBase)) {
      return failure(CODES.BAD_SENDER, 'page-report is answered only to the extension\'s own pages');
    }
    await this.ready;
    const tab = this.tabs.get(tabId);
    const entry = tab?.current ?? tab?.pending ?? null;
    if (!entry) return this.missing(tabId);
    // Someone asks for the page: the gate decides now, whether or not a page is still loading.
    this.quiet.flush();
    await entry.gateDone;
    const why = this.refusal(entry);
    if (why) return why;
    return { ok: true, record: entry.page.record(this.deps.browser) };
  }

  // ---- inside ----

  private tab(tabId: number): TabState {
    let t = this.tabs.get(tabId);
    if (!t) {
      t = { current: null, pending: null, replaced: null, writeTimer: null, writeDue: 0 };
      this.tabs.set(tabId, t);
    }
    return t;
  }

  /** The page a tab's non-navigation request belongs to: the new page once its response started, else the shown one. */
  private entryForRequest(tab: TabState): Entry | null {
    if (tab.pending && (tab.pending.page.responseStarted || !tab.current)) return tab.pending;
    return tab.current;
  }

  /**
   * The page a main-frame request belongs to: the pending one, or the current one when the request's events trail
   * its commit (Firefox, see lateMainRequest).
   */
  private mainFrameEntry(tab: TabState, requestId: string): Entry | null {
    if (tab.pending?.page.mainRequestId === requestId) return tab.pending;
    if (tab.current?.page.mainRequestId === requestId) return tab.current;
    return tab.pending;
  }

  private startEntry(tabId: number, url: string, at: number, incognito: boolean | undefined): Entry {
    const page = PageBuilder.start({ tabId, url, at, pageId: this.deps.newId(), idleBeforeMs: this.lastActivityAt === null ? null : Math.max(0, at - this.lastActivityAt) });
    const entry: Entry = { page, gate: 'checking', gateDone: Promise.resolve(), navigateSeen: false };
    this.checkGate(entry, incognito);
    return entry;
  }

  /**
   * Decides (again) whether `entry` may be recorded: not in a private window, not an excluded site. Every new page
   * passes this gate before anything of it is stored; a page that fails the gate is emptied and never stored, and its
   * tab reports why.
   */
  private checkGate(entry: Entry, incognito: boolean | undefined): void {
    if (entry.gate === 'private' || entry.gate === 'excluded') return;
    const tabId = entry.page.tabId;
    if (incognito === true || this.privateTabs.has(tabId)) {
      this.privateTabs.add(tabId);
      this.empty(entry, 'private');
      return;
    }
    const host = entry.page.host;
    const wasOk = entry.gate === 'ok';
    entry.gate = 'checking';
    entry.gateDone = (async () => {
      await this.quiet.idle();
      // Private windows: Firefox says so on each request; Chromium only through the tab. A tab the browser cannot
      // tell about (tabs.get failed) counts as private: the check fails closed.
      const isPrivate = incognito === false ? false : await this.deps.isIncognitoTab(tabId).catch(() => null);
      if (isPrivate !== false) {
        this.privateTabs.add(tabId);
        this.empty(entry, 'private');
        return;
      }
      const exclusions = await this.deps.loadExclusions().catch((err) => {
        this.deps.log(`page records: settings unreadable, recording nothing until they are: ${String(err)}`);
        return null;
      });
      if (exclusions === null || isExcluded({ exclusions }, host)) {
        this.exclude(entry);
        return;
      }
      if (entry.gate === 'checking') {
        entry.gate = 'ok';
        if (!wasOk) this.scheduleWrite(tabId, WRITE_DELAY_MS);
      }
    })();
  }

  private exclude(entry: Entry): void {
    this.empty(entry, 'excluded');
    this.scheduleWrite(entry.page.tabId, 0, true);
  }

  /** Drops everything recorded of a page that failed the gate; it keeps only why. */
  private empty(entry: Entry, gate: 'private' | 'excluded'): void {
    entry.gate = gate;
    entry.page = entry.page.blank();
  }

  /** Applies `change` to a page that may be recorded (or whose gate is still being decided, kept in memory only). */
  private add(tabId: number, entry: Entry, change: (page: PageBuilder) => unknown): void {
    if (entry.gate === 'private' || entry.gate === 'excluded') return;
    change(entry.page);
    this.noteActivity(entry.page);
    if (entry.gate === 'ok') this.scheduleWrite(tabId, WRITE_DELAY_MS);
  }

  private refusal(entry: Entry): Failure<PageCode> | null {
    if (entry.gate === 'private') return failure(CODES.PRIVATE_WINDOW, 'This tab is in a private window: dnscost records nothing there.');
    if (entry.gate === 'excluded') return failure(CODES.EXCLUDED, 'This site is excluded in the settings: dnscost records nothing of it.');
    return null;
  }

  private async missing(tabId: number): Promise<Failure<PageCode>> {
    if (this.privateTabs.has(tabId) || (await this.deps.isIncognitoTab(tabId).catch(() => null))) {
      return failure(CODES.PRIVATE_WINDOW, 'This tab is in a private window: dnscost records nothing there.');
    }
    return failure(CODES.NO_PAGE, `No page is recorded for tab ${tabId} (no web page loaded since dnscost started, or not a web page).`);
  }

  /**
   * Stores a tab's recordable pages after `delay` ms (0: now), unless a write is due as soon; replaces a later one.
   * Writes are debounced per tab (the burst of a load's first events is not interrupted by storage work, which
   * competes with the page for the CPU) and made soon after a page finishes (load and timing report, one write for
   * both), so a killed worker loses at most a few hundred ms of a page; and never while a page loads (quiet.ts), unless
   * `urgent` (what an exclusion drops leaves storage at once).
   */
  private scheduleWrite(tabId: number, delay: number, urgent = false): void {
    const tab = this.tabs.get(tabId);
    if (!tab) return;
    const due = this.deps.now() + delay;
    if (tab.writeTimer !== null) {
      if (!urgent && tab.writeDue <= due) return; // a write is already due by then
      this.deps.clearTimer(tab.writeTimer);
    }
    tab.writeDue = due;
    tab.writeTimer = this.deps.setTimer(() => {
      tab.writeTimer = null;
      const write = (): void => {
        if (this.tabs.get(tabId) !== tab) return; // closed or cleared meanwhile: its removal is queued already
        const stored = {
          current: tab.current?.gate === 'ok' ? tab.current.page.stored() : null,
          pending: tab.pending?.gate === 'ok' ? tab.pending.page.stored() : null,
        };
        void this.queueWrite(() =>
          stored.current || stored.pending ? this.deps.area.set({ [TAB_KEY_PREFIX + tabId]: stored }) : this.deps.area.remove(TAB_KEY_PREFIX + tabId));
      };
      if (urgent) write();
      else this.quiet.run(write);
    }, delay);
  }

  /** Runs storage operations one after another, so a later state never lands before an earlier one; a failure is logged. */
  private queueWrite(fn: () => Promise<unknown>): Promise<unknown> {
    return this.writes.run(fn).catch(() => undefined);
  }

  /** Keeps the latest moment of network activity of any recorded page (after a change to `page`). */
  private noteActivity(page: PageBuilder): void {
    this.lastActivityAt = Math.max(this.lastActivityAt ?? 0, page.lastActivity());
  }

  private async hydrate(): Promise<void> {
    const all = await this.deps.area.get(null);
    for (const [key, value] of Object.entries(all)) {
      if (!key.startsWith(TAB_KEY_PREFIX) || typeof value !== 'object' || value === null) continue;
      const tabId = Number(key.slice(TAB_KEY_PREFIX.length));
      const { current, pending } = value as { current?: unknown; pending?: unknown };
      const revive = (p: unknown): Entry | null => {
        const page = PageBuilder.revive(p);
        return page ? { page, gate: 'ok', gateDone: Promise.resolve(), navigateSeen: true } : null;
      };
      // Events that arrived before hydration finished were queued behind `ready`, so nothing newer is lost here.
      const tab = { current: revive(current), pending: revive(pending), replaced: null, writeTimer: null, writeDue: 0 };
      if (!this.tabs.has(tabId)) this.tabs.set(tabId, tab);
      // A restarted background remembers the latest activity from the pages it kept.
      for (const e of [tab.current, tab.pending]) if (e) this.noteActivity(e.page);
    }
  }
}

