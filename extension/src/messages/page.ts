// The page-record messages: the content script's timing report (content script → background) and `page-report`
// (any extension page → background: the record of a tab's current page). Joined into the one union of
// extension/src/messages/index.ts; their replies are typed here.
import * as v from 'valibot';
import { PAGE_CAPS, type PageRecord } from '../../../common/page-record.js';
import type { CODES, Failure } from '../../../common/errors.js';

const finite = v.pipe(v.number(), v.finite());

/** The content script's report of a page's timing, validated where it enters the background. */
export const pageTimingSchema = v.strictObject({
  type: v.literal('page-timing'),
  /** The document's URL (to match the page the background is recording). */
  url: v.pipe(v.string(), v.maxLength(8192)),
  timeOrigin: finite,
  navigation: v.pipe(
    v.record(v.pipe(v.string(), v.maxLength(64)), v.union([finite, v.pipe(v.string(), v.maxLength(PAGE_CAPS.url)), v.boolean(), v.null()])),
    v.check((r) => Object.keys(r).length <= PAGE_CAPS.navigationFields, `at most ${PAGE_CAPS.navigationFields} fields`),
  ),
  onLoadMs: v.nullable(finite),
  /** Resource Timing entries seen in all (the buffer may have held fewer). */
  entries: v.pipe(v.number(), v.integer(), v.minValue(0)),
  /**
   * Per host: the first entry's exposed lookup (domainLookupStart/End, ms from timeOrigin), or null; and where the
   * recorder has no webRequest, when the host was first asked for and its last response before the load ended.
   */
  resources: v.pipe(
    v.array(v.strictObject({
      host: v.pipe(v.string(), v.maxLength(1024)),
      lookupStart: v.nullable(finite),
      lookupEnd: v.nullable(finite),
      nextHopProtocol: v.nullable(v.pipe(v.string(), v.maxLength(32))),
      /** The first entry's origin (scheme, host and port; no path). */
      origin: v.optional(v.pipe(v.string(), v.maxLength(1100))),
      /** The first entry's startTime and the latest responseEnd before the load event (ms from timeOrigin). */
      startTime: v.optional(v.pipe(finite, v.minValue(0))),
      responseEnd: v.optional(v.nullable(v.pipe(finite, v.minValue(0)))),
      /** The first entry's initiatorType. */
      initiator: v.optional(v.pipe(v.string(), v.maxLength(32))),
    })),
    v.maxLength(PAGE_CAPS.timingHosts * 2),
  ),
});
export type PageTimingMessage = v.InferOutput<typeof pageTimingSchema>;

const pageReport = v.strictObject({ type: v.literal('page-report'), tabId: v.pipe(v.number(), v.integer(), v.minValue(0)) });

/** The page message schemas, for the union in extension/src/messages/index.ts. */
export const PAGE_MESSAGES = [pageTimingSchema, pageReport] as const;

/** The page messages' failures (page-timing only from our content script in a tab's frames; page-report only from our pages). */
export type PageCode = (typeof CODES)['NO_PAGE' | 'PRIVATE_WINDOW' | 'EXCLUDED' | 'BAD_SENDER'];

/** The replies of the page messages. */
export interface PageReplies {
  'page-timing': { ok: true } | Failure<PageCode>;
  'page-report': { ok: true; record: PageRecord } | Failure<PageCode>;
}
