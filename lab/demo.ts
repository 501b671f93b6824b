// The README's main command (scripts/demo): the whole product on this machine, offline. It starts the lab resolver
// and a local site with many hostnames, opens Chromium (or Firefox with --firefox) on a fresh profile with the built
// extension and the real native host, configured for the lab resolver only, visits the site, measures the page over
// every transport, prints the panel's answer, and writes screenshots of the cost panel, the welcome page, the options
// and the dashboard (light and dark), the page report and the measurement to demo-output/.
// Everything runs in a loopback-only network namespace (unshare --net, as root): nothing leaves this machine.
// Headless: a screenshot is the window this run has (no display is needed).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'puppeteer-core';
import type { MeasureStatus } from '../extension/src/messages/measure.js';
import type { PageRecord } from '../common/page-record.js';
import { findBrowser, launchWithExtension, poll, type BrowserName } from './browsers.js';
import { labResolverSpec, sendFromPage, tabIdOf } from './extension-pages.js';
import { emulateScheme } from './a11y.js';
import { requireBuiltExtension } from './extension-build.js';
import { startCoreDNS } from './resolver.js';
import { NORMAL_PAGE_HOSTS, startSite } from './site/server.js';
import { ROOT } from './paths.js';

const OUT = join(ROOT, 'demo-output');
const say = (line: string): void => void process.stdout.write(`demo: ${line}\n`);

async function inner(name: BrowserName): Promise<void> {
  const extensionDir = requireBuiltExtension(name);
  const work = mkdtempSync(join(tmpdir(), `dnscost-demo-${name}-`));
  mkdirSync(OUT, { recursive: true });
  const site = await startSite();
  const lab = await startCoreDNS();
  say(`lab resolver (CoreDNS) on ${lab.address}: ${Object.values(lab.endpoints).join(' ')}`);
  const b = await launchWithExtension(name, { extensionDir, workDir: work });
  try {
    const ext = await b.openExtensionPage('options/options.html');
    await sendFromPage(ext, { type: 'settings-set', changes: { resolvers: [labResolverSpec(lab)], currentDns: false } });
    await sendFromPage(ext, { type: 'consent-give' });
    await poll('the native host to connect', 30_000, async () => (((await sendFromPage(ext, { type: 'host-status' })) as { ok: boolean }).ok ? true : undefined));
    say(`${name} started with the extension; the native host answered; settings: the lab resolver only, consent given`);
    const page = await b.browser.newPage();
    await page.goto(site.url(NORMAL_PAGE_HOSTS.start, '/'), { waitUntil: 'load', timeout: 20_000 });
    const tabId = await tabIdOf(ext, site.url(NORMAL_PAGE_HOSTS.page, '/'));
    const report = await poll('the page record', 15_000, async () => {
      const r = (await sendFromPage(ext, { type: 'page-report', tabId })) as { ok: boolean; record?: PageRecord };
      return r.ok && r.record!.onLoadMs !== null ? r.record : undefined;
    });
    say(`visited ${report.url}: ${report.hosts.length} hostnames (${report.hosts.map((h) => h.name).join(', ')})`);
    await sendFromPage(ext, { type: 'measure-start', tabId });
    const done = await poll('the measurement', 120_000, async () => {
      const s = (await sendFromPage(ext, { type: 'measure-status', tabId, records: true })) as MeasureStatus;
      return s.measurement && s.measurement.state !== 'running' ? s : undefined;
    });
    say(`measurement ${done.measurement!.state}: ${done.records?.length ?? 0} lookups`);
    const panel = await b.openExtensionPage(`popup/popup.html?tab=${tabId}`);
    await panel.setViewport({ width: 900, height: 1200 });
    await poll('the cost panel', 20_000, async () =>
      (await panel.evaluate(() => document.getElementById('cost')?.dataset.state)) === 'results' ? true : undefined);
    say(`the panel's answer: ${await panel.evaluate(() => document.getElementById('verdict')?.textContent ?? '(none)')}`);
    writeFileSync(join(OUT, `page-report-${name}.json`), JSON.stringify(report, null, 2));
    writeFileSync(join(OUT, `measurement-${name}.json`), JSON.stringify(done, null, 2));
    // Every page of the extension, light and dark: the popup's panel, the welcome page (as opened on install), the
    // options and the dashboard.
    const welcome = await b.openExtensionPage('welcome/welcome.html');
    const pages: Array<[string, Page]> = [['cost-panel', panel], ['welcome', welcome], ['options', ext], ['dashboard', await b.openExtensionPage('dashboard/dashboard.html')]];
    const shots: string[] = [];
    for (const [what, p] of pages) {
      await p.bringToFront(); // headless Chromium renders only the tab in front
      await p.setViewport({ width: 900, height: 1200 });
      for (const scheme of ['light', 'dark'] as const) {
        // Firefox's WebDriver BiDi cannot set the scheme: its pages are shot as they are.
        if (!(await emulateScheme(p, scheme)) && scheme === 'dark') continue;
        const file = `${what}-${name}-${scheme}.png`;
        await p.screenshot({ path: join(OUT, file), fullPage: true });
        shots.push(file);
      }
    }
    say(`wrote to ${OUT}: ${shots.join(', ')}, page-report-${name}.json and measurement-${name}.json`);
  } finally {
    await b.close();
    await lab.stop();
    await site.close();
    rmSync(work, { recursive: true, force: true });
  }
}

const name: BrowserName = process.argv.includes('--firefox') ? 'firefox' : 'chromium';
if (process.env.DNSCOST_DEMO_INNER) {
  await inner(name);
} else {
  if (process.getuid?.() !== 0) throw new Error('the demo runs the browser in a loopback-only network namespace: run it as root');
  if (!findBrowser(name)) throw new Error(`${name} is not installed: run scripts/setup`);
  // Re-run inside a fresh network namespace with only loopback up: the browser cannot reach anything else.
  execFileSync('unshare', ['--net', 'sh', '-c', `ip link set lo up && exec "${process.execPath}" "${fileURLToPath(import.meta.url)}" ${name === 'firefox' ? '--firefox' : ''}`], {
    env: { ...process.env, DNSCOST_DEMO_INNER: '1' },
    stdio: 'inherit',
    timeout: 300_000,
  });
}
