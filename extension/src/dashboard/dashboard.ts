// The personal dashboard: the person's whole history read once (history-get), filtered here by time window, site and network
// with the background's own rule (extension/src/history.ts matchesFilter), drawn as two uPlot charts, a table and a
// plain-language recommendation, all computed by extension/src/dashboard/analysis.ts. Exports CSV and JSON of the pages in view.
//
// Lifecycle: mount → history-get and settings-get (resolver names) → draw; every filter change redraws from the
// entries in hand (no new message). `document.body.dataset.state` is `loading`, `empty` (nothing stored), `ready`
// or `error`; `dataset.drawMs` the last draw's time from data in hand to both charts drawn in the document;
// `dataset.shown` how many pages are in view. Text from data (hosts, resolver names) only goes in as textContent
// (uPlot sets its labels the same way).
import { PUBLIC_RESOLVERS } from '../../../common/default-resolvers.js';
import { INDISTINGUISHABLE_MS } from '../../../common/cost-model.js';
import { combos, comboStats, defaultNetwork, fileStamp, filterEntries, lookupCdf, networkOptions, onLoadDeltas, recommend, sharedCdf, siteFromInput, toCsv, toJson, windowFilter, type Combo, type ComboStats, type NetworkOption, type View, type WindowId } from './analysis.js';
import type { HistoryEntry, HistoryFilter } from '../history.js';
import { TRANSPORTS, type TransportId } from '../../../common/transports.js';
import { $, download, el } from '../ui/dom.js';
import { send } from '../ui/messages.js';
import { drawLookupCdf, drawOnLoadCdf, type Chart } from './plots.js';
import { mountCacheSavings } from './cache-table.js';
import { fillWhatIfNetworks, renderWhatIfTable } from './what-if-table.js';
import { UNKNOWN_NETWORK } from '../history.js';
import { browserI18n } from '../locale.js';
import { compose, localizePage, reported } from '../ui/localize.js';

const i18n = browserI18n();
const { t } = i18n;

const DAY_MS = 86_400_000;
const percent = (x: number | null) => (x === null ? '–' : i18n.percent(x));
const rate = (x: number | null) => (x === null ? '–' : x === 0 ? i18n.percent(0) : t('unit_percent', i18n.fixed(100 * x, x < 0.1 ? 2 : 1)));

/** The filter the form describes, at `now`. */
function formFilter(now: number): HistoryFilter {
  const window = ($<HTMLSelectElement>('window').value as WindowId | 'custom');
  const day = (id: string) => {
    const v = $<HTMLInputElement>(id).value;
    return v ? new Date(`${v}T00:00`).getTime() : null;
  };
  const to = day('to');
  const f = windowFilter(window, now, { from: day('from'), to: to === null ? null : to + DAY_MS - 1 });
  const site = siteFromInput($<HTMLInputElement>('site').value);
  const network = $<HTMLSelectElement>('network').value;
  return { ...f, ...(site ? { site } : {}), ...(network ? { network } : {}) };
}

/** The network filter's options (latest first), `selected` chosen; the count of pages per network in each label. */
function fillNetworks(networks: readonly NetworkOption[], pages: number, selected: string): void {
  const select = $<HTMLSelectElement>('network');
  const all = el('option', i18n.plural('dash_all_networks', pages));
  all.value = '';
  const options = networks.map((n, i) => {
    const named = i18n.plural('dash_network', n.pages, n.id === UNKNOWN_NETWORK ? t('dash_network_unknown') : n.description);
    const o = el('option', i === 0 ? t('dash_network_latest', named) : named);
    o.value = n.id;
    return o;
  });
  select.replaceChildren(all, ...options);
  select.value = selected;
}

function renderTable(stats: readonly ComboStats[], resolverName: (id: string) => string): HTMLTableElement {
  const table = $<HTMLTableElement>('failures');
  table.replaceChildren();
  const head = table.createTHead().insertRow();
  const columns = ['col_resolver', 'col_transport', 'col_connection', 'dash_col_pages', 'dash_col_lookups', 'dash_col_failed', 'dash_col_failure_rate', 'dash_col_pages_failure', 'dash_col_not_load', 'dash_col_median'];
  for (const h of columns) head.append(el('th', t(h)));
  head.append(el('th', t('dash_col_within', i18n.ms(INDISTINGUISHABLE_MS))));
  const body = table.createTBody();
  for (const s of stats) {
    const r = body.insertRow();
    for (const v of [resolverName(s.resolver), TRANSPORTS[s.transport].short, t(`mode_${s.mode}`), i18n.num(s.pages), i18n.num(s.lookups), i18n.num(s.failures), rate(s.failureRate),
      i18n.num(s.pagesWithFailures), i18n.num(s.pagesFailing), i18n.signedMs(s.medianDelta), percent(s.indistinguishable)]) {
      r.insertCell().textContent = v;
    }
    Object.assign(r.dataset, { resolver: s.resolver, transport: s.transport, mode: s.mode });
    if ((s.failureRate ?? 0) > 0.01) r.className = 'bad';
  }
  return table;
}

/** How an export leaves the page: a Blob link, kept in the page (the test reads it back) and shown, then clicked. */
function offer(filename: string, type: string, text: string): void {
  const a = $<HTMLAnchorElement>('export-link');
  a.textContent = t('dash_save_again', filename);
  a.hidden = false;
  download(filename, type, text, a);
}

/** Fills the dashboard page. */
export async function mountDashboard(): Promise<void> {
  localizePage(i18n);
  const body = document.body;
  const status = $('status');
  const [reply, settings] = await Promise.all([send({ type: 'history-get' }), send({ type: 'settings-get' })]);
  if (!reply.ok) {
    body.dataset.state = 'error';
    status.replaceChildren(...compose(i18n, 'dash_history_unreadable', reply.code, reported(reply.message)));
    status.className = 'bad';
    return;
  }
  const all: HistoryEntry[] = reply.entries;
  const names = new Map<string, string>([['system', t('dash_system_resolver')], ...PUBLIC_RESOLVERS.map((r) => [r.id, r.name] as [string, string])]);
  const resolverOrder: string[] = ['system'];
  if (settings.ok) for (const r of settings.settings.resolvers) {
    names.set(r.id, r.name);
    resolverOrder.push(r.id);
  }
  const resolverName = (id: string) => names.get(id) ?? id;
  const label = (c: Combo) => `${resolverName(c.resolver)} · ${TRANSPORTS[c.transport].short}`;
  const unreadable = reply.unreadable > 0 ? ` ${i18n.plural('dash_unreadable', reply.unreadable)}` : '';

  if (all.length === 0) {
    body.dataset.state = 'empty';
    status.textContent = `${t('dash_nothing')}${unreadable}`;
    $('empty').hidden = false;
    return;
  }

  const networks = networkOptions(all);
  fillNetworks(networks, all.length, defaultNetwork(networks));
  void mountCacheSavings();
  fillWhatIfNetworks(i18n);
  let charts: Chart[] = [];
  let generation = 0;
  let shown: HistoryEntry[] = [];
  let filter: HistoryFilter = {};

  const draw = async (): Promise<void> => {
    const started = performance.now();
    const mine = ++generation;
    filter = formFilter(Date.now());
    const mode = $<HTMLSelectElement>('mode').value as View;
    shown = filterEntries(all, filter);
    for (const c of charts) c.plot.destroy();
    charts = [];
    const onloadBox = $('plot-onload');
    const lookupBox = $('plot-lookup');
    onloadBox.replaceChildren();
    lookupBox.replaceChildren();
    body.dataset.shown = String(shown.length);
    const first = shown[0];
    const last = shown[shown.length - 1];
    status.textContent = first && last
      ? `${t('dash_shown', shown.length, all.length, i18n.dateTime(first.at), i18n.dateTime(last.at))}${unreadable}`
      : `${t('dash_none_match', all.length)}${unreadable}`;
    $('content').hidden = false;

    const order = combos(shown, resolverOrder);
    const stats = comboStats(shown, order);
    const rec = recommend(stats, mode, shown.length, { resolver: resolverName, transport: (id: TransportId) => TRANSPORTS[id].short }, i18n);
    const recBox = $('recommendation');
    recBox.dataset.kind = rec.kind;
    const sentences = shown.length === 0 ? [t('dash_widen')] : rec.sentences;
    $('rec-text').replaceChildren(...sentences.map((s) => el('p', s)));
    const net = $<HTMLSelectElement>('network');
    $('rec-scope').textContent = filter.network
      ? t('dash_scope_one', net.selectedOptions[0]?.textContent ?? filter.network)
      : t(networks.length > 1 ? 'dash_scope_all' : 'dash_scope_same');
    renderTable(stats, resolverName);
    renderWhatIfTable(shown, mode, order, resolverName, i18n);

    const width = Math.max(320, Math.min(1000, onloadBox.clientWidth || 960));
    const deltas = onLoadDeltas(shown, mode, order);
    const cdf = sharedCdf(deltas);
    const lookups = lookupCdf(shown, mode);
    const resolvers = [...new Set(order.map((c) => c.resolver))];
    const drawn: Array<Promise<Chart>> = [];
    // The baseline (plain UDP of the first resolver, or the system's) is 0 on every page: say so rather than leave a bare line.
    const labels = order.map((c, i) => {
      const d = deltas[i]!;
      return `${label(c)} (${i18n.plural(d.length > 0 && d.every((x) => x === 0) ? 'dash_series_baseline' : 'dash_series', d.length)})`;
    });
    if (order.length > 0) drawn.push(drawOnLoadCdf(onloadBox, width, order, (id) => resolvers.indexOf(id), labels, cdf.x, cdf.y, i18n));
    if (lookups.series.length > 0) drawn.push(drawLookupCdf(lookupBox, width, lookups.x, lookups.series, i18n));
    const done = await Promise.all(drawn);
    if (mine !== generation) {
      for (const c of done) c.plot.destroy();
      return;
    }
    charts = done;
    onloadBox.dataset.series = String(order.length);
    onloadBox.dataset.points = String(cdf.x.length);
    lookupBox.dataset.series = String(lookups.series.length);
    body.dataset.mode = mode;
    body.dataset.state = 'ready';
    body.dataset.drawMs = (performance.now() - started).toFixed(1);
  };

  const redraw = () => void draw();
  $<HTMLSelectElement>('window').addEventListener('change', () => {
    $('custom-range').hidden = $<HTMLSelectElement>('window').value !== 'custom';
    redraw();
  });
  for (const id of ['from', 'to', 'mode', 'network', 'whatif-network']) $(id).addEventListener('change', redraw);
  let typing: ReturnType<typeof setTimeout> | undefined;
  $('site').addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(redraw, 250);
  });
  $('filters').addEventListener('submit', (e) => {
    e.preventDefault();
    redraw();
  });
  $('export-csv').addEventListener('click', () => offer(`dnscost-history-${fileStamp(Date.now())}.csv`, 'text/csv', toCsv(shown)));
  $('export-json').addEventListener('click', () => offer(`dnscost-history-${fileStamp(Date.now())}.json`, 'application/json', toJson(shown, filter, Date.now())));
  let resizing: ReturnType<typeof setTimeout> | undefined;
  window.addEventListener('resize', () => {
    clearTimeout(resizing);
    resizing = setTimeout(() => {
      const w = Math.max(320, Math.min(1000, $('plot-onload').clientWidth));
      for (const c of charts) c.plot.setSize({ width: w, height: c.plot.height });
    }, 200);
  });
  await draw();
}
