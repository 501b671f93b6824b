// Content script (top frame of http/https pages, from document_start): after the load event it sends the page's
// Navigation Timing entry, its onLoad time and, per host, the first DNS lookup Resource Timing exposes
// (same-origin or Timing-Allow-Origin; zeros elsewhere) to the background as one `page-timing` message.
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

interface HostTiming {
  host: string;
  lookupStart: number | null;
  lookupEnd: number | null;
  nextHopProtocol: string | null;
}

const byHost = new Map<string, HostTiming>();
let entries = 0;

function hostOf(url: string): string | null {
  try {
    const u = new URL(url);
    return /^(https?|wss?):$/.test(u.protocol) ? u.hostname : null;
  } catch {
    return null;
  }
}

function take(list: PerformanceEntryList): void {
  for (const e of list) {
    entries++;
    const r = e as PerformanceResourceTiming;
    const host = hostOf(r.name);
    if (!host) continue;
    const known = byHost.get(host);
    // The first entry of a host that exposes a lookup counts (a later one reuses the connection or the cache).
    const exposed = r.domainLookupStart > 0;
    if (known && (known.lookupStart !== null || !exposed)) continue;
    if (!known && byHost.size >= MAX_HOSTS) continue;
    byHost.set(host, {
      host,
      lookupStart: exposed ? r.domainLookupStart : null,
      lookupEnd: exposed ? r.domainLookupEnd : null,
      nextHopProtocol: typeof r.nextHopProtocol === 'string' && r.nextHopProtocol ? r.nextHopProtocol.slice(0, 32) : null,
    });
  }
}

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
  if (!observing) take(performance.getEntriesByType('resource'));
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
      // The background may be restarting; the webRequest side of the record does not depend on this report.
    });
}

// After the load event has finished (loadEventEnd is set only once its handlers ran).
if (document.readyState === 'complete') setTimeout(send, 0);
else addEventListener('load', () => setTimeout(send, 0), { once: true });
