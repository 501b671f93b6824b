// The public dashboard: asks /v1/vocabulary once for its lists (transports, resolvers, network types, modes: the
// collector's own tables, never a copy here), then fetches /v1/aggregates (the published days' noisy cells, with
// the ε and threshold they were published with, which the page states) and plots, per transport, one line per
// resolver. Plain script (no build, no inline code) so the page runs under a strict Content-Security-Policy; uPlot is
// the global from uplot.min.js, served by the collector.
'use strict';

// One line colour per resolver, in the vocabulary's order (cloudflare, google, quad9, system, custom), for a light
// page and a dark one (each at least 3:1 against its background).
const COLOURS = {
  light: ['#c25400', '#1a5fb4', '#9b2335', '#555555', '#1e7a70'],
  dark: ['#f38020', '#7fb0ff', '#ff7b8a', '#bbbbbb', '#4fd1c5'],
};
const dark = window.matchMedia('(prefers-color-scheme: dark)');
const form = document.getElementById('filters');
const plots = {};
// The answer of /v1/vocabulary, and its transport ids in the collector's order (the charts' x axis).
let vocabulary = null;
let transports = [];

function cellText(c) {
  const l = c.lookupMs ? `${c.lookupMs.p5.toFixed(1)} / ${c.lookupMs.p50.toFixed(1)} / ${c.lookupMs.p95.toFixed(1)}` : '–';
  return [c.epoch, c.resolver, c.transport, c.mode, c.network, c.site, c.pages, (100 * c.failureShare).toFixed(1), l,
    c.onloadMs ? c.onloadMs.p50.toFixed(1) : '–', c.bytesPerLookup == null ? '–' : Math.round(c.bytesPerLookup)];
}

// Weighted by (noisy) pages when several cells (days, networks, sites) fall on one resolver × transport point.
function series(cells, resolver, value) {
  return transports.map((t) => {
    const here = cells.filter((c) => c.resolver === resolver && c.transport === t);
    const weighted = here.map((c) => [value(c), c.pages]).filter(([v]) => v != null);
    const pages = weighted.reduce((s, [, n]) => s + n, 0);
    return pages ? weighted.reduce((s, [v, n]) => s + v * n, 0) / pages : null;
  });
}

// The page's text and rule colours (dashboard.css) for the axes, and the line colours of its scheme.
function themeColours() {
  const css = getComputedStyle(document.documentElement);
  return { fg: css.getPropertyValue('--fg').trim(), rule: css.getPropertyValue('--rule').trim(), lines: COLOURS[dark.matches ? 'dark' : 'light'] };
}

function plot(id, cells, value) {
  const resolvers = vocabulary.resolvers;
  const { fg, rule, lines } = themeColours();
  const axis = { stroke: fg, grid: { stroke: rule }, ticks: { stroke: rule } };
  const data = [transports.map((_, i) => i), ...resolvers.map((r) => series(cells, r, value))];
  const el = document.getElementById(id);
  plots[id]?.destroy();
  plots[id] = new uPlot({
    width: Math.min(1000, el.clientWidth || 900), height: 260,
    scales: { x: { time: false } },
    axes: [{ ...axis, values: (_, ticks) => ticks.map((i) => transports[i] ?? ''), splits: () => transports.map((_, i) => i) }, axis],
    series: [{ label: 'transport', value: (_, i) => transports[i] ?? '' },
      ...resolvers.map((r, i) => ({ label: r, stroke: lines[i % lines.length], width: 2, points: { size: 7 }, spanGaps: true }))],
  }, data, el);
}

async function refresh() {
  const network = form.elements.network.value;
  const mode = form.elements.mode.value;
  const error = document.getElementById('error');
  try {
    const res = await fetch(`v1/aggregates${network ? `?network=${encodeURIComponent(network)}` : ''}`);
    const body = await res.json();
    if (!body.ok) throw new Error(body.message);
    error.hidden = true;
    document.getElementById('epsilon').textContent = String(body.epsilon);
    document.getElementById('min-pages').textContent = String(body.minPages);
    document.getElementById('delay').textContent = String(body.delayHours);
    const days = body.epochs.map((e) => e.epoch);
    document.getElementById('total').textContent = days.length
      ? `Days shown: ${days[0]} to ${days[days.length - 1]} (${days.length}).`
      : 'No day has been published yet.';
    const cells = body.cells.filter((c) => c.mode === mode);
    plot('lookup', cells, (c) => c.lookupMs?.p50);
    plot('failures', cells, (c) => 100 * c.failureShare);
    plot('onload', cells, (c) => c.onloadMs?.p50);
    const tbody = document.querySelector('#cells tbody');
    tbody.replaceChildren(...body.cells.map((c) => {
      const tr = document.createElement('tr');
      for (const text of cellText(c)) {
        const td = document.createElement('td');
        td.textContent = String(text);
        tr.append(td);
      }
      return tr;
    }));
  } catch (err) {
    error.hidden = false;
    error.textContent = `Could not load the aggregates: ${err.message}`;
  }
}

// Fills the network and mode filters from the vocabulary, then draws; without it nothing can be drawn.
async function start() {
  try {
    const res = await fetch('v1/vocabulary');
    const body = await res.json();
    if (!body.ok) throw new Error(body.message);
    vocabulary = body;
  } catch (err) {
    const error = document.getElementById('error');
    error.hidden = false;
    error.textContent = `Could not load the dashboard's lists: ${err.message}`;
    return;
  }
  transports = vocabulary.transports.map((t) => t.id);
  form.elements.network.append(...vocabulary.networks.map((n) => new Option(n)));
  form.elements.mode.append(...vocabulary.modes.map((m) => new Option(m)));
  form.addEventListener('change', refresh);
  // A scheme change redraws the charts in its colours.
  dark.addEventListener('change', refresh);
  refresh();
}

start();
