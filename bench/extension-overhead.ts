// Benchmark (not a test): the extension's effect on onLoad in headless Chromium: the same local page loaded with the
// extension, with a floor extension (same permissions, no-op listeners), with an empty extension and without (see
// inner()). Target: median ratio ≤ 1.01. Runs in a loopback-only namespace.
//   node dist/bench/extension-overhead.js [--loads 30] [--profile none] [--pause 0] [--out bench/results/extension-overhead.md] [--smoke]
import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import puppeteer, { type Browser } from 'puppeteer-core';
import { CHROMIUM_KEY, HOST_NAME } from '../common/extension-ids.js';
import { summarize } from '../common/stats.js';
import { findBrowser, launchWithExtension } from '../lab/browsers.js';
import { requireBuiltExtension } from '../lab/extension-build.js';
import { startNetem } from '../lab/netns.js';
import { profileByName } from '../lab/profiles.js';
import { NORMAL_PAGE_HOSTS, startSite } from '../lab/site/server.js';
import { inLoopbackNamespace } from './loopback-namespace.js';
import { reportPath, SMOKE_OPTION } from './smoke.js';

const { values } = parseArgs({ options: { loads: { type: 'string', default: '30' }, profile: { type: 'string', default: 'none' }, pause: { type: 'string', default: '0' }, out: { type: 'string' }, ...SMOKE_OPTION } });
/**
 * --pause MS waits between loads (default 0: back to back, so what the extension does after a load — the timing
 * report, storage writes — competes with the next load; a person reading a page leaves it that time).
 */
const PAUSE_MS = Number(values.pause);
// --smoke: one load per block.
const LOADS = values.smoke ? 3 : Number(values.loads);
/**
 * --profile NAME (lab/profiles.ts) holds the site's packets for the profile's RTT (and jitter) with the lab's netem
 * delayer on loopback, so the page loads as over that network (no rate or loss: a delay only).
 */
const PROFILE = profileByName(values.profile!);
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
    if (PAUSE_MS > 0) await new Promise((r) => setTimeout(r, PAUSE_MS));
    await page.goto(url, { waitUntil: 'load', timeout: 20_000 });
    out.push(await page.evaluate(() => (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming).loadEventStart));
  }
  await page.close();
  return out;
}

/**
 * Holds every packet to or from the site's port for half the profile's RTT (each direction), through the lab's
 * netem delayer on an NFQUEUE of loopback's INPUT; nothing else on loopback (DevTools, the host) is delayed.
 */
async function delaySite(port: number): Promise<ChildProcess> {
  const child = await startNetem({ queue: 7, delayMs: PROFILE.rttMs / 2, jitterMs: PROFILE.jitterMs / 2 });
  for (const tables of ['iptables', 'ip6tables']) {
    for (const dir of ['--dport', '--sport']) execFileSync(tables, ['-A', 'INPUT', '-i', 'lo', '-p', 'tcp', dir, String(port), '-j', 'NFQUEUE', '--queue-num', '7'], { timeout: 10_000 });
  }
  return child;
}

/**
 * The same local page (9 hostnames, a redirect and an iframe) loaded N times with the extension (and the real native
 * host, page recording on, no consent so nothing is measured), N times with an extension that has the same
 * permissions and only no-op listeners on the same events (what the browser charges for the APIs the recording
 * needs), N times with an empty extension, and N times without, on fresh profiles, cache disabled, in alternating
 * blocks; onLoad is the navigation entry's loadEventStart.
 */
async function inner(): Promise<void> {
  const executablePath = findBrowser('chromium')!;
  const extensionDir = requireBuiltExtension('chromium');
  const site = await startSite();
  const url = site.url(NORMAL_PAGE_HOSTS.start, '/');
  const delayer = PROFILE.rttMs > 0 ? await delaySite(site.port) : null;
  const withExt: number[] = [];
  const without: number[] = [];
  const empty: number[] = [];
  // An empty MV3 extension (a manifest and nothing else) separates what any loaded extension costs from ours.
  const emptyDir = mkdtempSync(join(tmpdir(), 'dnscost-empty-ext-'));
  writeFileSync(join(emptyDir, 'manifest.json'), JSON.stringify({ manifest_version: 3, name: 'empty', version: '1.0' }));
  // The floor: the same permissions, a native host connection and no-op listeners on every event the recorder
  // listens to, with the same filters (extension/src/background/page-listeners.ts, measure-wiring.ts). What the
  // browser charges for routing a page's requests and navigations past an extension that observes them.
  const floorDir = mkdtempSync(join(tmpdir(), 'dnscost-floor-ext-'));
  writeFileSync(join(floorDir, 'manifest.json'), JSON.stringify({
    manifest_version: 3, name: 'floor', version: '1.0', key: CHROMIUM_KEY,
    permissions: ['nativeMessaging', 'storage', 'webRequest', 'webNavigation', 'tabs'], host_permissions: ['<all_urls>'], background: { service_worker: 'sw.js' },
  }));
  writeFileSync(join(floorDir, 'sw.js'), `const noop = () => {};
const all = { urls: ['<all_urls>'] };
for (const e of ['onBeforeNavigate', 'onCommitted', 'onCompleted']) chrome.webNavigation[e].addListener(noop);
for (const e of ['onBeforeRequest', 'onBeforeRedirect', 'onCompleted', 'onErrorOccurred']) chrome.webRequest[e].addListener(noop, all);
chrome.webRequest.onResponseStarted.addListener(noop, { urls: ['<all_urls>'], types: ['main_frame'] });
chrome.tabs.onRemoved.addListener(noop);
chrome.runtime.connectNative('${HOST_NAME}').postMessage({ id: 1, type: 'hello' });
`);
  const floor: number[] = [];
  try {
    for (let block = 0; block < BLOCKS; block++) {
      const per = Math.ceil(LOADS / BLOCKS);
      for (const mode of block % 2 === 0 ? ['with', 'floor', 'empty', 'without'] : ['without', 'empty', 'floor', 'with']) {
        const work = mkdtempSync(join(tmpdir(), 'dnscost-overhead-'));
        if (mode === 'floor') {
          const b = await launchWithExtension('chromium', { extensionDir: floorDir, workDir: work });
          await new Promise((r) => setTimeout(r, 1000)); // the worker starts and the host answers
          floor.push(...(await onLoads(b.browser, url, per)));
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
    delayer?.kill('SIGTERM');
    await site.close();
  }
  rmSync(emptyDir, { recursive: true, force: true });
  rmSync(floorDir, { recursive: true, force: true });
  const k = summarize(floor);
  const w = summarize(withExt);
  const o = summarize(without);
  const e = summarize(empty);
  const ratio = w.median! / o.median!;
  const row = (name: string, s: ReturnType<typeof summarize>) =>
    `| ${name} | ${s.n} | ${s.median!.toFixed(1)} | ${s.p5!.toFixed(1)} | ${s.p95!.toFixed(1)} | ${s.mean!.toFixed(1)} | ${s.rsd!.toFixed(1)} |`;
  const report = `# Benchmark: the extension's effect on onLoad (headless Chromium)

Command: \`node dist/bench/extension-overhead.js --loads ${LOADS}${PROFILE.name !== 'none' ? ` --profile ${PROFILE.name}` : ''}${PAUSE_MS ? ` --pause ${PAUSE_MS}` : ''}${values.out ? ` --out ${values.out}` : ''}\` (as root, after \`scripts/setup\`)
Date: ${new Date().toISOString()}; machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Debian Chromium; page: the local test
site's page with 9 hostnames, a redirect and an iframe (lab/site), served on loopback${PROFILE.rttMs > 0 ? ` with the site's packets held for a ${PROFILE.rttMs} ms RTT (${PROFILE.name}; delay${PROFILE.jitterMs ? ' and jitter' : ''} only)` : ''}; cache disabled; ${PAUSE_MS ? `${PAUSE_MS} ms between loads` : 'loads back to back'}; fresh
profile per block; ${BLOCKS} alternating blocks; one unrecorded warm-up load per block. With the extension: the real
native host connected, page recording on, no consent (nothing is measured, as before a person agrees).

| run | loads | onLoad median ms | p5 | p95 | mean | rsd % |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
${row('without the extension', o)}
${row('with an empty MV3 extension', e)}
${row('with the floor: same permissions, no-op listeners on the same events, host connected', k)}
${row('with the extension', w)}

Median ratio with / without: **${ratio.toFixed(3)}** (target ≤ 1.01); with / with an empty extension:
**${(w.median! / e.median!).toFixed(3)}** (beyond loading any extension at all); floor / without:
**${(k.median! / o.median!).toFixed(3)}** (what the browser charges for observing the page's requests and navigations);
with / floor: **${(w.median! / k.median!).toFixed(3)}** (what dnscost's own recording code costs beyond that).
`;
  process.stdout.write(report);
  const out = reportPath(values);
  if (out) writeFileSync(out, report);
}

await inLoopbackNamespace(import.meta.url, inner, 600_000);
