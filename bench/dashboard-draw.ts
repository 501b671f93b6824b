// Benchmark (not a test): how long the personal dashboard takes to draw a stored history in headless Chromium. For
// each size, synthetic but valid history entries (lab/synthetic-history.ts, the dashboard test's generator)
// are written into the extension's storage.local under the background store's keys; then dashboard.html is opened N
// times. Draw time is the page's own reading (`body` data-draw-ms: from the entries in hand to both uPlot charts drawn
// in the document, with the table and recommendation); open → ready is the wall time from opening the page until it
// reads `ready` (polled every 10 ms: page load, history-get of every entry from the background, draw); redraw is the
// draw after switching the connection filter (cold/warm) on an open page. Target: draw ≤ 200 ms. Runs in a
// loopback-only network namespace.
//
//   node dist/bench/dashboard-draw.js [--opens 20] [--sizes 500,2000] [--out bench/results/dashboard-draw.md] [--smoke]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Page } from 'puppeteer-core';
import { HISTORY_CAPS } from '../extension/src/history.js';
import { summarize } from '../common/stats.js';
import { extensionBase, launchWithExtension, poll } from '../lab/browsers.js';
import { requireBuiltExtension } from '../lab/extension-build.js';
import { syntheticHistory, writeHistory } from '../lab/synthetic-history.js';
import { inLoopbackNamespace } from './loopback-namespace.js';
import { reportPath, SMOKE_OPTION } from './smoke.js';

const { values } = parseArgs({ options: { opens: { type: 'string', default: '20' }, sizes: { type: 'string', default: '500,2000' }, out: { type: 'string' }, ...SMOKE_OPTION } });
// --smoke: 2 opens of a 50-entry history.
const OPENS = values.smoke ? 2 : Number(values.opens);
const SIZES = values.smoke ? [50] : values.sizes!.split(',').map(Number);
if (!(OPENS >= 1 && OPENS <= 500 && SIZES.every((n) => n >= 1 && n <= 5000))) throw new Error('--opens 1…500, --sizes of 1…5000');

async function state(page: Page): Promise<{ state: string; drawMs: number; shown: number; mode: string; series: number }> {
  return page.evaluate(() => ({
    state: document.body.dataset.state ?? '', drawMs: Number(document.body.dataset.drawMs ?? NaN), shown: Number(document.body.dataset.shown ?? NaN),
    mode: document.body.dataset.mode ?? '', series: Number(document.getElementById('plot-onload')?.dataset.series ?? NaN),
  }));
}

interface Row {
  size: number;
  cells: number;
  chars: number;
  series: number;
  draw: number[];
  open: number[];
  redraw: number[];
}

async function inner(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'dnscost-dashboard-draw-'));
  const b = await launchWithExtension('chromium', { extensionDir: requireBuiltExtension('chromium'), workDir: work, registerHost: false });
  const rows: Row[] = [];
  try {
    const ext = await b.openExtensionPage('options/options.html');
    for (const size of SIZES) {
      await ext.evaluate(() => (globalThis as unknown as { chrome: { storage: { local: { clear(): Promise<void> } } } }).chrome.storage.local.clear());
      const entries = syntheticHistory(size, Date.now(), size);
      await writeHistory(ext, entries);
      const row: Row = { size, cells: entries.reduce((s, e) => s + e.cells.length, 0), chars: entries.reduce((s, e) => s + JSON.stringify(e).length, 0), series: 0, draw: [], open: [], redraw: [] };
      for (let i = 0; i <= OPENS; i++) {
        const page = await b.browser.newPage();
        await page.setViewport({ width: 1100, height: 900 });
        const started = performance.now();
        await page.goto(`${extensionBase('chromium')}dashboard/dashboard.html`);
        const drawn = await poll('the dashboard is drawn', 60_000, async () => {
          const s = await state(page);
          return s.state === 'ready' ? s : undefined;
        }, 10);
        const opened = performance.now() - started;
        if (drawn.shown !== size) throw new Error(`the dashboard shows ${drawn.shown} pages, not ${size}`);
        row.series = drawn.series;
        await page.evaluate(() => {
          const m = document.getElementById('mode') as HTMLSelectElement;
          m.value = 'cold';
          m.dispatchEvent(new Event('change'));
        });
        const redrawn = await poll('the dashboard redraws', 30_000, async () => {
          const s = await state(page);
          return s.state === 'ready' && s.mode === 'cold' ? s : undefined;
        }, 10);
        // The first open pays for compiling the page's code: not counted.
        if (i > 0) {
          row.draw.push(drawn.drawMs);
          row.open.push(opened);
          row.redraw.push(redrawn.drawMs);
        }
        await page.close();
      }
      rows.push(row);
      console.error(`dashboard-draw: ${size} entries done`);
    }
  } finally {
    await b.close();
    rmSync(work, { recursive: true, force: true });
  }
  const line = (what: string, size: number, xs: number[]) => {
    const s = summarize(xs);
    return `| ${size} | ${what} | ${s.n} | ${s.median!.toFixed(1)} | ${s.p5!.toFixed(1)} | ${s.p95!.toFixed(1)} | ${s.mean!.toFixed(1)} |`;
  };
  const report = `# Benchmark: the personal dashboard's time to draw a stored history (headless Chromium)

Command: \`node dist/bench/dashboard-draw.js --opens ${OPENS} --sizes ${SIZES.join(',')}${values.out ? ` --out ${values.out}` : ''}\` (as root, after \`scripts/setup\`)
Date: ${new Date().toISOString()}; machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Debian Chromium, headless, viewport 1100 × 900.
History: synthetic but valid entries (lab/synthetic-history.ts) over 40 days, 2–3 public resolvers (plus a
custom one on some pages) × 5 transports × cold/warm per page, written to storage.local under the background store's keys;
dashboard.html opened ${OPENS} times per size (one more, first, uncounted).

| entries | stored cells | JSON characters | onLoad CDF series |
| ---: | ---: | ---: | ---: |
${rows.map((r) => `| ${r.size} | ${r.cells.toLocaleString('en')} | ${r.chars.toLocaleString('en')} | ${r.series} |`).join('\n')}

| entries | ms | opens | median | p5 | p95 | mean |
| ---: | --- | ---: | ---: | ---: | ---: | ---: |
${rows.flatMap((r) => [line('draw (entries in hand → charts in the document)', r.size, r.draw), line('redraw (connection filter changed)', r.size, r.redraw), line('open → ready (page load, history-get, draw)', r.size, r.open)]).join('\n')}

Target: draw ≤ 200 ms — ${rows.map((r) => `${r.size} entries: median **${summarize(r.draw).median!.toFixed(1)} ms**, p95 ${summarize(r.draw).p95!.toFixed(1)} ms`).join('; ')}.
The store keeps at most ${HISTORY_CAPS.entries.toLocaleString('en')} entries and ${HISTORY_CAPS.chars.toLocaleString('en')} characters of JSON.
`;
  process.stdout.write(report);
  const out = reportPath(values);
  if (out) writeFileSync(out, report);
}

await inLoopbackNamespace(import.meta.url, inner, 900_000);
