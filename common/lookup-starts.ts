// When the browser asked DNS for each of a page's names: the replay starts each lookup then (extension/src/background/
// measure-plan.ts, bench/validate/replay.ts). A page needs a host when its first request is made (webRequest), but the
// browser asks DNS only when that request leaves its scheduler, tens to hundreds of ms later on a many-host page
// (Chromium holds delayable requests while others are in flight; Firefox queues its lookups). Replayed at first need,
// a page's names go in one burst the browser never sends, and over a stream (DoT) the resolver's answers to it then wait
// for the connection's congestion window: an extra round trip the browser does not pay
// (bench/results/validation/replay-schedule.md). Resource Timing exposes the lookup's start (domainLookupStart) for hosts
// that send Timing-Allow-Origin; the others are placed between the exposed hosts around them in the order the page
// needed them. Pure.
import type { PageRecord } from './page-record.js';

/** The replay starts no lookup later than this after the page's start (a page that keeps asking is cut there). */
export const MAX_REPLAY_AT_MS = 10_000;

/** An offset as the replay takes it: whole ms, from 0 to MAX_REPLAY_AT_MS (not a number: 0). */
export const replayAt = (ms: number): number => (Number.isFinite(ms) ? Math.min(MAX_REPLAY_AT_MS, Math.max(0, Math.round(ms))) : 0);

/** What lookupStarts reads of a page record. */
export type LookupStartsInput = Partial<Pick<PageRecord, 'host' | 'startedAt' | 'timeOrigin'>> & {
  hosts: ReadonlyArray<Pick<PageRecord['hosts'][number], 'name' | 'kind' | 'firstNeededMs' | 'lookup' | 'types'>>;
};

/**
 * Each name's replay offset (replayAt), ms after the page's start: the browser's own lookup start where Resource
 * Timing exposed it; for a hidden one, the exposed starts before and after it in first-need order interpolated by
 * rank (at one end only: its first need plus that neighbour's delay); never before its first need. The document and
 * the hosts of its navigation (redirect legs: main_frame requests) are asked at once, before any scheduler: first need.
 * A page that exposes no lookup (no Timing-Allow-Origin anywhere, or no timing report) is replayed at first need.
 */
export function lookupStarts(page: LookupStartsInput): Map<string, number> {
  const out = new Map<string, number>();
  // Resource Timing counts from timeOrigin, first need from the page's start.
  const shift = page.timeOrigin === null || page.timeOrigin === undefined ? null : page.timeOrigin - (page.startedAt ?? 0);
  const scheduled: Array<{ name: string; needed: number; asked: number | null }> = [];
  const seen = new Set<string>();
  for (const h of page.hosts) {
    // A name twice in a record (a hostile or merged one): its first entry counts, as measure-plan.ts keeps it.
    if (h.kind !== 'name' || seen.has(h.name)) continue;
    seen.add(h.name);
    if (h.name === page.host || (h.types?.main_frame ?? 0) > 0) out.set(h.name, replayAt(h.firstNeededMs));
    else scheduled.push({ name: h.name, needed: h.firstNeededMs, asked: shift !== null && h.lookup ? h.lookup.startMs + shift : null });
  }
  // Stable: hosts needed at the same time keep the order the page record has them in.
  scheduled.sort((a, b) => a.needed - b.needed);
  const known = scheduled.flatMap((h, i) => (h.asked === null ? [] : [i]));
  const delay = (i: number) => scheduled[i]!.asked! - scheduled[i]!.needed;
  for (const [k, h] of scheduled.entries()) {
    let at = h.asked;
    if (at === null) {
      const before = known.filter((i) => i < k).at(-1);
      const after = known.find((i) => i > k);
      if (before !== undefined && after !== undefined) {
        const [a, b] = [scheduled[before]!.asked!, scheduled[after]!.asked!];
        at = a + ((b - a) * (k - before)) / (after - before);
      } else if (before !== undefined) at = h.needed + delay(before);
      else if (after !== undefined) at = h.needed + delay(after);
      else at = h.needed;
    }
    out.set(h.name, replayAt(Math.max(h.needed, at)));
  }
  return out;
}
