// Benchmark (not a test): the extension's effect on onLoad in headless Chromium. The same local page (9 hostnames,
// a redirect and an iframe) loaded N times with the extension (and the real native host, page recording on, no
// consent so nothing is measured), N times with an empty extension, and N times without, on fresh profiles, cache
// disabled, in alternating blocks;
// onLoad is the navigation entry's loadEventStart. Target: median ratio ≤ 1.01. Runs in a loopback-only namespace.
//
//   node dist/bench/extension-overhead.js [--loads 30] [--out bench/results/extension-overhead.md]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import puppeteer, { type Browser } from 'puppeteer-core';
import { CHROMIUM_KEY, HOST_NAME } from '../common/extension-ids.js';
import { summarize } from '../common/stats.js';
import { findBrowser, launchWithExtension } from '../tests/helpers/browsers.js';
import { requireBuiltExtension } from '../tests/helpers/extension-build.js';
import { NORMAL_PAGE_HOSTS, startSite } from '../tests/site/server.js';
import { inLoopbackNamespace } from './loopback-namespace.js';

const { values } = parseArgs({ options: { loads: { type: 'string', default: '30' }, out: { type: 'string' } } });
const LOADS = Number(values.loads);
const BLOCKS = 3;

async function plainChromium(executablePath: string, profile: string): Promise<Browser> {
  return puppeteer.launch({
    browser: 'chrome', executablePath, headless: true, userDataDir: profile,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

async function onLoads(browser: Browser, url: string, n: number): Promise<number[]> {
  const page = await browser.newPage();
  await page.setCacheEnabled(false);
  await page.goto(url, { waitUntil: 'load' }); // warm-up load, not counted (process start-up, first compile)
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    await page.goto(url, { waitUntil: 'load', timeout: 20_000 });
    out.push(await page.evaluate(() => (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming).loadEventStart));
  }
  await page.close();
  return out;
}

async function inner(): Promise<void> {
  const executablePath = findBrowser('chromium')!;
  const extensionDir = requireBuiltExtension();
  const site = await startSite();
  const url = site.url(NORMAL_PAGE_HOSTS.start, '/');
  const withExt: number[] = [];
  const without: number[] = [];
  const empty: number[] = [];
  // An empty MV3 extension (a manifest and nothing else) separates what any loaded extension costs from ours.
  const emptyDir = mkdtempSync(join(tmpdir(), 'dnscost-empty-ext-'));
  writeFileSync(join(emptyDir, 'manifest.json'), JSON.stringify({ manifest_version: 3, name: 'empty', version: '1.0' }));
  // The same with an idle service worker and a native host connection: what any MV3 extension of this kind costs.
  const workerDir = mkdtempSync(join(tmpdir(), 'dnscost-worker-ext-'));
  writeFileSync(join(workerDir, 'manifest.json'), JSON.stringify({ manifest_version: 3, name: 'worker', version: '1.0', key: CHROMIUM_KEY, permissions: ['nativeMessaging'], background: { service_worker: 'sw.js' } }));
  writeFileSync(join(workerDir, 'sw.js'), `chrome.runtime.connectNative('${HOST_NAME}').postMessage({ id: 1, type: 'hello' });\n`);
  const worker: number[] = [];
  try {
    for (let block = 0; block < BLOCKS; block++) {
      const per = Math.ceil(LOADS / BLOCKS);
      for (const mode of block % 2 === 0 ? ['with', 'worker', 'empty', 'without'] : ['without', 'empty', 'worker', 'with']) {
        const work = mkdtempSync(join(tmpdir(), 'dnscost-overhead-'));
        if (mode === 'worker') {
          const b = await launchWithExtension('chromium', { extensionDir: workerDir, workDir: work });
          await new Promise((r) => setTimeout(r, 1000)); // the worker starts and the host answers
          worker.push(...(await onLoads(b.browser, url, per)));
          await b.close();
        } else if (mode === 'empty') {
          const b = await launchWithExtension('chromium', { extensionDir: emptyDir, workDir: work, registerHost: false });
          empty.push(...(await onLoads(b.browser, url, per)));
          await b.close();
        } else if (mode === 'with') {
          const b = await launchWithExtension('chromium', { extensionDir, workDir: work });
          // The extension is running (and its host connected) before the first load; the page is then closed so an
          // open extension page's own polling is not counted against the extension.
          const ready = await b.openExtensionPage('popup/popup.html');
          await ready.close();
          withExt.push(...(await onLoads(b.browser, url, per)));
          await b.close();
        } else {
          const browser = await plainChromium(executablePath, join(work, 'profile'));
          without.push(...(await onLoads(browser, url, per)));
          await browser.close();
        }
        rmSync(work, { recursive: true, force: true });
      }
    }
  } finally {
    await site.close();
  }
  rmSync(emptyDir, { recursive: true, force: true });
  rmSync(workerDir, { recursive: true, force: true });
  const k = summarize(worker);
  const w = summarize(withExt);
  const o = summarize(without);
  const e = summarize(empty);
  const ratio = w.median! / o.median!;
  const row = (name: string, s: ReturnType<typeof summarize>) =>
    `| ${name} | ${s.n} | ${s.median!.toFixed(1)} | ${s.p5!.toFixed(1)} | ${s.p95!.toFixed(1)} | ${s.mean!.toFixed(1)} | ${s.rsd!.toFixed(1)} |`;
  const report = `# Benchmark: the extension's effect on onLoad (headless Chromium)

Command: \`node dist/bench/extension-overhead.js --loads ${LOADS}${values.out ? ` --out ${values.out}` : ''}\` (as root, after \`scripts/setup\`)
Date: ${new Date().toISOString()}; machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Debian Chromium; page: the local test
site's page with 9 hostnames, a redirect and an iframe (tests/site), served on loopback; cache disabled; fresh
profile per block; ${BLOCKS} alternating blocks; one unrecorded warm-up load per block. With the extension: the real
native host connected, page recording on, no consent (nothing is measured, as before a person agrees).

| run | loads | onLoad median ms | p5 | p95 | mean | rsd % |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
${row('without the extension', o)}
${row('with an empty MV3 extension', e)}
${row('with an MV3 extension that only connects the native host from its worker', k)}
${row('with the extension', w)}

Median ratio with / without: **${ratio.toFixed(3)}** (target ≤ 1.01); with / with an empty extension:
**${(w.median! / e.median!).toFixed(3)}** (what dnscost's own code costs beyond loading any extension at all); with /
with a worker that only connects the host: **${(w.median! / k.median!).toFixed(3)}** (what the page recording costs).
`;
  process.stdout.write(report);
  if (values.out) writeFileSync(values.out, report);
}

await inLoopbackNamespace(import.meta.url, inner, 600_000);
