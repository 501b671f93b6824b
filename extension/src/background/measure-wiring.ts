// Wiring of the measurement scheduler (measurements.ts) to the browser: storage.local, tabs, the host connection,
// the settings store and the page recorder; and the automatic sampler's trigger (webNavigation.onCompleted of a
// top-level page, registered synchronously at the background's start like every other listener).
import { historyEntry } from '../history.js';
import { pageVerdict, type PageVerdict, type VerdictKind } from '../verdict.js';
import { browser, recordingBrowser } from '../browser.js';
import { firefoxOwnPath, type DnsResolve } from './firefox-path.js';
import { browserI18n } from '../locale.js';
import { isIncognitoTab } from './incognito.js';
import type { HistoryStore } from './history-store.js';
import type { Uploader } from './uploader.js';
import type { HostConnection } from './host-connection.js';
import { MeasurementScheduler } from './measurements.js';
import type { PageRecorder } from './page-records.js';
import type { SettingsStore } from './settings-store.js';
import type { RevisitStore } from './revisits.js';

/** The sampler looks at a page this long after its load event, so the content script's timing report is in. */
export const SAMPLE_DELAY_MS = 3_000;

/** The scheduler with the browser's storage.local and tabs; each finished measurement goes into `history`, and to
 * the uploader (which queues it only when uploads are on). */
export function createMeasurementScheduler(host: HostConnection, settings: SettingsStore, pages: PageRecorder, history: HistoryStore, uploader: Uploader, revisits: RevisitStore): MeasurementScheduler {
  // Firefox lets the extension resolve through its own resolver (the Firefox build's `dns` permission).
  const ownPath = recordingBrowser() === 'firefox' ? firefoxOwnPath((browser as { dns?: { resolve: DnsResolve } }).dns) : undefined;
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
    ...(ownPath ? { ownPath } : {}),
    onDone: async (meta, records) => {
      const entry = historyEntry(meta, records);
      await history.add(entry);
      await revisits.noteMeasurement(records);
      await showVerdict(meta.tabId, pageVerdict(entry.cells, (id) => meta.plan.resolvers.find((r) => r.id === id)?.name ?? id, browserI18n()));
      await uploader.onHistory(entry);
    },
  });
}

const BADGE_COLOURS: Record<VerdictKind, string> = { fails: '#a01010', slower: '#a06010', same: '#116611', faster: '#116611', unknown: '#666666' };

/** The measured page's verdict on the toolbar button of its tab (the browser clears it when the tab navigates). */
async function showVerdict(tabId: number, verdict: PageVerdict): Promise<void> {
  try {
    await browser.action.setBadgeText({ tabId, text: verdict.badge });
    await browser.action.setBadgeBackgroundColor({ tabId, color: BADGE_COLOURS[verdict.kind] });
    await browser.action.setTitle({ tabId, title: `${browserI18n().t('ext_name')}: ${verdict.sentence}` });
  } catch (err) {
    // The tab closed meanwhile: nothing to show it on.
    console.warn(`dnscost: badge of tab ${tabId}: ${String(err)}`);
  }
}

/**
 * Starts the automatic sampler: each finished top-level page is offered to it after SAMPLE_DELAY_MS, once no page is
 * loading; its hosts' needs go to the revisits (what a cache would save).
 */
export function listenForSampling(measurements: MeasurementScheduler, revisits: RevisitStore, pages: PageRecorder): void {
  browser.webNavigation.onCompleted.addListener((d) => {
    if (d.frameId !== 0 || d.tabId < 0) return;
    // Not while another page loads: the sampler's reads of the settings and the page would compete with it.
    setTimeout(() => pages.whenQuiet(() => {
      measurements.sample(d.tabId).catch((err) => console.warn(`measurements: sampling failed: ${String(err)}`));
      revisits.notePage(d.tabId).catch((err) => console.warn(`revisits: ${String(err)}`));
    }), SAMPLE_DELAY_MS);
  });
}
