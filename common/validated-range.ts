// Where the cost model has been checked against real browsers (bench/results/validation/report.md: pages of 1 to 100
// names, network round trips from fiber's 15 ms to 3G's 150 ms, Chromium and Firefox), and whether a measured page
// lies outside it: the panel then says so beside its number (issue 24 item 8). Pure.
import type { StoredRecord } from './stored-record.js';
import { percentile } from './stats.js';

/** The validated range: the most names a validated page had, the round trips validated, the browsers. */
export const VALIDATED = { maxNames: 100, rttMs: { min: 15, max: 150 }, browsers: ['chromium', 'firefox'] } as const;
/** How far past a validated round trip still counts as inside: a factor either way. */
export const RTT_SLACK = 1.5;

/** Why a measurement lies outside the validated range (none: inside). */
export type OutsideReason =
  | { kind: 'names'; names: number; max: number }
  | { kind: 'rtt'; rttMs: number; min: number; max: number }
  | { kind: 'browser' };

/**
 * The resolvers' round trip as the measurement saw it: the median time of a warm query (an open connection: one
 * round trip and the resolver's answer), over every warm record that answered; null without one.
 */
export function measuredRttMs(records: readonly Pick<StoredRecord, 'mode' | 'ok' | 'timings'>[]): number | null {
  const q = records.filter((r) => r.mode === 'warm' && r.ok && r.timings.query !== null).map((r) => r.timings.query!).sort((a, b) => a - b);
  return q.length ? percentile(q, 50) : null;
}

/** What puts a measurement of `names` names, recorded by `browser`, with these records, outside the validated range. */
export function outsideValidated(names: number, browser: string | null | undefined, records: readonly Pick<StoredRecord, 'mode' | 'ok' | 'timings'>[]): OutsideReason[] {
  const out: OutsideReason[] = [];
  if (names > VALIDATED.maxNames) out.push({ kind: 'names', names, max: VALIDATED.maxNames });
  const rtt = measuredRttMs(records);
  if (rtt !== null && (rtt < VALIDATED.rttMs.min / RTT_SLACK || rtt > VALIDATED.rttMs.max * RTT_SLACK)) out.push({ kind: 'rtt', rttMs: rtt, min: VALIDATED.rttMs.min, max: VALIDATED.rttMs.max });
  if (browser && !(VALIDATED.browsers as readonly string[]).includes(browser)) out.push({ kind: 'browser' });
  return out;
}
