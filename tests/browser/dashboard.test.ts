// The personal dashboard in real Chromium and Firefox: with no history it says nothing was measured; then 600
// synthetic but valid history entries (lab/synthetic-history.ts: 8 sites over 40 days, Cloudflare and
// Google throughout, Quad9 for the last 10 days, one site measured only against a resolver whose id is markup) are
// written into storage.local under the background store's keys, and dashboard.html must draw them: both uPlot charts
// (one series per resolver × transport, one per transport), the table, a recommendation; filters (site, time window,
// connection) change what is drawn; the JSON export read back from its Blob equals history-get under the same
// filter; the CSV has its header and one row per entry × cell; text from data stays text. Screenshot per browser:
// tests/.run/dashboard-BROWSER.png.
//
// Same structure as tests/browser/popup.test.ts: re-runs itself under `unshare --net` (root) with DNSCOST_DASHBOARD_INNER
// naming the browser, one browser at a time.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'puppeteer-core';
import { CSV_COLUMNS, combos, parseJsonExport } from '../../extension/src/dashboard/analysis.js';
import type { HistoryEntry, HistoryFilter } from '../../extension/src/history.js';
import { launchWithExtension, poll, type BrowserName } from '../../lab/browsers.js';
import { outerBrowserTests } from '../support/namespace.js';
import { axeViolations } from '../../lab/a11y.js';
import { requireBuiltExtension } from '../../lab/extension-build.js';
import { sendFromPage } from '../../lab/extension-pages.js';
import { HOSTILE_RESOLVER, SOLO_SITE, syntheticHistory, writeHistory, writeRevisits } from '../../lab/synthetic-history.js';
import { noteNeed, noteTtls, type HostRevisits } from '../../extension/src/cache-savings.js';
import { ROOT } from '../../lab/paths.js';

const INNER = process.env.DNSCOST_DASHBOARD_INNER as BrowserName | undefined;
const RUN_DIR = join(ROOT, 'tests/.run');
/** Inner-run budgets (the brief: each browser's run under about 60 s). */
const BUDGET_MS: Record<BrowserName, number> = { chromium: 60_000, firefox: 75_000 };
const ENTRIES = 600;

interface Drawn {
  state: string;
  drawMs: number;
  shown: number;
  mode: string;
  onloadSeries: number;
  onloadLegend: number;
  lookupSeries: number;
  lookupLegend: number;
  canvases: number;
  tableRows: number;
  recKind: string;
  recText: string;
  status: string;
}

function drawnState(page: Page): Promise<Drawn> {
  return page.evaluate(() => {
    const b = document.body;
    const $ = (id: string) => document.getElementById(id)!;
    return {
      state: b.dataset.state ?? '', drawMs: Number(b.dataset.drawMs ?? NaN), shown: Number(b.dataset.shown ?? NaN), mode: b.dataset.mode ?? '',
      onloadSeries: Number($('plot-onload').dataset.series ?? NaN),
      // uPlot's own legend: one row per series, the first for x.
      onloadLegend: $('plot-onload').querySelectorAll('.u-legend .u-series').length - 1,
      lookupSeries: Number($('plot-lookup').dataset.series ?? NaN),
      lookupLegend: $('plot-lookup').querySelectorAll('.u-legend .u-series').length - 1,
      canvases: document.querySelectorAll('#plot-onload canvas, #plot-lookup canvas').length,
      tableRows: document.querySelectorAll('#failures tbody tr').length,
      recKind: $('recommendation').dataset.kind ?? '', recText: $('rec-text').textContent ?? '', status: $('status').textContent ?? '',
    };
  });
}

/** Changes a filter control as a person would (value, then its event) and waits for the redraw that follows. */
async function setControl(page: Page, id: string, value: string, event: 'change' | 'input', settled: (d: Drawn) => boolean): Promise<Drawn> {
  const before = await page.evaluate(() => document.body.dataset.drawMs ?? '');
  await page.evaluate((id, value, event) => {
    const e = document.getElementById(id) as HTMLInputElement | HTMLSelectElement;
    e.value = value;
    e.dispatchEvent(new Event(event, { bubbles: true }));
  }, id, value, event);
  return poll(`the dashboard redraws after ${id} = ${value}`, 10_000, async () => {
    const d = await drawnState(page);
    return d.state === 'ready' && settled(d) ? d : undefined;
  }).catch(async (err) => {
    throw new Error(`${(err as Error).message}; before drawMs ${before}, now ${JSON.stringify(await drawnState(page))}`);
  });
}

/** Clicks an export button and returns the text of the Blob its link points to. */
async function exported(page: Page, button: string): Promise<{ name: string; text: string }> {
  return page.evaluate(async (button) => {
    const a = document.getElementById('export-link') as HTMLAnchorElement;
    const old = a.href;
    (document.getElementById(button) as HTMLButtonElement).click();
    if (a.href === old || !a.href.startsWith('blob:')) throw new Error(`no new Blob link after ${button}`);
    return { name: a.download, text: await (await fetch(a.href)).text() };
  }, button);
}

/** Asserts two entry lists are equal, naming the first difference (assert.deepEqual would print megabytes). */
function sameEntries(actual: HistoryEntry[], expected: HistoryEntry[], what: string): void {
  assert.equal(actual.length, expected.length, `${what}: ${actual.length} entries, not ${expected.length}`);
  const i = actual.findIndex((e, i) => !isDeepStrictEqual(e, expected[i]));
  assert.equal(i, -1, `${what}: entry ${i} differs: ${JSON.stringify(actual[i])?.slice(0, 400)} vs ${JSON.stringify(expected[i])?.slice(0, 400)}`);
}

async function historyGet(page: Page, filter: HistoryFilter): Promise<HistoryEntry[]> {
  const r = (await sendFromPage(page, { type: 'history-get', ...filter })) as { ok: boolean; entries: HistoryEntry[] };
  assert.equal(r.ok, true, JSON.stringify(r).slice(0, 500));
  return r.entries;
}

function innerTests(name: BrowserName): void {
  test(`${name}: the dashboard draws ${ENTRIES} stored pages, filters, exports`, { timeout: BUDGET_MS[name] - 5_000 }, async (t) => {
    const extensionDir = requireBuiltExtension(name);
    const work = mkdtempSync(join(tmpdir(), `dnscost-dashboard-${name}-`));
    t.onTestFinished(() => rmSync(work, { recursive: true, force: true }));
    mkdirSync(RUN_DIR, { recursive: true });
    const timings: string[] = [];
    let started = Date.now();
    // No native host: the dashboard reads only storage.
    const b = await launchWithExtension(name, { extensionDir, workDir: work, registerHost: false });
    try {
      timings.push(`launch ${Date.now() - started} ms`);
      started = Date.now();
      const first = await b.openExtensionPage('dashboard/dashboard.html');
      const empty = await poll('the empty dashboard settles', 15_000, async () => {
        const s = await first.evaluate(() => ({ state: document.body.dataset.state ?? '', text: document.body.innerText }));
        return s.state !== 'loading' ? s : undefined;
      });
      assert.equal(empty.state, 'empty');
      assert.match(empty.text, /Nothing measured yet/);

      const entries = syntheticHistory(ENTRIES, Date.now());
      await writeHistory(first, entries);
      const all = await historyGet(first, {});
      assert.equal(all.length, ENTRIES);
      sameEntries(all, entries, 'history-get gives back what was stored, oldest first');
      timings.push(`empty state, ${ENTRIES} entries written and read back ${Date.now() - started} ms`);
      // Two hosts' revisits: a.example needed again after 10, 10, 50, 250 and 4,000 s (Cloudflare's TTL 60 s, Google's
      // 300 s), b.example after 20 s (Cloudflare's 3,600 s).
      const needs = (gapsS: number[]): HostRevisits => gapsS.reduce((r, g) => noteNeed(r, r.last + g * 1000), noteNeed(undefined, Date.now() - 86_400_000));
      await writeRevisits(first, { 'a.example': noteTtls(needs([10, 10, 50, 250, 4000]), { cloudflare: 60, google: 300 }, { cloudflare: 25, google: 40 }), 'b.example': noteTtls(needs([20]), { cloudflare: 3600 }) });

      started = Date.now();
      const page = await b.openExtensionPage('dashboard/dashboard.html');
      await page.setViewport({ width: 1100, height: 900 });
      const ready = await poll('the dashboard draws', 20_000, async () => {
        const d = await drawnState(page);
        return d.state === 'ready' ? d : undefined;
      });
      const allCombos = combos(entries);
      assert.equal(allCombos.length, 2 * 5 + 5 + 3, 'Cloudflare, Google, Quad9 × 5 transports and the markup resolver × 3');
      assert.equal(ready.shown, ENTRIES);
      assert.equal(ready.onloadSeries, allCombos.length);
      assert.equal(ready.onloadLegend, allCombos.length);
      assert.equal(ready.lookupSeries, 5);
      assert.equal(ready.lookupLegend, 5);
      assert.ok(ready.canvases >= 2, `${ready.canvases} canvases`);
      assert.equal(ready.tableRows, allCombos.length * 3, 'one table row per resolver × transport × view (expected, warm, cold)');
      assert.ok(['cheap', 'costly'].includes(ready.recKind), ready.recKind);
      assert.match(ready.recText, /would (add|take) a median/);
      assert.equal(ready.mode, 'expected', 'expected costs by default');
      assert.match(ready.recText, /with the connections your browsing would have had/);
      // The uPlot canvas really has ink on it (not a blank bitmap).
      const inked = await page.evaluate(() => {
        const c = document.querySelector<HTMLCanvasElement>('#plot-onload canvas')!;
        const px = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 3; i < px.length; i += 4) if (px[i]! > 0) n++;
        return n;
      });
      assert.ok(inked > 1000, `${inked} painted pixels`);
      // Text from data is text: the resolver id that is markup shows as such, and made no element.
      const hostile = await page.evaluate((h) => ({ text: document.body.innerText.includes(h), b: document.querySelectorAll('body b').length, scripts: document.querySelectorAll('script').length }), HOSTILE_RESOLVER);
      assert.deepEqual(hostile, { text: true, b: 0, scripts: 1 });
      // What a cache would save: Cloudflare's TTLs answer 3 of a.example's 6 needs and 1 of b.example's 2; Google's 4 of 6.
      const cache = await poll('the cache table', 10_000, async () => page.evaluate(() => {
        const rows = [...document.querySelectorAll<HTMLTableRowElement>('#cache tbody tr')].map((r) => `${r.dataset.resolver}: ${[...r.cells].map((c) => c.textContent).join(' | ')}`);
        return rows.length ? rows : undefined;
      }));
      // The lookup time saved: a.example's served needs at its lookup time (25 ms with Cloudflare, 40 with Google).
      assert.deepEqual(cache, ['cloudflare: Cloudflare | 2 | 8 | 4 (50 %) | 75 ms | 1,830 s', 'google: Google Public DNS | 1 | 6 | 4 (67 %) | 160 ms | 300 s']);
      // On another network: per combo the median estimate there (the synthetic entries scale each change by the
      // network's round trip, so fiber's medians are 14.8/91.9 of 4g's up to rounding).
      const whatIf = () => page.evaluate(() => Object.fromEntries([...document.querySelectorAll<HTMLTableRowElement>('#whatif tbody tr')].map((r) => [`${r.dataset.resolver} ${r.dataset.transport}`, Number(r.dataset.there)])));
      const on4g = await whatIf();
      assert.ok(Object.keys(on4g).length >= 6, JSON.stringify(on4g));
      await page.evaluate(() => {
        const choice = document.getElementById('whatif-network') as HTMLSelectElement;
        choice.value = 'fiber';
        choice.dispatchEvent(new Event('change', { bubbles: true }));
      });
      const onFiber = await poll('the what-if table redraws for fiber', 10_000, async () => {
        const x = await whatIf();
        return JSON.stringify(x) !== JSON.stringify(on4g) ? x : undefined;
      });
      for (const [combo, there] of Object.entries(on4g)) {
        if (Math.abs(there) >= 20) assert.ok(Math.abs(onFiber[combo]! / there - 14.8 / 91.9) < 0.01, `${combo}: ${onFiber[combo]} on fiber against ${there} on 4g`);
      }
      timings.push(`drawn in ${ready.drawMs} ms (page open to ready ${Date.now() - started} ms)`);
      await page.screenshot({ path: join(RUN_DIR, `dashboard-${name}.png`), fullPage: true });
      assert.deepEqual(await axeViolations(page), [], 'axe on the dashboard');

      // CSV of everything: the header and one row per entry × cell.
      started = Date.now();
      const csv = await exported(page, 'export-csv');
      assert.match(csv.name, /^dnscost-history-.*\.csv$/);
      const lines = csv.text.split('\r\n');
      assert.equal(lines.pop(), '');
      assert.equal(lines[0], CSV_COLUMNS.join(','));
      assert.equal(lines.length - 1, entries.reduce((s, e) => s + e.cells.length, 0));
      assert.ok(lines.some((l) => l.includes(`,${HOSTILE_RESOLVER},`)));
      // JSON of everything round-trips.
      const json = await exported(page, 'export-json');
      assert.match(json.name, /^dnscost-history-.*\.json$/);
      sameEntries(parseJsonExport(json.text), all, 'json export');

      // The site filter: the solo site's pages only, measured against one resolver over three transports.
      const solo = await setControl(page, 'site', ` https://${SOLO_SITE}/x `, 'input', (d) => d.shown < ENTRIES);
      const soloJson = await exported(page, 'export-json');
      const soloFilter = JSON.parse(soloJson.text).filter as HistoryFilter;
      assert.deepEqual(soloFilter, { site: SOLO_SITE });
      const soloEntries = await historyGet(page, soloFilter);
      sameEntries(parseJsonExport(soloJson.text), soloEntries, 'soloJson export');
      assert.equal(solo.shown, soloEntries.length);
      assert.ok(solo.shown > 10, `${solo.shown} solo pages`);
      assert.equal(solo.onloadSeries, 3);
      assert.equal(solo.onloadLegend, 3);
      assert.equal(solo.tableRows, 9, '3 combos × 3 views');

      // The time window: the last 7 days (Quad9 measured throughout, so the 15 public combos).
      await setControl(page, 'site', '', 'input', (d) => d.shown === ENTRIES);
      const week = await setControl(page, 'window', '7d', 'change', (d) => d.shown < ENTRIES);
      const weekJson = await exported(page, 'export-json');
      const weekFilter = JSON.parse(weekJson.text).filter as HistoryFilter;
      assert.ok(weekFilter.since && Math.abs(weekFilter.since - (Date.now() - 7 * 86_400_000)) < 60_000, JSON.stringify(weekFilter));
      const weekEntries = await historyGet(page, weekFilter);
      sameEntries(parseJsonExport(weekJson.text), weekEntries, 'weekJson export');
      assert.equal(week.shown, weekEntries.length);
      assert.ok(week.shown > 0 && week.shown < ENTRIES, `${week.shown} pages in 7 days`);
      assert.equal(week.onloadSeries, combos(weekEntries).length);
      assert.ok(weekEntries.every((e) => e.cells.some((c) => c.resolver === 'quad9') || e.host.endsWith(SOLO_SITE)));

      // From–to: the first ten days of the span, before Quad9 was added: no Quad9 series.
      await page.evaluate(() => {
        const iso = (t: number) => { const d = new Date(t); return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`; };
        (document.getElementById('from') as HTMLInputElement).value = iso(Date.now() - 45 * 86_400_000);
        (document.getElementById('to') as HTMLInputElement).value = iso(Date.now() - 25 * 86_400_000);
      });
      const custom = await setControl(page, 'window', 'custom', 'change', (d) => d.shown !== week.shown);
      const customJson = await exported(page, 'export-json');
      const customFilter = JSON.parse(customJson.text).filter as HistoryFilter;
      assert.ok(customFilter.since !== undefined && customFilter.until !== undefined, JSON.stringify(customFilter));
      const customEntries = await historyGet(page, customFilter);
      sameEntries(parseJsonExport(customJson.text), customEntries, 'customJson export');
      assert.equal(custom.shown, customEntries.length);
      assert.ok(custom.shown > 0);
      assert.equal(custom.onloadSeries, combos(customEntries).length);
      assert.ok(!customEntries.some((e) => e.cells.some((c) => c.resolver === 'quad9')), 'no Quad9 before it was added');

      // Cold connections: the same pages, another recommendation.
      await setControl(page, 'window', 'all', 'change', (d) => d.shown === ENTRIES);
      const cold = await setControl(page, 'mode', 'cold', 'change', (d) => d.mode === 'cold');
      assert.match(cold.recText, /cold connections/);
      assert.notEqual(cold.recText, ready.recText);
      timings.push(`exports and filters ${Date.now() - started} ms (site ${solo.drawMs} ms, 7 days ${week.drawMs} ms, cold ${cold.drawMs} ms)`);
      started = Date.now();

      // Networks: the same pages, measured on two networks (the latest 100 on a phone's hotspot). A dashboard opened
      // now shows the network the person is on (the latest measurement's) and says so; the others are one choice away.
      const home = { id: '1111111111111111', description: 'gateway 192.168.1.1 on wlan0 · 192.168.1.0/24 · DNS 192.168.1.1' };
      const phone = { id: '2222222222222222', description: '172.20.10.0/28 · DNS 172.20.10.1' };
      const onNetworks = entries.map((e, i) => ({ ...e, network: i >= ENTRIES - 100 ? phone : home }));
      await writeHistory(page, onNetworks);
      const netPage = await b.openExtensionPage('dashboard/dashboard.html');
      const opened = await poll('the dashboard draws with networks', 20_000, async () => {
        const d = await drawnState(netPage);
        return d.state === 'ready' ? d : undefined;
      });
      assert.equal(opened.shown, 100, 'opens on the latest network');
      const select = await netPage.evaluate(() => {
        const s = document.getElementById('network') as HTMLSelectElement;
        return { value: s.value, options: [...s.options].map((o) => o.textContent ?? ''), scope: document.getElementById('rec-scope')!.textContent ?? '' };
      });
      assert.equal(select.value, phone.id);
      assert.deepEqual(select.options, [`all networks (${ENTRIES} pages)`, `latest: ${phone.description} (100 pages)`, `${home.description} (${ENTRIES - 100} pages)`]);
      assert.match(select.scope, /On one network: latest: 172\.20\.10\.0\/28/);
      const homeView = await setControl(netPage, 'network', home.id, 'change', (d) => d.shown === ENTRIES - 100);
      const homeJson = await exported(netPage, 'export-json');
      const homeFilter = JSON.parse(homeJson.text).filter as HistoryFilter;
      assert.equal(homeFilter.network, home.id);
      const homeEntries = await historyGet(netPage, homeFilter);
      assert.equal(homeEntries.length, ENTRIES - 100, 'history-get filters by network as the page does');
      sameEntries(parseJsonExport(homeJson.text), homeEntries, 'homeJson export');
      assert.ok(homeView.recText.length > 0);
      const everywhere = await setControl(netPage, 'network', '', 'change', (d) => d.shown === ENTRIES);
      assert.match(everywhere.recText, /would (add|take) a median/);
      await netPage.close();
      timings.push(`networks ${Date.now() - started} ms`);
      started = Date.now();
    } finally {
      await b.close();
    }
    timings.push(`close ${Date.now() - started} ms`);
    console.log(`${name}: ${timings.join('; ')}`);
  });
}

if (INNER) {
  innerTests(INNER);
} else {
  outerBrowserTests(fileURLToPath(import.meta.url), 'DNSCOST_DASHBOARD_INNER', (name) => `${name}: personal dashboard (loopback-only network namespace)`, BUDGET_MS);
}
