// The CDN check (common/edges.ts, issue 29 item 1): after a page's replays, a TCP handshake with the address the
// browser reached for each host and with the address each resolver's answer gave, EDGE_LIMITS.tries times each
// (median), the socket closed as soon as it connects: no byte of data, only to hosts the browser itself connected to,
// on the port it used.
import { connect, isIP } from 'node:net';
import { EDGE_LIMITS, type EdgeRow } from '../../common/edges.js';
import type { ExchangeRecord } from '../../common/record.js';
import type { HostSpec } from '../../common/schema.js';
import { median } from '../../common/stats.js';

/** One TCP handshake with `address`:`port` (SYN to the socket's connect, ms), then closed; null when it fails or times out. */
export function handshakeMs(address: string, port: number, timeoutMs: number): Promise<number | null> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = connect({ host: address, port, noDelay: true });
    const finish = (ms: number | null) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ms);
    };
    const timer = setTimeout(() => finish(null), timeoutMs);
    socket.once('connect', () => finish(performance.now() - started));
    socket.once('error', () => finish(null));
  });
}

/** The first address of `family` (4 or 6) in a record's answers. */
function answered(r: ExchangeRecord, family: number): string | null {
  return r.answers.find((a) => (a.type === 'A' || a.type === 'AAAA') && isIP(a.data) === family)?.data ?? null;
}

/**
 * The rows of the check: per host the browser reached (its first reached address, the port it used), each resolver's
 * answer of the same family from the replays' records; every distinct address timed EDGE_LIMITS.tries times, one
 * handshake at a time (they would share the link otherwise), within EDGE_LIMITS.totalMs and `signal`.
 */
export async function edgeRows(records: readonly ExchangeRecord[], hosts: readonly (HostSpec | string)[], signal?: AbortSignal): Promise<EdgeRow[]> {
  const plan: Array<{ host: string; port: 80 | 443; browser: string; resolvers: Array<{ resolver: string; address: string }> }> = [];
  for (const h of hosts) {
    if (typeof h === 'string' || !h.port || !h.reached?.length) continue;
    const browser = h.reached[0]!;
    const family = isIP(browser);
    const resolvers = new Map<string, string>();
    for (const r of records) {
      if (r.host !== h.name || !r.ok || resolvers.has(r.resolver)) continue;
      const address = answered(r, family);
      if (address) resolvers.set(r.resolver, address);
    }
    if (resolvers.size) plan.push({ host: h.name, port: h.port, browser, resolvers: [...resolvers].map(([resolver, address]) => ({ resolver, address })) });
    if (plan.length >= EDGE_LIMITS.hosts) break;
  }
  const timed = new Map<string, number | null>();
  const deadline = performance.now() + EDGE_LIMITS.totalMs;
  const time = async (address: string, port: number): Promise<number | null> => {
    const key = `${address} ${port}`;
    if (!timed.has(key)) {
      const tries: number[] = [];
      for (let i = 0; i < EDGE_LIMITS.tries && !signal?.aborted && performance.now() < deadline; i++) {
        const ms = await handshakeMs(address, port, EDGE_LIMITS.handshakeTimeoutMs);
        if (ms !== null) tries.push(ms);
      }
      timed.set(key, median(tries));
    }
    return timed.get(key)!;
  };
  const rows: EdgeRow[] = [];
  for (const p of plan) {
    const browser = { address: p.browser, ms: await time(p.browser, p.port) };
    const resolvers: EdgeRow['resolvers'] = [];
    for (const r of p.resolvers) resolvers.push({ ...r, ms: await time(r.address, p.port) });
    rows.push({ host: p.host, port: p.port, browser, resolvers });
  }
  return rows;
}
