// The measuring messages between extension pages (the popup, tests, scripts) and the background: start a measurement
// of a tab's current page through the native host, ask how it goes (progress, then the results), cancel it. Joined
// into the one union of extension/src/messages/index.ts; their replies are typed here. Pure: no DOM, no node: imports.
import * as v from 'valibot';
import type { PageRecord } from '../../../common/page-record.js';
import type { BrowserDoh, CurrentDns, NetworkInfo, SummaryRow } from '../../../common/schema.js';
import type { RecordingBrowser } from '../../../common/browser-queries.js';
import type { Mode, QType, TransportId } from '../../../common/transports.js';
import type { Withheld } from '../../../common/name-privacy.js';
import type { CODES, Failure } from '../../../common/errors.js';
import type { Advertised } from '../../../common/svcb.js';
import type { EdgeRow } from '../../../common/edges.js';
import { StoredRecord } from '../../../common/stored-record.js';

const tabId = v.pipe(v.number(), v.integer(), v.minValue(0));
const measureStart = v.strictObject({ type: v.literal('measure-start'), tabId });
const measureStatus = v.strictObject({
  type: v.literal('measure-status'),
  tabId,
  /** Include the stored records (the results); without it the reply carries progress only (cheap to poll). */
  records: v.optional(v.boolean()),
});
const measureCancel = v.strictObject({ type: v.literal('measure-cancel'), tabId });

/** The measuring message schemas, for the union in extension/src/messages/index.ts. */
export const MEASURE_MESSAGES = [measureStart, measureStatus, measureCancel] as const;

/** Why a page cannot be measured (measure-start's refusals; measure-status's `blocked`). */
export type MeasureCode = (typeof CODES)['NO_CONSENT' | 'PRIVATE_WINDOW' | 'EXCLUDED' | 'NO_PAGE' | 'NO_MEASURABLE_HOSTS' | 'HOST_NOT_CONNECTED' | 'BUSY' | 'NOT_RUNNING' | 'BAD_SENDER' | 'FRAME_TOO_LARGE'];

/**
 * State of a page's measurement. `interrupted`: the background or the host stopped in the middle (a killed service
 * worker takes the host process with it; the finished records are kept, the rest is not resumed — measure again).
 */
export type MeasureState = 'running' | 'done' | 'cancelled' | 'interrupted' | 'failed';

/** What was asked of the host, as stored beside the results. */
export interface MeasurePlanSummary {
  /** Each host sent and when the page first needed it (`at` in measurements stored before protocol 2). */
  hosts: Array<{ name: string; firstNeededMs: number }>;
  /** Resolvers by id and name, with their transports. */
  resolvers: Array<{ id: string; name: string; transports: TransportId[] }>;
  qtypes: QType[];
  modes: Mode[];
  repeat: number;
  prime: boolean;
  schedule: 'replay';
  /** True when special-use names (.test, .localhost, …) were sent, to resolvers on this network, under the lab setting. */
  internalAllowed: boolean;
  /**
   * Hosts of the page not sent, with why: ip-literal, invalid, or a name-privacy reason (common/name-privacy.ts);
   * `internal` in measurements from before that rule.
   */
  skipped: Array<{ name: string; reason: 'internal' | 'ip-literal' | 'invalid' | Withheld }>;
  /** The browser whose way of asking the plan follows (null: not known, A and AAAA); absent in older measurements. */
  browser?: RecordingBrowser | null;
  /** The person's current DNS as the host found it, when it was measured (absent in measurements from before). */
  currentDns?: CurrentDns | null;
  /** The DoH of the browser the host found when it was measured (absent in measurements from before). */
  browserDoh?: BrowserDoh | null;
  /** The page went through a proxy: nothing of it was sent in clear text (absent: it did not, or from before). */
  proxied?: boolean;
}

/** Hosts of a page not sent, grouped by why: each reason with its count and the first name withheld for it. */
export interface WithheldGroup {
  reason: MeasurePlanSummary['skipped'][number]['reason'];
  count: number;
  example: string;
}

/** A page's measurement as the background keeps it (without its records). */
export interface MeasurementMeta {
  version: 1;
  pageId: string;
  tabId: number;
  url: string;
  host: string;
  state: MeasureState;
  /** Who started it: the person (measure-start) or the automatic sampler. */
  trigger: 'manual' | 'auto';
  startedAt: number;
  updatedAt: number;
  finishedAt: number | null;
  done: number;
  total: number;
  /** Records whose write to storage completed (safe from a killed worker), and in how many chunks (storage keys). */
  records: number;
  chunks: number;
  /** Characters of JSON stored for the records (the bound on storage). */
  chars: number;
  plan: MeasurePlanSummary;
  /** The page record it measured (a snapshot, so the results stay readable after the tab moved on). */
  page: PageRecord;
  /** From the host's `done`. */
  seed: number | null;
  primed: boolean | null;
  summary: SummaryRow[] | null;
  /** The network it ran on, from the host's `done` (absent before it finished, or when the host could not tell). */
  network?: NetworkInfo;
  /** The hosts whose HTTPS record (by any resolver's answer) advertises HTTP/3 or ECH (absent before any answered). */
  advertised?: Advertised;
  /** The CDN check's rows from the host's `done` (common/edges.ts; absent when none was made). */
  edges?: EdgeRow[];
  /** Why it failed or was interrupted. */
  error: { code: string; message: string } | null;
}

/** measure-status's reply: the tab's latest measurement (or none) and whether a new one may start now. */
export interface MeasureStatus {
  ok: true;
  tabId: number;
  /** The tab's current page id, when it has a recorded page. */
  pageId: string | null;
  /** The latest measurement of the tab's current page (or of the page it showed when it was measured). */
  measurement: MeasurementMeta | null;
  /** Why measure-start would refuse now, or null when it would start; for `no-measurable-hosts`, why of each host. */
  blocked: { code: MeasureCode; message: string; withheld?: WithheldGroup[] } | null;
  /** The records, when asked for with `records: true`. */
  records?: StoredRecord[];
}

/** The replies of the measuring messages. */
export interface MeasureReplies {
  'measure-start': MeasureStatus | Failure<MeasureCode>;
  'measure-status': MeasureStatus | Failure<MeasureCode>;
  'measure-cancel': MeasureStatus | Failure<MeasureCode>;
}
