// The README's main command (scripts/demo): the whole product on this machine, offline. In a network and mount
// namespace of its own it gives the machine a lab network (192.0.2.0/24) whose DNS, as /etc/resolv.conf names it, is
// the lab resolver (CoreDNS on every transport) answering a demo site's names under example.com; it opens Chromium (or
// Firefox with --firefox) on a fresh profile with the built extension and the real native host, configured with the
// lab resolver as the one encrypted candidate, visits the site (the browser resolves its names through the system's
// DNS, as a person's does), measures the page over every transport against the current DNS (the same lab resolver
// over Do53), prints the panel's answer, and writes screenshots of the cost panel, the welcome page, the options and
// the dashboard (light and dark), the page report and the measurement to demo-output/ (or --out DIR).
// Nothing leaves the namespace: no route goes anywhere but the lab's own addresses. Headless; needs root.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'puppeteer-core';
import type { PageRecord } from '../common/page-record.js';
import { findBrowser, launchWithExtension, poll, type BrowserName } from './browsers.js';
import { isolateDns, isolatedNetwork, LAB_SERVER } from './browser-dns.js';
import { finishedMeasurement, labResolverSpec, sendFromPage, tabIdOf } from './extension-pages.js';
import { emulateScheme } from './a11y.js';
import { requireBuiltExtension } from './extension-build.js';
import { startCoreDNS } from './resolver.js';
import { DEMO_DOMAIN, pageHosts, startSite } from './site/server.js';
import { ROOT } from './paths.js';

const HOSTS = pageHosts(DEMO_DOMAIN);
/** How long the page's record must stay unchanged after its load before the demo measures it. */
const SETTLE_MS = 1000;

const say = (line: string): void => void process.stdout.write(`demo: ${line}\n`);

/** Fails at once with the extension's own reason when `reply` is a refusal. */
function expectOk(what: string, reply: unknown): void {
  const r = reply as { ok?: boolean; code?: string; message?: string } | undefined;
  if (!r?.ok) throw new Error(`${what}: refused: ${r?.code ?? '(no reply)'}: ${r?.message ?? ''}`);
}

/**
 * Opens `url` in `page` as a person would. Firefox first tries an http:// address of a public-looking name over https
 * (HTTPS-First) and, refused, goes on over http: WebDriver BiDi reports the first navigation aborted
 * (NS_BINDING_ABORTED) while the page loads; the caller waits for the page's record instead.
 */
async function visit(page: Page, url: string): Promise<void> {
  try {
    await page.goto(url, { waitUntil: 'load', timeout: 20_000 });
  } catch (err) {
    if (!String(err).includes('NS_BINDING_ABORTED')) throw err;
  }
}

async function inner(name: BrowserName, out: string): Promise<void> {
  const extensionDir = requireBuiltExtension(name);
  const work = mkdtempSync(join(tmpdir(), `dnscost-demo-${name}-`));
  mkdirSync(out, { recursive: true });
  isolatedNetwork(false);
  isolateDns(work);
  const site = await startSite({ domain: DEMO_DOMAIN, address: LAB_SERVER, port: 80 });
  const lab = await startCoreDNS({ address: LAB_SERVER, ports: { dns: 53 }, siteZone: { zone: DEMO_DOMAIN, a: LAB_SERVER }, others: 'nxdomain' });
  say(`lab network: this machine's DNS (/etc/resolv.conf) is the lab resolver (CoreDNS) at ${LAB_SERVER}, serving ${DEMO_DOMAIN}: ${Object.values(lab.endpoints).join(' ')}`);
  const b = await launchWithExtension(name, { extensionDir, workDir: work });
  try {
    const ext = await b.openExtensionPage('options/options.html');
    expectOk('settings', await sendFromPage(ext, { type: 'settings-set', changes: { resolvers: [labResolverSpec(lab, { quic: true })] } }));
    expectOk('consent', await sendFromPage(ext, { type: 'consent-give' }));
    await poll('the native host to connect', 30_000, async () => (((await sendFromPage(ext, { type: 'host-status' })) as { ok: boolean }).ok ? true : undefined));
    say(`${name} started with the extension; the native host answered; settings: the current DNS and the lab resolver, consent given`);
    const page = await b.browser.newPage();
    await visit(page, site.url(HOSTS.start, '/'));
    const tabId = await tabIdOf(ext, site.url(HOSTS.page, '/'));
    // Loaded, holding every name of the demo's page (the typed address's too: Firefox's HTTPS-First fallback after its
    // redirect is the same page), then settled: Firefox may deliver a request's webRequest events well after the page's
    // load and timing (a CI run saw a record of two names a second after the load).
    // As installed (no webRequest) the extension does not see where the redirected image went: every other name.
    const needed = Object.values(HOSTS).filter((n) => n !== HOSTS.redirected);
    let seen = '';
    let since = 0;
    let last: PageRecord | undefined;
    const complete = (ms: number) => poll('the page record', ms, async () => {
      const r = (await sendFromPage(ext, { type: 'page-report', tabId })) as { ok: boolean; record?: PageRecord };
      if (!r.ok || r.record!.onLoadMs === null) return undefined;
      last = r.record;
      const names = r.record!.hosts.map((h) => h.name);
      if (!needed.every((n) => names.includes(n))) return undefined;
      if (names.join(' ') !== seen) [seen, since] = [names.join(' '), Date.now()];
      return Date.now() - since >= SETTLE_MS ? r.record : undefined;
    });
    const holds = () => (last ? last.hosts.map((h) => h.name).join(', ') : 'nothing loaded');
    const report = await complete(30_000).catch((err: Error) => {
      throw new Error(`${err.message}; the record holds ${holds()}, the page needs ${needed.join(', ')}`);
    });
    say(`visited ${report.url}: ${report.hosts.length} hostnames (${report.hosts.map((h) => h.name).join(', ')})`);
    expectOk('measure-start', await sendFromPage(ext, { type: 'measure-start', tabId }));
    const done = await finishedMeasurement(ext, tabId, 120_000);
    if (!done.measurement) throw new Error(`the measurement cannot start: ${done.blocked?.code}: ${done.blocked?.message}`);
    say(`measurement ${done.measurement!.state}: ${done.records?.length ?? 0} lookups of ${done.measurement!.plan.hosts.length} hostnames`);
    const panel = await b.openExtensionPage(`popup/popup.html?tab=${tabId}`);
    await panel.setViewport({ width: 900, height: 1200 });
    await poll('the cost panel', 20_000, async () =>
      (await panel.evaluate(() => document.getElementById('cost')?.dataset.state)) === 'results' ? true : undefined);
    say(`the panel's answer: ${await panel.evaluate(() => document.getElementById('verdict')?.textContent ?? '(none)')}`);
    writeFileSync(join(out, `page-report-${name}.json`), JSON.stringify(report, null, 2));
    writeFileSync(join(out, `measurement-${name}.json`), JSON.stringify(done, null, 2));
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
        await p.screenshot({ path: join(out, file), fullPage: true });
        shots.push(file);
      }
    }
    say(`wrote to ${out}: ${shots.join(', ')}, page-report-${name}.json and measurement-${name}.json`);
  } finally {
    await b.close();
    await lab.stop();
    await site.close();
    rmSync(work, { recursive: true, force: true });
  }
}

const name: BrowserName = process.argv.includes('--firefox') ? 'firefox' : 'chromium';
const outAt = process.argv.indexOf('--out');
const out = resolve(outAt > 0 && process.argv[outAt + 1] ? process.argv[outAt + 1]! : join(ROOT, 'demo-output'));
if (process.env.DNSCOST_DEMO_INNER) {
  await inner(name, out);
} else {
  if (process.getuid?.() !== 0) throw new Error('the demo runs the browser in its own network and mount namespace: run it as root');
  if (!findBrowser(name)) throw new Error(`${name} is not installed: run scripts/setup`);
  // Re-run inside fresh network and mount namespaces: the browser reaches the lab's addresses and nothing else, and
  // the /etc/resolv.conf it reads is the demo's own (bind-mounted there; the machine's file is never written).
  execFileSync('unshare', ['--net', '--mount', '--propagation', 'private', process.execPath, fileURLToPath(import.meta.url), ...(name === 'firefox' ? ['--firefox'] : []), '--out', out], {
    env: { ...process.env, DNSCOST_DEMO_INNER: '1' },
    stdio: 'inherit',
    timeout: 300_000,
  });
}
