// The history message: `history-get` (an extension page → background) reads the person's history (extension/src/history.ts),
// optionally a time window, a site and a network. Joined into the one union of extension/src/messages/index.ts.
import * as v from 'valibot';
import type { HistoryEntry } from '../history.js';
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

/** The history message schemas, for the union in extension/src/messages/index.ts. */
export const HISTORY_MESSAGES = [historyGet] as const;

/** The history message's failures (answered only to the extension's own pages). */
export type HistoryCode = typeof CODES.BAD_SENDER;

export interface HistoryReplies {
  /** Matching entries oldest first; `total` entries are stored; `unreadable` ones were skipped. */
  'history-get': { ok: true; entries: HistoryEntry[]; total: number; unreadable: number } | Failure<HistoryCode>;
}
