// "Firefox as configured now" (issue 29 item 4): in Firefox, each of a page's hosts resolved again through Firefox's own
// resolver (browser.dns.resolve with bypass_cache: its TRR when that is on, else the system's), each at the offset the
// page first needed it, concurrently, timed on the background's clock. The lookups become stored records of a resolver
// of their own (FIREFOX_NOW), so the cost panel prices Firefox's own path beside the host's replays.
import type { StoredRecord } from '../../../common/stored-record.js';

/** The resolver id and name of Firefox's own path in records and in the panel. */
export const FIREFOX_NOW = { id: 'firefox-now', name: 'Firefox as configured now' } as const;

/** browser.dns.resolve as Firefox defines it (a DNSRecord: its addresses, and whether TRR answered). */
export type DnsResolve = (hostname: string, flags: string[]) => Promise<{ addresses: string[]; isTRR: boolean | string }>;

/** What the lookups need: Firefox's resolve, a monotonic clock, a sleep, a bound per lookup. */
export interface FirefoxPathDeps {
  resolve: DnsResolve;
  now(): number;
  sleep(ms: number): Promise<void>;
  timeoutMs: number;
}

/** One lookup through Firefox: when it started and ended (ms on the deps' clock), and what it found. */
export interface FirefoxLookup {
  host: string;
  firstNeededMs: number;
  startedAt: number;
  endedAt: number;
  ok: boolean;
  trr: boolean;
  error: string | null;
}

async function one(deps: FirefoxPathDeps, host: string, firstNeededMs: number): Promise<FirefoxLookup> {
  const startedAt = deps.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), deps.timeoutMs);
  });
  try {
    const r = await Promise.race([deps.resolve(host, ['bypass_cache']), late]);
    return { host, firstNeededMs, startedAt, endedAt: deps.now(), ok: r.addresses.length > 0, trr: r.isTRR === true || r.isTRR === 'true', error: r.addresses.length ? null : 'no-addresses' };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { host, firstNeededMs, startedAt, endedAt: deps.now(), ok: false, trr: false, error: /timeout/.test(message) ? 'timeout' : /NS_ERROR_UNKNOWN_HOST/.test(message) ? 'nxdomain' : 'firefox-resolve' };
  } finally {
    clearTimeout(timer);
  }
}

/** Replays the page's hosts through Firefox's resolver: each starts `firstNeededMs` after the replay `began`. */
export async function replayThroughFirefox(hosts: ReadonlyArray<{ name: string; firstNeededMs: number }>, deps: FirefoxPathDeps): Promise<{ began: number; lookups: FirefoxLookup[] }> {
  const began = deps.now();
  const lookups = await Promise.all(hosts.map(async (h) => {
    const wait = began + h.firstNeededMs - deps.now();
    if (wait > 0) await deps.sleep(wait);
    return one(deps, h.name, h.firstNeededMs);
  }));
  return { began, lookups };
}

/**
 * The lookups as stored records of FIREFOX_NOW: over `doh` when Firefox's TRR answered, else `udp` (the system's
 * resolver, as Firefox asks it); one A-and-AAAA lookup each (Firefox resolves both families in one), repeat 1, `warm`
 * (whatever state Firefox's own connection is in is what "as configured now" is about). No bytes are known: zero.
 */
export function firefoxRecords({ began, lookups }: { began: number; lookups: readonly FirefoxLookup[] }): StoredRecord[] {
  return lookups.map((l) => ({
    host: l.host, qtype: 'A', resolver: FIREFOX_NOW.id, transport: l.trr ? 'doh' : 'udp', mode: 'warm', repeat: 1,
    ok: l.ok, error: l.error,
    timings: { connect: null, tls: null, query: l.endedAt - l.startedAt, total: l.endedAt - l.startedAt },
    bytes: { sent: 0, received: 0 }, packets: { sent: 0, received: 0 },
    replay: { pageStartedAt: began, firstNeededMs: l.firstNeededMs, endedAt: l.endedAt, waitedForConnection: null, paidSetup: false, sharedWith: 1 },
  }));
}
