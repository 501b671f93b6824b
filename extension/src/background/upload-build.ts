// From the person's history (extension/src/history.ts) to upload batches (common/upload-batch.ts): what the extension
// sends when uploads are on. Pure: no DOM, no node: imports.
//
// What leaves, per measured page: the site only when its registrable domain is on the shipped popular list
// (common/popular-sites.ts; the domain from the Public Suffix List via tldts, private suffixes included so
// `someone.github.io` is its own, rare, site) and "other" otherwise; the hour; the number of hosts measured; and per
// resolver × transport × mode the counts, lookup percentiles, the estimated onLoad change and bytes per lookup, every
// number on the upload grid (coarse, coarseCount: about 19 % steps for times and bytes, half-octaves for counts).
// Resolvers other than the public defaults and the system's are all "custom": their names and addresses stay home.
// Trade-off: pages of rare sites still count in every aggregate, but as "other"; a popular site's page says which
// site at the hour, which is what the crowd aggregates need and names nobody.
import { getDomain } from 'tldts';
import { shuffled } from '../../../common/stats.js';
import type { HistoryEntry } from '../history.js';
import { uploadSite } from '../../../common/popular-sites.js';
import { coarseCount, coarseWithin, UPLOAD_BATCH_VERSION, UPLOAD_LIMITS, UPLOAD_RESOLVERS, validateBatch, type NetworkType, type UploadBatch, type UploadPage, type UploadResult } from '../../../common/upload-batch.js';

/** How a person describes the network they are on (options page): its kind only. */
export interface UploadNetwork {
  type: NetworkType;
}

/** The site an upload names for `host`: a popular registrable domain, or "other". */
export function siteOf(host: string): UploadPage['site'] {
  const domain = getDomain(host, { allowPrivateDomains: true });
  return domain ? uploadSite(domain) : 'other';
}

/** "2026-11-21T14Z": the UTC hour of `at` (ms since epoch). */
export function hourOf(at: number): string {
  return `${new Date(at).toISOString().slice(0, 13)}Z`;
}

const gridMs = (x: number) => coarseWithin(x, UPLOAD_LIMITS.ms);
const gridPositive = (x: number | null, max: number) => (x === null ? null : coarseWithin(Math.max(0, x), max));

/** A history entry as one upload page; null when nothing of it can be uploaded (no host, no lookup). */
export function uploadPage(entry: HistoryEntry): UploadPage | null {
  const seen = new Set<string>();
  const results: UploadResult[] = [];
  for (const c of entry.cells) {
    const resolver = (UPLOAD_RESOLVERS as readonly string[]).includes(c.resolver) ? (c.resolver as UploadResult['resolver']) : 'custom';
    const key = `${resolver} ${c.transport} ${c.mode}`;
    // Two custom resolvers would both be "custom": the first one measured stands for them.
    if (seen.has(key) || c.lookups < 1) continue;
    seen.add(key);
    const lookups = coarseCount(Math.min(c.lookups, UPLOAD_LIMITS.lookupsPerResult));
    const allFailed = c.medianMs === null || c.failures >= c.lookups;
    const ms = (x: number | null) => (allFailed || x === null ? null : gridPositive(x, UPLOAD_LIMITS.ms));
    const [p5, median, p95] = [ms(c.p5Ms), ms(c.medianMs), ms(c.p95Ms)];
    results.push({
      resolver, transport: c.transport, mode: c.mode, lookups,
      failures: allFailed ? lookups : Math.min(coarseCount(c.failures), lookups),
      medianMs: median, p5Ms: p5, p95Ms: p95,
      onload: c.onLoad ? { pointMs: gridMs(c.onLoad.delta), lowMs: gridMs(c.onLoad.lower), highMs: gridMs(c.onLoad.upper) } : null,
      bytesPerLookup: gridPositive(c.bytesPerLookup, UPLOAD_LIMITS.bytesPerLookup),
      packetsPerLookup: gridPositive(c.packetsPerLookup, UPLOAD_LIMITS.packetsPerLookup),
    });
  }
  const hosts = coarseCount(Math.min(entry.measuredHosts, UPLOAD_LIMITS.hostsPerPage));
  if (results.length === 0 || hosts < 1) return null;
  return { site: siteOf(entry.host), hour: hourOf(entry.at), hosts, results };
}

/** `page` with at most `max` of its results, a uniform random sample (shuffled by `random`), in their order. */
export function sampleResults(page: UploadPage, max: number, random: () => number): UploadPage {
  if (page.results.length <= max) return page;
  const keep = new Set(shuffled(page.results.map((_, i) => i), random).slice(0, max));
  return { ...page, results: page.results.filter((_, i) => keep.has(i)) };
}

/**
 * One page as its batch (a batch holds one page: UPLOAD_LIMITS.pages), checked against the collector's own validator
 * before it is queued (a batch the collector would refuse is a bug here, not a retry).
 */
export function buildBatch(page: UploadPage, network: UploadNetwork, key: string, now: () => number = Date.now): { batch: UploadBatch; body: string } {
  const batch: UploadBatch = { version: UPLOAD_BATCH_VERSION, key, network: { type: network.type }, pages: [page] };
  const body = JSON.stringify(batch);
  const checked = validateBatch(JSON.parse(body), { now });
  if (!checked.ok) throw new Error(`an upload batch failed its own validation at ${checked.path}: ${checked.code}: ${checked.message}`);
  if (new TextEncoder().encode(body).length > UPLOAD_LIMITS.bodyBytes) throw new Error('an upload batch is over the body limit');
  return { batch, body };
}
