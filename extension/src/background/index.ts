// Background entry (Chromium service worker, Firefox event page): wires the native-host connection and the message
// handlers; logic lives in the modules it imports.
import { HOST_NAME } from '../../../common/extension-ids.js';
import { dispatchExtensionMessage } from '../../../common/extension-messages.js';
import { browser, runtimeLastError } from '../browser.js';
import { handlers, type BackgroundContext } from './handlers.js';
import { HostConnection, type NativePort } from './host-connection.js';

const host = new HostConnection({
  connect: () => browser.runtime.connectNative(HOST_NAME) as unknown as NativePort,
  lastError: runtimeLastError,
  setTimer: (fn, ms) => setTimeout(fn, ms),
  clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  now: () => Date.now(),
});
const ctx: BackgroundContext = { host };

// Every message passes the validator in dispatchExtensionMessage before a handler sees it; replies are promises
// (the polyfill turns them into sendResponse in Chromium).
browser.runtime.onMessage.addListener((message: unknown) => dispatchExtensionMessage(handlers, message, ctx));

host.start();
