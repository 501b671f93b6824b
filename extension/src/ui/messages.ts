// Typed sending from extension pages to the background.
import type { ExtensionMessageOf, ExtensionMessageType, ExtensionReplyOf } from '../messages/index.js';
import { browser } from '../browser.js';
import { CODES, type Failure } from '../../../common/errors.js';

/** Sends `message` to the background; its typed reply, or a failure if the background did not answer. */
export async function send<T extends ExtensionMessageType>(message: ExtensionMessageOf<T>): Promise<ExtensionReplyOf<T> | Failure> {
  try {
    return (await browser.runtime.sendMessage(message)) as ExtensionReplyOf<T>;
  } catch (err) {
    return { ok: false, code: CODES.NO_BACKGROUND, message: err instanceof Error ? err.message : String(err) };
  }
}
