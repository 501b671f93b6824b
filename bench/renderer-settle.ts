// How long a new tab should wait before its navigation so the browser's own start-up work does not add noise to a
// page's onLoad (bench/validate/browser.ts RENDERER_SETTLE_MS): for each browser, wait and page, N loads of a
// validation page (lab/site/validation-site.ts) on loopback, each in a fresh context and a new tab that waits W ms
// before navigating; prints onLoad and the gap between the document's last byte and domInteractive (the renderer's
// share). Names are mapped to the loopback site inside the browser (Chromium's host-resolver rules, Firefox's
// forceResolve), and the run is in a loopback-only network namespace: nothing is resolved or fetched anywhere else.
//
//   node dist/bench/renderer-settle.js [--browsers chromium,firefox] [--waits 150,1000] [--pages 1,10] [--loads 12]
//        [--out bench/results/renderer-settle.md] [--smoke]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import puppeteer, { type Browser } from 'puppeteer-core';
import { percentile } from '../common/stats.js';
import { findBrowser } from '../lab/browsers.js';
import { startValidationSite, VALIDATION_ZONE } from '../lab/site/validation-site.js';
import { inLoopbackNamespace } from './loopback-namespace.js';
import { reportPath, SMOKE_OPTION } from './smoke.js';

type Name = 'chromium' | 'firefox';

async function launch(name: Name, port: number, dir: string): Promise<Browser> {
  const executablePath = findBrowser(name);
  if (!executablePath) throw new Error(`${name} is not installed: scripts/setup installs it`);
  return name === 'chromium'
    ? puppeteer.launch({
      browser: 'chrome', executablePath, headless: true, userDataDir: dir,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync', `--host-resolver-rules=MAP *.${VALIDATION_ZONE} 127.0.0.1:${port}`],
    })
    : puppeteer.launch({
      browser: 'firefox', executablePath, headless: true, userDataDir: dir,
      extraPrefsFirefox: { 'network.dns.forceResolve': '127.0.0.1', 'browser.cache.disk.enable': false, 'browser.cache.memory.enable': false, 'network.dnsCacheExpiration': 0 },
    });
}

/** One load: [onLoad, domInteractive − responseEnd] (ms). */
async function load(b: Browser, url: string, waitMs: number): Promise<[number, number]> {
  const ctx = await b.createBrowserContext();
  try {
    const page = await ctx.newPage();
    await page.setCacheEnabled(false).catch(() => undefined);
    await new Promise((r) => setTimeout(r, waitMs));
    await page.goto(url, { waitUntil: 'load', timeout: 30_000 });
    await new Promise((r) => setTimeout(r, 50));
    return await page.evaluate(() => {
      const n = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
      return [n.loadEventStart, n.domInteractive - n.responseEnd] as [number, number];
    });
  } finally {
    await ctx.close().catch(() => undefined);
  }
}

const fmt = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${percentile(s, 50)!.toFixed(0)} (${s[0]!.toFixed(0)}–${s.at(-1)!.toFixed(0)}, IQR ${(percentile(s, 75)! - percentile(s, 25)!).toFixed(0)})`;
};

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { browsers: { type: 'string', default: 'chromium,firefox' }, waits: { type: 'string', default: '150,1000' }, pages: { type: 'string', default: '1,10' }, loads: { type: 'string', default: '12' }, out: { type: 'string' }, ...SMOKE_OPTION } });
  const list = (s: string) => s.split(',').map((x) => x.trim()).filter(Boolean);
  // --smoke: both browsers, 2 loads of the 1-host page after a 150 ms wait.
  if (values.smoke) Object.assign(values, { waits: '150', pages: '1' });
  const loads = values.smoke ? 2 : Math.min(100, Math.max(1, Number(values.loads)));
  const site = await startValidationSite('127.0.0.1', 0);
  const rows: string[] = [];
  try {
    for (const name of list(values.browsers) as Name[]) {
      const dir = mkdtempSync(join(tmpdir(), `dnscost-settle-${name}-`));
      const b = await launch(name, site.port, dir);
      try {
        for (const page of list(values.pages).map(Number)) {
          for (const wait of list(values.waits).map(Number)) {
            const url = `http://p${page}-h0.${VALIDATION_ZONE}${name === 'firefox' ? `:${site.port}` : ''}/`;
            const got: [number, number][] = [];
            for (let i = 0; i < loads; i++) got.push(await load(b, url, wait));
            rows.push(`| ${name} | ${page} | ${wait} | ${loads} | ${fmt(got.map((x) => x[0]))} | ${fmt(got.map((x) => x[1]))} |`);
            process.stderr.write(`${rows.at(-1)}\n`);
          }
        }
      } finally {
        await b.close().catch(() => undefined);
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await site.close();
  }
  const report = [
    '# Renderer settle: a new tab\'s wait before its navigation, and the noise in onLoad',
    '',
    `Command: \`node dist/bench/renderer-settle.js ${process.argv.slice(2).join(' ')}\``.replace(/ `$/, '`'),
    `Run: ${new Date().toISOString()}; loopback, no network emulation; a fresh context and tab per load.`,
    '',
    'onLoad and domInteractive − responseEnd (the renderer\'s share after the document\'s last byte), ms: median (min–max, IQR).',
    '',
    '| browser | page (hosts) | wait (ms) | loads | onLoad | domInteractive − responseEnd |',
    '| --- | ---: | ---: | ---: | --- | --- |',
    ...rows,
    '',
  ].join('\n');
  const out = reportPath(values);
  if (out) writeFileSync(out, report);
  else process.stdout.write(report);
}

await inLoopbackNamespace(import.meta.url, main, 900_000);
