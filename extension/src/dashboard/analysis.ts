// The personal dashboard's arithmetic over the person's history (extension/src/history.ts): filters, the CDFs it plots
// (estimated onLoad change per resolver × transport — Hounsel et al., Fig. 2, for one person; lookup times per
// transport, pooled from the entries' bucketed histograms — Fig. 1), failure rates (Table 2), a plain-language
// recommendation, and the CSV and JSON exports. Pure: no DOM, no node: imports; the page (extension/src/dashboard/)
// only draws what these return.
import { INDISTINGUISHABLE_MS } from '../../../common/cost-model.js';
import { isHistoryEntry, LOOKUP_BUCKETS_MS, matchesFilter, UNKNOWN_NETWORK, type HistoryCell, type HistoryEntry, type HistoryFilter } from '../history.js';
import { isEncrypted, TRANSPORT_IDS, type TransportId } from '../../../common/transports.js';
import type { I18n } from '../i18n.js';
import type { WhatIfNetwork } from '../../../common/what-if-network.js';

/** The time windows the page offers, in ms (`all`: no lower bound). */
export const WINDOWS_MS = { '24h': 24 * 3600_000, '7d': 7 * 24 * 3600_000, '30d': 30 * 24 * 3600_000, all: null } as const;
export type WindowId = keyof typeof WINDOWS_MS;

/** A recommendation needs at least this many pages with an estimate for an option. */
export const MIN_PAGES = 5;
/** An option that fails more than this share of its lookups is not recommended. */
export const MAX_FAILURE_RATE = 0.01;
/** An option is "cheap" when its median change is within ±INDISTINGUISHABLE_MS and at least this share of pages is. */
export const CHEAP_SHARE = 0.8;
/** CDFs are evaluated on at most this many x values (the union of the values, else quantiles of it). */
export const CDF_POINTS = 1500;

/** The filter of a window id and optional custom bounds, relative to `now`. */
export function windowFilter(window: WindowId | 'custom', now: number, custom: { from?: number | null; to?: number | null } = {}): HistoryFilter {
  if (window === 'custom') {
    const f: HistoryFilter = {};
    if (custom.from !== null && custom.from !== undefined && Number.isFinite(custom.from)) f.since = custom.from;
    if (custom.to !== null && custom.to !== undefined && Number.isFinite(custom.to)) f.until = custom.to;
    return f;
  }
  const span = WINDOWS_MS[window];
  return span === null ? {} : { since: now - span };
}

/**
 * The site a person typed, as history-get's `site` (a host: entries of it and its subdomains): trimmed, lower-case,
 * without a scheme, path, port or trailing dot; '' for no filter.
 */
export function siteFromInput(text: string): string {
  let s = text.trim().toLowerCase();
  s = s.replace(/^[a-z][a-z0-9+.-]*:\/\//, '');
  s = s.replace(/[/?#].*$/, '').replace(/:\d*$/, '').replace(/\.+$/, '').replace(/^\*?\./, '');
  return s;
}

/** The entries that match `filter` (the same rule as the background's history-get), in their order. */
export function filterEntries(entries: readonly HistoryEntry[], filter: HistoryFilter): HistoryEntry[] {
  return entries.filter((e) => matchesFilter(e, filter));
}

/** A network the person's pages were measured on, as the network filter offers it. */
export interface NetworkOption {
  /** The host's fingerprint, or UNKNOWN_NETWORK for pages measured where it could not tell. */
  id: string;
  description: string;
  pages: number;
  /** When the latest of its pages was measured. */
  lastAt: number;
}

/** The networks of `entries`, the one measured on most recently first. */
export function networkOptions(entries: readonly HistoryEntry[]): NetworkOption[] {
  const byId = new Map<string, NetworkOption>();
  for (const e of entries) {
    const id = e.network?.id ?? UNKNOWN_NETWORK;
    const o = byId.get(id) ?? { id, description: e.network?.description ?? 'network not recorded', pages: 0, lastAt: -Infinity }; // i18n-exempt: the dashboard names UNKNOWN_NETWORK in its own words
    o.pages++;
    if (e.at >= o.lastAt) {
      o.lastAt = e.at;
      if (e.network) o.description = e.network.description;
    }
    byId.set(id, o);
  }
  return [...byId.values()].sort((a, b) => b.lastAt - a.lastAt || a.id.localeCompare(b.id));
}

/**
 * The network filter a dashboard opens with (given networkOptions of its pages): the network of the latest measurement — the one the person is on, as
 * far as dnscost knows — when the pages span more than one; '' (all) otherwise.
 */
export function defaultNetwork(options: readonly NetworkOption[]): string {
  return options.length > 1 ? options[0]!.id : '';
}

/** A resolver × transport pair, as a key: `resolver/transport`. */
export function comboKey(resolver: string, transport: TransportId): string {
  return `${resolver}/${transport}`;
}

/** One resolver × transport. */
export interface Combo {
  resolver: string;
  transport: TransportId;
}

/** The resolver × transport pairs of `entries` (any mode): resolvers as `resolverOrder` lists them (others after, by name), then TRANSPORT_IDS order. */
export function combos(entries: readonly HistoryEntry[], resolverOrder: readonly string[] = []): Combo[] {
  const seen = new Map<string, Combo>();
  for (const e of entries) for (const c of e.cells) seen.set(comboKey(c.resolver, c.transport), { resolver: c.resolver, transport: c.transport });
  const rank = (r: string) => {
    const i = resolverOrder.indexOf(r);
    return i === -1 ? resolverOrder.length : i;
  };
  return [...seen.values()].sort((a, b) => rank(a.resolver) - rank(b.resolver) || a.resolver.localeCompare(b.resolver) || TRANSPORT_IDS.indexOf(a.transport) - TRANSPORT_IDS.indexOf(b.transport));
}

/**
 * Which cells a view shows: `expected`, each page's cost in the connection state its visit would have had
 * (common/connection-state.ts; the cold one for entries from before it was kept), or every page `cold` or `warm`.
 */
export const VIEWS = ['expected', 'cold', 'warm'] as const;
export type View = (typeof VIEWS)[number];

/** True when cell `c` belongs to `view`. */
export function inView(c: Pick<HistoryCell, 'mode' | 'expected'>, view: View): boolean {
  return view === 'expected' ? (c.expected ?? c.mode === 'cold') : c.mode === view;
}

/**
 * Per combo in `view`, over the pages that have both: how many, and the median estimated onLoad change on the person's
 * network and on `network` (the history cells' what-if, common/what-if-network.ts).
 */
export function whatIfMedians(entries: readonly HistoryEntry[], view: View, order: readonly Combo[], network: WhatIfNetwork): Array<{ pages: number; here: number | null; there: number | null }> {
  const index = new Map(order.map((c, i) => [comboKey(c.resolver, c.transport), i]));
  const pairs = order.map(() => ({ here: [] as number[], there: [] as number[] }));
  for (const e of entries) {
    for (const c of e.cells) {
      const there = c.whatIf?.[network];
      const i = index.get(comboKey(c.resolver, c.transport));
      if (!inView(c, view) || c.onLoad === null || there === undefined || there === null || i === undefined) continue;
      pairs[i]!.here.push(c.onLoad.delta);
      pairs[i]!.there.push(there);
    }
  }
  const median = (xs: number[]) => quantile(Float64Array.from(xs).sort(), 50);
  return pairs.map((p) => ({ pages: p.here.length, here: median(p.here), there: median(p.there) }));
}

/** Per combo, the sorted estimated onLoad changes (ms) of the pages that have one, in `view`. */
export function onLoadDeltas(entries: readonly HistoryEntry[], view: View, order: readonly Combo[]): number[][] {
  const index = new Map(order.map((c, i) => [comboKey(c.resolver, c.transport), i]));
  const out = order.map(() => [] as number[]);
  for (const e of entries) {
    for (const c of e.cells) {
      if (!inView(c, view) || c.onLoad === null) continue;
      const i = index.get(comboKey(c.resolver, c.transport));
      if (i !== undefined) out[i]!.push(c.onLoad.delta);
    }
  }
  // A typed array sorts numbers without a comparator call per step.
  return out.map((xs) => Array.from(Float64Array.from(xs).sort()));
}

/**
 * Empirical CDFs of several samples on one shared x axis (what a chart with one x array needs): x is the union of
 * the values (or, beyond `maxPoints`, that many quantiles of it, ends included), y[i][j] the share of sample i at or
 * below x[j] — null for an empty sample. Samples must be sorted ascending.
 */
export function sharedCdf(samples: readonly (readonly number[])[], maxPoints = CDF_POINTS): { x: number[]; y: (number | null)[][] } {
  const all = Float64Array.from(samples.flat()).sort();
  let x: number[] = [];
  for (const v of all) if (x.length === 0 || x[x.length - 1] !== v) x.push(v);
  if (x.length > maxPoints && maxPoints >= 2) {
    const grid: number[] = [];
    for (let k = 0; k < maxPoints; k++) {
      const v = all[Math.round((k * (all.length - 1)) / (maxPoints - 1))]!;
      if (grid.length === 0 || grid[grid.length - 1] !== v) grid.push(v);
    }
    x = grid;
  }
  const y = samples.map((s) => {
    if (s.length === 0) return x.map(() => null);
    const row: number[] = new Array<number>(x.length);
    let i = 0;
    for (let j = 0; j < x.length; j++) {
      while (i < s.length && s[i]! <= x[j]!) i++;
      row[j] = i / s.length;
    }
    return row;
  });
  return { x, y };
}

/**
 * Lookup-time CDFs per transport in `mode`, pooled over resolvers and pages from the entries' histograms: x is the
 * buckets' upper bounds (LOOKUP_BUCKETS_MS), y the share of hosts' lookups at or below it (slower ones never reach
 * 1 within the axis); `n` the lookups counted per transport. Transports without any lookup are left out.
 */
export function lookupCdf(entries: readonly HistoryEntry[], view: View): { x: number[]; series: Array<{ transport: TransportId; n: number; y: number[] }> } {
  const sums = new Map<TransportId, number[]>();
  for (const e of entries) {
    for (const c of e.cells) {
      if (!inView(c, view)) continue;
      let s = sums.get(c.transport);
      if (!s) sums.set(c.transport, (s = new Array<number>(LOOKUP_BUCKETS_MS.length + 1).fill(0)));
      c.histogram.forEach((n, i) => (s![i]! += n));
    }
  }
  const series: Array<{ transport: TransportId; n: number; y: number[] }> = [];
  for (const transport of TRANSPORT_IDS) {
    const s = sums.get(transport);
    const n = s ? s.reduce((a, b) => a + b, 0) : 0;
    if (!s || n === 0) continue;
    let run = 0;
    series.push({ transport, n, y: LOOKUP_BUCKETS_MS.map((_, i) => (run += s[i]!) / n) });
  }
  return { x: [...LOOKUP_BUCKETS_MS], series };
}

/** Per resolver × transport × mode: lookups and failures summed over pages, and the onLoad change's summary. */
export interface ComboStats extends Combo {
  mode: View;
  /** Pages with this cell, and of them those with an onLoad estimate. */
  pages: number;
  estimated: number;
  lookups: number;
  failures: number;
  /** failures / lookups; null without lookups. */
  failureRate: number | null;
  /** Pages on which at least one lookup failed, and whose verdict was `fails` (a critical host never resolved). */
  pagesWithFailures: number;
  pagesFailing: number;
  /** Median and 95th percentile of the estimated onLoad change (ms), over the pages with an estimate. */
  medianDelta: number | null;
  p95Delta: number | null;
  /** Shares of the pages with an estimate: within ±INDISTINGUISHABLE_MS, slower beyond it, faster beyond it. */
  indistinguishable: number | null;
  slower: number | null;
  faster: number | null;
}

const quantile = (sorted: ArrayLike<number>, p: number): number | null => {
  if (sorted.length === 0) return null;
  const r = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(r);
  const hi = Math.ceil(r);
  // Rounded to 0.1 ms, as the entries' own figures are.
  return Number((sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (r - lo)).toFixed(1));
};

/** The statistics of every resolver × transport × view of `entries`, in `order` then expected, cold, warm. */
export function comboStats(entries: readonly HistoryEntry[], order: readonly Combo[]): ComboStats[] {
  // One pass over the cells (tens of thousands for a long history), accumulating per key.
  interface Acc { pages: number; deltas: number[]; lookups: number; failures: number; withFailures: number; failing: number }
  const accs = new Map<string, Acc>();
  for (const e of entries) {
    for (const c of e.cells) {
      for (const view of VIEWS) {
        if (!inView(c, view)) continue;
        const k = `${c.resolver}/${c.transport}/${view}`;
        let a = accs.get(k);
        if (!a) accs.set(k, (a = { pages: 0, deltas: [], lookups: 0, failures: 0, withFailures: 0, failing: 0 }));
        a.pages++;
        if (c.onLoad) a.deltas.push(c.onLoad.delta);
        a.lookups += c.lookups;
        a.failures += c.failures;
        if (c.failures > 0) a.withFailures++;
        if (c.verdict === 'fails') a.failing++;
      }
    }
  }
  const out: ComboStats[] = [];
  for (const combo of order) {
    for (const mode of VIEWS) {
      const a = accs.get(`${comboKey(combo.resolver, combo.transport)}/${mode}`);
      if (!a) continue;
      const deltas = Float64Array.from(a.deltas).sort();
      let within = 0;
      let slower = 0;
      let faster = 0;
      for (const d of deltas) {
        if (d >= INDISTINGUISHABLE_MS) slower++;
        else if (d <= -INDISTINGUISHABLE_MS) faster++;
        else within++;
      }
      const n = deltas.length;
      out.push({
        ...combo, mode, pages: a.pages, estimated: n, lookups: a.lookups, failures: a.failures,
        failureRate: a.lookups ? a.failures / a.lookups : null,
        pagesWithFailures: a.withFailures, pagesFailing: a.failing,
        medianDelta: quantile(deltas, 50), p95Delta: quantile(deltas, 95),
        indistinguishable: n ? within / n : null, slower: n ? slower / n : null, faster: n ? faster / n : null,
      });
    }
  }
  return out;
}

/** What the recommendation concluded. */
export type RecommendationKind = 'nothing' | 'too-few' | 'no-encrypted' | 'unreliable' | 'cheap' | 'costly';

/** A recommendation: its kind, the option it is about and its sentences. */
export interface Recommendation {
  kind: RecommendationKind;
  /** The option the sentences are about (the best encrypted one), when there is one. */
  best: ComboStats | null;
  /** Plain-language sentences, in order. */
  sentences: string[];
}

/** How resolver ids and transport ids are named in the recommendation's words. */
export interface Names {
  resolver(id: string): string;
  transport(id: TransportId): string;
}

/** A signed ms figure in words: "+12 ms", "−4.5 ms". */
export function signedMs(x: number): string {
  const a = Math.abs(x);
  const t = a < 10 ? a.toFixed(1) : String(Math.round(a));
  return `${x > 0 ? '+' : x < 0 ? '−' : ''}${t} ms`;
}

/**
 * The plain-language recommendation for `mode` over `stats` (comboStats of the pages in view), in the words of
 * `i18n`: among the encrypted options (DoT, DoH) measured on at least MIN_PAGES pages, the most reliable then cheapest
 * one. The pages are those measured on the network the person was on; `pages` is how many there are.
 */
export function recommend(stats: readonly ComboStats[], mode: View, pages: number, names: Names, i18n: I18n): Recommendation {
  const { t } = i18n;
  const pct = (x: number) => i18n.percent(x);
  const rateText = (x: number) => (x === 0 ? pct(0) : x < 0.001 ? `< ${i18n.percent(0.001, 1)}` : t('unit_percent', i18n.fixed(100 * x, x < 0.1 ? 1 : 0)));
  const option = (s: ComboStats) => t('rec_option', names.transport(s.transport), names.resolver(s.resolver));
  if (pages === 0) return { kind: 'nothing', best: null, sentences: [t('rec_nothing')] };
  const encrypted = stats.filter((s) => s.mode === mode && isEncrypted(s.transport));
  if (encrypted.length === 0) {
    const sentence = mode === 'expected' ? t('rec_no_encrypted', i18n.plural('rec_pages', pages)) : t('rec_no_encrypted_mode', t(`mode_${mode}`), i18n.plural('rec_pages', pages));
    return { kind: 'no-encrypted', best: null, sentences: [sentence] };
  }
  const enough = encrypted.filter((s) => s.estimated >= MIN_PAGES && s.medianDelta !== null);
  if (enough.length === 0) {
    const most = Math.max(...encrypted.map((s) => s.estimated));
    return { kind: 'too-few', best: null, sentences: [t('rec_too_few', MIN_PAGES, most)] };
  }
  const rate = (s: ComboStats) => s.failureRate ?? 0;
  const byCost = (a: ComboStats, b: ComboStats) => a.medianDelta! - b.medianDelta! || (a.p95Delta ?? 0) - (b.p95Delta ?? 0) || rate(a) - rate(b);
  const reliable = enough.filter((s) => rate(s) <= MAX_FAILURE_RATE).sort(byCost);
  const scope = i18n.plural('rec_scope', pages, mode === 'expected' ? t('rec_connections_expected') : t(`rec_connections_${mode}`));
  if (reliable.length === 0) {
    const best = [...enough].sort((a, b) => rate(a) - rate(b) || byCost(a, b))[0]!;
    return { kind: 'unreliable', best, sentences: [t('rec_unreliable', scope, rateText(MAX_FAILURE_RATE), option(best), rateText(rate(best))), t('rec_blocked')] };
  }
  const best = reliable[0]!;
  const m = best.medianDelta!;
  const sentences = [t(m >= 0 ? 'rec_first_add' : 'rec_first_take', scope, option(best), i18n.ms(Math.abs(m)), i18n.ms(INDISTINGUISHABLE_MS), pct(best.indistinguishable!), pct(best.slower!), rateText(rate(best)))];
  const cheap = Math.abs(m) < INDISTINGUISHABLE_MS && best.indistinguishable! >= CHEAP_SHARE;
  sentences.push(t(cheap ? 'rec_cheap' : 'rec_costly', option(best)));
  const next = reliable[1];
  if (next) sentences.push(t('rec_next', option(next), i18n.signedMs(next.medianDelta!)));
  const dropped = enough.filter((s) => rate(s) > MAX_FAILURE_RATE);
  if (dropped.length > 0) sentences.push(t('rec_dropped', rateText(MAX_FAILURE_RATE), dropped.map((s) => `${option(s)} (${rateText(rate(s))})`).join(', ')));
  return { kind: cheap ? 'cheap' : 'costly', best, sentences };
}

/** The CSV export's columns: the entry's fields, then the cell's (LOOKUP_BUCKETS_MS as `lookups_le_<ms>`, then `lookups_gt_<max>`). */
export const CSV_COLUMNS = [
  'id', 'at', 'at_iso', 'host', 'trigger', 'onload_ms', 'page_hosts', 'measured_hosts', 'network_id', 'network',
  'resolver', 'transport', 'mode', 'hosts', 'failures', 'lookups', 'p5_ms', 'median_ms', 'p95_ms',
  'onload_delta_ms', 'onload_lower_ms', 'onload_upper_ms', 'verdict', 'bytes_per_lookup', 'packets_per_lookup',
  ...LOOKUP_BUCKETS_MS.map((b) => `lookups_le_${b}`), `lookups_gt_${LOOKUP_BUCKETS_MS[LOOKUP_BUCKETS_MS.length - 1]}`,
] as const;

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote or line break. Text that a spreadsheet would run as
 * a formula (starting with = + - @, tab or CR) gets a leading apostrophe (OWASP's CSV-injection advice); numbers
 * are written as numbers.
 */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  const s = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The CSV export: a header, then one row per entry × cell (an entry without cells: one row, cell fields empty). */
export function toCsv(entries: readonly HistoryEntry[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const e of entries) {
    const head = [e.id, e.at, new Date(e.at).toISOString(), e.host, e.trigger, e.onLoadMs, e.pageHosts, e.measuredHosts, e.network?.id ?? null, e.network?.description ?? null];
    const cells: Array<HistoryCell | null> = e.cells.length ? e.cells : [null];
    for (const c of cells) {
      const tail = c
        ? [c.resolver, c.transport, c.mode, c.hosts, c.failures, c.lookups, c.p5Ms, c.medianMs, c.p95Ms, c.onLoad?.delta ?? null, c.onLoad?.lower ?? null, c.onLoad?.upper ?? null, c.verdict, c.bytesPerLookup, c.packetsPerLookup, ...c.histogram]
        : new Array<null>(CSV_COLUMNS.length - head.length).fill(null);
      lines.push([...head, ...tail].map(csvField).join(','));
    }
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** The JSON export's format name and version. */
export const EXPORT_FORMAT = 'dnscost-history';
export const EXPORT_VERSION = 1;

/** The JSON export: the entries as stored, with when and under which filter they were exported. */
export function toJson(entries: readonly HistoryEntry[], filter: HistoryFilter, exportedAt: number): string {
  return `${JSON.stringify({ format: EXPORT_FORMAT, version: EXPORT_VERSION, exportedAt: new Date(exportedAt).toISOString(), filter, entries })}\n`;
}

/** Reads a JSON export back: its entries, each checked with isHistoryEntry; throws naming the first problem. */
export function parseJsonExport(text: string): HistoryEntry[] {
  const x = JSON.parse(text) as { format?: unknown; version?: unknown; entries?: unknown };
  if (x?.format !== EXPORT_FORMAT || x.version !== EXPORT_VERSION) throw new Error(`not a ${EXPORT_FORMAT} v${EXPORT_VERSION} export`);
  if (!Array.isArray(x.entries)) throw new Error('entries: not an array'); // i18n-exempt: the export's round trip (tests), never shown
  x.entries.forEach((e, i) => {
    if (!isHistoryEntry(e)) throw new Error(`entries[${i}]: not a history entry`); // i18n-exempt: as above
  });
  return x.entries as HistoryEntry[];
}

/** A file-name-safe stamp of `at`: 2026-11-21T10-00-00Z. */
export function fileStamp(at: number): string {
  return new Date(at).toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
}
