// Synthetic but valid history entries (extension/src/history.ts) for the dashboard's browser test and benchmark, and a writer
// that puts them into the extension's storage.local under the background store's keys
// (extension/src/background/history-store.ts), from one of the extension's own pages.
//
// The person the generator invents: pages of SITES measured over SPAN_DAYS, with Cloudflare and Google from the
// start and Quad9 added QUAD9_FROM_DAYS ago (so time windows change which resolvers are drawn); pages of SOLO_SITE
// measured only against a custom resolver whose id is markup (`<b>lab</b>`), to check that text from data is text.
import type { Page } from 'puppeteer-core';
import { HISTORY_VERSION, isHistoryEntry, lookupHistogram, type HistoryCell, type HistoryEntry } from '../extension/src/history.js';
import { seededRandom } from '../common/stats.js';
import { PROFILES } from '../common/network-profiles.js';
import { WHAT_IF_NETWORKS } from '../common/what-if-network.js';
import { type Mode, type TransportId } from '../common/transports.js';
import { HISTORY_KEYS } from '../extension/src/background/history-store.js';
import { REVISITS_KEY } from '../extension/src/background/revisits.js';
import type { HostRevisits } from '../extension/src/cache-savings.js';

export const SITES = ['news.example', 'shop.example', 'video.example', 'mail.example', 'wiki.example', 'bank.example', 'maps.example', 'social.example'];
export const SOLO_SITE = 'solo.example';
export const HOSTILE_RESOLVER = '<b>lab</b>';
export const SPAN_DAYS = 40;
export const QUAD9_FROM_DAYS = 10;
const DAY = 86_400_000;

/** Extra cost (ms) of a transport over plain UDP, cold and warm, before noise. */
const TRANSPORT_COST: Record<TransportId, Record<Mode, number>> = {
  udp: { cold: 0, warm: 0 }, tcp: { cold: 6, warm: 1 }, dot: { cold: 38, warm: 6 }, doh: { cold: 44, warm: 9 }, doh1: { cold: 52, warm: 14 },
  doq: { cold: 22, warm: 3 }, doh3: { cold: 25, warm: 5 },
};
/** The transports the synthetic history was written with (before DoQ and DoH3): its figures stay comparable. */
const HISTORY_TRANSPORTS: readonly TransportId[] = ['udp', 'tcp', 'dot', 'doh', 'doh1'];
const RESOLVER_COST: Record<string, number> = { cloudflare: 0, google: 4, quad9: 11, [HOSTILE_RESOLVER]: 2 };

/** `n` entries finishing between SPAN_DAYS ago and `now`, oldest first; deterministic for a seed. Each passes isHistoryEntry. */
export function syntheticHistory(n: number, now: number, seed = 1): HistoryEntry[] {
  const random = seededRandom(seed);
  // Log-normal-ish noise: most pages near the transport's cost, a tail of slow ones.
  const noise = (scale: number) => scale * (Math.exp(1.1 * (random() + random() + random() - 1.5)) - 0.8);
  // One decimal, as the history rounds; never −0 (JSON, and so storage, writes it as 0).
  const r1 = (x: number) => Number(x.toFixed(1)) + 0;
  const entries: HistoryEntry[] = [];
  for (let i = 0; i < n; i++) {
    // Spread over the span, denser recently (a person measures more once they installed it); never at a window edge.
    const age = SPAN_DAYS * DAY * Math.pow((n - i) / n, 1.6) - 60_000;
    const at = Math.round(now - Math.max(60_000, age));
    const solo = i % 23 === 7;
    const site = solo ? SOLO_SITE : SITES[Math.floor(random() * SITES.length)]!;
    const host = random() < 0.5 ? site : `www.${site}`;
    const resolvers = solo ? [HOSTILE_RESOLVER] : now - at < QUAD9_FROM_DAYS * DAY ? ['cloudflare', 'google', 'quad9'] : ['cloudflare', 'google'];
    const transports: readonly TransportId[] = solo ? ['udp', 'dot', 'doh'] : HISTORY_TRANSPORTS;
    const pageHosts = 3 + Math.floor(random() * 40);
    const measuredHosts = Math.max(1, pageHosts - Math.floor(random() * 3));
    const cells: HistoryCell[] = [];
    for (const resolver of resolvers) for (const transport of transports) for (const mode of ['cold', 'warm'] as const) {
      const isBaseline = resolver === resolvers[0] && transport === 'udp';
      const base = 4 + 20 * random();
      const lookupsMs = Array.from({ length: measuredHosts }, () => Math.max(0.3, base + RESOLVER_COST[resolver]! + TRANSPORT_COST[transport][mode] + noise(8)));
      lookupsMs.sort((a, b) => a - b);
      const lookups = measuredHosts * 2 * 3;
      const failures = random() < (transport === 'dot' && resolver === 'quad9' ? 0.2 : 0.03) ? 1 + Math.floor(random() * 4) : 0;
      const delta = isBaseline ? 0 : r1(RESOLVER_COST[resolver]! + TRANSPORT_COST[transport][mode] + noise(10));
      const fails = failures > 3 && random() < 0.5;
      const hasEstimate = random() > 0.02;
      const q = (p: number) => r1(lookupsMs[Math.min(lookupsMs.length - 1, Math.floor((p / 100) * lookupsMs.length))]!);
      cells.push({
        resolver, transport, mode, hosts: measuredHosts, failures, lookups,
        histogram: lookupHistogram(lookupsMs), p5Ms: q(5), medianMs: q(50), p95Ms: q(95),
        onLoad: hasEstimate ? { delta, lower: r1(Math.min(0, delta) - 3), upper: r1(delta + 5 + 10 * random()) } : null,
        verdict: fails ? 'fails' : !hasEstimate ? 'unknown' : Math.abs(delta) < 30 ? 'indistinguishable' : delta > 0 ? 'slower' : 'faster',
        bytesPerLookup: transport === 'udp' ? 150 : transport === 'tcp' ? 420 : 1100 + Math.round(400 * random()),
        packetsPerLookup: transport === 'udp' ? 2 : Number((4 + 6 * random()).toFixed(2)) + 0,
        // Pages measured before the what-if was kept (every fifth) have none; the others the change scaled by the
        // networks' round trips against a DSL-like 42.4 ms.
        ...(i % 5 === 0 ? {} : { whatIf: Object.fromEntries(WHAT_IF_NETWORKS.map((n) => [n, hasEstimate ? r1((delta * PROFILES[n]!.rttMs) / 42.4) : null])) }),
      });
    }
    const e: HistoryEntry = {
      version: HISTORY_VERSION, id: `syn-${seed}-${i}`, at, host, trigger: random() < 0.8 ? 'auto' : 'manual',
      onLoadMs: r1(300 + 3000 * random()), pageHosts, measuredHosts, cells,
    };
    if (!isHistoryEntry(e)) throw new Error(`synthetic entry ${i} is not a history entry`);
    entries.push(e);
  }
  return entries.sort((a, b) => a.at - b.at);
}

/** Writes `entries` into storage.local as the background's history store keeps them (index last), from `ext`. */
export async function writeHistory(ext: Page, entries: readonly HistoryEntry[]): Promise<void> {
  const index = entries.map((e) => ({ id: e.id, at: e.at, chars: JSON.stringify(e).length })).sort((a, b) => a.at - b.at);
  for (let i = 0; i < entries.length; i += 100) {
    const items = Object.fromEntries(entries.slice(i, i + 100).map((e) => [HISTORY_KEYS.entry(e.id), e]));
    await storageSet(ext, items);
  }
  await storageSet(ext, { [HISTORY_KEYS.index]: index });
}

/** Stores `hosts` as the person's host revisits (extension/src/background/revisits.ts), from extension page `ext`. */
export function writeRevisits(ext: Page, hosts: Record<string, HostRevisits>): Promise<void> {
  return storageSet(ext, { [REVISITS_KEY]: hosts });
}

/** Sets `items` from `ext`; they cross to the page as one JSON string (Firefox's WebDriver BiDi is slow with deep objects). */
function storageSet(ext: Page, items: Record<string, unknown>): Promise<void> {
  return ext.evaluate(async (json) => {
    const g = globalThis as unknown as { browser?: { storage: { local: { set(i: object): Promise<void> } } }; chrome?: { storage: { local: { set(i: object): Promise<void> } } } };
    await (g.browser ?? g.chrome)!.storage.local.set(JSON.parse(json) as object);
  }, JSON.stringify(items));
}
