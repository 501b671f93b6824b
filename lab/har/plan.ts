// The page to rebuild from a HAR (lab/har/): a pure function from the validated HAR (har.ts) to a tree of resources,
// each with the resource whose response discovered it, how it was discovered, its size, its server's wait and how long
// after its parent's response the recording browser started it. site.ts serves the tree, bodies.ts writes the bodies
// that make a browser discover it again, zone.ts names its hosts to the lab resolver.
import type { Har, HarRequest } from '../../common/har.js';

/** What a resource is, as far as rebuilding it goes (xhr, fetch, ping and beacon are all `fetch`). */
export type ResourceType = 'document' | 'script' | 'stylesheet' | 'image' | 'font' | 'fetch' | 'other';

/** How the browser comes to request a resource: the root navigation, a redirect, a tag, a CSS rule, code, or the document's own choice. */
export type Discovery = 'root' | 'redirect' | 'parser' | 'css' | 'script' | 'other';

/** One resource of the rebuilt page. */
export interface PlanResource {
  /** Index in PagePlan.resources (resources are in order of first request). */
  id: number;
  /** The URL without its fragment. */
  url: string;
  host: string;
  scheme: 'http' | 'https';
  port: number;
  /** pathname + search, as WHATWG URL parsing writes them (what a browser sends). */
  path: string;
  method: string;
  status: number;
  /** Absolute redirect target (no fragment), or null. */
  redirectTo: string | null;
  type: ResourceType;
  /** The HAR's MIME type (lower case, may be empty). */
  mimeType: string;
  /** Body size: content.size, else _transferSize, else bodySize; 0…MAX_BYTES. */
  bytes: number;
  /** timings.wait, 0…MAX_WAIT_MS. */
  waitMs: number;
  /** The resource whose response discovered this one; null for the document. */
  parent: number | null;
  discovery: Discovery;
  /** How long after the parent's response ended the HAR started it, 0…MAX_DELAY_MS. */
  delayMs: number;
  /** When the HAR started it, ms after the document started (negative if before). */
  startMs: number;
  /** The recorded response had Timing-Allow-Origin. */
  tao: boolean;
  /**
   * The answers the URL gave before this one in the recording, in order (a 302 to itself that sets a cookie, then
   * the page): served first, one per request on a connection, so the browser walks the same chain. Usually empty.
   */
  earlier: PlanAnswer[];
}

/** One recorded answer of a URL: what the site sends for it. */
export interface PlanAnswer {
  status: number;
  redirectTo: string | null;
  bytes: number;
  waitMs: number;
}

/** The page to rebuild. */
export interface PagePlan {
  /** The navigation's first resource (id). */
  document: number;
  /** Where the navigation's redirects end (id): the page whose HTML is parsed. */
  landing: number;
  /** Hostnames in order of first request. */
  hosts: string[];
  /**
   * The hosts grouped by the server addresses they shared in the recording (each host alone when the HAR has none):
   * a browser could pool one group's connections, never two groups', so the site gives each group a certificate.
   */
  hostGroups: string[][];
  resources: PlanResource[];
  /** The HAR's onLoad, ms after the page started. */
  onLoadMs: number | null;
  /** Requests left out (non-http(s) URLs), with why. */
  skipped: { url: string; reason: string }[];
}

/** Caps on what a HAR may ask of the lab (a few MB per body, ten seconds per wait or delay). */
export const PLAN_LIMITS = { maxBytes: 4 * 1024 * 1024, maxWaitMs: 10_000, maxDelayMs: 10_000 } as const;

const clamp = (v: number, hi: number) => (Number.isFinite(v) ? Math.min(hi, Math.max(0, v)) : 0);

// Explicit browser types first; Chrome's "other" (older Chromes call almost everything "other") by MIME type, then
// by the path's extension. HTML makes a frame only when the HAR gives no type at all: Chrome has always called its
// frames "document", so an "other" answered with HTML is a pixel, a redirect or a mislabelled script, not a frame.
function typeOf(r: HarRequest, u: URL): ResourceType {
  switch (r.resourceType) {
    case 'document': case 'subdocument': case 'iframe': return 'document';
    case 'script': return 'script';
    case 'stylesheet': return 'stylesheet';
    case 'image': case 'img': case 'imageset': return 'image';
    case 'font': return 'font';
    case 'xhr': case 'fetch': case 'ping': case 'beacon': case 'eventsource': return 'fetch';
    case null: case 'other': break;
    default: return 'other';
  }
  const m = r.mimeType;
  if (/html/.test(m)) return r.resourceType === null ? 'document' : 'other';
  if (/(java|ecma)script/.test(m)) return 'script';
  if (/text\/css/.test(m)) return 'stylesheet';
  if (/^image\//.test(m)) return 'image';
  if (/^font\/|woff|opentype|truetype|sfnt|fontobject/.test(m)) return 'font';
  if (/json/.test(m)) return 'fetch';
  const ext = /\.([a-z0-9]+)$/i.exec(u.pathname)?.[1]?.toLowerCase() ?? '';
  if (/^m?js$/.test(ext)) return 'script';
  if (ext === 'css') return 'stylesheet';
  if (/^(png|jpe?g|gif|webp|avif|svg|ico|bmp)$/.test(ext)) return 'image';
  if (/^(woff2?|ttf|otf|eot)$/.test(ext)) return 'font';
  return 'other';
}

const withoutHash = (u: URL) => u.href.replace(/#.*$/, '');

/** Whether a resource's response can discover others: a document, or a script/stylesheet that runs (2xx with a body). */
export function canDiscover(r: Pick<PlanResource, 'type' | 'status' | 'redirectTo'>): boolean {
  if (r.redirectTo !== null) return false;
  const ok = r.status === 0 || r.status === 304 || (r.status >= 200 && r.status < 300 && r.status !== 204 && r.status !== 205);
  if (r.type === 'document') return ok || r.status >= 400;
  return (r.type === 'script' || r.type === 'stylesheet') && ok;
}

interface Group { key: string; url: URL; entries: HarRequest[]; start: number }

/**
 * The page a HAR recorded, as a tree of resources to serve and discover again (pure; errors only on an empty page).
 *
 * What a HAR says and what is decided here:
 * - parser initiator: the initiator's URL is the document (a tag) or a stylesheet (a CSS rule);
 * - script initiator: the first stack frame whose URL is a resource of the page (a script; the document for inline
 *   scripts), searching async parent stacks too; no usable frame → the document's inline script;
 * - a redirect target's parent is the redirect; anything a redirected URL discovered is its final target's;
 * - anything else (browser-initiated, preflights, no initiator) → the document (landing page after redirects);
 * - a parent must have started earlier and be able to discover (a document, or a script/stylesheet with a usable
 *   response); otherwise its nearest such ancestor takes over (e.g. code eval'd from an XHR's body), with the delay
 *   measured from that ancestor's response — so the tree has no cycles by construction.
 * - the same URL requested several times is one resource (a CORS preflight folds into its request).
 */
export function pagePlan(har: Har, limits: typeof PLAN_LIMITS = PLAN_LIMITS): PagePlan {
  const skipped: PagePlan['skipped'] = [];
  const ordered = [...har.requests].sort((a, b) => a.startMs - b.startMs || a.index - b.index);
  const groups = new Map<string, Group>();
  const hosts: string[] = [];
  for (const r of ordered) {
    const u = new URL(r.url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') {
      skipped.push({ url: r.url.slice(0, 200), reason: `${u.protocol.replace(/:$/, '')}: URL` });
      continue;
    }
    const host = u.hostname.replace(/\.$/, '');
    if (!hosts.includes(host)) hosts.push(host);
    const key = withoutHash(u);
    const g = groups.get(key);
    if (g) g.entries.push(r);
    else groups.set(key, { key, url: u, entries: [r], start: r.startMs });
  }
  if (groups.size === 0) throw new Error('the HAR has no http(s) request on its first page');

  const list = [...groups.values()];
  const byKey = new Map(list.map((g, i) => [g.key, i]));
  // A group's answers: its requests that are not CORS preflights (the browser sends those by itself) nor 304s (a
  // cache's answer the rebuild cannot give), in order. The resource is the answer the browser went on from: the first
  // that is not a redirect (a URL fetched again later, as a script that loads the same tag twice, started its children
  // from the first fetch), else the last; the redirects before it are served first. Answers after it are re-fetches
  // and get the resource's own.
  const answers = list.map((g) => {
    const real = g.entries.filter((e) => e.initiator.kind !== 'preflight' && e.method !== 'OPTIONS');
    const fresh = real.filter((e) => e.status !== 304);
    const all = fresh.length ? fresh : real.length ? [real[0]!] : [g.entries[0]!];
    const settled = all.findIndex((e) => !(e.status >= 300 && e.status < 400 && e.redirectURL));
    return settled === -1 ? all : all.slice(0, settled + 1);
  });
  const main = answers.map((a) => a.at(-1)!);
  const redirectOf = (r: HarRequest): string | null => (r.redirectURL && r.status >= 300 && r.status < 400 ? withoutHash(new URL(r.redirectURL)) : null);
  const answerOf = (r: HarRequest): PlanAnswer => ({
    status: r.status, redirectTo: redirectOf(r), bytes: Math.round(clamp(r.contentSize ?? r.transferSize ?? r.bodySize ?? 0, limits.maxBytes)), waitMs: clamp(r.waitMs ?? 0, limits.maxWaitMs),
  });
  const resources: PlanResource[] = list.map((g, id) => {
    const r = main[id]!;
    const u = g.url;
    return {
      id, url: g.key, host: u.hostname.replace(/\.$/, ''), scheme: u.protocol === 'https:' ? 'https' : 'http',
      port: Number(u.port) || (u.protocol === 'https:' ? 443 : 80), path: u.pathname + u.search,
      method: r.method, ...answerOf(r), type: typeOf(r, u), mimeType: r.mimeType, parent: null, discovery: 'root', delayMs: 0, startMs: 0,
      tao: r.timingAllowOrigin, earlier: answers[id]!.slice(0, -1).map(answerOf),
    };
  });
  const start = (id: number) => list[id]!.start;
  // A resource's response ended when its last answer did.
  const end = (id: number) => Math.max(start(id), main[id]!.startMs) + main[id]!.timeMs;
  const idOf = (url: string | null): number | undefined => {
    if (!url) return undefined;
    try {
      return byKey.get(withoutHash(new URL(url)));
    } catch {
      return undefined;
    }
  };

  const document = resources.find((r) => r.type === 'document')?.id ?? 0;
  const placed = new Set<number>();
  // Placed redirects by their target: the latest one wins.
  const hopTo = new Map<string, number>();
  const place = (id: number, parent: number | null, discovery: Discovery) => {
    const r = resources[id]!;
    r.parent = parent;
    r.discovery = discovery;
    r.delayMs = parent === null ? 0 : Math.round(clamp(start(id) - end(parent), limits.maxDelayMs) * 1000) / 1000;
    placed.add(id);
    if (r.redirectTo !== null) hopTo.set(r.redirectTo, id);
  };
  // Where a placed resource's redirects end, among placed resources.
  const settle = (id: number): number => {
    const seen = new Set<number>();
    for (let cur = id; ; ) {
      seen.add(cur);
      const next = idOf(resources[cur]!.redirectTo);
      if (next === undefined || !placed.has(next) || seen.has(next)) return cur;
      cur = next;
    }
  };
  place(document, null, 'root');
  let landing = document;
  for (let next = idOf(resources[landing]!.redirectTo); next !== undefined && !placed.has(next); next = idOf(resources[landing]!.redirectTo)) {
    place(next, landing, 'redirect');
    landing = next;
  }
  for (const r of resources) {
    if (placed.has(r.id)) continue;
    const hop = hopTo.get(r.url);
    if (hop !== undefined) {
      place(r.id, hop, 'redirect');
      continue;
    }
    const init = main[r.id]!.initiator;
    let candidate: number | undefined;
    if (init.kind === 'parser') candidate = idOf(init.url);
    else if (init.kind === 'script') candidate = init.frames.map(idOf).find((id) => id !== undefined && placed.has(id));
    if (candidate === undefined || !placed.has(candidate)) candidate = landing;
    candidate = settle(candidate);
    // Climb to an ancestor whose response can discover (the landing document ends every climb).
    while (candidate !== landing && !canDiscover(resources[candidate]!)) candidate = resources[candidate]!.parent ?? landing;
    const p = resources[candidate]!;
    const discovery: Discovery = p.type === 'stylesheet' ? 'css' : p.type === 'script' ? 'script'
      : init.kind === 'parser' ? 'parser' : init.kind === 'script' ? 'script' : 'other';
    place(r.id, candidate, discovery);
  }
  const hostGroups = groupsOf(hosts, har.requests);
  const t0 = start(document);
  for (const r of resources) r.startMs = Math.round((start(r.id) - t0) * 1000) / 1000;
  return { document, landing, hosts, hostGroups, resources, onLoadMs: har.onLoadMs, skipped };
}

// Hosts joined by a shared server address (union-find), each group in order of first request.
function groupsOf(hosts: string[], requests: HarRequest[]): string[][] {
  const root = new Map(hosts.map((h) => [h, h]));
  const find = (h: string): string => {
    const up = root.get(h)!;
    return up === h ? h : find(up);
  };
  const byIp = new Map<string, string>();
  for (const r of requests) {
    let host: string;
    try {
      host = new URL(r.url).hostname.replace(/\.$/, '');
    } catch {
      continue;
    }
    if (!r.serverIp || !root.has(host)) continue;
    const other = byIp.get(r.serverIp);
    if (other === undefined) byIp.set(r.serverIp, host);
    else if (find(other) !== find(host)) root.set(find(host), find(other));
  }
  const groups = new Map<string, string[]>();
  for (const h of hosts) (groups.get(find(h)) ?? groups.set(find(h), []).get(find(h))!).push(h);
  return [...groups.values()];
}

/** The resource ids from the document down to `id` (the chain that must load, in order, before it is requested). */
export function chainOf(plan: PagePlan, id: number): number[] {
  const out: number[] = [];
  for (let cur: number | null = id; cur !== null && out.length <= plan.resources.length; cur = plan.resources[cur]!.parent) out.unshift(cur);
  return out;
}
