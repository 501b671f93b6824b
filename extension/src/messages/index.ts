// Messages inside the extension (popup, options page, content scripts → background): one union, validated where it
// enters the background (runtime.onMessage), and a handler table typed over it so a missing handler fails to compile.
import * as v from 'valibot';
import { HISTORY_MESSAGES, type HistoryReplies } from './history.js';
import { MEASURE_MESSAGES, type MeasureReplies } from './measure.js';
import { PAGE_MESSAGES, type PageReplies } from './page.js';
import { SETTINGS_MESSAGES, type SettingsReplies } from './settings.js';
import { UPLOAD_MESSAGES, type UploadReplies } from './upload.js';
import { CODES, type Failure } from '../../../common/errors.js';
import { HOST_MESSAGES, type HostReplies } from './host.js';

/** Every message the background accepts. */
export const extensionMessage = v.variant('type', [...HOST_MESSAGES, ...SETTINGS_MESSAGES, ...PAGE_MESSAGES, ...MEASURE_MESSAGES, ...HISTORY_MESSAGES, ...UPLOAD_MESSAGES]);
export type ExtensionMessage = v.InferOutput<typeof extensionMessage>;
export type ExtensionMessageType = ExtensionMessage['type'];
export type ExtensionMessageOf<T extends ExtensionMessageType> = Extract<ExtensionMessage, { type: T }>;

/** The reply to each message type. */
export interface ExtensionReplies extends HostReplies, SettingsReplies, PageReplies, MeasureReplies, HistoryReplies, UploadReplies {}
export type ExtensionReplyOf<T extends ExtensionMessageType> = ExtensionReplies[T];
/** What any message may get back: its reply, or a bad-request, bad-sender or internal failure. */
export type ExtensionReply = ExtensionReplies[ExtensionMessageType] | Failure<typeof CODES.BAD_REQUEST | typeof CODES.BAD_SENDER | typeof CODES.INTERNAL>;

/**
 * The messages a web page's document may send (through our content script, which runs in every page: a compromised
 * renderer can send anything it can). Every other message is privileged — settings, consent, data, the host, history,
 * uploads, measurements — and is answered only to the extension's own pages.
 */
export const WEB_PAGE_MESSAGES: ReadonlySet<ExtensionMessageType> = new Set(['page-timing']);

/**
 * Who sent a message, as the background was told (runtime.onMessage's sender, reduced to what handlers check):
 * `url` is the sending document's URL; `tabId`/`frameId`/`incognito` are present for a tab's documents.
 */
export interface MessageSender {
  /** The sending extension's id (always ours for runtime.sendMessage without an external id). */
  id?: string | undefined;
  url?: string | undefined;
  tabId?: number | undefined;
  frameId?: number | undefined;
  incognito?: boolean | undefined;
}

/** Handler table typed over the union: compilation fails when a message type lacks a handler. */
export type ExtensionHandlers<Ctx> = {
  [T in ExtensionMessageType]: (message: ExtensionMessageOf<T>, ctx: Ctx, sender: MessageSender) => Promise<ExtensionReplyOf<T>> | ExtensionReplyOf<T>;
};

/** Validates a message: the message, or a bad-request failure naming the first problem. */
export function parseExtensionMessage(value: unknown): { ok: true; message: ExtensionMessage } | Failure<typeof CODES.BAD_REQUEST> {
  const result = v.safeParse(extensionMessage, value);
  if (result.success) return { ok: true, message: result.output };
  const issue = result.issues[0];
  const where = (issue.path ?? []).map((p) => String(p.key)).join('.') || '(message)';
  return { ok: false, code: CODES.BAD_REQUEST, message: `${where}: ${issue.message}` };
}

/**
 * Validates `value` and runs its handler; never throws (a throwing handler becomes a failure with its message). With
 * `ownPages` (the extension's base URL), a privileged message (not in WEB_PAGE_MESSAGES) from any other sender is
 * refused with bad-sender before its handler runs.
 */
export async function dispatchExtensionMessage<Ctx>(
  handlers: ExtensionHandlers<Ctx>,
  value: unknown,
  ctx: Ctx,
  sender: MessageSender = {},
  ownPages?: string,
): Promise<ExtensionReply> {
  const parsed = parseExtensionMessage(value);
  if (!parsed.ok) return parsed;
  const message = parsed.message;
  if (ownPages !== undefined && !WEB_PAGE_MESSAGES.has(message.type) && !(ownPages && sender.url?.startsWith(ownPages))) {
    return { ok: false, code: CODES.BAD_SENDER, message: `${message.type} is answered only to the extension's own pages` };
  }
  // The table is keyed by the union's tag, so this lookup is the one place the tag and the payload meet.
  const handler = handlers[message.type] as (m: ExtensionMessage, c: Ctx, s: MessageSender) => Promise<ExtensionReply> | ExtensionReply;
  try {
    return await handler(message, ctx, sender);
  } catch (err) {
    return { ok: false, code: CODES.INTERNAL, message: err instanceof Error ? err.message : String(err) };
  }
}
