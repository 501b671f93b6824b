// What the person's own machine spends on encrypted DNS that dnscost's replay, timed in a process of its own, does
// not: the browser's wait before its DoH request leaves, Chromium's wait for a resolver slot, and the DoQ stub's CPU.
// Pure; used by the cost model and by the validation's per-lookup layer (bench/validate/lookups.ts). Specified in
// docs/cost-model.md.
import type { RecordingBrowser } from './browser-queries.js';
import type { StoredRecord } from './stored-record.js';

/** The DoH transports, which the browser itself speaks (Firefox through its TRR, Chromium as secure DNS). */
export const DOH_TRANSPORTS: ReadonlySet<string> = new Set(['doh', 'doh1', 'doh3']);

/**
 * How long a browser's DoH request waits inside the browser before it is written, beyond what dnscost's own client
 * waits: the browser's resolver sends its requests from a thread the page's own work shares (Firefox: the parent
 * process's main thread, where TRRServiceChannel::ResolveProxy runs; Chromium: the network thread, which binds the
 * request to the DoH session), so a request made while the page keeps that thread busy leaves late, and the more names
 * the page asks at once the later. `burst`: how many other names of the page were first needed in the
 * DOH_BURST_WINDOW_MS before this one. Fitted on the lab's 2-core machine, per lookup against each browser's own log
 * (bench/results/validation/lookups/README.md, "pricing the wait"): Firefox 4.5 ms + 1 ms per name of the burst (at
 * most 10); Chromium 2.5 ms on names after the document's (its document's own lookup does not wait). A machine with
 * more cores to spare likely waits less; what the validation checks is this machine.
 */
export function dohDispatchMs(browser: RecordingBrowser | null, transport: string | undefined, burst: number, document: boolean): number {
  if (!DOH_TRANSPORTS.has(transport ?? '')) return 0;
  if (browser === 'firefox') return DOH_DISPATCH.firefox.baseMs + DOH_DISPATCH.firefox.perNameMs * Math.min(burst, DOH_DISPATCH.firefox.burstCap);
  if (browser === 'chromium') return document ? 0 : DOH_DISPATCH.chromium.baseMs;
  return 0;
}

/** dohDispatchMs's fitted constants. */
export const DOH_DISPATCH = { firefox: { baseMs: 4.5, perNameMs: 1, burstCap: 10 }, chromium: { baseMs: 2.5 } } as const;
/**
 * The CPU the machine's DoQ stub spends per query (QUIC's per-packet crypto and acknowledgements in user space), in ms:
 * browsers speak no DoQ, so a person's DoQ goes through a stub on their own machine, which spends it in the middle of
 * the page's busiest part, where the browser needed the cores. Measured, not fitted to any row: AdGuard dnsproxy
 * relaying to a DoQ resolver, 0.265 ms a query beyond the resolver's own on this 2-core machine
 * (bench/results/lab-cpu-per-query.md). DoT's stub (a TLS record per query over the kernel's TCP) and Do53 cost next
 * to nothing there; DoH runs in the browser, whose wait dohDispatchMs prices.
 */
export const STUB_CPU_MS_PER_QUERY: Readonly<Record<string, number>> = { doq: 0.265 };

/**
 * The CPU Chromium's own DoH spends per query beyond its own Do53 client, in ms: each DoH query is a whole URL request
 * on its network thread (delegate, cache backend, stream job, HTTP/2 stream) where a Do53 query is one transaction and
 * a datagram. Measured, not fitted to any row: the browser's process tree resolving 200 fresh names at once, DoH
 * against Do53, 0.15 ms a name beyond, two queries a name (A and HTTPS) (bench/results/browser-dns-cpu.md). Firefox's
 * TRR costs more (0.85 ms a name there), which dohDispatchMs's fitted wait already prices.
 */
export const CHROMIUM_DOH_CPU_MS_PER_QUERY = 0.075;

/**
 * clientCpuMs: onLoad's delay from the CPU the DNS client on the person's machine spends (a DoQ stub's; Chromium's own
 * DoH), taken as all of it on the page's critical path (a busy 2-core machine: the 100-host page's 200 warm DoQ queries
 * cost 53 ms of CPU, and its warm rows measured +37 to +68 ms where the lookups alone predicted +2 to +5): per-query
 * CPU × the queries the page asked before onLoad (median over repeats).
 */
export function clientCpuMs(browser: RecordingBrowser | null, transport: string, queries: number): number {
  const own = browser === 'chromium' && transport === 'doh' ? CHROMIUM_DOH_CPU_MS_PER_QUERY : 0;
  return ((STUB_CPU_MS_PER_QUERY[transport] ?? 0) + own) * queries;
}

/** Names first needed this long before a name (or at the same time) make its burst. */
export const DOH_BURST_WINDOW_MS = 10;

/** For each name of a replay, how many other names were first needed in the window before it (inclusive). */
export function burstsOf(firstNeeded: ReadonlyMap<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, at] of firstNeeded) {
    let n = 0;
    for (const [other, t] of firstNeeded) if (other !== name && t <= at && t >= at - DOH_BURST_WINDOW_MS) n++;
    out.set(name, n);
  }
  return out;
}

/** When each name of `records` was first needed on the replay's schedule (records without replay info: none). */
export function firstNeededOf(records: readonly StoredRecord[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of records) if (r.replay) out.set(r.host, Math.min(out.get(r.host) ?? Infinity, r.replay.firstNeededMs));
  return out;
}

/**
 * How many lookups Chromium's host resolver runs at once over its own Do53 client (Do53, and DoT or DoQ through a
 * stub): 64 job slots (kDefaultMaxSystemTasks, net/dns/host_resolver_manager.cc), each job holding one per record
 * type's transaction, and a page's names asked for two (A and HTTPS): 32. A name asked while they are taken waits for
 * the first to end; its NetLog shows the wait (bench/results/validation/lookups/README.md: 33 at most running, 20–40
 * names of the 100-host page waiting a median 79 ms at 4G). Over its DoH (its own limit of about 64) none waited.
 */
export const CHROMIUM_RESOLVER_JOBS = 32;

/** Whether a browser waits for a resolver slot on a transport: Chromium, except over its own DoH. */
export function resolverSlots(browser: RecordingBrowser | null, transport: string | undefined): number | null {
  return browser === 'chromium' && !DOH_TRANSPORTS.has(transport ?? '') ? CHROMIUM_RESOLVER_JOBS : null;
}

/**
 * Each lookup's time as a resolver with `slots` jobs at once sees it (the wait for a slot plus the lookup itself),
 * in the order given: a lookup starts at `startMs` or, when every slot is taken then, as soon as the first of them
 * ends. `slots` null: no limit, each lookup its own `ms`.
 */
export function queuedLookups(lookups: ReadonlyArray<{ startMs: number; ms: number }>, slots: number | null): number[] {
  if (slots === null) return lookups.map((l) => l.ms);
  const order = lookups.map((l, i) => i).sort((a, b) => lookups[a]!.startMs - lookups[b]!.startMs || a - b);
  const ends: number[] = []; // the running lookups' ends, ascending
  const out = new Array<number>(lookups.length);
  for (const i of order) {
    const { startMs, ms } = lookups[i]!;
    while (ends.length && ends[0]! <= startMs) ends.shift();
    // Every end left is after startMs: with the slots full, it begins as the first of them ends.
    const begin = ends.length >= slots ? ends.splice(0, ends.length - slots + 1).at(-1)! : startMs;
    const end = begin + ms;
    const at = ends.findIndex((e) => e > end);
    ends.splice(at === -1 ? ends.length : at, 0, end);
    out[i] = end - startMs;
  }
  return out;
}
