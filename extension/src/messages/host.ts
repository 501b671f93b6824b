// The native host's state, asked by the extension's pages: host-status (as it is now) and host-reconnect (the popup's
// "Check again": retry at once when down). Joined into the one union of extension/src/messages/index.ts.
import * as v from 'valibot';
import type { Failure, HostStatusCode } from '../../../common/errors.js';
import type { BrowserDoh, CurrentDns } from '../../../common/schema.js';
import type { TransportId } from '../../../common/transports.js';

const hostStatus = v.strictObject({ type: v.literal('host-status') });
const hostReconnect = v.strictObject({ type: v.literal('host-reconnect') });

/** The host message schemas, for the union in extension/src/messages/index.ts. */
export const HOST_MESSAGES = [hostStatus, hostReconnect] as const;

/** The host's state: connected (its hello), or why not, with when the next attempt is due (ms since epoch). */
export type HostStatus =
  | { ok: true; connected: true; version: string; protocol: number; transports: TransportId[]; currentDns: CurrentDns | null; ipv6: boolean | null; browserDoh: BrowserDoh | null }
  | (Failure<HostStatusCode> & { connected: false; retryAt: number | null });

/** The replies of the host messages. */
export interface HostReplies {
  'host-status': HostStatus;
  'host-reconnect': HostStatus;
}
