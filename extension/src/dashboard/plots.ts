// The dashboard's two charts, drawn by uPlot (bundled, with its CSS, by webpack): CDFs of the estimated onLoad change
// per resolver × transport, and CDFs of lookup times per transport from the entries' bucketed histograms. Labels are
// passed to uPlot as strings, which it sets as textContent. Each chart resolves once uPlot has drawn it (its `ready`
// hook, after the first commit), so the page can time data-in-hand to plots-in-the-document.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { INDISTINGUISHABLE_MS } from '../../../common/cost-model.js';
import type { Combo } from './analysis.js';
import { TRANSPORTS, type TransportId } from '../../../common/transports.js';
import { TRANSPORT_COLOURS } from '../ui/transports.js';
import type { I18n } from '../i18n.js';

/** Resolvers are told apart by dash pattern: the first solid, then dashed, dotted, dash-dot… */
const DASHES: number[][] = [[], [8, 4], [2, 3], [10, 3, 2, 3], [4, 4]];

/** The page's colours (ui/page.css, light or dark by prefers-color-scheme), read when a chart is drawn. */
function ink(): { fg: string; grid: string; shade: string } {
  const css = getComputedStyle(document.documentElement);
  const read = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
  return { fg: read('--fg', '#222'), grid: read('--grid', 'rgba(0, 0, 0, 0.07)'), shade: read('--shade', 'rgba(0, 0, 0, 0.07)') };
}

/** An axis in the page's colours: labels and ticks in its text colour, the grid faint. */
function axis(a: uPlot.Axis): uPlot.Axis {
  const { fg, grid } = ink();
  return { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 }, ...a };
}

const percentAxis = (i18n: I18n): uPlot.Axis => ({ label: i18n.t('plot_share'), values: (_u, splits) => splits.map((v) => i18n.percent(v)), size: 56 });

/** A chart, drawn: its uPlot instance (for destroy) and its series count (without x). */
export interface Chart {
  plot: uPlot;
  series: number;
}

function draw(opts: uPlot.Options, data: uPlot.AlignedData, into: HTMLElement): Promise<Chart> {
  return new Promise((resolve) => {
    const withReady: uPlot.Options = { ...opts, hooks: { ...opts.hooks, ready: [(u) => resolve({ plot: u, series: u.series.length - 1 })] } };
    // eslint-disable-next-line no-new
    new uPlot(withReady, data, into);
  });
}

/** Shades x within ±INDISTINGUISHABLE_MS, under the lines. */
function shadeIndistinguishable(u: uPlot): void {
  const { ctx, bbox } = u;
  const x0 = Math.max(bbox.left, u.valToPos(-INDISTINGUISHABLE_MS, 'x', true));
  const x1 = Math.min(bbox.left + bbox.width, u.valToPos(INDISTINGUISHABLE_MS, 'x', true));
  if (!(x1 > x0)) return;
  ctx.save();
  ctx.fillStyle = ink().shade;
  ctx.fillRect(x0, bbox.top, x1 - x0, bbox.height);
  ctx.restore();
}

/**
 * The CDF of the estimated onLoad change: one stepped line per resolver × transport (`combos`, legend `labels`), on
 * the shared x of `x`/`y` (extension/src/dashboard/analysis.ts sharedCdf).
 */
export function drawOnLoadCdf(into: HTMLElement, width: number, combos: readonly Combo[], resolverIndex: (id: string) => number, labels: readonly string[],
  x: number[], y: (number | null)[][], i18n: I18n): Promise<Chart> {
  const stepped = uPlot.paths.stepped!({ align: 1 });
  const series: uPlot.Series[] = [
    { label: i18n.t('plot_onload_change'), value: (_u, v) => (v === null || v === undefined ? '–' : i18n.signedMs(v)) },
    ...combos.map((c, i): uPlot.Series => ({
      label: labels[i]!,
      stroke: TRANSPORT_COLOURS[c.transport],
      dash: DASHES[resolverIndex(c.resolver) % DASHES.length]!,
      width: 1.5,
      paths: stepped,
      points: { show: false },
      spanGaps: true,
      value: (_u, v) => (v === null || v === undefined ? '–' : i18n.percent(v)),
    })),
  ];
  return draw({
    width, height: 340,
    scales: { x: { time: false }, y: { range: [0, 1] } },
    axes: [axis({ label: i18n.t('plot_onload_axis') }), axis(percentAxis(i18n))],
    series,
    legend: { live: true },
    hooks: { drawClear: [shadeIndistinguishable] },
  }, [x, ...y] as uPlot.AlignedData, into);
}

/** The lookup-time CDF: one line per transport through its buckets' upper bounds (log x axis). */
export function drawLookupCdf(into: HTMLElement, width: number, x: number[], series: Array<{ transport: TransportId; n: number; y: number[] }>, i18n: I18n): Promise<Chart> {
  return draw({
    width, height: 300,
    scales: { x: { time: false, distr: 3, log: 10 }, y: { range: [0, 1] } },
    axes: [axis({ label: i18n.t('plot_lookup_axis') }), axis(percentAxis(i18n))],
    series: [
      { label: i18n.t('plot_at_or_below'), value: (_u, v) => (v === null || v === undefined ? '–' : i18n.ms(v)) },
      ...series.map((s): uPlot.Series => ({
        label: `${TRANSPORTS[s.transport].short} (${i18n.plural('popup_lookups', s.n)})`,
        stroke: TRANSPORT_COLOURS[s.transport],
        width: 1.5,
        points: { show: true, size: 5 },
        value: (_u, v) => (v === null || v === undefined ? '–' : i18n.percent(v)),
      })),
    ],
    legend: { live: true },
  }, [x, ...series.map((s) => s.y)] as uPlot.AlignedData, into);
}
