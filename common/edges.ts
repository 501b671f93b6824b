// The CDN mapping penalty (issue 29 item 1). A resolver can answer a CDN's name with a farther edge than the one the
// browser reached (a public resolver that sends no EDNS Client Subnet, or whose anycast site is far from the person):
// every new connection to that host then pays the longer round trip for its set-up. The host times a TCP handshake
// (SYN to SYN-ACK, then closed: no data) with the address the browser reached and with the address each resolver
// gave, for the hosts the browser itself connected to on the page (native-host/src/edges.ts); this module prices the
// difference and is shared by the host, the schema and the panel. It is a line of its own beside the DNS cost: the
// validation has not covered it, so it is never folded into the estimated onLoad change.
import * as v from 'valibot';

/** Bounds of the check: hosts per page, handshakes per address (median), one handshake's and the whole check's time. */
export const EDGE_LIMITS = { hosts: 150, resolvers: 16, tries: 3, handshakeTimeoutMs: 2_000, totalMs: 30_000 } as const;

/** The ports a browser's page connections use: the check connects only where the browser did. */
export const EDGE_PORTS = [80, 443] as const;

const ms = v.nullable(v.pipe(v.number(), v.finite(), v.minValue(0)));
const address = v.pipe(v.string(), v.ip());

/** One host of the page: where the browser went and where each resolver's answer points, with their handshake times. */
export const edgeRow = v.object({
  host: v.pipe(v.string(), v.minLength(1), v.maxLength(253)),
  port: v.picklist(EDGE_PORTS),
  /** The address the browser reached and the median handshake with it (ms; null when none completed). */
  browser: v.object({ address, ms }),
  /** Per resolver, the first address of the browser's family in its answer, and the median handshake with it. */
  resolvers: v.pipe(v.array(v.object({ resolver: v.pipe(v.string(), v.minLength(1), v.maxLength(128)), address, ms })), v.maxLength(EDGE_LIMITS.resolvers)),
});
export type EdgeRow = v.InferOutput<typeof edgeRow>;
/** A `done` reply's edges, as the extension checks them. */
export const edgeRows = v.pipe(v.array(edgeRow), v.maxLength(EDGE_LIMITS.hosts));

/** Round trips a new connection pays before its first request: the TCP handshake, and TLS 1.3's on 443. */
export function setupRoundTrips(port: EdgeRow['port']): number {
  return port === 443 ? 2 : 1;
}

/**
 * What `resolver`'s answer costs each new connection to the row's host (ms): the difference of the handshakes times the
 * set-up round trips; 0 when it answers the browser's own address; null when either handshake is unknown.
 */
export function edgePenalty(row: EdgeRow, resolver: string): number | null {
  const r = row.resolvers.find((x) => x.resolver === resolver);
  if (!r) return null;
  if (r.address === row.browser.address) return 0;
  if (r.ms === null || row.browser.ms === null) return null;
  return (r.ms - row.browser.ms) * setupRoundTrips(row.port);
}

/** Per resolver over a page: hosts checked, those it sends elsewhere, and the largest penalty per connection (ms). */
export interface PagePenalty {
  resolver: string;
  hosts: number;
  elsewhere: number;
  maxMs: number | null;
}

/** Each resolver's CDN penalty on a page, from its rows. */
export function pagePenalties(rows: readonly EdgeRow[]): PagePenalty[] {
  const resolvers = [...new Set(rows.flatMap((r) => r.resolvers.map((x) => x.resolver)))];
  return resolvers.map((resolver) => {
    const mine = rows.filter((r) => r.resolvers.some((x) => x.resolver === resolver));
    const penalties = mine.map((r) => edgePenalty(r, resolver)).filter((p): p is number => p !== null);
    return {
      resolver,
      hosts: mine.length,
      elsewhere: mine.filter((r) => r.resolvers.find((x) => x.resolver === resolver)!.address !== r.browser.address).length,
      maxMs: penalties.length ? Math.max(...penalties) : null,
    };
  });
}
