// The page-record messages: the content script's timing report (content script → background) and `page-report`
// (any extension page → background: the record of a tab's current page). Joined into the one union of
// common/extension-messages.ts; their replies are typed here.
import * as v from 'valibot';
import type { Failure } from './extension-messages.js';
import { pageTimingSchema, type PageRecord } from './page-record.js';

const pageReport = v.strictObject({ type: v.literal('page-report'), tabId: v.pipe(v.number(), v.integer(), v.minValue(0)) });

/** The page message schemas, for the union in common/extension-messages.ts. */
export const PAGE_MESSAGES = [pageTimingSchema, pageReport] as const;

/** Stable codes of the page messages' failures. */
export const PAGE_CODES = {
  /** The tab has no recorded page (none yet, not a web page, closed, or its data was cleared). */
  NO_PAGE: 'no-page',
  /** The tab is in a private window: nothing of it is recorded. */
  PRIVATE_WINDOW: 'private-window',
  /** The tab's site is excluded in the settings: nothing of it is recorded. */
  EXCLUDED: 'excluded',
  /** The message came from somewhere it may not (page-timing only from the extension's own content script in a tab's
   * top frame; page-report only from the extension's own pages). */
  BAD_SENDER: 'bad-sender',
} as const;
export type PageCode = (typeof PAGE_CODES)[keyof typeof PAGE_CODES];

/** The replies of the page messages. */
export interface PageReplies {
  'page-timing': { ok: true } | Failure<PageCode>;
  'page-report': { ok: true; record: PageRecord } | Failure<PageCode>;
}
