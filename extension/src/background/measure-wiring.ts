// Wiring of the measurement scheduler (measurements.ts) to the browser: storage.local, tabs, the host connection,
// the settings store and the page recorder; and the automatic sampler's trigger (webNavigation.onCompleted of a
// top-level page, registered synchronously at the background's start like every other listener).
import { historyEntry } from '../history.js';
import { browser } from '../browser.js';
import { isIncognitoTab } from './incognito.js';
import type { HistoryStore } from './history-store.js';
import type { Uploader } from './uploader.js';
import type { HostConnection } from './host-connection.js';
import { MeasurementScheduler } from './measurements.js';
import type { PageRecorder } from './page-records.js';
import type { SettingsStore } from './settings-store.js';

/** The sampler looks at a page this long after its load event, so the content script's timing report is in. */
export const SAMPLE_DELAY_MS = 3_000;

/** The scheduler with the browser's storage.local and tabs; each finished measurement goes into `history`, and to
 * the uploader (which queues it only when uploads are on). */
export function createMeasurementScheduler(host: HostConnection, settings: SettingsStore, pages: PageRecorder, history: HistoryStore, uploader: Uploader): MeasurementScheduler {
  return new MeasurementScheduler({
    area: browser.storage.local,
    host,
    loadSettings: () => settings.loadSettings(),
    pageReport: (tabId, sender) => pages.report(tabId, sender),
    isIncognitoTab,
    now: () => Date.now(),
    newId: () => crypto.randomUUID(),
    log: (message) => console.warn(message),
    selfSender: { id: browser.runtime.id, url: browser.runtime.getURL('') },
    onDone: async (meta, records) => {
      const entry = historyEntry(meta, records);
      await history.add(entry);
      await uploader.onHistory(entry);
    },
  });
}

/** Starts the automatic sampler: each finished top-level page is offered to it after SAMPLE_DELAY_MS. */
export function listenForSampling(measurements: MeasurementScheduler): void {
  browser.webNavigation.onCompleted.addListener((d) => {
    if (d.frameId !== 0 || d.tabId < 0) return;
    setTimeout(() => {
      measurements.sample(d.tabId).catch((err) => console.warn(`measurements: sampling failed: ${String(err)}`));
    }, SAMPLE_DELAY_MS);
  });
}
