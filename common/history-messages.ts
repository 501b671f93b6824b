// The history message: `history-get` (an extension page → background) reads the person's history (common/history.ts),
// optionally a time window, a site and a network. Joined into the one union of common/extension-messages.ts.
import * as v from 'valibot';
import type { Failure } from './extension-messages.js';
import type { HistoryEntry } from './history.js';

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

/** The history message schemas, for the union in common/extension-messages.ts. */
export const HISTORY_MESSAGES = [historyGet] as const;

export const HISTORY_CODES = {
  /** Only the extension's own pages may read the history. */
  BAD_SENDER: 'bad-sender',
} as const;
export type HistoryCode = (typeof HISTORY_CODES)[keyof typeof HISTORY_CODES];

export interface HistoryReplies {
  /** Matching entries oldest first; `total` entries are stored; `unreadable` ones were skipped. */
  'history-get': { ok: true; entries: HistoryEntry[]; total: number; unreadable: number } | Failure<HistoryCode>;
}
