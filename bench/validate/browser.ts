// The browser's side of one load, in a side worker (side.ts): how each browser is launched for the validation (the
// settings a rebuilt page needs, no DNS or HTTP cache between loads), one page load in a browser context with the
// timings read back from the page, the lookups that set a connection state up (a fresh name looked up just before),
// Chromium's host cache emptied between the loads of a trace, and the page record built from the timings as the
// extension would keep it.
import type { Browser, BrowserContext } from 'puppeteer-core';
import type { RecordingBrowser } from '../../common/browser-queries.js';
import type { PageForCost } from '../../common/page-cost.js';
import { hostOfUrl, PageBuilder } from '../../common/page-builder.js';
import type { BrowserDnsOptions } from '../../lab/browser-dns.js';
import { CHROMIUM_AS_RECORDED, FIREFOX_AS_RECORDED } from '../../lab/har/load.js';

const LOAD_TIMEOUT_MS = 90_000;
/**
 * How long a new tab waits before its navigation (ms), per browser. Chromium starts the tab's renderer at once but it
 * is not ready for a while on a 2-core machine: navigating 150 ms after the tab opened, a 10-host page on loopback
 * loaded in 120–179 ms (median 157) because the renderer's start raced the network; after 1,000 ms, in 62–111 ms
 * (median 88). Firefox's loads were no steadier after longer waits (IQR 22 ms at 150 ms, 39 at 1,000), so it keeps
 * 150 ms. bench/results/renderer-settle.md has the figures and their command.
 */
export const RENDERER_SETTLE_MS: Record<RecordingBrowser, number> = { chromium: 1000, firefox: 150 };

/**
 * Extra switches and prefs for the validation's browsers: HAR pages load as recorded; Firefox keeps no DNS or HTTP
 * cache. For an experiment, DNSCOST_FIREFOX_PREFS (a JSON object) adds Firefox prefs, e.g.
 * `{"network.trr.async_connInfo":true}`; a run's options record it.
 */
export function validationBrowserSettings(): Pick<BrowserDnsOptions, 'chromiumArgs' | 'firefoxPrefs'> {
  const extra = process.env.DNSCOST_FIREFOX_PREFS ? (JSON.parse(process.env.DNSCOST_FIREFOX_PREFS) as Record<string, unknown>) : {};
  return {
    // Chromium's incognito contexts keep their own HTTP cache and host cache: a fresh context per load starts empty
    // (a trace's one context has its host cache emptied before each load: clearHostCache).
    chromiumArgs: CHROMIUM_AS_RECORDED,
    firefoxPrefs: {
      ...FIREFOX_AS_RECORDED,
      // Firefox's DNS cache is shared by its containers: off, so every load asks every name.
      'network.dnsCacheExpiration': 0,
      'network.dnsCacheExpirationGracePeriod': 0,
      'browser.cache.disk.enable': false,
      'browser.cache.memory.enable': false,
      ...extra,
    },
  };
}

/** What the page reports after load: the fields the extension's record carries. */
export interface PageTimings {
  finalUrl: string;
  navigation: Record<string, number>;
  firstPaint: number | null;
  firstContentfulPaint: number | null;
  resources: { name: string; startTime: number; domainLookupStart: number; domainLookupEnd: number; responseEnd?: number; initiatorType?: string }[];
  /**
   * Every request the browser's network events showed (ms after the page's time origin, as seen by this process), the
   * legs of a redirect included: what the extension's webRequest.onBeforeRequest sees and Resource Timing does not
   * (a navigation's first leg before a redirect to another host, a subresource's redirect target).
   */
  requests?: { name: string; startTime: number; viaRedirect: boolean }[];
}

/**
 * Loads `url` once in a new tab of `context` (cache off where the browser allows it) after `settleMs`
 * (RENDERER_SETTLE_MS), calling `atStart` just before the navigation; resolves with the page's timings and when the
 * navigation started (ms since the epoch).
 */
export async function loadIn(context: BrowserContext, url: string, settleMs: number, atStart?: () => Promise<void>): Promise<{ timings: PageTimings; navStartedAt: number }> {
  // The tab (and its still unassigned renderer, which the first navigation takes over) exists, settled, before the
  // navigation starts, so process start-up is neither counted in onLoad nor racing the network.
  const page = await context.newPage();
  const seen: { name: string; at: number; viaRedirect: boolean }[] = [];
  try {
    await page.setCacheEnabled(false).catch(() => undefined);
    await new Promise((r) => setTimeout(r, settleMs));
    await atStart?.();
    const navStartedAt = Date.now();
    page.on('request', (req) => seen.push({ name: req.url(), at: Date.now(), viaRedirect: req.redirectChain().length > 0 }));
    await page.goto(url, { waitUntil: 'load', timeout: LOAD_TIMEOUT_MS });
    // loadEventEnd is set after the load handlers return; wait a tick for it.
    await new Promise((r) => setTimeout(r, 50));
    const timeOrigin = await page.evaluate(() => performance.timeOrigin);
    const requests = seen.map((q) => ({ name: q.name, startTime: Math.max(0, q.at - timeOrigin), viaRedirect: q.viaRedirect }));
    const timings = await page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
      const navigation: Record<string, number> = {};
      for (const [k, v] of Object.entries(nav.toJSON() as Record<string, unknown>)) if (typeof v === 'number') navigation[k] = v;
      const paint = (name: string) => performance.getEntriesByType('paint').find((e) => e.name === name)?.startTime ?? null;
      const resources = (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).map((r) => ({
        name: r.name, startTime: r.startTime, domainLookupStart: r.domainLookupStart, domainLookupEnd: r.domainLookupEnd, responseEnd: r.responseEnd,
        initiatorType: r.initiatorType,
      }));
      return { finalUrl: location.href, navigation, firstPaint: paint('first-paint'), firstContentfulPaint: paint('first-contentful-paint'), resources };
    });
    return { timings: { ...timings, requests }, navStartedAt };
  } finally {
    await page.close().catch(() => undefined);
  }
}

/**
 * Looks up `name` through the browser, as a page would: a navigation to http://NAME/ in a new tab of `context`
 * (the lab site answers 404; a failed navigation is fine, the lookup is what counts). This opens the encrypted
 * connection of whoever holds it (the browser's DoH or TRR, or the machine's stub).
 */
export async function lookUp(context: BrowserContext, name: string): Promise<void> {
  const page = await context.newPage();
  try {
    await page.goto(`http://${name}/`, { waitUntil: 'load', timeout: 15_000 }).catch(() => undefined);
  } finally {
    await page.close().catch(() => undefined);
  }
}

/**
 * Empties Chromium's host cache for `context` (its own network context), as net-internals' "Clear host cache" does:
 * a trace keeps one context for its DoH connection, and the zone's 60 s TTL would otherwise answer a page's names
 * from the cache. Open connections are left alone.
 */
export async function clearHostCache(context: BrowserContext): Promise<void> {
  const page = await context.newPage();
  try {
    await page.goto('chrome://net-internals/#dns', { waitUntil: 'load', timeout: 15_000 });
    await page.evaluate(() => (globalThis as unknown as { chrome: { send(m: string): void } }).chrome.send('clearHostResolverCache'));
    await new Promise((r) => setTimeout(r, 100));
  } finally {
    await page.close().catch(() => undefined);
  }
}

/** A new context for one load or one trace: an incognito context in Chromium, a container in Firefox. */
export function newContext(browser: Browser): Promise<BrowserContext> {
  return browser.createBrowserContext();
}

const hostOf = (url: string): string | null => hostOfUrl(url)?.host ?? null;

/**
 * The webRequest type a Resource Timing entry's initiatorType stands for, where it names one for sure: an <img> (or
 * an image input) fetched an image, <video>/<audio>/<track> media, sendBeacon a beacon, <script> a script, a frame a
 * sub-frame, XHR and fetch() theirs; `link` (a stylesheet or a preload) and `css` (a font, an image or an imported
 * stylesheet) could be several, and stay 'other'.
 */
export function requestTypeOf(initiatorType: string | undefined): string {
  switch (initiatorType) {
    case 'img': case 'image': case 'input': return 'image';
    case 'video': case 'audio': case 'track': return 'media';
    case 'beacon': return 'beacon';
    case 'script': return 'script';
    case 'iframe': case 'frame': return 'sub_frame';
    case 'xmlhttprequest': case 'fetch': return 'xmlhttprequest';
    default: return 'other';
  }
}

/**
 * The page as the extension records it (common/page-builder.ts, the record's only writer), recorded by `browser`:
 * each host needed when Resource Timing first shows it (the page's own clock), or where it has none (a redirect's
 * legs, a failed request) when the load's network events first show it, as webRequest would; the document's host
 * at the start if neither does; each request's type from its entry's initiatorType where that is sure
 * (requestTypeOf); each host's last response that ended before the load event as its completion; and the page's
 * timing as the content script would report it (each host's first entry's exposed lookup). Times are ms after the
 * page's time origin.
 */
export function pageRecordOf(t: PageTimings, browser: RecordingBrowser): PageForCost {
  const page = PageBuilder.start({ tabId: 0, url: t.finalUrl, at: 0, pageId: 'validation' });
  const resources = [...t.resources].sort((a, b) => a.startTime - b.startTime).filter((r) => /^https?:/.test(r.name));
  for (const r of resources) page.request({ url: r.name, type: requestTypeOf(r.initiatorType), at: r.startTime, frameId: 0 });
  const timed = new Set(resources.map((r) => hostOf(r.name)));
  for (const r of [...(t.requests ?? [])].sort((a, b) => a.startTime - b.startTime)) {
    if (!timed.has(hostOf(r.name))) page.request({ url: r.name, type: 'other', at: r.startTime, frameId: 0, viaRedirect: r.viaRedirect });
  }
  if (!page.record().hosts.some((h) => h.name === hostOf(t.finalUrl))) page.request({ url: t.finalUrl, type: 'main_frame', at: 0, frameId: 0 });
  const onLoad = t.navigation.loadEventStart ?? null;
  for (const r of resources) if (r.responseEnd && (onLoad === null || r.responseEnd <= onLoad)) page.completed({ url: r.name, at: r.responseEnd });
  if (onLoad !== null) page.complete(onLoad);
  const firstByHost = new Map<string, (typeof resources)[number]>();
  for (const r of resources) {
    const h = hostOf(r.name);
    if (h && !firstByHost.has(h)) firstByHost.set(h, r);
  }
  page.timing({
    timeOrigin: 0,
    navigation: {
      ...t.navigation,
      ...(t.firstPaint !== null ? { firstPaint: t.firstPaint } : {}),
      ...(t.firstContentfulPaint !== null ? { firstContentfulPaint: t.firstContentfulPaint } : {}),
    },
    onLoadMs: onLoad,
    entries: t.resources.length,
    resources: [...firstByHost].map(([host, r]) => ({ host, lookupStart: r.domainLookupStart, lookupEnd: r.domainLookupEnd, nextHopProtocol: null })),
  }, onLoad ?? 0);
  return page.record(browser);
}
