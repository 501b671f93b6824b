// The per-site cost panel's results, drawn with DOM APIs only: every hostname, resolver name and error code from a
// page or a host reply goes in as textContent, never as markup. Work is proportional to hosts × transports × modes of
// one resolver (the waterfall shows one resolver at a time), so a 200-host page draws in a few tens of ms.
import { INDISTINGUISHABLE_MS, type CellCost } from '../../../common/cost-model.js';
import { pageLookupMs, type StoredRecord } from '../../../common/stored-record.js';
import { percentile } from '../../../common/stats.js';
import type { BrowserDoh } from '../../../common/schema.js';
import type { MeasurementMeta } from '../messages/measure.js';
import { chooseBaseline, measuredPageCost } from '../../../common/page-cost.js';
import { BROWSER_DOH_ID, CURRENT_DNS_ID, FIREFOX_NOW_ID, LOCAL_STUB_ID } from '../../../common/default-resolvers.js';
import { expectedModeOf, holderOf, HOLDERS, pings, type Holder } from '../../../common/connection-state.js';
import { DOT_STATIC_FORMULA, DOT_STATIC_TEXT } from '../../../common/bytes-model.js';
import { TRANSPORT_IDS, TRANSPORTS, type Mode, type TransportId } from '../../../common/transports.js';
import type { CurrentDns } from '../../../common/schema.js';
import type { I18n } from '../i18n.js';
import { el } from '../ui/dom.js';
import { pagePenalties, type EdgeRow } from '../../../common/edges.js';
import { TRANSPORT_COLOURS } from '../ui/transports.js';

/** The onLoad change of a cell in words: point, bounds, and the verdict. */
export function onLoadWords(c: CellCost, i18n: I18n): string {
  const { t, signedMs } = i18n;
  const o = c.onLoad;
  if (c.verdict === 'fails') return i18n.plural('cost_onload_fails', c.unresolved.length);
  if (o.delta === null) return t('cost_onload_unknown');
  const bounds = o.lower !== null && o.upper !== null ? ` ${t('cost_onload_bounds', signedMs(o.lower), signedMs(o.upper))}` : '';
  const verdict = c.verdict === 'indistinguishable' ? t('cost_verdict_indistinguishable', i18n.ms(INDISTINGUISHABLE_MS)) : t(`cost_verdict_${c.verdict}`);
  return `${signedMs(o.delta)}${bounds}: ${verdict}`;
}

/**
 * A resolver's name in the UI language: the person's current DNS and their computer's cache are named from what the
 * host found (its own description is English); other resolvers by the name they were given.
 */
export function resolverName(meta: Pick<MeasurementMeta, 'plan'>, id: string, i18n: I18n): string {
  if (id === FIREFOX_NOW_ID) return i18n.t('resolver_firefox_now');
  const current: CurrentDns | null | undefined = meta.plan.currentDns;
  const given = meta.plan.resolvers.find((r) => r.id === id)?.name ?? id;
  if (!current || (id !== CURRENT_DNS_ID && id !== LOCAL_STUB_ID)) return given;
  const servers = current.servers.map((s) => (s.port === 53 ? s.address : i18n.t('resolver_server_port', s.address, String(s.port)))).join(', ');
  const stub = current.stub;
  if (id === LOCAL_STUB_ID) return stub ? i18n.t('resolver_local_stub', stub.software, stub.address) : given;
  if (stub) return servers ? i18n.t('resolver_current_via_stub', servers, stub.software, stub.address) : i18n.t('resolver_current_stub_only', stub.software, stub.address);
  return servers ? i18n.t('resolver_current', servers) : given;
}

const MODE_ORDER: Record<Mode, number> = { cold: 0, warm: 1 };
const transportOrder = (t: TransportId) => TRANSPORT_IDS.indexOf(t);

/** Everything the results view computes once from a measurement. */
export interface Results {
  /** The resolvers' cells: what the person could switch to. */
  cells: CellCost[];
  /** Firefox's own path (firefox-path.ts), priced the same way: a row of its own, never a choice or the baseline. */
  ownPath: CellCost[];
  baseline: { resolver: string; transport: TransportId } | undefined;
  /** One sentence: what every change is compared with (the person's current DNS, whenever it was measured). */
  comparedWith: string;
  /** Per transport, the connection state this visit would have had (common/connection-state.ts). */
  expected: Partial<Record<TransportId, Mode>>;
  /** One sentence: why those states (how long the browser had been idle, who would hold each connection). */
  expectedWhy: string;
}

/** Runs the cost model over a measurement's stored records. */
export function computeResults(meta: MeasurementMeta, records: readonly StoredRecord[], i18n: I18n): Results {
  const all = measuredPageCost(meta.page, records, meta.plan.currentDns?.retryMs);
  const cells = all.filter((c) => c.resolver !== FIREFOX_NOW_ID);
  const baseline = chooseBaseline(records);
  const resolverOrder = new Map(meta.plan.resolvers.map((r, i) => [r.id, i]));
  cells.sort((a, b) => (resolverOrder.get(a.resolver) ?? 99) - (resolverOrder.get(b.resolver) ?? 99) || transportOrder(a.transport) - transportOrder(b.transport) || MODE_ORDER[a.mode] - MODE_ORDER[b.mode]);
  const stub = meta.plan.currentDns?.stub?.software ?? null;
  const expected: Results['expected'] = {};
  for (const c of cells) expected[c.transport] = expectedModeOf(c.transport, meta.page, stub);
  return { cells, ownPath: all.filter((c) => c.resolver === FIREFOX_NOW_ID), baseline, comparedWith: comparedWith(meta, baseline, i18n), expected, expectedWhy: expectedWhy(meta, Object.keys(expected) as TransportId[], stub, i18n) };
}

/** A holder's name in the UI language (holder_chromium_doh…). */
const holderName = (holder: Holder, i18n: I18n): string => i18n.t(`holder_${holder.replace(/-/g, '_')}`);

/** "<holder> keeps it <how long>", in words (German puts the verb last: the phrase follows "da"). */
function keeps(holder: Holder, i18n: I18n): string {
  const idleMs = HOLDERS[holder].idleMs;
  if (idleMs !== null) return i18n.t('cost_keeps_idle', holderName(holder, i18n), i18n.t('unit_s', i18n.num(idleMs / 1000)));
  return i18n.t(pings(holder) ? 'cost_keeps_pings' : 'cost_keeps_server', holderName(holder, i18n));
}

/** Why each encrypted transport's expected state is what it is, in words. */
export function expectedWhy(meta: Pick<MeasurementMeta, 'page'>, transports: readonly TransportId[], stub: string | null, i18n: I18n): string {
  const { t } = i18n;
  const idle = meta.page.idleBeforeMs;
  const parts = transports.flatMap((t0) => {
    const holder = holderOf(t0, meta.page.browser ?? null, stub);
    return holder ? [t(expectedModeOf(t0, meta.page, stub) === 'warm' ? 'cost_expected_warm' : 'cost_expected_cold', TRANSPORTS[t0].short, keeps(holder, i18n))] : [];
  });
  if (parts.length === 0) return '';
  const when = idle === null || idle === undefined
    ? t('cost_when_first')
    : t('cost_when_idle', idle < 1000 ? i18n.ms(Math.round(idle)) : t('unit_s', i18n.num(Math.round(idle / 1000))));
  return t('cost_expected_why', when, parts.join('; '));
}

/** What the changes are compared with, in words: the person's current DNS (and whether it is already encrypted), or else which replay; and the browser's own DoH. */
export function comparedWith(meta: Pick<MeasurementMeta, 'plan'>, baseline: Results['baseline'], i18n: I18n): string {
  const { t } = i18n;
  const doh = browserDohWords(meta.plan.browserDoh, i18n);
  const withDoh = (text: string) => (doh ? `${text} ${doh}` : text);
  if (!baseline && meta.plan.proxied) return t('cost_compared_proxied');
  if (!baseline) return meta.plan.browserDoh?.active ? t('cost_compared_browser_none') : withDoh(t('cost_compared_none'));
  const name = resolverName(meta, baseline.resolver, i18n);
  if (baseline.resolver === BROWSER_DOH_ID) return t('cost_compared_browser', name);
  if (baseline.resolver === CURRENT_DNS_ID) {
    const enc = meta.plan.currentDns?.encrypted;
    const already = enc ? ` ${t(enc.opportunistic ? 'cost_already_encrypted_opportunistic' : 'cost_already_encrypted', i18n.transport(enc.transport), enc.by)}` : '';
    return withDoh(`${t('cost_compared_current', name)}${already}`);
  }
  return withDoh(t('cost_compared_other', name, i18n.transport(baseline.transport)));
}

/**
 * The browser's own DNS over HTTPS in words, when its lookups already go over it: the switch the DoH rows price has
 * already happened. '' when it is off, not active (Chromium's automatic mode on a server it does not upgrade) or not known.
 */
export function browserDohWords(doh: BrowserDoh | null | undefined, i18n: I18n): string {
  const { t } = i18n;
  if (!doh?.active) return '';
  const server = doh.templates.length ? doh.templates.join(', ') : t('cost_doh_default_server');
  const file = doh.source.split(/[\\/]/).pop() ?? doh.source;
  const how = doh.upgradedFrom ? t('cost_doh_upgraded', doh.upgradedFrom) : doh.setBy === 'settings' ? t('cost_doh_set_in', file) : t(`cost_doh_set_${doh.setBy}`);
  return t(doh.fallback ? 'cost_browser_doh_fallback' : 'cost_browser_doh', server, how);
}

function table(headers: string[]): { table: HTMLTableElement; body: HTMLTableSectionElement } {
  const t = el('table');
  const head = t.createTHead().insertRow();
  for (const h of headers) head.append(el('th', h));
  return { table: t, body: t.createTBody() };
}

function row(body: HTMLTableSectionElement, cells: string[], attrs: Record<string, string> = {}): HTMLTableRowElement {
  const r = body.insertRow();
  for (const c of cells) r.insertCell().textContent = c;
  for (const [k, v] of Object.entries(attrs)) r.dataset[k] = v;
  return r;
}

/** The summary: per resolver × transport × mode the onLoad change, the summed DNS time and the failures. */
export function renderSummary(results: Results, resolverNames: Map<string, string>, i18n: I18n): HTMLElement {
  const { ms, signedMs } = i18n;
  const box = el('section', undefined, 'summary');
  box.append(el('h2', i18n.t('cost_summary_title')));
  const { table: t, body } = table(['col_resolver', 'col_transport', 'col_connection', 'col_onload_change', 'col_dns_time', 'col_failures'].map((k) => i18n.t(k)));
  for (const c of results.cells) {
    const isBaseline = results.baseline?.resolver === c.resolver && results.baseline.transport === c.transport;
    const expected = results.expected[c.transport] === c.mode;
    const dns = c.dnsTime.candidate === null ? '–' : `${ms(c.dnsTime.candidate)}${c.dnsTime.delta !== null && !isBaseline ? ` (${signedMs(c.dnsTime.delta)})` : ''}`;
    row(body, [
      resolverNames.get(c.resolver) ?? c.resolver,
      i18n.transport(c.transport),
      expected ? i18n.t('cost_mode_expected', i18n.t(`mode_${c.mode}`)) : i18n.t(`mode_${c.mode}`),
      isBaseline ? i18n.t('cost_baseline') : onLoadWords(c, i18n),
      dns,
      i18n.t('n_of_total', c.failures.failed, c.failures.total),
    ], { resolver: c.resolver, transport: c.transport, mode: c.mode, verdict: isBaseline ? 'baseline' : c.verdict, expected: String(expected) });
  }
  for (const c of results.ownPath) {
    const dns = c.dnsTime.candidate === null ? '–' : `${ms(c.dnsTime.candidate)}${c.dnsTime.delta !== null ? ` (${signedMs(c.dnsTime.delta)})` : ''}`;
    row(body, [i18n.t('resolver_firefox_now'), i18n.transport(c.transport), i18n.t('cost_mode_now'), onLoadWords(c, i18n), dns, i18n.t('n_of_total', c.failures.failed, c.failures.total)],
      { resolver: c.resolver, transport: c.transport, mode: c.mode, verdict: c.verdict, expected: 'now' });
  }
  box.append(t);
  if (results.expectedWhy) box.append(el('p', results.expectedWhy, 'expected-why'));
  const base = results.baseline;
  box.append(el('p', results.comparedWith, 'compared-with'));
  if (base) {
    box.append(el('p', i18n.t('cost_summary_detail', ms(INDISTINGUISHABLE_MS)), 'detail'));
  }
  return box;
}

/**
 * Where each resolver's answers send the page (common/edges.ts): per resolver, the hosts it answers with other servers
 * than the ones the browser reached and what that adds to a new connection's set-up; null when no check was made.
 * A line of its own: the onLoad estimate does not include it.
 */
export function renderEdges(rows: readonly EdgeRow[], resolverNames: Map<string, string>, i18n: I18n): HTMLElement | null {
  const penalties = pagePenalties(rows).filter((p) => resolverNames.has(p.resolver));
  if (penalties.length === 0) return null;
  const box = el('section', undefined, 'cdn');
  box.id = 'cdn-penalty';
  box.append(el('h2', i18n.t('cost_cdn_title')));
  const list = el('ul');
  for (const p of penalties) {
    const name = resolverNames.get(p.resolver)!;
    const text = p.elsewhere === 0 || p.maxMs === null
      ? i18n.t('cost_cdn_same', name, i18n.num(p.hosts))
      : i18n.t('cost_cdn_elsewhere', name, i18n.num(p.elsewhere), i18n.num(p.hosts), i18n.signedMs(p.maxMs));
    const item = el('li', text);
    item.dataset.resolver = p.resolver;
    item.dataset.maxMs = p.maxMs === null ? '' : String(Math.round(p.maxMs));
    list.append(item);
  }
  box.append(list, el('p', i18n.t('cost_cdn_detail'), 'detail'));
  return box;
}

/** Per host × transport × mode of one resolver: the median lookup over the replays, failed or not. */
export interface WaterfallBar {
  transport: TransportId;
  mode: Mode;
  /** Median over repeats of the time from the scheduled offset to the last record type's answer or failure. */
  lookup: number;
  /** True when no repeat got an answer for any record type (the lookup's time is then the time to fail). */
  failed: boolean;
  /** The error codes seen. */
  errors: string[];
  /** The lookup in phases (ms, summing to `lookup`): waiting for a connection another lookup was opening, TCP connect,
   * TLS or QUIC handshake, then the query itself (the rest). */
  phases: Phases;
}

/** Groups one resolver's records into waterfall bars per host (failures keep their duration: time to fail). */
export function waterfallBars(records: readonly StoredRecord[], resolver: string): Map<string, WaterfallBar[]> {
  const groups = new Map<string, { host: string; transport: TransportId; mode: Mode; perRepeat: Map<number, { lookup: number; phases: Phases }>; ok: boolean; errors: Set<string> }>();
  for (const r of records) {
    if (r.resolver !== resolver) continue;
    const key = `${r.host}|${r.transport}|${r.mode}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { host: r.host, transport: r.transport, mode: r.mode, perRepeat: new Map(), ok: false, errors: new Set() }));
    const l = pageLookupMs(r);
    // A repeat's lookup ends with its last record type's answer: that exchange's phases are the bar's.
    if (l >= (g.perRepeat.get(r.repeat)?.lookup ?? -Infinity)) g.perRepeat.set(r.repeat, { lookup: l, phases: phasesOf(r, l) });
    if (r.ok) g.ok = true;
    else if (r.error) g.errors.add(r.error);
  }
  const out = new Map<string, WaterfallBar[]>();
  for (const g of groups.values()) {
    const reps = [...g.perRepeat.values()].sort((a, b) => a.lookup - b.lookup);
    const xs = reps.map((x) => x.lookup);
    const mid = percentile(xs, 50)!;
    // The phases of the repeat nearest the median, fitted to it (the query takes up the difference).
    const near = reps.reduce((best, x) => (Math.abs(x.lookup - mid) < Math.abs(best.lookup - mid) ? x : best), reps[0]!);
    const list = out.get(g.host) ?? [];
    out.set(g.host, list);
    list.push({ transport: g.transport, mode: g.mode, lookup: mid, failed: !g.ok, errors: [...g.errors], phases: fitPhases(near.phases, mid) });
  }
  for (const list of out.values()) list.sort((a, b) => transportOrder(a.transport) - transportOrder(b.transport) || MODE_ORDER[a.mode] - MODE_ORDER[b.mode]);
  return out;
}

/** A lookup's phases in ms. */
export interface Phases {
  wait: number;
  connect: number;
  tls: number;
  query: number;
}

/** The phases of one exchange whose lookup (from its scheduled offset) took `lookup` ms. */
function phasesOf(r: StoredRecord, lookup: number): Phases {
  // A replayed lookup's connection set-up is its own only when it paid for it; outside a replay every exchange did.
  const own = r.replay ? r.replay.paidSetup : true;
  return fitPhases({ wait: r.replay?.waitedForConnection ?? 0, connect: own ? r.timings.connect ?? 0 : 0, tls: own ? r.timings.tls ?? 0 : 0, query: 0 }, lookup);
}

/** `p`'s waiting and set-up phases within `lookup` (scaled down if they exceed it), the query the rest. */
export function fitPhases(p: Phases, lookup: number): Phases {
  const setup = Math.max(0, p.wait) + Math.max(0, p.connect) + Math.max(0, p.tls);
  const k = setup > lookup && setup > 0 ? Math.max(0, lookup) / setup : 1;
  const [wait, connect, tls] = [p.wait, p.connect, p.tls].map((x) => Math.max(0, x) * k) as [number, number, number];
  return { wait, connect, tls, query: Math.max(0, lookup - wait - connect - tls) };
}

const PHASES = ['wait', 'connect', 'tls', 'query'] as const;

/** Round steps for a time axis from 0 to `end` ms: about five of 1, 2 or 5 × a power of ten. */
export function axisTicks(end: number): number[] {
  const raw = Math.max(end, 1) / 5;
  const pow = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * pow).find((x) => x >= raw)!;
  const out: number[] = [];
  for (let v = 0; v <= end && out.length < 12; v += step) out.push(v);
  return out;
}

/**
 * The waterfall of one resolver: per host (in the order the page first needed them) a tick where the page first
 * needed it and one bar per transport × mode, from that moment for the host's median lookup (until A and AAAA both
 * answered); a lookup that never got an answer is drawn red, as long as it took to fail.
 */
export function renderWaterfall(records: readonly StoredRecord[], meta: MeasurementMeta, resolver: string, i18n: I18n): HTMLElement {
  const { ms } = i18n;
  const combo = (b: { transport: TransportId; mode: Mode }) => `${TRANSPORTS[b.transport]?.short ?? b.transport} ${i18n.t(`mode_${b.mode}`)}`;
  const box = el('div', undefined, 'waterfall');
  box.dataset.resolver = resolver;
  const byHost = waterfallBars(records, resolver);
  let end = 1;
  const combos = new Map<string, { transport: TransportId; mode: Mode }>();
  for (const h of meta.plan.hosts) {
    for (const b of byHost.get(h.name) ?? []) {
      end = Math.max(end, h.firstNeededMs + b.lookup);
      combos.set(combo(b), b);
    }
  }
  const legend = el('p', undefined, 'legend');
  const ordered = [...combos].sort((a, b) => transportOrder(a[1].transport) - transportOrder(b[1].transport) || MODE_ORDER[a[1].mode] - MODE_ORDER[b[1].mode]);
  for (const [label, c] of ordered) {
    const key = el('span', label, `key m-${c.mode}`);
    key.style.borderLeftColor = TRANSPORT_COLOURS[c.transport];
    legend.append(key, ' ');
  }
  const phaseName = (ph: (typeof PHASES)[number]) => i18n.t(`cost_wf_phase_${ph}`);
  const phaseKeys = el('p', undefined, 'legend');
  for (const ph of PHASES) {
    const key = el('span', phaseName(ph), 'key');
    key.classList.add('ph-key', `ph-${ph}`);
    phaseKeys.append(key, ' ');
  }
  legend.append(el('span', i18n.t('cost_wf_scale', ms(end)), 'detail'));
  box.append(legend, phaseKeys);
  // The time axis, above the rows' tracks.
  const axis = el('div', undefined, 'wf-axis');
  const ticks = el('div', undefined, 'wf-track');
  for (const v of axisTicks(end)) {
    const label = el('span', ms(v), 'wf-axis-label');
    label.style.left = `${(100 * v) / end}%`;
    ticks.append(label);
  }
  axis.append(el('div', undefined, 'wf-name'), ticks);
  // The drawing is one image for assistive technology; the table after it holds the same numbers as text.
  const chart = el('div', undefined, 'wf-chart');
  chart.setAttribute('role', 'img');
  chart.setAttribute('aria-label', i18n.plural('cost_wf_img', byHost.size));
  chart.append(axis);
  box.append(chart);
  const { table: asTable, body } = table([i18n.t('col_host'), i18n.t('cost_wf_needed_at'), i18n.t('col_transport'), ...PHASES.map(phaseName), i18n.t('cost_wf_lookup')]);
  const frag = document.createDocumentFragment();
  for (const h of meta.plan.hosts) {
    const bars = byHost.get(h.name);
    if (!bars) continue;
    const r = el('div', undefined, 'wf-row');
    r.dataset.host = h.name;
    const label = el('div', h.name, 'wf-name');
    label.title = i18n.t('cost_wf_host_title', h.name, ms(h.firstNeededMs));
    const track = el('div', undefined, 'wf-track');
    const tick = el('div', undefined, 'wf-tick');
    tick.style.left = `${(100 * h.firstNeededMs) / end}%`;
    track.append(tick);
    for (const b of bars) {
      const bar = el('div', undefined, `wf-bar m-${b.mode}${b.failed ? ' failed' : ''}`);
      bar.style.background = TRANSPORT_COLOURS[b.transport];
      bar.style.left = `${(100 * h.firstNeededMs) / end}%`;
      bar.style.width = `max(1px, ${(100 * b.lookup) / end}%)`;
      const phases = PHASES.filter((ph) => b.phases[ph] > 0).map((ph) => `${phaseName(ph)} ${ms(b.phases[ph])}`);
      bar.title = b.failed ? i18n.t('cost_wf_bar_failed', combo(b), ms(b.lookup), b.errors.join(', ')) : `${combo(b)}: ${ms(b.lookup)} (${phases.join(', ')})`;
      bar.dataset.transport = b.transport;
      bar.dataset.mode = b.mode;
      // Set-up phases as shaded parts of the bar, the query in the transport's full colour.
      for (const ph of PHASES) {
        if (ph === 'query' || b.phases[ph] <= 0 || b.lookup <= 0) continue;
        const part = el('span', undefined, 'ph');
        part.classList.add(`ph-${ph}`);
        part.style.width = `${(100 * b.phases[ph]) / b.lookup}%`;
        bar.append(part);
      }
      track.append(bar);
      const cells = [h.name, ms(h.firstNeededMs), combo(b), ...PHASES.map((ph) => ms(b.phases[ph])), b.failed ? i18n.t('cost_wf_failed_cell', ms(b.lookup)) : ms(b.lookup)];
      row(body, cells, { host: h.name, transport: b.transport, mode: b.mode });
    }
    r.append(label, track);
    frag.append(r);
  }
  chart.append(frag);
  const text = el('details', undefined, 'wf-table');
  text.append(el('summary', i18n.t('cost_wf_as_table')), asTable);
  box.append(text);
  return box;
}

/** Bytes and packets per page replay per transport, beside the papers' model (Hounsel et al. §4.5). */
export function renderBytes(results: Results, resolverNames: Map<string, string>, i18n: I18n): HTMLElement {
  const { bytes, t } = i18n;
  const box = el('section', undefined, 'bytes');
  box.append(el('h2', t('cost_bytes_title')));
  const { table: tb, body } = table(['col_resolver', 'col_transport', 'col_connection', 'col_sent', 'col_received', 'col_packets', 'col_queries', 'col_model_sent', 'col_model'].map((k) => t(k)));
  for (const c of results.cells) {
    const b = c.bytes;
    row(body, [
      resolverNames.get(c.resolver) ?? c.resolver,
      i18n.transport(c.transport),
      t(`mode_${c.mode}`),
      bytes(b.sent),
      bytes(b.received),
      b.packets ? `${i18n.num(b.packets.sent)} / ${i18n.num(b.packets.received)}` : '–',
      i18n.num(b.queries),
      b.model ? (b.modelAlternative ? t('cost_bytes_or', bytes(b.model.sent), bytes(b.modelAlternative.sent)) : bytes(b.model.sent)) : t('cost_no_model'),
      b.model?.formula ?? '',
    ], { transport: c.transport, mode: c.mode });
  }
  box.append(tb);
  box.append(el('p', t('cost_bytes_detail', bytes(DOT_STATIC_FORMULA), bytes(DOT_STATIC_TEXT)), 'detail'));
  return box;
}
