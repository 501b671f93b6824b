// What a resolver can do, as `dnscost-host probe` and the host's `probe` request report it (native-host/src/probe/):
// the items, one row each, and the check of a reply where it enters the extension.
import * as v from 'valibot';

/** Every item the probe reports, in the order of its table. */
export const PROBE_ITEMS = [
  'answers', 'tls-1.0', 'tls-1.1', 'tls-1.2', 'tls-1.3', 'alpn-h2', 'alpn-http/1.1', 'alpn-h3', 'doh-get', 'doh-post',
  'dns-json', 'resumption', '0-rtt', 'qdcount-2', 'padding', 'ede', 'ecs', 'ecs-upstream', 'dnssec', 'https-rr',
] as const;
export type ProbeItem = (typeof PROBE_ITEMS)[number];

/** yes / no: what the resolver did; n/a: none of its endpoints can show it; error: the check itself could not run. */
export const PROBE_RESULTS = ['yes', 'no', 'n/a', 'error'] as const;
export type ProbeResult = (typeof PROBE_RESULTS)[number];

/** One line of the probe's table: an item on one endpoint (null: the resolver as a whole, none could be asked). */
export interface ProbeRow {
  item: ProbeItem;
  endpoint: string | null;
  result: ProbeResult;
  detail: string;
}

/** The names the probe asks. */
export interface ProbeNames {
  /** A name that exists (every per-endpoint query, two questions, padding, ECS). */
  name: string;
  /** A DNSSEC-signed name that validates. */
  signed: string;
  /** A name whose signatures do not validate. */
  bogus: string;
  /** A name with an HTTPS record. */
  https: string;
  /**
   * A "who am I" name: its authoritative server answers TXT with what it saw, "edns0-client-subnet PREFIX" among it
   * when the resolver sent the person's subnet upstream (the lab's cdnmap answers as Google's does).
   */
  whoami: string;
}

/**
 * Public names for a probe of a person's resolvers (fixed: nothing of their browsing): example.com is signed;
 * dnssec-failed.org is kept bogus for exactly this test; cloudflare.com has an HTTPS record; Google's
 * o-o.myaddr.l.google.com tells who asked it.
 */
export const DEFAULT_PROBE_NAMES: ProbeNames = { name: 'example.com', signed: 'example.com', bogus: 'dnssec-failed.org', https: 'cloudflare.com', whoami: 'o-o.myaddr.l.google.com' };

/** One resolver's probe. */
export interface ResolverProbe {
  id: string;
  rows: ProbeRow[];
}

const text = (max: number) => v.pipe(v.string(), v.maxLength(max));
/** A probe reply's resolvers, checked where they enter the extension (at most 16 resolvers, 200 rows each). */
export const resolverProbes = v.pipe(
  v.array(v.object({
    id: text(64),
    rows: v.pipe(v.array(v.object({ item: v.picklist(PROBE_ITEMS), endpoint: v.nullable(text(1100)), result: v.picklist(PROBE_RESULTS), detail: text(600) })), v.maxLength(200)),
  })),
  v.maxLength(16),
);

/** The items a panel names beside a resolver's costs, when the probe said yes for any of its endpoints. */
export const PROBE_HIGHLIGHTS: readonly ProbeItem[] = ['dnssec', 'padding', '0-rtt', 'resumption', 'ecs'];

/** The highlighted items a resolver's probe answered yes, in PROBE_HIGHLIGHTS' order. */
export function probeHighlights(p: ResolverProbe): ProbeItem[] {
  return PROBE_HIGHLIGHTS.filter((item) => p.rows.some((r) => r.item === item && r.result === 'yes'));
}

/** The extension's message key of an item's name: `probe_item_` and the item, every non-alphanumeric as `_`. */
export function probeItemKey(item: ProbeItem): string {
  return `probe_item_${item.replace(/[^a-z0-9]/g, '_')}`;
}
