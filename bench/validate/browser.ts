// The browser's side of one load, in the inner half (client namespace, private mount namespace): the DNS
// configuration each transport needs (the bind-mounted /etc/resolv.conf and Chromium's managed policy), headless
// Chromium's launch, one page load in a fresh incognito context with the timings read back from the page, and the
// page record built from them as the extension would keep it.
import { rmSync, writeFileSync } from 'node:fs';
import puppeteer, { type Browser } from 'puppeteer-core';
import type { PageForCost } from '../../common/page-cost.js';
import type { PageHost } from '../../common/page-record.js';
import { findBrowser } from '../../lab/browsers.js';
import { SERVER, type BrowserTransport, type InnerConfig } from './types.js';

const LOAD_TIMEOUT_MS = 90_000;

/** Sets the browser's DNS for `transport`: resolv.conf (written in place: it is bind-mounted) and the DoH policy. */
export function configureDns(transport: BrowserTransport): void {
  writeFileSync('/etc/resolv.conf', transport === 'do53' ? `nameserver ${SERVER}\n` : 'nameserver 127.0.0.1\n');
  const policy = '/etc/chromium/policies/managed/dnscost-validation.json';
  if (transport === 'doh') {
    writeFileSync(policy, JSON.stringify({ DnsOverHttpsMode: 'secure', DnsOverHttpsTemplates: `https://${SERVER}/dns-query{?dns}` }));
  } else rmSync(policy, { force: true });
}

/** Headless Chromium with HOME `home` (its NSS db trusts the lab CA) and a fresh profile `profileDir`. */
export async function launchChromium(c: InnerConfig, home: string, profileDir: string): Promise<Browser> {
  return puppeteer.launch({
    browser: 'chrome',
    executablePath: findBrowser('chromium')!,
    headless: true,
    userDataDir: profileDir,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disk-cache-size=1', '--disable-features=OptimizationHints,MediaRouter'],
    env: { ...process.env, HOME: home },
    timeout: 60_000,
    protocolTimeout: LOAD_TIMEOUT_MS + 30_000,
  });
}

/** What the page reports after load: the fields the extension's record carries. */
export interface PageTimings {
  navigation: Record<string, number>;
  firstPaint: number | null;
  resources: { name: string; startTime: number; domainLookupStart: number; domainLookupEnd: number; responseEnd?: number }[];
}

/** Loads `url` once in a new incognito context (cache off); resolves with the page's timings after load. */
export async function loadOnce(browser: Browser, url: string): Promise<PageTimings> {
  const context = await browser.createBrowserContext();
  try {
    // The tab (and its still unassigned renderer process, which the first navigation takes over) exists before the
    // navigation starts, so process start-up is not counted in onLoad.
    const page = await context.newPage();
    await page.setCacheEnabled(false);
    await new Promise((r) => setTimeout(r, 150));
    await page.goto(url, { waitUntil: 'load', timeout: LOAD_TIMEOUT_MS });
    // loadEventEnd is set after the load handlers return; wait a tick for it.
    await new Promise((r) => setTimeout(r, 50));
    return await page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
      const navigation: Record<string, number> = {};
      for (const [k, v] of Object.entries(nav.toJSON() as Record<string, unknown>)) if (typeof v === 'number') navigation[k] = v;
      const fp = performance.getEntriesByType('paint').find((e) => e.name === 'first-paint');
      const resources = (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).map((r) => ({
        name: r.name, startTime: r.startTime, domainLookupStart: r.domainLookupStart, domainLookupEnd: r.domainLookupEnd, responseEnd: r.responseEnd,
      }));
      return { navigation, firstPaint: fp ? fp.startTime : null, resources };
    });
  } finally {
    await context.close();
  }
}

/** The page as the extension's record would give it to the model (common/page-cost.ts). */
export function pageRecordOf(documentHost: string, t: PageTimings): PageForCost {
  const hosts = new Map<string, PageHost>();
  // When each host's last response before onLoad ended (Resource Timing responseEnd, exposed for every resource;
  // the extension takes it from webRequest.onCompleted).
  const onLoadAt = t.navigation.loadEventStart ?? Infinity;
  const ends = new Map<string, number>();
  for (const r of t.resources) {
    if (!r.responseEnd || r.responseEnd > onLoadAt) continue;
    try {
      const name = new URL(r.name).hostname;
      ends.set(name, Math.max(ends.get(name) ?? 0, r.responseEnd));
    } catch { /* not a URL */ }
  }
  for (const r of [...t.resources].sort((a, b) => a.startTime - b.startTime)) {
    let name: string;
    try {
      name = new URL(r.name).hostname;
    } catch {
      continue;
    }
    if (hosts.has(name)) continue;
    const exposed = r.domainLookupStart > 0 && r.domainLookupEnd >= r.domainLookupStart;
    hosts.set(name, {
      name, kind: 'name', internal: false, measurable: true, firstNeededMs: r.startTime, requests: 1, types: {}, ips: [], protocols: [], schemes: ['http'],
      fromCache: 0, errors: 0, viaRedirect: false, fromSubframe: false,
      lookup: exposed ? { startMs: r.domainLookupStart, endMs: r.domainLookupEnd, durationMs: r.domainLookupEnd - r.domainLookupStart, nextHopProtocol: null } : null,
      completedMs: ends.get(name) ?? null,
    });
  }
  if (!hosts.has(documentHost)) {
    hosts.set(documentHost, {
      name: documentHost, kind: 'name', internal: false, measurable: true, firstNeededMs: 0, requests: 1, types: {}, ips: [], protocols: [], schemes: ['http'],
      fromCache: 0, errors: 0, viaRedirect: false, fromSubframe: false, lookup: null, completedMs: null,
    });
  }
  const navigationTiming = { ...t.navigation, ...(t.firstPaint !== null ? { firstPaint: t.firstPaint } : {}) };
  return { host: documentHost, hosts: [...hosts.values()], navigationTiming, onLoadMs: t.navigation.loadEventStart ?? null };
}
