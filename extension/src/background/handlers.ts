// The background's answers to extension messages: one handler per message type (the table fails to compile when a
// type in common/extension-messages.ts has none).
import type { ExtensionHandlers } from '../../../common/extension-messages.js';
import type { HostConnection } from './host-connection.js';

/** What every handler may use. */
export interface BackgroundContext {
  host: HostConnection;
}

/** The handler table. */
export const handlers: ExtensionHandlers<BackgroundContext> = {
  'host-status': (_message, { host }) => host.status(),
  'host-reconnect': (_message, { host }) => host.reconnectNow(),
};
