// A page's cost from a stored measurement: the page record and the replay records of its hosts in the one stored
// shape (common/cost-model.ts StoredRecord). measuredPageCost is the one function the popup, the history and the
// validation call, so each of them runs the model that was validated. Pure: no DOM, no node: imports.
import { pageCost, udpRetryOf, type CellCost, type CostOptions, type NavigationInput, type PageInput } from './cost-model.js';
import { type StoredRecord } from './stored-record.js';
import { BROWSER_DOH_ID, CURRENT_DNS_ID, FIREFOX_NOW_ID } from './default-resolvers.js';
import type { PageRecord } from './page-record.js';

/** The parts of a page record the model reads (the validation builds them from a browser's timings). */
export type PageForCost = Pick<PageRecord, 'host' | 'hosts' | 'navigationTiming' | 'onLoadMs'> & Partial<Pick<PageRecord, 'browser'>>;

/**
 * The cost of `page` under every resolver × transport × mode that `records` cover, against the baseline
 * chooseBaseline finds in them; hosts without records (not measured: internal names, IP literals, an interrupted
 * measurement) are left out of the page. `systemRetryMs`: the system stub's wait before it asks a lost Do53 query
 * again (the host's CurrentDns.retryMs), which a browser that resolves through the system pays (udpRetryOf).
 */
export function measuredPageCost(page: PageForCost, records: readonly StoredRecord[], systemRetryMs: number | null = null): CellCost[] {
  const baseline = chooseBaseline(records);
  const udpRetryMs = udpRetryOf(page.browser, systemRetryMs);
  return pageCost(pageCostInput(page, new Set(records.map((r) => r.host))), records, baseline ? { baseline, udpRetryMs } : { udpRetryMs });
}

/**
 * Request types whose responses name no other host (webRequest's, both browsers): an image (an SVG used as one loads
 * nothing), a font, media, a beacon or ping, a CSP report. A host that served only these is a leaf of the page.
 */
export const LEAF_TYPES: ReadonlySet<string> = new Set(['image', 'imageset', 'font', 'media', 'beacon', 'ping', 'csp_report']);

/** Every request counted in `types` was of a leaf type (and there was at least one). */
export function isLeaf(types: Readonly<Record<string, number>> | undefined): boolean {
  const seen = Object.entries(types ?? {}).filter(([, n]) => n > 0);
  return seen.length > 0 && seen.every(([t]) => LEAF_TYPES.has(t));
}

const num = (x: unknown): number | null => (typeof x === 'number' && Number.isFinite(x) ? x : null);

/**
 * The cost model's page from a page record, keeping only the hosts in `measured` (when given). Navigation Timing
 * fields are ms after timeOrigin and hosts' first-needed times ms after the navigation started: both count from
 * the navigation's start. Without a Navigation Timing entry (the content script did not report) the document's
 * lookup is unknown (0) and onLoad is the page's onLoad or, failing that, the last host's first-needed time.
 * A host's completion time is its last response's end before onLoad (webRequest.onCompleted), where one was seen;
 * a host that served only leaf types (images, fonts: isLeaf) is a leaf, through which no other host was found.
 */
export function pageCostInput(page: PageForCost, measured?: ReadonlySet<string>): PageInput {
  const nt = page.navigationTiming ?? {};
  const lastNeeded = page.hosts.reduce((m, h) => Math.max(m, h.firstNeededMs), 0);
  const onLoad = num(page.onLoadMs) ?? num(nt.loadEventStart) ?? num(nt.loadEventEnd) ?? lastNeeded;
  const navigation: NavigationInput = {
    domainLookupStart: num(nt.domainLookupStart) ?? 0,
    domainLookupEnd: num(nt.domainLookupEnd) ?? num(nt.domainLookupStart) ?? 0,
    connectStart: num(nt.connectStart) ?? 0,
    responseStart: num(nt.responseStart) ?? 0,
    loadEventEnd: num(nt.loadEventEnd) ?? onLoad,
    redirected: (num(nt.redirectEnd) ?? 0) > 0,
    firstPaint: num(nt.firstPaint) ?? num(nt.firstContentfulPaint),
    domContentLoadedEventEnd: num(nt.domContentLoadedEventEnd),
  };
  // The final document's request starts at fetchStart: a host needed before it (other than the document's own) can
  // only be an earlier leg of the navigation (a redirect), as can one the main frame requested (webRequest's type).
  const fetchStart = num(nt.fetchStart);
  const hosts = page.hosts
    .filter((h) => h.kind === 'name' && (!measured || measured.has(h.name)))
    .map((h) => {
      // A completion after onLoad (its event raced the load's) is not one onLoad waited for.
      const completedMs = typeof h.completedMs === 'number' && h.completedMs >= h.firstNeededMs && h.completedMs <= onLoad ? h.completedMs : null;
      const navigationLeg = h.name !== page.host && ((h.types?.main_frame ?? 0) > 0 || (fetchStart !== null && h.firstNeededMs < fetchStart));
      const leaf = isLeaf(h.types);
      return { name: h.name, firstNeededMs: h.firstNeededMs, observedLookupMs: h.lookup?.durationMs ?? null, completedMs, ...(navigationLeg ? { navigationLeg } : {}), ...(leaf ? { leaf } : {}) };
    });
  // The document's scheme: its final address (Navigation Timing's name), else the schemes its host was fetched with.
  const docSchemes = page.hosts.find((h) => h.name === page.host)?.schemes ?? [];
  const documentHttp = typeof nt.name === 'string' ? /^http:/i.test(nt.name) : docSchemes.length > 0 && !docSchemes.includes('https');
  return { documentHost: page.host, documentHttp, navigation, onLoad, hosts, browser: page.browser ?? null };
}

/**
 * The baseline: the browser's own DoH server (`browser`) where it was measured (the browser resolves over DoH), else
 * the person's current DNS (`system`) as measured — over UDP, or over the transport it already uses (DoT behind a
 * stub that encrypts) — else the first resolver measured over UDP (a lab or custom one), else none. Firefox's own path
 * is never the baseline: what it is compared with must be a resolver's replay.
 */
export function chooseBaseline(records: readonly Pick<StoredRecord, 'resolver' | 'transport'>[]): CostOptions['baseline'] | undefined {
  const current = records.filter((r) => r.resolver === CURRENT_DNS_ID);
  // While the browser resolves over DoH, its own server is what the person's lookups go to now.
  const browser = records.find((r) => r.resolver === BROWSER_DOH_ID);
  if (browser) return { resolver: BROWSER_DOH_ID, transport: browser.transport };
  if (current.length) return { resolver: CURRENT_DNS_ID, transport: current.some((r) => r.transport === 'udp') ? 'udp' : current[0]!.transport };
  const udp = records.find((r) => r.transport === 'udp' && r.resolver !== FIREFOX_NOW_ID);
  return udp ? { resolver: udp.resolver, transport: 'udp' } : undefined;
}
