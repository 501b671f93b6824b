// Background entry (Chromium service worker, Firefox event page): wires the native-host connection and the message
// handlers; logic lives in the modules it imports.
import { PUBLIC_RESOLVERS } from '../../../common/default-resolvers.js';
import { HOST_NAME } from '../../../common/extension-ids.js';
import { dispatchExtensionMessage } from '../messages/index.js';
import { browser, runtimeLastError, type Runtime } from '../browser.js';
import { handlers, type BackgroundContext } from './handlers.js';
import { HistoryStore } from './history-store.js';
import { HostConnection, type NativePort } from './host-connection.js';
import { createMeasurementScheduler, listenForSampling } from './measure-wiring.js';
import { createPageRecorder, listenForPages, messageSender } from './page-listeners.js';
import { SettingsStore } from './settings-store.js';
import { createUploader, listenForUploads } from './upload-wiring.js';
import { readManagedStorage } from './managed-storage.js';
import { ResolverProber } from './resolver-probe.js';
import { RevisitStore } from './revisits.js';
import { isExcluded } from '../settings.js';

const host = new HostConnection({
  connect: () => browser.runtime.connectNative(HOST_NAME) as unknown as NativePort,
  lastError: runtimeLastError,
  setTimer: (fn, ms) => setTimeout(fn, ms),
  clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  now: () => Date.now(),
});
const settings = new SettingsStore({
  local: browser.storage.local,
  readManaged: readManagedStorage(),
  defaultResolvers: [...PUBLIC_RESOLVERS],
  now: () => Date.now(),
});
// An administrator's policy can change while the browser runs; the person's own settings change only through the store.
// The managed area's own event where the browser has it (Chromium): storage.onChanged would wake the worker with both
// old and new values of every page-record write.
const managedEvents = (browser.storage.managed as { onChanged?: { addListener(fn: () => void): void } }).onChanged;
if (managedEvents) managedEvents.addListener(() => void settings.managedChanged());
else {
  browser.storage.onChanged.addListener((_changes, area) => {
    if (area === 'managed') void settings.managedChanged();
  });
}
const pages = createPageRecorder(settings);
listenForPages(pages);
settings.onChange((view) => pages.applyExclusions(view.settings.exclusions));
settings.onDataCleared(() => void pages.clear());
const history = new HistoryStore(browser.storage.local);
const uploader = createUploader(settings);
const revisits = new RevisitStore({
  local: browser.storage.local,
  loadSettings: () => settings.loadSettings(),
  pageReport: (tabId, sender) => pages.report(tabId, sender),
  selfSender: { id: browser.runtime.id, url: browser.runtime.getURL('') },
});
settings.onDataCleared(() => revisits.purge());
const measurements = createMeasurementScheduler(host, settings, pages, history, uploader, revisits);
settings.onDataCleared(() => measurements.clear());
// An exclusion purges what is kept of that site: its history, its stored measurements, its pages waiting to be uploaded.
let exclusionsInForce: string | null = null;
settings.onChange((view) => {
  const exclusions = view.settings.exclusions;
  const key = JSON.stringify(exclusions);
  if (key === exclusionsInForce) return;
  const first = exclusionsInForce === null;
  exclusionsInForce = key;
  if (first && exclusions.length === 0) return;
  const excluded = (host: string) => isExcluded({ exclusions }, host);
  void Promise.all([history.remove(excluded), measurements.purge(excluded), uploader.purge(excluded), revisits.purge(excluded)]).catch((err: unknown) => console.warn(`dnscost: purging excluded sites: ${String(err)}`));
});
listenForSampling(measurements, revisits, pages);
listenForUploads(uploader, settings);
const prober = new ResolverProber({
  host,
  settings,
  local: browser.storage.local,
  now: () => Date.now(),
  setTimer: (fn, ms) => setTimeout(fn, ms),
  clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
});
settings.onDataCleared(() => prober.clear());
const ctx: BackgroundContext = { host, settings, pages, measurements, history, uploader, prober, revisits, extensionBase: browser.runtime.getURL('') };

// Every message passes the validator in dispatchExtensionMessage before a handler sees it, and every privileged one
// the sender check (the extension's own pages only); replies are promises (the polyfill turns them into sendResponse
// in Chromium).
browser.runtime.onMessage.addListener((message: unknown, sender: Runtime.MessageSender) => dispatchExtensionMessage(handlers, message, ctx, messageSender(sender), ctx.extensionBase));

// Once, when dnscost is installed (not on updates or browser starts): the welcome page (consent, the host, a first page).
browser.runtime.onInstalled.addListener(({ reason }) => {
  if (reason === 'install') void browser.tabs.create({ url: browser.runtime.getURL('welcome/welcome.html') });
});

host.start();
