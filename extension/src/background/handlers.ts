// The background's answers to extension messages: one handler per message type (the table fails to compile when a
// type in common/extension-messages.ts has none).
import type { ExtensionHandlers, MessageSender } from '../../../common/extension-messages.js';
import { HISTORY_CODES } from '../../../common/history-messages.js';
import { UPLOAD_CODES } from '../../../common/upload-messages.js';
import type { HistoryStore } from './history-store.js';
import type { Uploader } from './uploader.js';
import type { HostConnection } from './host-connection.js';
import type { MeasurementScheduler } from './measurements.js';
import type { PageRecorder } from './page-records.js';
import type { SettingsStore } from './settings-store.js';

/** What every handler may use. */
export interface BackgroundContext {
  host: HostConnection;
  settings: SettingsStore;
  pages: PageRecorder;
  measurements: MeasurementScheduler;
  history: HistoryStore;
  uploader: Uploader;
  /** The extension's own base URL: history-get is answered only to its pages. */
  extensionBase: string;
}

/** The handler table. */
export const handlers: ExtensionHandlers<BackgroundContext> = {
  'host-status': (_message, { host }) => host.status(),
  'host-reconnect': (_message, { host }) => host.reconnectNow(),
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
  'history-get': async (message, { history, extensionBase }, sender) => {
    if (!sender.url?.startsWith(extensionBase)) return { ok: false, code: HISTORY_CODES.BAD_SENDER, message: 'history-get is answered only to the extension\'s own pages' };
    return { ok: true, ...(await history.list({ since: message.since, until: message.until, site: message.site })) };
  },
  'upload-status': (_message, { uploader, extensionBase }, sender) => (ownPage(sender, extensionBase) ? uploader.status() : notOwn()),
  'upload-preview': (_message, { uploader, extensionBase }, sender) => (ownPage(sender, extensionBase) ? uploader.preview() : notOwn()),
  'upload-flush': (_message, { uploader, extensionBase }, sender) => (ownPage(sender, extensionBase) ? uploader.flush() : notOwn()),
  'upload-delete': (_message, { uploader, extensionBase }, sender) => (ownPage(sender, extensionBase) ? uploader.deleteSent() : notOwn()),
};

const ownPage = (sender: MessageSender, base: string) => sender.url?.startsWith(base) === true;
const notOwn = () => ({ ok: false as const, code: UPLOAD_CODES.BAD_SENDER, message: 'the upload messages are answered only to the extension\'s own pages' });
