// The background's answers to extension messages: one handler per message type (the table fails to compile when a
// type in extension/src/messages/index.ts has none).
import type { ExtensionHandlers } from '../messages/index.js';
import type { HistoryStore } from './history-store.js';
import type { Uploader } from './uploader.js';
import type { HostConnection } from './host-connection.js';
import type { MeasurementScheduler } from './measurements.js';
import type { PageRecorder } from './page-records.js';
import type { SettingsStore } from './settings-store.js';
import type { ResolverProber } from './resolver-probe.js';
import type { RevisitStore } from './revisits.js';
import { cacheSavings } from '../cache-savings.js';

/** What every handler may use. */
export interface BackgroundContext {
  host: HostConnection;
  settings: SettingsStore;
  pages: PageRecorder;
  measurements: MeasurementScheduler;
  history: HistoryStore;
  uploader: Uploader;
  prober: ResolverProber;
  revisits: RevisitStore;
  /** The extension's own base URL: privileged messages are answered only to its pages (dispatchExtensionMessage). */
  extensionBase: string;
}

/** The handler table. */
export const handlers: ExtensionHandlers<BackgroundContext> = {
  'host-status': (_message, { host }) => host.status(),
  'host-reconnect': (_message, { host }) => host.reconnectNow(),
  'resolver-probe': (message, { prober }) => (message.run ? prober.run() : prober.last()),
  'settings-get': (_message, { settings }) => settings.view(),
  'settings-set': (message, { settings }) => settings.set(message.changes),
  'settings-export': (_message, { settings }) => settings.exportJson(),
  'settings-import': (message, { settings }) => settings.import(message.json),
  'consent-give': (_message, { settings }) => settings.setConsent(true),
  'consent-withdraw': (_message, { settings }) => settings.setConsent(false),
  'data-clear': (_message, { settings }) => settings.clearData(),
  'page-timing': (message, { pages }, sender) => pages.timing(message, sender),
  'page-report': (message, { pages }, sender) => pages.report(message.tabId, sender),
  'measure-start': (message, { measurements }, sender) => measurements.start(message.tabId, sender),
  'measure-status': (message, { measurements }, sender) => measurements.status(message.tabId, sender, message.records === true),
  'measure-cancel': (message, { measurements }, sender) => measurements.cancel(message.tabId, sender),
  'history-get': async (message, { history }) => ({ ok: true, ...(await history.list({ since: message.since, until: message.until, site: message.site, network: message.network })) }),
  'cache-savings': async (_message, { revisits, settings }) => {
    const hosts = await revisits.all();
    const names = new Map((await settings.loadSettings()).resolvers.map((r) => [r.id, r.name]));
    return { ok: true, hosts: hosts.size, savings: cacheSavings(hosts.values()).map((s) => ({ ...s, name: names.get(s.resolver) ?? s.resolver })) };
  },
  'upload-status': (_message, { uploader }) => uploader.status(),
  'upload-preview': (_message, { uploader }) => uploader.preview(),
  'upload-flush': (_message, { uploader }) => uploader.flush(),
  'upload-delete': (_message, { uploader }) => uploader.deleteSent(),
};
