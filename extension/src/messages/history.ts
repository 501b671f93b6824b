// The history messages: `history-get` (an extension page → background) reads the person's history (extension/src/history.ts),
// optionally a time window, a site and a network; `cache-savings` what a cache would have served of their hosts' needs. Joined into the one union of extension/src/messages/index.ts.
import * as v from 'valibot';
import type { HistoryEntry } from '../history.js';
import type { CacheSaving } from '../cache-savings.js';
import type { CODES, Failure } from '../../../common/errors.js';

const time = v.optional(v.pipe(v.number(), v.finite(), v.minValue(0)));
const historyGet = v.strictObject({
  type: v.literal('history-get'),
  since: time,
  until: time,
  /** A host: entries of it and of its subdomains. */
  site: v.optional(v.pipe(v.string(), v.maxLength(253))),
  /** A network's id (a history entry's `network.id`, or 'unknown'): entries measured on it. */
  network: v.optional(v.pipe(v.string(), v.maxLength(32))),
});

/** What a cache honouring each resolver's TTLs would have served of the person's needs (extension/src/cache-savings.ts). */
const cacheSavingsGet = v.strictObject({ type: v.literal('cache-savings') });

/** The history message schemas, for the union in extension/src/messages/index.ts. */
export const HISTORY_MESSAGES = [historyGet, cacheSavingsGet] as const;

/** The history message's failures (answered only to the extension's own pages). */
export type HistoryCode = typeof CODES.BAD_SENDER;

export interface HistoryReplies {
  /** Matching entries oldest first; `total` entries are stored; `unreadable` ones were skipped. */
  'history-get': { ok: true; entries: HistoryEntry[]; total: number; unreadable: number } | Failure<HistoryCode>;
  /** Per resolver (with its name in the settings, else its id), over the `hosts` kept. */
  'cache-savings': { ok: true; savings: Array<CacheSaving & { name: string }>; hosts: number } | Failure<HistoryCode>;
}
