// One page load in a real browser, run inside a lab namespace (lab/har/): the browser trusts the lab CA (Chromium
// through an NSS db in its HOME, Firefox through its profile's certificate database, both written with certutil),
// resolves names through whatever /etc/resolv.conf the caller bind-mounted, loads the URL with its cache off, reports
// the page's timings, then stays open so scripts can still start what the page starts after onload. One warm-up load
// first (a data: URL), so browser start-up does not compete with the page for the CPU.
//
// Run where the browser must live (its DevTools endpoint is on that namespace's loopback, so the driver must be too):
//   ip netns exec NS unshare --mount --propagation private sh -c \
//     "mount --bind RESOLV /etc/resolv.conf && exec node dist/lab/har/load.js --browser chromium --url URL --ca CA --work DIR"
// prints `loaded {json}` (PageLoad) after the load event, or `failed {json}`; it closes the browser and exits after
// --linger ms (default 30 000) or on SIGTERM.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import puppeteer, { type Browser } from 'puppeteer-core';
import { certDb, findBrowser, type BrowserName } from '../browsers.js';

/** What one load reports (times in ms from the navigation's start, as the page's Navigation Timing gives them). */
export interface PageLoad {
  browser: string;
  url: string;
  /** The URL the page ended on (after redirects). */
  finalUrl: string;
  /** loadEventStart: onLoad fired when this is > 0. */
  onLoadMs: number;
  domContentLoadedMs: number;
  responseEndMs: number;
  /** Resource Timing entries seen by the top document at load. */
  resources: number;
  /** The first navigation was aborted with ERR_NETWORK_CHANGED and this load is the second. */
  retried?: boolean;
}

const LOAD_TIMEOUT_MS = 90_000;

/**
 * Chromium switches that load a HAR's http URLs as http where the browser allows it: no HTTPS-Upgrades of http
 * navigations, and an http page that HSTS preloading moved to https (a HAR older than the host's preload entry) may
 * still load its http scripts, stylesheets, frames and fetches instead of blocking them as mixed content.
 */
export const CHROMIUM_AS_RECORDED = ['--disable-features=OptimizationHints,MediaRouter,HttpsUpgrades', '--allow-running-insecure-content'];
/** Firefox's equivalent preferences: no HTTPS-First, no blocking of active mixed content. */
export const FIREFOX_AS_RECORDED = { 'dom.security.https_first': false, 'dom.security.https_first_schemeless': false, 'security.mixed_content.block_active_content': false };

/** Launches `name` headless with a fresh profile under `work` that trusts `caFile`. */
export async function launchTrusting(name: BrowserName, work: string, caFile: string): Promise<Browser> {
  const executablePath = findBrowser(name);
  if (!executablePath) throw new Error(`${name} is not installed`);
  const home = join(work, 'home');
  if (name === 'chromium') {
    // Chromium on Linux trusts roots in $HOME/.pki/nssdb.
    certDb(join(home, '.pki', 'nssdb'), caFile);
    return puppeteer.launch({
      browser: 'chrome', executablePath, headless: true, userDataDir: join(work, 'chromium-profile'),
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update',
        '--disable-sync', '--disk-cache-size=1', ...CHROMIUM_AS_RECORDED],
      env: { ...process.env, HOME: home }, timeout: 60_000, protocolTimeout: LOAD_TIMEOUT_MS + 30_000,
    });
  }
  // Firefox trusts roots in its profile's own cert9.db.
  const profile = join(work, 'firefox-profile');
  certDb(profile, caFile);
  return puppeteer.launch({
    browser: 'firefox', executablePath, headless: true, userDataDir: profile,
    extraPrefsFirefox: { 'browser.cache.disk.enable': false, 'network.trr.mode': 5, ...FIREFOX_AS_RECORDED },
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_CACHE_HOME: join(home, '.cache') },
    timeout: 60_000, protocolTimeout: LOAD_TIMEOUT_MS + 30_000,
  });
}

/** One unmeasured load of a page that names no host, then a pause, so start-up work does not share the CPU with the load. */
export async function warmUp(browser: Browser, pauseMs = 500): Promise<void> {
  const page = await browser.newPage();
  await page.goto('data:text/html,<p>warm-up</p>', { waitUntil: 'load' });
  await page.close();
  await new Promise((r) => setTimeout(r, pauseMs));
}

/**
 * Loads `url` once in `browser` (cache off) and reads the page's timings once its load event has run. Chromium aborts
 * a navigation with ERR_NETWORK_CHANGED when it sees a netlink event in its fresh namespace (the validation saw it
 * once in 960 loads, fresh-clone CI runs in har-site.test.ts): not the page's doing, so it is loaded once more, in a
 * new tab (a CI run that reloaded in the aborted tab read that tab's timings before its load event: onLoad 0).
 */
export async function loadPage(browser: Browser, url: string): Promise<PageLoad> {
  const tab = async () => {
    const p = await browser.newPage();
    await p.setCacheEnabled(false).catch(() => undefined);
    return p;
  };
  let retried = false;
  let page = await tab();
  try {
    await page.goto(url, { waitUntil: 'load', timeout: LOAD_TIMEOUT_MS });
  } catch (e) {
    if (!String(e).includes('ERR_NETWORK_CHANGED')) throw e;
    retried = true;
    await page.close().catch(() => undefined);
    page = await tab();
    await page.goto(url, { waitUntil: 'load', timeout: LOAD_TIMEOUT_MS });
  }
  // loadEventEnd is set once the load handlers have returned.
  await page.waitForFunction(() => ((performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined)?.loadEventEnd ?? 0) > 0,
    { polling: 50, timeout: LOAD_TIMEOUT_MS });
  const t = await page.evaluate(() => {
    const n = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
    return { finalUrl: location.href, onLoadMs: n?.loadEventStart ?? 0, domContentLoadedMs: n?.domContentLoadedEventStart ?? 0, responseEndMs: n?.responseEnd ?? 0, resources: performance.getEntriesByType('resource').length };
  });
  return { browser: await browser.version(), url, ...t, ...(retried ? { retried } : {}) };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: { browser: { type: 'string', default: 'chromium' }, url: { type: 'string' }, ca: { type: 'string' }, work: { type: 'string' }, linger: { type: 'string', default: '30000' } },
  });
  let browser: Browser | undefined;
  const quit = (code: number) => void (browser?.close() ?? Promise.resolve()).catch(() => undefined).then(() => process.exit(code));
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => quit(0));
  try {
    if (!values.url || !values.ca || !values.work || (values.browser !== 'chromium' && values.browser !== 'firefox')) {
      throw new Error('usage: load.js --browser chromium|firefox --url URL --ca CA.pem --work DIR [--linger MS]');
    }
    browser = await launchTrusting(values.browser, values.work, values.ca);
    await warmUp(browser);
    const load = await loadPage(browser, values.url);
    process.stdout.write(`loaded ${JSON.stringify(load)}\n`);
    setTimeout(() => quit(0), Number(values.linger));
  } catch (e) {
    process.stdout.write(`failed ${JSON.stringify({ error: String(e) })}\n`);
    quit(1);
  }
}
