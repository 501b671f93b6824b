// Content script (every frame of http/https pages, from document_start): after the frame's load event it sends the
// frame's Navigation Timing entry, its onLoad time and, per host its Resource Timing shows, the first DNS lookup it
// exposes (same-origin or Timing-Allow-Origin; zeros elsewhere), when the host was first asked for and its last
// response before the load ended (and the hosts of subresources that failed to load), to the background as one
// `page-timing` message; hosts first seen after that go in a few later reports. Without webRequest, these reports and webNavigation are how the background knows a page's hosts.
//
// A PerformanceObserver collects resource entries from the start, because the page's own timeline buffer holds only
// 250 entries by default and changing its size would change the page. It reads; it never writes to the page.

/**
 * runtime.sendMessage without webextension-polyfill: this script runs at document_start in every page, so it stays
 * small (4 KB instead of 45 KB with the polyfill, which wraps the whole extension API in proxies as it loads).
 * Firefox has `browser` with promises; Chromium's MV3 `chrome.runtime.sendMessage` returns a promise too.
 */
function sendMessage(message: unknown): Promise<unknown> {
  const g = globalThis as unknown as {
    browser?: { runtime: { sendMessage(m: unknown): Promise<unknown> } };
    chrome?: { runtime: { sendMessage(m: unknown): Promise<unknown> } };
  };
  return (g.browser ?? g.chrome)!.runtime.sendMessage(message);
}

/** Hosts reported at most (the background caps again). */
const MAX_HOSTS = 500;
/** Reports after the first, at most, each a second after a new host appeared. */
const MAX_LATER = 10;
const LATER_MS = 1000;

interface HostTiming {
  host: string;
  lookupStart: number | null;
  lookupEnd: number | null;
  nextHopProtocol: string | null;
  origin: string;
  startTime: number;
  responseEnd: number | null;
  initiator: string;
}

const byHost = new Map<string, HostTiming>();
let entries = 0;
/** The frame's load event start, once known: responses that end after it are not ones the load waited for. */
let loadAt = 0;
let sent = false;
let later = 0;
let laterTimer: ReturnType<typeof setTimeout> | null = null;

function originOf(url: string): URL | null {
  try {
    const u = new URL(url);
    return /^(https?|wss?):$/.test(u.protocol) ? u : null;
  } catch {
    return null;
  }
}

function take(list: PerformanceEntryList): void {
  let added = false;
  for (const e of list) {
    entries++;
    const r = e as PerformanceResourceTiming;
    const u = originOf(r.name);
    if (!u) continue;
    const known = byHost.get(u.hostname);
    const ended = r.responseEnd > 0 && (loadAt === 0 || r.responseEnd <= loadAt) ? r.responseEnd : null;
    if (known) {
      if (r.startTime < known.startTime) known.startTime = r.startTime;
      if (ended !== null && (known.responseEnd === null || ended > known.responseEnd)) known.responseEnd = ended;
      // The first entry of a host that exposes a lookup counts (a later one reuses the connection or the cache).
      if (known.lookupStart !== null || !(r.domainLookupStart > 0)) continue;
    } else if (byHost.size >= MAX_HOSTS) continue;
    const exposed = r.domainLookupStart > 0;
    byHost.set(u.hostname, {
      host: u.hostname,
      lookupStart: exposed ? r.domainLookupStart : null,
      lookupEnd: exposed ? r.domainLookupEnd : null,
      nextHopProtocol: typeof r.nextHopProtocol === 'string' && r.nextHopProtocol ? r.nextHopProtocol.slice(0, 32) : null,
      origin: known ? known.origin : u.origin.slice(0, 1100),
      startTime: known ? known.startTime : Math.max(0, r.startTime),
      responseEnd: known ? known.responseEnd : ended,
      initiator: (known ? known.initiator : r.initiatorType || 'other').slice(0, 32),
    });
    added ||= !known;
  }
  if (added && sent) reportLater();
}

/** Schedules a later report (a host appeared after the first one), unless one is due or enough were sent. */
function reportLater(): void {
  if (laterTimer !== null || later >= MAX_LATER) return;
  later++;
  laterTimer = setTimeout(() => {
    laterTimer = null;
    send();
  }, LATER_MS);
}

/**
 * A subresource that failed to load (its name did not resolve, its connection was refused) leaves no Resource Timing
 * entry in every browser: its element's error event, heard in the capture phase, still names its host, needed by the
 * time it failed at the latest.
 */
addEventListener('error', (e) => {
  const t = e.target as { src?: unknown; href?: unknown; tagName?: unknown } | null;
  const url = typeof t?.src === 'string' && t.src ? t.src : typeof t?.href === 'string' ? t.href : '';
  const u = url ? originOf(url) : null;
  if (!u || byHost.has(u.hostname) || byHost.size >= MAX_HOSTS) return;
  const initiator = typeof t?.tagName === 'string' ? t.tagName.toLowerCase().slice(0, 32) : 'other';
  byHost.set(u.hostname, { host: u.hostname, lookupStart: null, lookupEnd: null, nextHopProtocol: null, origin: u.origin.slice(0, 1100), startTime: performance.now(), responseEnd: null, initiator });
  if (sent) reportLater();
}, true);

let observing = false;
try {
  new PerformanceObserver((list) => take(list.getEntries())).observe({ type: 'resource', buffered: true });
  observing = true;
} catch {
  // Some content-script sandboxes cannot construct an observer: read the buffer at load instead.
}

/** The navigation entry's primitive fields (serverTiming and other arrays are left out). */
function navigationEntry(): { fields: Record<string, number | string | boolean | null>; onLoadMs: number | null } {
  const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
  const fields: Record<string, number | string | boolean | null> = {};
  if (!nav) return { fields, onLoadMs: null };
  const json = nav.toJSON() as Record<string, unknown>;
  for (const [k, v] of Object.entries(json)) {
    if (Object.keys(fields).length >= 80) break;
    if (typeof v === 'number' ? Number.isFinite(v) : typeof v === 'string' || typeof v === 'boolean' || v === null) fields[k] = v as number | string | boolean | null;
  }
  return { fields, onLoadMs: nav.loadEventStart > 0 ? nav.loadEventStart : null };
}

function send(): void {
  if (!observing && !sent) take(performance.getEntriesByType('resource'));
  sent = true;
  const { fields, onLoadMs } = navigationEntry();
  sendMessage({
      type: 'page-timing',
      url: location.href.slice(0, 8192),
      timeOrigin: performance.timeOrigin,
      navigation: fields,
      onLoadMs,
      entries,
      resources: [...byHost.values()],
    })
    .catch(() => {
      // The background may be restarting; a later report, or webRequest where granted, still names the hosts.
    });
}

// After the load event has finished (loadEventEnd is set only once its handlers ran).
function loaded(): void {
  loadAt = (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined)?.loadEventStart ?? 0;
  setTimeout(send, 0);
}
if (document.readyState === 'complete') loaded();
else addEventListener('load', loaded, { once: true });
