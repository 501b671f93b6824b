// What one measurement of a page asks the native host: the page's hosts (those that may be sent to the resolvers in
// force) with the offsets at which the browser asked for them (common/lookup-starts.ts), the resolvers, record types,
// modes, `replay`, a few repeats and priming. Pure: no browser global, no storage; the scheduler (measurements.ts)
// and tests call it.
import type { MeasurePlanSummary, WithheldGroup } from '../messages/measure.js';
import type { PageRecord } from '../../../common/page-record.js';
import { MAX_EXCHANGES_PER_REQUEST, MAX_HOSTS_PER_REQUEST, type BrowserDoh, type CurrentDns, type HostSpec, type MeasureRequest, type ResolverSpec } from '../../../common/schema.js';
import { CURRENT_DNS_ID, currentDnsResolvers } from '../../../common/default-resolvers.js';
import type { Settings } from '../settings.js';
import { normalizeHostname } from '../../../common/hostname.js';
import { isSpecialUseName, withheldFromAny } from '../../../common/name-privacy.js';
import { QTYPES, type Mode, type QType, type TransportId } from '../../../common/transports.js';
import { pageHostQtypes } from '../../../common/browser-queries.js';
import { capNames } from '../../../common/name-caps.js';
import { lookupStarts, replayAt, type LookupStartsInput } from '../../../common/lookup-starts.js';

/** Cold (each replay opens its connection) and warm (the connection was already open). */
export const MEASURE_MODES: Mode[] = ['cold', 'warm'];
/** Replays of the page per mode and endpoint: enough for a median, few enough to stay polite to public resolvers. */
export const MEASURE_REPEAT = 3;
/**
 * Latest replay offset sent (common/lookup-starts.ts): a host first needed later (a lazy image, a poll after a minute)
 * is replayed at this offset, because every replay waits for its last host and a page is replayed repeat × modes ×
 * endpoints times.
 */
export { MAX_REPLAY_AT_MS } from '../../../common/lookup-starts.js';

/** What the plan knows beside the page when it decides which names may go (common/name-privacy.ts). */
export interface NamePrivacyContext {
  /** The system's search domains (the host's current DNS). */
  searchDomains?: readonly string[] | undefined;
  /** The domains the system sends to servers of their own (the host's current DNS: split DNS). */
  splitDomains?: readonly string[] | undefined;
  /** The person's lab setting: special-use names may go to resolvers on non-global addresses. */
  lab?: boolean | undefined;
}

/**
 * The hosts of `page` that may be measured against `resolvers`, with their replay offsets, and those skipped (why):
 * a name goes only where every endpoint of every resolver may be asked it (common/name-privacy.ts: no special-use
 * name outside the lab, no name private to the person's network to a resolver outside it), no name whose every request
 * failed, and within the caps on names per registrable domain and per measurement (common/name-caps.ts). The host
 * checks again.
 */
export function measurableHosts(page: LookupStartsInput & Pick<PageRecord, 'hosts'>, resolvers: readonly Pick<ResolverSpec, 'endpoints'>[], ctx: NamePrivacyContext = {}): Pick<MeasurePlanSummary, 'skipped' | 'internalAllowed'> & { hosts: Array<HostSpec & { firstNeededMs: number }> } {
  const addresses = [...new Set(resolvers.flatMap((r) => r.endpoints.map((e) => e.address)))];
  const hosts: Array<HostSpec & { firstNeededMs: number }> = [];
  const skipped: MeasurePlanSummary['skipped'] = [];
  const seen = new Set<string>();
  const starts = lookupStarts(page);
  for (const h of page.hosts) {
    if (h.kind === 'ip') {
      skipped.push({ name: h.name, reason: 'ip-literal' });
      continue;
    }
    let name: string;
    try {
      name = normalizeHostname(h.name);
    } catch {
      skipped.push({ name: h.name, reason: 'invalid' });
      continue;
    }
    const reached = h.ips.slice(0, 8);
    const why = addresses.length ? withheldFromAny(name, addresses, { reached, searchDomains: ctx.searchDomains, splitDomains: ctx.splitDomains, lab: ctx.lab }) : 'special-use';
    if (why) {
      skipped.push({ name: h.name, reason: why });
      continue;
    }
    // A name none of whose requests served the page (every one failed) is not re-resolved: a page can ask for names
    // that do not exist, as many as it likes, and would make the host ask them too.
    if (h.requests > 0 && h.errors >= h.requests) {
      skipped.push({ name: h.name, reason: 'not-completed' });
      continue;
    }
    if (seen.has(name)) continue;
    seen.add(name);
    // Replayed when the browser asked for it (common/lookup-starts.ts), in the field name the host protocol keeps.
    const firstNeededMs = starts.get(h.name) ?? replayAt(h.firstNeededMs);
    hosts.push({ name, firstNeededMs, ...(reached.length ? { reached } : {}) });
  }
  // Within the caps on names per registrable domain and per measurement, the names needed first kept (name-caps.ts).
  const { kept, dropped } = capNames([...hosts].sort((a, b) => a.firstNeededMs - b.firstNeededMs), { lab: ctx.lab });
  skipped.push(...dropped);
  const specialUse = kept.some((h) => isSpecialUseName(h.name));
  const keep = new Set(kept);
  return { hosts: hosts.filter((h) => keep.has(h)).slice(0, MAX_HOSTS_PER_REQUEST), skipped, internalAllowed: specialUse };
}

/**
 * The resolvers with only the endpoints whose transport the connected host offers (its hello: a host without its
 * QUIC companion offers no doq/doh3), so a measurement asks nothing the host would set aside; resolvers left with no
 * endpoint are dropped. When the host is not connected, or nothing would be left, `resolvers` as they are: the
 * measurement then refuses or fails with the host's own code instead of looking like a page with nothing to measure.
 */
export function offeredEndpoints(resolvers: readonly ResolverSpec[], offered: readonly TransportId[] | null): ResolverSpec[] {
  if (!offered) return [...resolvers];
  const kept = resolvers
    .map((r) => ({ ...r, endpoints: r.endpoints.filter((e) => offered.includes(e.transport)) }))
    .filter((r) => r.endpoints.length > 0);
  return kept.length > 0 ? kept : [...resolvers];
}

/**
 * The resolvers to measure: the person's current DNS (as the host found it: `system`, and `system-stub` for a local
 * cache in front of it) ahead of the configured ones, when the setting is on; a configured resolver with the same id
 * (an administrator's or an older settings file's `system`) is replaced by what the host found now.
 */
export function withCurrentDns(settings: Pick<Settings, 'resolvers' | 'currentDns'>, current: CurrentDns | null): ResolverSpec[] {
  const found = settings.currentDns && current ? currentDnsResolvers(current) : [];
  return [...found, ...settings.resolvers.filter((r) => !found.some((f) => f.id === r.id))];
}

/** What the plan takes from the host and the settings besides the page: the current DNS it found, the machine's IPv6 reachability, the browser's DoH, the lab setting. */
export interface PlanContext {
  /** The person's lab setting (special-use names to resolvers on non-global addresses). */
  lab?: boolean;
  /** The person's current DNS when it is among the resolvers (kept with the plan, so the panel can say what it was). */
  currentDns?: CurrentDns | null;
  /** The machine reaches the IPv6 internet (Chromium then asks AAAA too). */
  ipv6?: boolean | null;
  /** The DoH of the browser that started the host (kept with the plan, so the panel can say a switch already happened). */
  browserDoh?: BrowserDoh | null;
}

/** `skipped` grouped by reason, in the order the reasons first occur. */
export function withheldGroups(skipped: MeasurePlanSummary['skipped']): WithheldGroup[] {
  const groups = new Map<WithheldGroup['reason'], WithheldGroup>();
  for (const s of skipped) {
    const g = groups.get(s.reason);
    if (g) g.count++;
    else groups.set(s.reason, { reason: s.reason, count: 1, example: s.name });
  }
  return [...groups.values()];
}

/** Why no host of a page may be measured, in words: every reason with its count and an example. */
export function unmeasurableMessage(groups: readonly WithheldGroup[]): string {
  if (groups.length === 0) return 'this page recorded no hostname to measure';
  return `this page needed no hostname that may be sent to your resolvers: ${groups.map((g) => `${g.count} ${g.reason} (e.g. ${g.example})`).join(', ')}`;
}

/** The measure request for `page` (without its id) and its summary; null when no host may be measured. */
export function planMeasurement(
  page: Pick<PageRecord, 'hosts'> & Partial<Pick<PageRecord, 'host' | 'browser' | 'proxied' | 'startedAt' | 'timeOrigin'>>,
  resolvers: readonly ResolverSpec[],
  context: PlanContext = {},
): { request: Omit<MeasureRequest, 'id'>; summary: MeasurePlanSummary } | null {
  const chosen = measurableHosts(page, resolvers, { searchDomains: context.currentDns?.search, splitDomains: context.currentDns?.splitDomains, lab: context.lab });
  if (chosen.hosts.length === 0) return null;
  // Within the host's cap on exchanges: the hosts needed first are kept (at most three types per host counted).
  const perHost = 3 * MEASURE_MODES.length * MEASURE_REPEAT * resolvers.reduce((n, r) => n + r.endpoints.length, 0);
  const most = Math.max(1, Math.floor(MAX_EXCHANGES_PER_REQUEST / perHost));
  if (chosen.hosts.length > most) chosen.hosts = [...chosen.hosts].sort((a, b) => a.firstNeededMs - b.firstNeededMs).slice(0, most);
  // Each host is asked for what the recording browser asked for it (common/browser-queries.ts); where the browser
  // reached it goes along, so the host's own check of the name-privacy rule sees it too.
  const hosts = chosen.hosts.map((h): HostSpec & { qtypes: QType[] } => ({ ...h, qtypes: pageHostQtypes(page.browser ?? null, page, h.name, { ipv6: context.ipv6 ?? false }) }));
  const qtypes = QTYPES.filter((q) => hosts.some((h) => h.qtypes.includes(q)));
  // Through a proxy (this page's requests, or all of a Chromium's): the proxy resolved its names, not the person's DNS.
  const proxied = page.proxied === true || Boolean(context.browserDoh?.proxy);
  const request: Omit<MeasureRequest, 'id'> = {
    type: 'measure',
    hosts,
    resolvers: resolvers.map((r) => ({ ...r, endpoints: r.endpoints.map((e) => ({ ...e })) })),
    qtypes,
    modes: [...MEASURE_MODES],
    repeat: MEASURE_REPEAT,
    prime: true,
    schedule: 'replay',
    ...(context.lab ? { lab: true } : {}),
    ...(proxied ? { noCleartext: true } : {}),
  };
  const summary: MeasurePlanSummary = {
    ...chosen,
    hosts: chosen.hosts.map((h) => ({ name: h.name, firstNeededMs: h.firstNeededMs })),
    resolvers: resolvers.map((r) => ({ id: r.id, name: r.name, transports: [...new Set(r.endpoints.map((e) => e.transport))] })),
    qtypes,
    browser: page.browser ?? null,
    modes: [...MEASURE_MODES],
    repeat: MEASURE_REPEAT,
    prime: true,
    schedule: 'replay',
    currentDns: resolvers.some((r) => r.id === CURRENT_DNS_ID) ? (context.currentDns ?? null) : null,
    browserDoh: context.browserDoh ?? null,
    ...(proxied ? { proxied: true } : {}),
  };
  return { request, summary };
}
