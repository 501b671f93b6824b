// The public dashboard: fetches /v1/aggregates and plots, per transport, one line per resolver. Plain script (no
// build, no inline code) so the page runs under a strict Content-Security-Policy; uPlot is the global from
// uplot.min.js, served by the collector.
'use strict';

const TRANSPORTS = ['udp', 'tcp', 'dot', 'doh', 'doh1', 'doq', 'doh3'];
const RESOLVERS = ['cloudflare', 'google', 'quad9', 'system', 'custom'];
const COLOURS = ['#f38020', '#4285f4', '#9b2335', '#555555', '#2a9d8f'];
const form = document.getElementById('filters');
const plots = {};

function cellText(c) {
  const l = c.lookupMs ? `${c.lookupMs.p5.toFixed(1)} / ${c.lookupMs.p50.toFixed(1)} / ${c.lookupMs.p95.toFixed(1)}` : '–';
  return [c.resolver, c.transport, c.mode, c.network, c.site, c.batches, c.pages, c.lookups, c.failures, l,
    c.onloadMs ? c.onloadMs.p50.toFixed(1) : '–', c.bytesPerLookup == null ? '–' : Math.round(c.bytesPerLookup)];
}

// Weighted by pages when several cells (networks, sites) fall on one resolver × transport point.
function series(cells, resolver, value) {
  return TRANSPORTS.map((t) => {
    const here = cells.filter((c) => c.resolver === resolver && c.transport === t);
    const weighted = here.map((c) => [value(c), c.pages]).filter(([v]) => v != null);
    const pages = weighted.reduce((s, [, n]) => s + n, 0);
    return pages ? weighted.reduce((s, [v, n]) => s + v * n, 0) / pages : null;
  });
}

function plot(id, cells, value) {
  const data = [TRANSPORTS.map((_, i) => i), ...RESOLVERS.map((r) => series(cells, r, value))];
  const el = document.getElementById(id);
  plots[id]?.destroy();
  plots[id] = new uPlot({
    width: Math.min(1000, el.clientWidth || 900), height: 260,
    scales: { x: { time: false } },
    axes: [{ values: (_, ticks) => ticks.map((i) => TRANSPORTS[i] ?? ''), splits: () => TRANSPORTS.map((_, i) => i) }, {}],
    series: [{ label: 'transport', value: (_, i) => TRANSPORTS[i] ?? '' },
      ...RESOLVERS.map((r, i) => ({ label: r, stroke: COLOURS[i], width: 2, points: { size: 7 }, spanGaps: true }))],
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
    document.getElementById('min-batches').textContent = String(body.minBatches);
    document.getElementById('total').textContent = `${body.batches} uploads so far.`;
    const cells = body.cells.filter((c) => c.mode === mode);
    plot('lookup', cells, (c) => c.lookupMs?.p50);
    plot('failures', cells, (c) => (c.lookups ? (100 * c.failures) / c.lookups : null));
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

form.addEventListener('change', refresh);
refresh();
