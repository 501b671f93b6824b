// Whether a tab's page may be measured now, and its plan, for the measurement scheduler (measurements.ts): private
// windows first (a tab the browser cannot tell about counts as private: the check fails closed), then the page
// record's own refusals (excluded site, not the extension's sender), consent, the host's connection; the plan puts
// the person's current DNS first when the setting is on and the host found it.
import type { MessageSender } from '../messages/index.js';
import type { MeasureCode, WithheldGroup } from '../messages/measure.js';
import type { PageReplies } from '../messages/page.js';
import type { Settings } from '../settings.js';
import { CODES, failure, type Failure } from '../../../common/errors.js';
import { measurableHosts, offeredEndpoints, planMeasurement, unmeasurableMessage, withCurrentDns, withheldGroups } from './measure-plan.js';
import type { HostStatus } from '../messages/host.js';
import type { RoutedReply } from './host-connection.js';
import type { Request, RequestId } from '../../../common/schema.js';
import { currentPresets, encryptedOnly } from '../../../common/default-resolvers.js';

/** The part of the host connection the scheduler uses (host-connection.ts). */
export interface MeasureHost {
  status(): HostStatus;
  request(req: Exclude<Request, { type: 'hello' }>, listener: (reply: RoutedReply) => void): boolean;
  release(id: RequestId): void;
  /** Gives up on a host that stopped answering; a new one starts (host-connection.ts restart). */
  restart?(message: string): void;
}

/** What the gate reads: the tab's privacy, its page record, the settings, the host's connection. */
export interface GateDeps {
  host: MeasureHost;
  loadSettings(): Promise<Settings>;
  pageReport(tabId: number, sender: MessageSender): Promise<PageReplies['page-report']>;
  isIncognitoTab(tabId: number): Promise<boolean | null>;
}


/** Why the tab's page may not be measured now, or the page and settings when it may. */
export async function measureGate(
  deps: GateDeps,
  tabId: number,
  sender: MessageSender,
  known?: PageReplies['page-report'],
): Promise<{ ok: true; page: Extract<PageReplies['page-report'], { ok: true }>['record']; settings: Settings } | Failure<MeasureCode>> {
  const isPrivate = await deps.isIncognitoTab(tabId).catch(() => null);
  if (isPrivate === true) return failure(CODES.PRIVATE_WINDOW, 'pages in private windows are never measured');
  if (isPrivate === null) return failure(CODES.PRIVATE_WINDOW, 'the browser could not say whether this tab is in a private window, so it is treated as one: nothing is measured');
  const report = known ?? (await deps.pageReport(tabId, sender));
  if (!report.ok) {
    if (report.code === CODES.PRIVATE_WINDOW) return failure(CODES.PRIVATE_WINDOW, report.message);
    if (report.code === CODES.EXCLUDED) return failure(CODES.EXCLUDED, report.message);
    if (report.code === CODES.BAD_SENDER) return failure(CODES.BAD_SENDER, report.message);
    return failure(CODES.NO_PAGE, report.message);
  }
  const settings = await deps.loadSettings();
  if (!settings.consent.given) {
    return failure(CODES.NO_CONSENT, 'dnscost measures only after you agreed, in its options, to have this page’s hostnames re-resolved by your resolvers');
  }
  if (!deps.host.status().connected) return failure(CODES.HOST_NOT_CONNECTED, hostProblem(deps.host));
  return { ok: true, page: report.record, settings };
}

/** Why the host cannot take a measurement, in words. */
export function hostProblem(host: MeasureHost): string {
  const s = host.status();
  return s.ok ? 'the native host went away' : `the native host is not connected (${s.code}): ${s.message}`;
}

/** A page none of whose hosts may be measured: the refusal, with the hosts withheld grouped by why. */
export type Unmeasurable = Failure<typeof CODES.NO_MEASURABLE_HOSTS> & { withheld: WithheldGroup[] };

/**
 * The plan for `page`: the person's current DNS first (when on and the host found it), then their resolvers — while the
 * browser resolves over DoH, its own DoH server first and encrypted endpoints only; or, when no host may be measured,
 * the refusal saying why of each.
 */
export function planFor(host: MeasureHost, page: Parameters<typeof planMeasurement>[0], settings: Pick<Settings, 'resolvers' | 'currentDns' | 'lab'>): NonNullable<ReturnType<typeof planMeasurement>> | Unmeasurable {
  const h = host.status();
  const current = h.ok && settings.currentDns ? h.currentDns : null;
  // The public resolvers as this version defines them, over IPv6 when the machine reaches it (as the browser would).
  const mine = { ...settings, resolvers: currentPresets(settings.resolvers, h.ok ? h.ipv6 : null) };
  const offered = offeredEndpoints(withCurrentDns(mine, current), h.ok ? h.transports : null);
  // While the browser resolves over DoH, or for a page that went through a proxy, nothing of it goes out in clear text
  // (the host refuses it too).
  const browserDoh = h.ok ? h.browserDoh : null;
  // Never weaker than the browser: it encrypts, or its requests (the page's, or all of a Chromium's) go through a proxy.
  const resolvers = browserDoh?.active || page.proxied || browserDoh?.proxy ? encryptedOnly(offered, browserDoh) : offered;
  const plan = planMeasurement(page, resolvers, { currentDns: current, ipv6: h.ok ? h.ipv6 : null, browserDoh, lab: settings.lab });
  if (plan) return withEdges(plan, page);
  const withheld = withheldGroups(measurableHosts(page, resolvers, { searchDomains: current?.search, splitDomains: current?.splitDomains, lab: settings.lab }).skipped);
  return { ok: false, code: CODES.NO_MEASURABLE_HOSTS, message: unmeasurableMessage(withheld), withheld };
}

/**
 * The CDN check (common/edges.ts) asked of the host: for each host the browser reached, the port its requests used
 * (443 when any went over https, else 80); never for a page behind a proxy, whose browser reached no address itself.
 */
export function withEdges(plan: NonNullable<ReturnType<typeof planMeasurement>>, page: Parameters<typeof planMeasurement>[0]): NonNullable<ReturnType<typeof planMeasurement>> {
  if (plan.request.noCleartext) return plan;
  const schemes = new Map(page.hosts.map((h) => [h.name, h.schemes]));
  const hosts = plan.request.hosts.map((h) => (typeof h === 'string' || !h.reached?.length ? h : { ...h, port: schemes.get(h.name)?.includes('https') ? (443 as const) : (80 as const) }));
  return { ...plan, request: { ...plan.request, hosts, edges: true } };
}
