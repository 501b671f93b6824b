// Wiring of the page records to the browser: the recorder (page-records.ts) with its real dependencies, and the
// webNavigation / webRequest / tabs listeners, registered synchronously at the background's start (an MV3 service
// worker woken by an event must have its listeners in place before that event is dispatched). Each event waits for
// the recorder's `ready` (stored pages read back), in arrival order.
import type { MessageSender } from '../messages/index.js';
import { browser, recordingBrowser, type Runtime } from '../browser.js';
import { isIncognitoTab } from './incognito.js';
import { PageRecorder, type RequestDetails } from './page-records.js';

/** The recorder with the browser's storage.session (storage.local where a browser lacks it) and tabs. */
export function createPageRecorder(settings: { loadSettings(): Promise<{ exclusions: string[] }> }): PageRecorder {
  const area = (browser.storage as { session?: typeof browser.storage.local }).session ?? browser.storage.local;
  return new PageRecorder({
    area,
    isIncognitoTab,
    loadExclusions: async () => (await settings.loadSettings()).exclusions,
    extensionBase: browser.runtime.getURL(''),
    newId: () => crypto.randomUUID(),
    now: () => Date.now(),
    setTimer: (fn, ms) => setTimeout(fn, ms),
    clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
    log: (message) => console.warn(message),
    browser: recordingBrowser(),
  });
}

/** Registers the browser listeners that feed `pages`. */
export function listenForPages(pages: PageRecorder): void {
  const later =
    <T>(fn: (d: T) => void) =>
    (d: T): void => {
      void pages.ready.then(() => fn(d));
    };
  // Web pages only: the manifest's host permissions (http and https) are all the extension asks for.
  const all = { urls: ['http://*/*', 'https://*/*'] };
  browser.webNavigation.onBeforeNavigate.addListener(later((d) => pages.onBeforeNavigate(d)));
  browser.webNavigation.onCommitted.addListener(later((d) => pages.onCommitted(d)));
  browser.webNavigation.onCompleted.addListener(later((d) => pages.onNavigationCompleted(d)));
  browser.webRequest.onBeforeRequest.addListener(later((d) => pages.onBeforeRequest(d as RequestDetails)), all);
  browser.webRequest.onBeforeRedirect.addListener(later((d) => pages.onBeforeRedirect(d as RequestDetails & { redirectUrl: string; statusCode: number })), all);
  // Only the main frame's response start is read: the browser then does not route the rest past the worker.
  browser.webRequest.onResponseStarted.addListener(later((d) => pages.onResponseStarted(d as RequestDetails)), { ...all, types: ['main_frame'] });
  browser.webRequest.onCompleted.addListener(later((d) => pages.onCompleted(d as RequestDetails)), all);
  browser.webRequest.onErrorOccurred.addListener(later((d) => pages.onErrorOccurred(d as RequestDetails & { error?: string })), all);
  browser.tabs.onRemoved.addListener(later((tabId: number) => pages.onTabRemoved(tabId)));
}

/** runtime.onMessage's sender, reduced to what handlers check (extension/src/messages/index.ts MessageSender). */
export function messageSender(sender: Runtime.MessageSender): MessageSender {
  return { id: sender.id, url: sender.url, tabId: sender.tab?.id, frameId: sender.frameId, incognito: sender.tab?.incognito };
}
