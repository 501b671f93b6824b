// The per-site cost panel's results, drawn with DOM APIs only: every hostname, resolver name and error code from a
// page or a host reply goes in as textContent, never as markup. Work is proportional to hosts × transports × modes of
// one resolver (the waterfall shows one resolver at a time), so a 200-host page draws in a few tens of ms.
import { INDISTINGUISHABLE_MS, type CellCost } from '../../../common/cost-model.js';
import { type StoredRecord } from '../../../common/stored-record.js';
import type { BrowserDoh } from '../../../common/schema.js';
import type { MeasurementMeta } from '../messages/measure.js';
import { chooseBaseline, measuredPageCost } from '../../../common/page-cost.js';
import { CURRENT_DNS_ID } from '../../../common/default-resolvers.js';
import { expectedModeOf, holderOf, HOLDERS, pings, type Holder } from '../../../common/connection-state.js';
import { DOT_STATIC_FORMULA, DOT_STATIC_TEXT } from '../../../common/bytes-model.js';
import { TRANSPORT_IDS, TRANSPORTS, type Mode, type TransportId } from '../../../common/transports.js';
import { el } from '../ui/dom.js';
import { TRANSPORT_COLOURS } from '../ui/transports.js';

const ms = (x: number | null): string => (x === null ? '–' : `${x >= 0 ? '' : '−'}${Math.abs(x) < 10 ? Math.abs(x).toFixed(1) : Math.round(Math.abs(x))} ms`);
const signed = (x: number | null): string => (x === null ? '–' : x > 0 ? `+${ms(x)}` : ms(x));
const bytes = (x: number | null): string => (x === null ? '–' : `${Math.round(x).toLocaleString('en')} B`);

/** The onLoad change of a cell in words: point, bounds, and the verdict. */
export function onLoadWords(c: CellCost): string {
  const o = c.onLoad;
  if (c.verdict === 'fails') return `would fail: ${c.unresolved.length} host${c.unresolved.length === 1 ? '' : 's'} never resolved`;
  if (o.delta === null) return 'unknown (no host could be compared)';
  const bounds = o.lower !== null && o.upper !== null ? ` (${signed(o.lower)} to ${signed(o.upper)})` : '';
  const verdict = c.verdict === 'indistinguishable' ? `indistinguishable (within ±${INDISTINGUISHABLE_MS} ms)` : c.verdict;
  return `${signed(o.delta)}${bounds}: ${verdict}`;
}

const MODE_ORDER: Record<Mode, number> = { cold: 0, warm: 1 };
const transportOrder = (t: TransportId) => TRANSPORT_IDS.indexOf(t);

/** Everything the results view computes once from a measurement. */
export interface Results {
  cells: CellCost[];
  baseline: { resolver: string; transport: TransportId } | undefined;
  /** One sentence: what every change is compared with (the person's current DNS, whenever it was measured). */
  comparedWith: string;
  /** Per transport, the connection state this visit would have had (common/connection-state.ts). */
  expected: Partial<Record<TransportId, Mode>>;
  /** One sentence: why those states (how long the browser had been idle, who would hold each connection). */
  expectedWhy: string;
}

/** Runs the cost model over a measurement's stored records. */
export function computeResults(meta: MeasurementMeta, records: readonly StoredRecord[]): Results {
  const cells = measuredPageCost(meta.page, records);
  const baseline = chooseBaseline(records);
  const resolverOrder = new Map(meta.plan.resolvers.map((r, i) => [r.id, i]));
  cells.sort((a, b) => (resolverOrder.get(a.resolver) ?? 99) - (resolverOrder.get(b.resolver) ?? 99) || transportOrder(a.transport) - transportOrder(b.transport) || MODE_ORDER[a.mode] - MODE_ORDER[b.mode]);
  const stub = meta.plan.currentDns?.stub?.software ?? null;
  const expected: Results['expected'] = {};
  for (const c of cells) expected[c.transport] = expectedModeOf(c.transport, meta.page, stub);
  return { cells, baseline, comparedWith: comparedWith(meta, baseline), expected, expectedWhy: expectedWhy(meta, Object.keys(expected) as TransportId[], stub) };
}

/** How long a holder keeps an idle connection, in words. */
function keptFor(holder: Holder): string {
  const idleMs = HOLDERS[holder].idleMs;
  if (idleMs !== null) return `${idleMs / 1000} s`;
  return pings(holder) ? 'open (it pings the server)' : 'until the server closes it';
}

/** Why each encrypted transport's expected state is what it is, in words. */
export function expectedWhy(meta: Pick<MeasurementMeta, 'page'>, transports: readonly TransportId[], stub: string | null): string {
  const idle = meta.page.idleBeforeMs;
  const parts = transports.flatMap((t) => {
    const holder = holderOf(t, meta.page.browser ?? null, stub);
    return holder ? [`${TRANSPORTS[t].short} ${expectedModeOf(t, meta.page, stub) === 'warm' ? 'open (warm)' : 'closed (cold)'}, as ${HOLDERS[holder].name} keeps it ${keptFor(holder)}`] : [];
  });
  if (parts.length === 0) return '';
  const when = idle === null || idle === undefined ? 'This was the first page since your browser started' : `Your browser had been idle ${idle < 1000 ? `${Math.round(idle)} ms` : `${Math.round(idle / 1000)} s`} before this page`;
  return `${when}, so the connection would have been: ${parts.join('; ')}. The expected rows are marked; cold and warm are both shown.`;
}

/** What the changes are compared with, in words: the person's current DNS (and whether it is already encrypted), or else which replay; and the browser's own DoH. */
export function comparedWith(meta: Pick<MeasurementMeta, 'plan'>, baseline: Results['baseline']): string {
  const doh = browserDohWords(meta.plan.browserDoh);
  const withDoh = (text: string) => (doh ? `${text} ${doh}` : text);
  if (!baseline) return withDoh('No plain-UDP replay to compare with: changes are known only where the browser exposed its own lookup.');
  const name = meta.plan.resolvers.find((r) => r.id === baseline.resolver)?.name ?? baseline.resolver;
  if (baseline.resolver === CURRENT_DNS_ID) {
    const current = meta.plan.currentDns;
    const enc = current?.encrypted;
    const already = enc
      ? ` It is already encrypted (${TRANSPORTS[enc.transport].name} through ${enc.by}${enc.opportunistic ? ', when the server offers it' : ''}): the changes below are against it, not a switch from plain DNS.`
      : '';
    return withDoh(`Compared with ${name}, replayed the same way.${already}`);
  }
  return withDoh(`Compared with ${name} over ${TRANSPORTS[baseline.transport]?.name ?? baseline.transport} (your current DNS was not measured), where the browser did not expose its own lookup.`);
}

/**
 * The browser's own DNS over HTTPS in words, when its lookups already go over it: the switch the DoH rows price has
 * already happened. '' when it is off, not active (Chromium's automatic mode on a server it does not upgrade) or not known.
 */
export function browserDohWords(doh: BrowserDoh | null | undefined): string {
  if (!doh?.active) return '';
  const server = doh.templates.length ? doh.templates.join(', ') : 'its default server';
  const file = doh.source.split(/[\\/]/).pop() ?? doh.source;
  const how = doh.upgradedFrom
    ? `upgraded automatically from your DNS server ${doh.upgradedFrom}`
    : { policy: 'set by policy', settings: `set in ${file}`, rollout: "turned on by Mozilla's rollout", default: 'by default' }[doh.setBy];
  const first = doh.fallback ? ' first' : '';
  const fallback = doh.fallback ? ', and over plain DNS when that fails' : '';
  return `Your browser already sends its lookups over DNS over HTTPS${first} (${server}, ${how})${fallback}: the DoH rows are roughly what you pay now, not a switch; the plain rows show what turning it off would change.`;
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
export function renderSummary(results: Results, resolverNames: Map<string, string>): HTMLElement {
  const box = el('section', undefined, 'summary');
  box.append(el('h2', 'What each transport would do to this page'));
  const { table: t, body } = table(['Resolver', 'Transport', 'Connection', 'Change of onLoad (point, bounds)', 'DNS time (sum)', 'Failures']);
  for (const c of results.cells) {
    const isBaseline = results.baseline?.resolver === c.resolver && results.baseline.transport === c.transport;
    const expected = results.expected[c.transport] === c.mode;
    const dns = c.dnsTime.candidate === null ? '–' : `${ms(c.dnsTime.candidate)}${c.dnsTime.delta !== null && !isBaseline ? ` (${signed(c.dnsTime.delta)})` : ''}`;
    row(body, [
      resolverNames.get(c.resolver) ?? c.resolver,
      TRANSPORTS[c.transport]?.name ?? c.transport,
      expected ? `${c.mode} (expected)` : c.mode,
      isBaseline ? 'baseline' : onLoadWords(c),
      dns,
      `${c.failures.failed} of ${c.failures.total}`,
    ], { resolver: c.resolver, transport: c.transport, mode: c.mode, verdict: isBaseline ? 'baseline' : c.verdict, expected: String(expected) });
  }
  box.append(t);
  if (results.expectedWhy) box.append(el('p', results.expectedWhy, 'expected-why'));
  const base = results.baseline;
  box.append(el('p', results.comparedWith, 'compared-with'));
  if (base) {
    box.append(el('p',
      'Lookups that gate the page (the document, and hosts needed before the first paint) move onLoad; parallel ones mostly do not. ' +
      `Differences under ${INDISTINGUISHABLE_MS} ms are indistinguishable. DNS time is the sum of every lookup, without parallelism.`, 'detail'));
  }
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
}

/** Groups one resolver's records into waterfall bars per host (failures keep their duration: time to fail). */
export function waterfallBars(records: readonly StoredRecord[], resolver: string): Map<string, WaterfallBar[]> {
  const groups = new Map<string, { host: string; transport: TransportId; mode: Mode; perRepeat: Map<number, number>; ok: boolean; errors: Set<string> }>();
  for (const r of records) {
    if (r.resolver !== resolver) continue;
    const key = `${r.host}|${r.transport}|${r.mode}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { host: r.host, transport: r.transport, mode: r.mode, perRepeat: new Map(), ok: false, errors: new Set() }));
    const l = r.replay ? r.replay.endedAt - r.replay.pageStartedAt - r.replay.scheduledAt : r.timings.total;
    g.perRepeat.set(r.repeat, Math.max(g.perRepeat.get(r.repeat) ?? 0, l));
    if (r.ok) g.ok = true;
    else if (r.error) g.errors.add(r.error);
  }
  const out = new Map<string, WaterfallBar[]>();
  for (const g of groups.values()) {
    const xs = [...g.perRepeat.values()].sort((a, b) => a - b);
    const mid = xs.length % 2 ? xs[(xs.length - 1) / 2]! : (xs[xs.length / 2 - 1]! + xs[xs.length / 2]!) / 2;
    const list = out.get(g.host) ?? [];
    out.set(g.host, list);
    list.push({ transport: g.transport, mode: g.mode, lookup: mid, failed: !g.ok, errors: [...g.errors] });
  }
  for (const list of out.values()) list.sort((a, b) => transportOrder(a.transport) - transportOrder(b.transport) || MODE_ORDER[a.mode] - MODE_ORDER[b.mode]);
  return out;
}

/**
 * The waterfall of one resolver: per host (in the order the page first needed them) a tick where the page first
 * needed it and one bar per transport × mode, from that moment for the host's median lookup (until A and AAAA both
 * answered); a lookup that never got an answer is drawn red, as long as it took to fail.
 */
export function renderWaterfall(records: readonly StoredRecord[], meta: MeasurementMeta, resolver: string): HTMLElement {
  const box = el('div', undefined, 'waterfall');
  box.dataset.resolver = resolver;
  const byHost = waterfallBars(records, resolver);
  let end = 1;
  const combos = new Map<string, { transport: TransportId; mode: Mode }>();
  for (const h of meta.plan.hosts) {
    for (const b of byHost.get(h.name) ?? []) {
      end = Math.max(end, h.at + b.lookup);
      combos.set(`${b.transport} ${b.mode}`, b);
    }
  }
  const legend = el('p', undefined, 'legend');
  for (const [label, c] of [...combos].sort((a, b) => transportOrder(a[1].transport) - transportOrder(b[1].transport) || MODE_ORDER[a[1].mode] - MODE_ORDER[b[1].mode])) {
    const key = el('span', label, `key m-${c.mode}`);
    key.style.borderLeftColor = TRANSPORT_COLOURS[c.transport];
    legend.append(key, ' ');
  }
  legend.append(el('span', `scale: 0 to ${ms(end)} after the page started`, 'detail'));
  box.append(legend);
  const frag = document.createDocumentFragment();
  for (const h of meta.plan.hosts) {
    const bars = byHost.get(h.name);
    if (!bars) continue;
    const r = el('div', undefined, 'wf-row');
    r.dataset.host = h.name;
    const label = el('div', h.name, 'wf-name');
    label.title = `${h.name}: first needed at ${ms(h.at)}`;
    const track = el('div', undefined, 'wf-track');
    const tick = el('div', undefined, 'wf-tick');
    tick.style.left = `${(100 * h.at) / end}%`;
    track.append(tick);
    for (const b of bars) {
      const bar = el('div', undefined, `wf-bar m-${b.mode}${b.failed ? ' failed' : ''}`);
      bar.style.background = TRANSPORT_COLOURS[b.transport];
      bar.style.left = `${(100 * h.at) / end}%`;
      bar.style.width = `max(1px, ${(100 * b.lookup) / end}%)`;
      bar.title = `${b.transport} ${b.mode}: ${ms(b.lookup)}${b.failed ? ` — failed (${b.errors.join(', ')})` : ''}`;
      bar.dataset.transport = b.transport;
      bar.dataset.mode = b.mode;
      track.append(bar);
    }
    r.append(label, track);
    frag.append(r);
  }
  box.append(frag);
  return box;
}

/** Bytes and packets per page replay per transport, beside the papers' model (Hounsel et al. §4.5). */
export function renderBytes(results: Results, resolverNames: Map<string, string>): HTMLElement {
  const box = el('section', undefined, 'bytes');
  box.append(el('h2', 'Bytes and packets per page'));
  const { table: t, body } = table(['Resolver', 'Transport', 'Connection', 'Sent', 'Received', 'Packets (sent/received)', 'Queries', 'Model: sent', 'Model']);
  for (const c of results.cells) {
    const b = c.bytes;
    row(body, [
      resolverNames.get(c.resolver) ?? c.resolver,
      TRANSPORTS[c.transport]?.name ?? c.transport,
      c.mode,
      bytes(b.sent),
      bytes(b.received),
      b.packets ? `${b.packets.sent} / ${b.packets.received}` : '–',
      String(b.queries),
      b.model ? bytes(b.model.sent) + (b.modelAlternative ? ` (or ${bytes(b.modelAlternative.sent)})` : '') : 'no model',
      b.model?.formula ?? '',
    ], { transport: c.transport, mode: c.mode });
  }
  box.append(t);
  box.append(el('p',
    `Counted at IP level, the median over this page's replays. The model counts only what a client sends, for ${'r'} queries on one connection; ` +
    `DoT uses the formula's static overhead of ${DOT_STATIC_FORMULA} B (the paper's text itemises ${DOT_STATIC_TEXT} B, shown in brackets).`, 'detail'));
  return box;
}
