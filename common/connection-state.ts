// Which connection state a visit would have had (issue 11, item 2): an encrypted transport pays its handshakes only
// when its connection is not open, and whoever holds it (the browser for DoH, a stub for DoT and DoQ) keeps it open
// for a while after the last lookup. From the person's own timeline — how long their browser had been idle before
// the page (PageRecord.idleBeforeMs) — each visit has an expected state, cold or warm, and the expected cost is the
// cost in that state.
import type { RecordingBrowser } from './browser-queries.js';
import type { Mode, TransportId } from './transports.js';

/**
 * What holds an encrypted DNS connection between a browser's lookups.
 *
 * How long each holder keeps an idle connection, measured with the real programs in the lab
 * (bench/idle-lifetimes.ts, bench/results/idle-lifetimes.md) and read in their sources (the constants named):
 * - Chromium's DoH: no idle limit of its own (an HTTP/2 session lives until the server closes it; after 10 s without
 *   a read the next request carries a PING: net/spdy kDefaultConnectionAtRiskOfLossSeconds).
 * - Firefox's TRR: 3,400 s after the last data read (network.http.http2.timeout 170 × largeKeepaliveFactor 20).
 * - unbound forwarding over TLS: configured 60 s (tcp-reuse-timeout); stubby: configured 10 s (idle_timeout,
 *   Debian's configuration). The figures used are the configured ones. bench/results/idle-lifetimes-stubs.md saw
 *   them kept longer (80 s, 20 s), but its gaps were not quiet: the browser's own background lookups (Chromium asks
 *   accounts.google.com for a new context) go through the stub, which the lab resolver refused without logging, and
 *   each one keeps the connection alive. In the 4G validation traces (bench/results/validation/), stubby's
 *   connection was closed after 11.7–16 s idle in 16 of 18 loads (the two open ones after such a lookup);
 *   systemd-resolved with DNSOverTLS: 10 s (DNS_STREAM_ESTABLISHED_TIMEOUT_USEC) — the default DoT path on Linux.
 * - AdGuard dnsproxy towards a DoQ upstream: none, and the server's idle limit does not end it either: quic-go sends
 *   a keep-alive PING every min(20 s, half the server's idle timeout) (seen on the wire in the lab: with a 5 s server
 *   limit a ping every 2.5 s, and a query after 20 s idle on the same connection).
 */
export const HOLDERS = {
  'chromium-doh': { name: "Chromium's DNS over HTTPS", idleMs: null },
  'firefox-trr': { name: "Firefox's DNS over HTTPS (TRR)", idleMs: 3_400_000 },
  unbound: { name: 'unbound (DNS over TLS)', idleMs: 60_000 },
  stubby: { name: 'stubby (DNS over TLS)', idleMs: 10_000 },
  'systemd-resolved': { name: 'systemd-resolved (DNS over TLS)', idleMs: 10_000 },
  dnsproxy: { name: 'dnsproxy (DNS over QUIC)', idleMs: null, pings: true },
} as const satisfies Record<string, { name: string; idleMs: number | null; pings?: true }>;
export type Holder = keyof typeof HOLDERS;

/**
 * Who would hold the connection if the person switched to `transport`: for DoH their browser; for DoT their
 * machine's stub (the one they run, else systemd-resolved, Linux's default); for DoQ dnsproxy. Null for the
 * transports with no connection to keep (Do53 over UDP) or none a browser uses (Do53 over TCP).
 */
export function holderOf(transport: TransportId, browser: RecordingBrowser | null, stub: string | null = null): Holder | null {
  switch (transport) {
    case 'doh':
    case 'doh1':
    case 'doh3':
      return browser === 'firefox' ? 'firefox-trr' : 'chromium-doh';
    case 'dot':
      return stub === 'unbound' || stub === 'stubby' ? stub : 'systemd-resolved';
    case 'doq':
      return 'dnsproxy';
    default:
      return null;
  }
}

/** The mode whose cost is the expected one for `transport` at this page's visit (see expectedMode). */
export function expectedModeOf(transport: TransportId, page: { browser?: RecordingBrowser | null | undefined; idleBeforeMs?: number | null | undefined }, stub: string | null = null): Mode {
  return expectedMode(page.idleBeforeMs, holderOf(transport, page.browser ?? null, stub));
}

/** Whether `holder` keeps its connection open by pinging, so no server's idle limit ends it. */
export function pings(holder: Holder): boolean {
  return 'pings' in HOLDERS[holder];
}

/**
 * The state the candidate's connection would have been in at this visit: warm when the holder keeps an idle
 * connection at least as long as the browser had been idle before the page (and the server does too), else cold. A
 * visit with nothing before it (the browser's first page) is cold; a transport without a connection is cold.
 * The server may close sooner; where its limit is known (serverIdleMs) the shorter one applies, except for a holder
 * that pings.
 */
export function expectedMode(idleBeforeMs: number | null | undefined, holder: Holder | null, serverIdleMs: number | null = null): Mode {
  if (holder === null || idleBeforeMs === null || idleBeforeMs === undefined) return 'cold';
  const limits = [HOLDERS[holder].idleMs, pings(holder) ? null : serverIdleMs].filter((x): x is number => x !== null);
  const keptMs = limits.length ? Math.min(...limits) : Infinity;
  return idleBeforeMs <= keptMs ? 'warm' : 'cold';
}
