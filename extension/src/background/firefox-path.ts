// "Firefox as configured now" (issue 29 item 4): in Firefox, each of a page's hosts resolved again through Firefox's own
// resolver (browser.dns.resolve with bypass_cache: its TRR when that is on, else the system's), each at the offset the
// page first needed it, concurrently, timed on the background's clock. The lookups become stored records of a resolver
// of their own (FIREFOX_NOW_ID), so the cost panel prices Firefox's own path beside the host's replays. They run after
// the host's replays (measurements.ts ownPath), never beside them, and ask only what Firefox itself asked, of the
// resolver it asked: nothing goes anywhere the page's own load did not send it.
import { FIREFOX_NOW_ID } from '../../../common/default-resolvers.js';
import { median } from '../../../common/stats.js';
import type { StoredRecord } from '../../../common/stored-record.js';

/** browser.dns.resolve as Firefox defines it (a DNSRecord: its addresses, and whether TRR answered). */
export type DnsResolve = (hostname: string, flags: Array<'bypass_cache'>) => Promise<{ addresses: string[]; isTRR: boolean | string }>;

/** The bound of one lookup through Firefox (its own TRR timeout and fallback stay within it). */
export const FIREFOX_LOOKUP_TIMEOUT_MS = 10_000;

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

/** Lookups of `localhost` that calibrate what asking Firefox costs by itself. */
export const CALIBRATION_CALLS = 5;

/**
 * What asking Firefox costs by itself, which a page's own lookups never pay: the extension API's round trip to the
 * parent process and through its DNS service, timed as the median of CALIBRATION_CALLS lookups of `localhost` (Firefox
 * answers it itself, never over the network, TRR or not); 0 when one fails or times out.
 */
async function askingCost(deps: FirefoxPathDeps): Promise<number> {
  const took: number[] = [];
  for (let i = 0; i < CALIBRATION_CALLS; i++) {
    const l = await one(deps, 'localhost', 0);
    if (!l.ok) return 0;
    took.push(l.endedAt - l.startedAt);
  }
  return median(took)!;
}

/**
 * Replays the page's hosts through Firefox's resolver: each starts `firstNeededMs` after the replay `began`, once the
 * cost of asking Firefox at all (`askingMs`) is known.
 */
export async function replayThroughFirefox(hosts: ReadonlyArray<{ name: string; firstNeededMs: number }>, deps: FirefoxPathDeps): Promise<{ began: number; askingMs: number; lookups: FirefoxLookup[] }> {
  const askingMs = await askingCost(deps);
  const began = deps.now();
  const lookups = await Promise.all(hosts.map(async (h) => {
    const wait = began + h.firstNeededMs - deps.now();
    if (wait > 0) await deps.sleep(wait);
    return one(deps, h.name, h.firstNeededMs);
  }));
  return { began, askingMs, lookups };
}

/**
 * The lookups as stored records of FIREFOX_NOW_ID: over `doh` when Firefox's TRR answered, else `udp` (the system's
 * resolver, as Firefox asks it); one A-and-AAAA lookup each (Firefox resolves both families in one), repeat 1, `warm`
 * (whatever state Firefox's own connection is in is what "as configured now" is about). No bytes are known: zero.
 * A lookup's time is from when it was asked to its answer, less the cost of asking (`askingMs`), and it ends that long
 * after its host's offset: the extension's timers firing late are no part of Firefox's lookups.
 */
export function firefoxRecords({ began, askingMs, lookups }: { began: number; askingMs: number; lookups: readonly FirefoxLookup[] }): StoredRecord[] {
  return lookups.map((l) => {
    const took = Math.max(0, l.endedAt - l.startedAt - askingMs);
    return {
      host: l.host, qtype: 'A', resolver: FIREFOX_NOW_ID, transport: l.trr ? 'doh' : 'udp', mode: 'warm', repeat: 1,
      ok: l.ok, error: l.error,
      timings: { connect: null, tls: null, query: took, total: took },
      bytes: { sent: 0, received: 0 }, packets: { sent: 0, received: 0 }, ttl: null,
      replay: { pageStartedAt: began, firstNeededMs: l.firstNeededMs, endedAt: began + l.firstNeededMs + took, waitedForConnection: null, paidSetup: false, sharedWith: 1 },
    };
  });
}

/**
 * The scheduler's `ownPath` (measurements.ts) where the browser lets an extension resolve (Firefox, with the `dns`
 * permission its build alone asks for); undefined elsewhere.
 */
export function firefoxOwnPath(dns: { resolve: DnsResolve } | undefined): ((hosts: ReadonlyArray<{ name: string; firstNeededMs: number }>) => Promise<StoredRecord[]>) | undefined {
  const resolve = dns?.resolve;
  if (typeof resolve !== 'function') return undefined;
  const deps: FirefoxPathDeps = {
    resolve: (host, flags) => resolve.call(dns, host, flags),
    now: () => performance.now(),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    timeoutMs: FIREFOX_LOOKUP_TIMEOUT_MS,
  };
  return async (hosts) => firefoxRecords(await replayThroughFirefox(hosts, deps));
}
