// The native host's state, asked by the extension's pages: host-status (as it is now), host-reconnect (the popup's
// "Check again": retry at once when down) and resolver-probe (what the resolvers can do, background/resolver-probe.ts). Joined into the one union of extension/src/messages/index.ts.
import * as v from 'valibot';
import type { CODES, Failure, HostStatusCode } from '../../../common/errors.js';
import type { ResolverProbe } from '../../../common/probe.js';
import type { BrowserDoh, CurrentDns } from '../../../common/schema.js';
import type { TransportId } from '../../../common/transports.js';

const hostStatus = v.strictObject({ type: v.literal('host-status') });
const hostReconnect = v.strictObject({ type: v.literal('host-reconnect') });
/** The last probe of the resolvers in force (`run`: probe them now through the host, and keep that). */
const resolverProbe = v.strictObject({ type: v.literal('resolver-probe'), run: v.optional(v.boolean()) });

/** The host message schemas, for the union in extension/src/messages/index.ts. */
export const HOST_MESSAGES = [hostStatus, hostReconnect, resolverProbe] as const;

/** A kept probe: when, each resolver's rows (and its name then), and whether plain endpoints were left out. */
export interface StoredResolverProbe {
  at: number;
  plainLeftOut: boolean;
  resolvers: ResolverProbe[];
  names: Record<string, string>;
}

/** The last probe, null when there is none. */
export interface ResolverProbeView {
  ok: true;
  probe: StoredResolverProbe | null;
}

/** Why a probe did not run. */
export type ProbeCode = typeof CODES.HOST_NOT_CONNECTED | typeof CODES.TIMEOUT | typeof CODES.PROBE_FAILED;

/** The host's state: connected (its hello), or why not, with when the next attempt is due (ms since epoch). */
export type HostStatus =
  | { ok: true; connected: true; version: string; protocol: number; transports: TransportId[]; currentDns: CurrentDns | null; ipv6: boolean | null; browserDoh: BrowserDoh | null }
  | (Failure<HostStatusCode> & { connected: false; retryAt: number | null });

/** The replies of the host messages. */
export interface HostReplies {
  'host-status': HostStatus;
  'host-reconnect': HostStatus;
  'resolver-probe': ResolverProbeView | Failure<ProbeCode>;
}
