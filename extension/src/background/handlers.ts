// The background's answers to extension messages: one handler per message type (the table fails to compile when a
// type in extension/src/messages/index.ts has none).
import type { ExtensionHandlers, MessageSender } from '../messages/index.js';
import type { HistoryStore } from './history-store.js';
import type { Uploader } from './uploader.js';
import type { HostConnection } from './host-connection.js';
import type { MeasurementScheduler } from './measurements.js';
import type { PageRecorder } from './page-records.js';
import type { SettingsStore } from './settings-store.js';
import { CODES, type Failure } from '../../../common/errors.js';

/** What every handler may use. */
export interface BackgroundContext {
  host: HostConnection;
  settings: SettingsStore;
  pages: PageRecorder;
  measurements: MeasurementScheduler;
  history: HistoryStore;
  uploader: Uploader;
  /** The extension's own base URL: the history and upload messages are answered only to its pages. */
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
  'history-get': async (message, { history, extensionBase }, sender) =>
    notOwnPage(sender, extensionBase, 'history-get') ?? { ok: true, ...(await history.list({ since: message.since, until: message.until, site: message.site, network: message.network })) },
  'upload-status': async (_message, { uploader, extensionBase }, sender) => notOwnPage(sender, extensionBase, 'upload-status') ?? uploader.status(),
  'upload-preview': async (_message, { uploader, extensionBase }, sender) => notOwnPage(sender, extensionBase, 'upload-preview') ?? uploader.preview(),
  'upload-flush': async (_message, { uploader, extensionBase }, sender) => notOwnPage(sender, extensionBase, 'upload-flush') ?? uploader.flush(),
  'upload-delete': async (_message, { uploader, extensionBase }, sender) => notOwnPage(sender, extensionBase, 'upload-delete') ?? uploader.deleteSent(),
};

/** The refusal of a message only the extension's own pages may send, or null when `sender` is one of them. */
function notOwnPage(sender: MessageSender, extensionBase: string, type: string): Failure<typeof CODES.BAD_SENDER> | null {
  return sender.url?.startsWith(extensionBase) ? null : { ok: false, code: CODES.BAD_SENDER, message: `${type} is answered only to the extension's own pages` };
}
