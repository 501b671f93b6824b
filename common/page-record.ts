// Page records: what one top-level navigation of one tab needed — every hostname with the time it was first needed,
// request counts and resource types per host, IPs and protocols seen, redirects — plus the page's Navigation Timing
// entry, its onLoad time and the DNS lookups Resource Timing exposes. The shape the extension's background reports
// (common/page-builder.ts builds it from browser events) and the cost model and the validation read.
import type { RecordingBrowser } from './browser-queries.js';
import type { ClassifiedHost } from './hostname.js';

/** Version of the page record's JSON shape. */
export const PAGE_RECORD_VERSION = 1;

/** Caps that keep one hostile page from growing a record (or the background's memory) without bound. */
export const PAGE_CAPS = {
  /** Hosts kept per page (measurable and not); further distinct hosts are only counted. */
  hosts: 500,
  /** Distinct over-cap names remembered to count them once each (memory only); beyond it each request counts. */
  overflowNames: 10_000,
  /** Redirects kept per page. */
  redirects: 100,
  /** IPs and protocol strings kept per host. */
  perHostValues: 8,
  /** Refused names kept as samples (each cut to sampleLength characters). */
  invalidSamples: 5,
  sampleLength: 80,
  /** Longest page URL kept. */
  url: 2048,
  /** Navigation Timing fields kept. */
  navigationFields: 80,
  /** Resource Timing hosts accepted from the content script. */
  timingHosts: 500,
} as const;


/** The DNS lookup of a host as Resource Timing exposed it (same-origin or Timing-Allow-Origin), ms from timeOrigin. */
export interface ExposedLookup {
  startMs: number;
  endMs: number;
  durationMs: number;
  /** ALPN of the first exposed entry ("h2", "http/1.1", "h3"), when given. */
  nextHopProtocol: string | null;
}

/** One host a page needed: the hostname as parseHost classified it, and what the page did with it. */
export interface PageHost extends Omit<ClassifiedHost, 'ok'> {
  /** When the page first needed this host, ms after the navigation started (browser clock; ≥ 0). */
  firstNeededMs: number;
  /** Requests to this host, and per webRequest resource type. */
  requests: number;
  types: Record<string, number>;
  /** Server IPs seen (onCompleted `ip`), at most PAGE_CAPS.perHostValues. */
  ips: string[];
  /** HTTP versions from the status lines seen ("HTTP/1.1", "HTTP/2", …) and ALPN from Resource Timing. */
  protocols: string[];
  /** URL schemes used (https, http, wss, …). */
  schemes: string[];
  /** Requests answered from the browser's cache, and requests that failed (onErrorOccurred). */
  fromCache: number;
  errors: number;
  /** True when the first request to this host was the target of a redirect. */
  viaRedirect: boolean;
  /** True when some request to this host came from a subframe (an iframe), not the top-level document. */
  fromSubframe: boolean;
  /** The lookup Resource Timing exposed, or null (cross-origin without Timing-Allow-Origin, or not in the timeline). */
  lookup: ExposedLookup | null;
  /**
   * When this host's last response that ended before the page's load event ended (webRequest.onCompleted), ms
   * after the navigation started; null when none did (still loading, failed, or only after onLoad). The cost model
   * reads it as the host's completion time (common/cost-model.ts).
   */
  completedMs: number | null;
}

/** One redirect seen on the page (hostnames only: no full URLs). */
export interface PageRedirect {
  from: string;
  to: string;
  status: number;
  type: string;
  atMs: number;
}

/** What was refused or left out, so a report says how much it does not show. */
export interface PageDropped {
  /** Distinct valid hosts beyond PAGE_CAPS.hosts (counted once each up to PAGE_CAPS.overflowNames). */
  hostsOverCap: number;
  /** Requests to those hosts. */
  requestsOverCap: number;
  /** Names refused by classifyHost (too long, bad label, not a host), by request. */
  invalidNames: number;
  /** A few refused names, cut to PAGE_CAPS.sampleLength characters: plain strings, never markup. */
  invalidSamples: string[];
  redirectsOverCap: number;
  /** Resource Timing hosts the content script sent beyond PAGE_CAPS.timingHosts or not matching a kept host. */
  timingHostsIgnored: number;
}

/** The page's Navigation Timing entry (toJSON() of PerformanceNavigationTiming, primitive fields only). */
export type NavigationTimingEntry = Record<string, number | string | boolean | null>;

/** The page report: what `page-report` returns and what measuring replays. */
export interface PageRecord {
  version: typeof PAGE_RECORD_VERSION;
  tabId: number;
  pageId: string;
  url: string;
  host: string;
  startedAt: number;
  committed: boolean;
  /** The page's load event has been seen (by the content script or webNavigation.onCompleted). */
  complete: boolean;
  /** Navigation Timing entry and onLoad (loadEventStart, ms after timeOrigin); null until the content script reported. */
  navigationTiming: NavigationTimingEntry | null;
  onLoadMs: number | null;
  timeOrigin: number | null;
  /** Hosts sorted by the time first needed (ties: order seen). */
  hosts: PageHost[];
  /** Counts of the hosts: all kept, measurable (public names), internal (flagged, never sent to resolvers). */
  counts: { hosts: number; measurable: number; internal: number; ipLiterals: number; requests: number };
  redirects: PageRedirect[];
  dropped: PageDropped;
  resourceTiming: { entries: number; hostsExposed: number } | null;
  caps: { hosts: number; redirects: number };
  /** The browser that recorded it (which record types it asks: common/browser-queries.ts); absent when not known. */
  browser?: RecordingBrowser;
  /**
   * How long the browser's pages had made no request before this one started (ms): whether its encrypted DNS
   * connection would still have been open (common/connection-state.ts). null: no page before it since the browser (or
   * the recording) started; absent in records from before it was kept.
   */
  idleBeforeMs?: number | null;
  /**
   * Some request of the page went through a proxy (Firefox's webRequest `proxyInfo`): its names were resolved by the
   * proxy, not through the person's DNS, so none may go out in clear text (extension/src/background/measure-gate.ts).
   * Absent in records from before it was kept, and in Chromium, which does not tell.
   */
  proxied?: boolean;
}
