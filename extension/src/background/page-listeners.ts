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

/**
 * Registers the browser listeners that feed `pages`: webNavigation and tabs always, webRequest while its optional
 * permission is granted (at start, synchronously, as an MV3 worker must; and as soon as it is granted or removed).
 */
export function listenForPages(pages: PageRecorder): void {
  const later =
    <T>(fn: (d: T) => void) =>
    (d: T): void => {
      void pages.ready.then(() => fn(d));
    };
  browser.webNavigation.onBeforeNavigate.addListener(later((d) => pages.onBeforeNavigate(d)));
  browser.webNavigation.onCommitted.addListener(later((d) => pages.onCommitted(d)));
  browser.webNavigation.onCompleted.addListener(later((d) => pages.onNavigationCompleted(d)));
  browser.tabs.onRemoved.addListener(later((tabId: number) => pages.onTabRemoved(tabId)));
  const requests = requestListeners(pages, later);
  const sync = (granted: boolean): void => {
    const api = webRequestApi();
    const on = granted && api !== null;
    void pages.ready.then(() => pages.observeRequests(on));
    if (on === requests.on) return;
    for (const [event, listener, filter] of requests.list) {
      try {
        if (on) api![event]!.addListener(listener, filter);
        else api?.[event]?.removeListener(listener);
      } catch {
        // Removed with the permission: the browser has dropped its listeners itself.
      }
    }
    requests.on = on;
  };
  // The API object is there exactly when the permission is granted (Chromium and Firefox alike).
  sync(webRequestApi() !== null);
  const check = (): void => {
    void browser.permissions.contains({ permissions: ['webRequest'] }).then(sync, () => undefined);
  };
  browser.permissions.onAdded.addListener(check);
  browser.permissions.onRemoved.addListener(check);
}

type RequestEvent = 'onBeforeRequest' | 'onBeforeRedirect' | 'onResponseStarted' | 'onCompleted' | 'onErrorOccurred';
type Listener = (d: never) => void;
type RequestApi = Partial<Record<RequestEvent, { addListener(l: Listener, filter: object): void; removeListener(l: Listener): void }>>;

/** The webRequest API where its permission is granted, else null. */
function webRequestApi(): RequestApi | null {
  return ((browser as unknown as { webRequest?: RequestApi }).webRequest ?? null);
}

/** webRequest's listeners of the recorder, registered only while the permission is granted. */
function requestListeners(pages: PageRecorder, later: <T>(fn: (d: T) => void) => (d: T) => void): { on: boolean; list: Array<[RequestEvent, Listener, object]> } {
  // Web pages only: the manifest's host permissions (http and https) are all the extension asks for.
  const all = { urls: ['http://*/*', 'https://*/*'] };
  return {
    on: false,
    list: [
      ['onBeforeRequest', later((d: RequestDetails) => pages.onBeforeRequest(d)), all],
      ['onBeforeRedirect', later((d: RequestDetails & { redirectUrl: string; statusCode: number }) => pages.onBeforeRedirect(d)), all],
      // Only the main frame's response start is read: the browser then does not route the rest past the worker.
      ['onResponseStarted', later((d: RequestDetails) => pages.onResponseStarted(d)), { ...all, types: ['main_frame'] }],
      ['onCompleted', later((d: RequestDetails) => pages.onCompleted(d)), all],
      ['onErrorOccurred', later((d: RequestDetails & { error?: string }) => pages.onErrorOccurred(d)), all],
    ],
  };
}

/** runtime.onMessage's sender, reduced to what handlers check (extension/src/messages/index.ts MessageSender). */
export function messageSender(sender: Runtime.MessageSender): MessageSender {
  return { id: sender.id, url: sender.url, tabId: sender.tab?.id, frameId: sender.frameId, incognito: sender.tab?.incognito };
}
