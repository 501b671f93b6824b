// The upload messages (an extension page → background): the queue's state, the exact bytes of the next batch, send
// now, and delete everything uploaded. Turning uploads on or off, pausing, the collector and the network description
// are settings (settings-set `upload`). Joined into the one union of extension/src/messages/index.ts.
import * as v from 'valibot';
import type { CODES, Failure } from '../../../common/errors.js';

const uploadStatus = v.strictObject({ type: v.literal('upload-status') });
const uploadPreview = v.strictObject({ type: v.literal('upload-preview') });
const uploadFlush = v.strictObject({ type: v.literal('upload-flush') });
const uploadDelete = v.strictObject({ type: v.literal('upload-delete') });

/** The upload message schemas, for the union in extension/src/messages/index.ts. */
export const UPLOAD_MESSAGES = [uploadStatus, uploadPreview, uploadFlush, uploadDelete] as const;

/** The upload messages' failures (answered only to the extension's own pages). */
export type UploadCode = typeof CODES.BAD_SENDER;

/** A batch waiting to be sent (its bytes and deletion token are not shown here; upload-preview shows the bytes). */
export interface QueuedBatchView {
  key: string;
  pages: number;
  bytes: number;
  createdAt: number;
  attempts: number;
  nextAt: number;
  lastError: { code: string; message: string } | null;
}

/** The upload's state. */
export interface UploadStatus {
  ok: true;
  enabled: boolean;
  paused: boolean;
  collector: string;
  /** Pages kept for upload, waiting for their day to end (or for "send now"). */
  pendingPages: number;
  /** Today (UTC): pages measured while uploads were on, how many of them are kept for upload, and the daily cap. */
  today: { day: string; measured: number; kept: number; cap: number };
  queued: QueuedBatchView[];
  /** Batches the collector acknowledged (the newest last). */
  sent: Array<{ key: string; pages: number; at: number; collector: string }>;
  /** Batches the collector refused for what they were, with its code; never retried. */
  refused: Array<{ key: string; pages: number; at: number; status: number; code: string; message: string }>;
  /** The key of the batch being sent right now. */
  sending: string | null;
}

export interface UploadReplies {
  'upload-status': UploadStatus | Failure<UploadCode>;
  /** The next batch exactly as it will be sent (the queue's head, else the first page kept), or null when none. */
  'upload-preview': { ok: true; batch: { key: string; pages: number; body: string } | null } | Failure<UploadCode>;
  'upload-flush': UploadStatus | Failure<UploadCode>;
  'upload-delete': { ok: true; deleted: number; failed: Array<{ key: string; message: string }> } | Failure<UploadCode>;
}
