// Benchmark (not a test): the extension's effect on onLoad in headless Chromium or Firefox: the same local page loaded
// with the extension, with a floor extension (same permissions, no-op listeners), with an empty extension, without,
// and in Chromium with the peer people compare it with (IPvFoo, unpacked from ../shared/peers/ipvfoo) — see inner().
// Target: the ratio's 95 % interval within 1.01, and within 1 against the peer. Runs in a loopback-only namespace.
//   node dist/bench/extension-overhead.js [--browser chromium|firefox] [--loads 30] [--blocks 10] [--profile none]
//     [--pause 0] [--peer DIR] [--floors …] [--seed 1] [--out bench/results/extension-overhead.md] [--smoke]
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import puppeteer, { type Browser } from 'puppeteer-core';
import { CHROMIUM_KEY, GECKO_ID, HOST_NAME } from '../common/extension-ids.js';
import { percentile, seededRandom, shuffled, summarize } from '../common/stats.js';
import { findBrowser, launchWithExtension, type BrowserName, type LaunchOptions } from '../lab/browsers.js';
import { extensionVariant, extensionWithWebRequest, requireBuiltExtension } from '../lab/extension-build.js';
import { startNetem } from '../lab/netns.js';
import { profileByName } from '../lab/profiles.js';
import { NORMAL_PAGE_HOSTS, startSite } from '../lab/site/server.js';
import { inLoopbackNamespace } from './loopback-namespace.js';
import { timedLoads } from './onload.js';
import { shiftInterval } from './validate/interval.js';
import { reportPath, SMOKE_OPTION } from './smoke.js';

const { values } = parseArgs({
  options: {
    browser: { type: 'string', default: 'chromium' }, loads: { type: 'string', default: '30' }, profile: { type: 'string', default: 'none' },
    pause: { type: 'string', default: '0' }, peer: { type: 'string', default: '../shared/peers/ipvfoo/src' }, floors: { type: 'string', default: '' },
    blocks: { type: 'string', default: '10' }, seed: { type: 'string', default: '1' }, out: { type: 'string' }, ...SMOKE_OPTION,
  },
});
const BROWSER = values.browser as BrowserName;
if (BROWSER !== 'chromium' && BROWSER !== 'firefox') throw new Error(`--browser: chromium or firefox, not ${values.browser}`);
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
/**
 * --blocks N: the loads of each variant are split into N blocks, and each block runs every variant once in an order of
 * its own (seeded shuffle, --seed): a drift of the machine over the run (two runs of 3 blocks 5 minutes apart read
 * 1.157 and 1.088 for the same build) then falls on every variant alike instead of on whichever ran last.
 */
const BLOCKS = values.smoke ? 1 : Number(values.blocks);
if (!(Number.isInteger(BLOCKS) && BLOCKS >= 1 && BLOCKS <= LOADS)) throw new Error(`--blocks: a whole number from 1 to --loads (${LOADS}), not ${values.blocks}`);
/** The peer extension (Chromium: its unpacked MV3 build), when there is one at --peer (`--peer none`: no peer). */
const PEER_DIR = BROWSER === 'chromium' && existsSync(join(values.peer!, 'manifest.json')) ? resolve(values.peer!) : null;
/**
 * --floors nav,perm,rare,content,late,granted,bare,top: floors of their own beside the floor, each one way a recorder could observe a
 * page, to price them apart: `nav` webNavigation and tabs listeners only (no webRequest); `perm` those with the
 * webRequest permission and no webRequest listener; `rare` those and webRequest's rare events (onBeforeRedirect,
 * onErrorOccurred); `content` a content script in every frame that reads Resource Timing at the load event and sends
 * it to the background in one message (no webRequest, no webNavigation); `late` no content script: when the page has
 * loaded (webNavigation's onCompleted of its top frame) the background runs the same reading in every frame
 * (scripting.executeScript). `granted`, `bare` and `top` are no floors but dnscost itself: with its optional
 * webRequest permission granted (lab/extension-build.ts extensionWithWebRequest); without its content script (the
 * background alone); with its content script in the top frame only.
 */
const FLOORS = (values.floors ? values.floors.split(',') : []) as FloorKind[];
type FloorKind = 'nav' | 'perm' | 'rare' | 'content' | 'late' | DnscostKind;
/** Builds of dnscost itself, changed in one way (see --floors). */
type DnscostKind = 'granted' | 'bare' | 'top';
const DNSCOST_KINDS: readonly string[] = ['granted', 'bare', 'top'];
for (const f of FLOORS) if (!['nav', 'perm', 'rare', 'content', 'late', ...DNSCOST_KINDS].includes(f)) throw new Error(`--floors: nav, perm, rare, content, late, granted, bare or top, not ${f}`);
/** Firefox's cache off by pref in every run (its WebDriver BiDi has no per-page switch in every version). */
const FIREFOX_NO_CACHE = { 'browser.cache.disk.enable': false, 'browser.cache.memory.enable': false };

async function plainBrowser(executablePath: string, profile: string): Promise<Browser> {
  if (BROWSER === 'firefox') {
    return puppeteer.launch({ browser: 'firefox', executablePath, headless: true, extraPrefsFirefox: FIREFOX_NO_CACHE });
  }
  return puppeteer.launch({
    browser: 'chrome', executablePath, headless: true, userDataDir: profile,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

async function onLoads(browser: Browser, url: string, n: number): Promise<number[]> {
  const page = await browser.newPage();
  if (BROWSER === 'chromium') await page.setCacheEnabled(false);
  await page.goto(url, { waitUntil: 'load' }); // warm-up load, not counted (process start-up, first compile)
  const out = await timedLoads(page, url, n, PAUSE_MS);
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

/** One way of loading the page: a launcher, and its row in the report. */
interface Variant {
  id: 'without' | 'empty' | 'floor' | 'peer' | 'with' | FloorKind;
  label: string;
  launch(work: string): Promise<{ browser: Browser; close(): Promise<void> }>;
}

/** What the `content` and `late` floors do in a frame: read Resource Timing's hosts once, send them in one message. */
const READ_FRAME = `() => {
  const hosts = new Set(performance.getEntriesByType('resource').map((e) => new URL(e.name).hostname));
  (globalThis.browser ?? chrome).runtime.sendMessage({ url: location.href, hosts: [...hosts] });
}`;
const NOOP = `const api = globalThis.browser ?? chrome;
const noop = () => {};
const all = { urls: ['<all_urls>'] };
`;
const NAV = "for (const e of ['onBeforeNavigate', 'onCommitted', 'onCompleted']) api.webNavigation[e].addListener(noop);\napi.tabs.onRemoved.addListener(noop);\n";
const HOST = `api.runtime.connectNative('${HOST_NAME}').postMessage({ id: 1, type: 'hello' });\n`;
/**
 * Each floor's background: no-op listeners (the floor: on every event a webRequest recorder listens to, with its
 * filters).
 */
const FLOOR_SCRIPTS: Record<'floor' | Exclude<FloorKind, DnscostKind>, string> = {
  floor: `${NOOP}${NAV}for (const e of ['onBeforeRequest', 'onBeforeRedirect', 'onCompleted', 'onErrorOccurred']) api.webRequest[e].addListener(noop, all);
api.webRequest.onResponseStarted.addListener(noop, { urls: ['<all_urls>'], types: ['main_frame'] });
${HOST}`,
  nav: `${NOOP}${NAV}${HOST}`,
  perm: `${NOOP}${NAV}${HOST}`,
  rare: `${NOOP}${NAV}for (const e of ['onBeforeRedirect', 'onErrorOccurred']) api.webRequest[e].addListener(noop, all);\n${HOST}`,
  content: `${NOOP}api.runtime.onMessage.addListener(noop);\n${HOST}`,
  late: `${NOOP}api.runtime.onMessage.addListener(noop);
api.webNavigation.onCompleted.addListener(({ tabId, frameId }) => {
  if (frameId === 0) api.scripting.executeScript({ target: { tabId, allFrames: true }, func: ${READ_FRAME} }).catch(noop);
});
${HOST}`,
};
/** The `content` floor's script, in every frame from document_start: READ_FRAME at the load event. */
const CONTENT_SCRIPT = `addEventListener('load', () => setTimeout(${READ_FRAME}, 0));\n`;

/**
 * An extension of our own for the benchmark, under dnscost's identity (Chromium's key, Firefox's id: the host admits
 * it and Firefox installs it as dnscost's): a floor with dnscost's permissions and its FLOOR_SCRIPTS, or empty.
 */
function benchExtension(kind: 'empty' | 'floor' | Exclude<FloorKind, DnscostKind>): string {
  const dir = mkdtempSync(join(tmpdir(), `dnscost-${kind}-ext-`));
  const identity = BROWSER === 'chromium' ? { key: CHROMIUM_KEY } : { browser_specific_settings: { gecko: { id: GECKO_ID } } };
  const background = BROWSER === 'chromium' ? { service_worker: 'bg.js' } : { scripts: ['bg.js'] };
  const permissions = ['nativeMessaging', 'storage', ...(kind === 'content' ? [] : ['webNavigation', 'tabs']), ...(kind === 'floor' || kind === 'rare' || kind === 'perm' ? ['webRequest'] : []), ...(kind === 'late' ? ['scripting'] : [])];
  const content = kind === 'content' ? { content_scripts: [{ matches: ['<all_urls>'], all_frames: true, run_at: 'document_start', js: ['content.js'] }] } : {};
  const manifest = kind === 'empty'
    ? { manifest_version: 3, name: 'empty', version: '1.0', ...identity }
    : { manifest_version: 3, name: `floor ${kind}`, version: '1.0', ...identity, background, permissions, host_permissions: ['<all_urls>'], ...content };
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
  if (kind !== 'empty') writeFileSync(join(dir, 'bg.js'), FLOOR_SCRIPTS[kind]);
  if (kind === 'content') writeFileSync(join(dir, 'content.js'), CONTENT_SCRIPT);
  return dir;
}

const FLOOR_LABELS: Record<'floor' | FloorKind, string> = {
  floor: 'with the floor: webNavigation and webRequest, no-op listeners on the events a webRequest recorder hears, host connected',
  nav: 'with a floor of webNavigation and tabs listeners only (no webRequest), host connected',
  perm: 'with a floor of those and the webRequest permission, no webRequest listener, host connected',
  rare: "with a floor of those and webRequest's rare events (onBeforeRedirect, onErrorOccurred), host connected",
  content: 'with a floor of a content script in every frame reading Resource Timing at load (one message), host connected',
  late: 'with a floor of webNavigation and, once the page has loaded, the same reading run in every frame (scripting), host connected',
  granted: 'with the extension, its optional webRequest permission granted',
  bare: 'with the extension without its content script (its background alone)',
  top: 'with the extension, its content script in the top frame only',
};

/** A copy of dnscost's build changed in one way (--floors granted, bare, top). */
function dnscostBuild(kind: DnscostKind): string {
  const dir = mkdtempSync(join(tmpdir(), `dnscost-${kind}-`));
  if (kind === 'granted') return extensionWithWebRequest(BROWSER, dir);
  return extensionVariant(BROWSER, dir, (m: { content_scripts?: Array<{ all_frames?: boolean }> }) => {
    if (kind === 'bare') delete m.content_scripts;
    else for (const c of m.content_scripts ?? []) c.all_frames = false;
  });
}

/**
 * The same local page (9 hostnames, a redirect and an iframe) loaded N times in each variant, on fresh profiles, the
 * cache off, in blocks of every variant in a shuffled order; onLoad is the navigation entry's loadEventStart. The
 * variants: without an extension; with an empty one; with the floor (dnscost's permissions, a native host connection
 * and no-op listeners on the same events: what the browser charges for routing a page's requests and navigations
 * past an extension that observes them); in Chromium with the peer (IPvFoo, which observes requests the same way); with dnscost (the real
 * native host, page recording on, no consent so nothing is measured).
 */
async function inner(): Promise<void> {
  const executablePath = findBrowser(BROWSER)!;
  const extensionDir = requireBuiltExtension(BROWSER);
  const site = await startSite();
  const url = site.url(NORMAL_PAGE_HOSTS.start, '/');
  const delayer = PROFILE.rttMs > 0 ? await delaySite(site.port) : null;
  const emptyDir = benchExtension('empty');
  const floors = (['floor', ...FLOORS] as const).map((kind) => ({
    kind, dir: DNSCOST_KINDS.includes(kind) ? dnscostBuild(kind as DnscostKind) : benchExtension(kind as Exclude<FloorKind, DnscostKind>),
  }));
  const firefoxPrefs = FIREFOX_NO_CACHE;
  // A bench extension's background (or the peer's worker) starts, and the host answers, before the first load.
  const started = async (o: Omit<LaunchOptions, 'workDir'>, work: string) => {
    const b = await launchWithExtension(BROWSER, { ...o, workDir: work });
    await new Promise((r) => setTimeout(r, 1000));
    return b;
  };
  const dnscost = async (dir: string, work: string) => {
    const b = await launchWithExtension(BROWSER, { extensionDir: dir, workDir: work, firefoxPrefs });
    // The extension is running (and its host connected) before the first load; the page is then closed so an open
    // extension page's own polling is not counted against the extension.
    await (await b.openExtensionPage('popup/popup.html')).close();
    return b;
  };
  const variants: Variant[] = [
    { id: 'with', label: `with the extension as installed${BROWSER === 'chromium' ? ' (no webRequest)' : ''}`, launch: (work) => dnscost(extensionDir, work) },
    ...floors.map(({ kind, dir }): Variant => ({
      id: kind, label: FLOOR_LABELS[kind], launch: (work) => (DNSCOST_KINDS.includes(kind) ? dnscost(dir, work) : started({ extensionDir: dir, firefoxPrefs }, work)),
    })),
    ...(PEER_DIR ? [{ id: 'peer' as const, label: 'with the peer, IPvFoo (unpacked)', launch: (work: string) => started({ extensionDir: PEER_DIR, registerHost: false }, work) }] : []),
    { id: 'empty', label: 'with an empty MV3 extension', launch: (work) => launchWithExtension(BROWSER, { extensionDir: emptyDir, workDir: work, registerHost: false, firefoxPrefs }) },
    {
      id: 'without', label: 'without the extension',
      launch: async (work) => {
        const browser = await plainBrowser(executablePath, join(work, 'profile'));
        return { browser, close: () => browser.close() };
      },
    },
  ];
  const loads = new Map<Variant['id'], number[]>(variants.map((v) => [v.id, []]));
  const random = seededRandom(Number(values.seed));
  try {
    for (let block = 0; block < BLOCKS; block++) {
      // LOADS over BLOCKS blocks: the first LOADS % BLOCKS blocks take one load more.
      const per = Math.floor(LOADS / BLOCKS) + (block < LOADS % BLOCKS ? 1 : 0);
      for (const v of shuffled(variants, random)) {
        const work = mkdtempSync(join(tmpdir(), 'dnscost-overhead-'));
        const b = await v.launch(work);
        try {
          loads.get(v.id)!.push(...(await onLoads(b.browser, url, per)));
        } finally {
          await b.close();
          rmSync(work, { recursive: true, force: true });
        }
      }
    }
  } finally {
    delayer?.kill('SIGTERM');
    await site.close();
    rmSync(emptyDir, { recursive: true, force: true });
    for (const { dir } of floors) rmSync(dir, { recursive: true, force: true });
  }
  const s = (id: Variant['id']) => summarize(loads.get(id)!);
  /**
   * a's onLoad against b's as a ratio with its 95 % interval: the Hodges–Lehmann shift of log onLoad and its
   * distribution-free interval (bench/validate/interval.ts), back to a ratio. The target holds when the interval's
   * upper end is within it, not the estimate alone.
   */
  const ratio = (a: Variant['id'], b: Variant['id']) => {
    const la = loads.get(a)!.map(Math.log);
    const lb = loads.get(b)!.map(Math.log);
    const diffs = la.flatMap((x) => lb.map((y) => x - y)).sort((x, y) => x - y);
    const mid = Math.exp(percentile(diffs, 50)!).toFixed(3);
    const ci = shiftInterval(lb, la);
    return ci ? `${mid} [${Math.exp(ci[0]).toFixed(3)}…${Math.exp(ci[1]).toFixed(3)}]` : mid;
  };
  const row = (v: Variant) => {
    const x = s(v.id);
    return `| ${v.label} | ${x.n} | ${x.median!.toFixed(1)} | ${x.p5!.toFixed(1)} | ${x.p95!.toFixed(1)} | ${x.mean!.toFixed(1)} | ${x.rsd!.toFixed(1)} |`;
  };
  const command = ['node dist/bench/extension-overhead.js', BROWSER !== 'chromium' ? `--browser ${BROWSER}` : '', `--loads ${LOADS}`, `--blocks ${BLOCKS}`, `--seed ${values.seed}`,
    PROFILE.name !== 'none' ? `--profile ${PROFILE.name}` : '', PAUSE_MS ? `--pause ${PAUSE_MS}` : '', FLOORS.length ? `--floors ${FLOORS.join(',')}` : '', BROWSER === 'chromium' && !PEER_DIR ? `--peer ${values.peer}` : '', values.out ? `--out ${values.out}` : ''].filter(Boolean).join(' ');
  const name = BROWSER === 'chromium' ? 'Chromium' : 'Firefox';
  const report = `# Benchmark: the extension's effect on onLoad (headless ${name})

Command: \`${command}\` (as root, after \`scripts/setup\`)
Date: ${new Date().toISOString()}; machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Debian ${name}; page: the local test
site's page with 9 hostnames, a redirect and an iframe (lab/site), served on loopback${PROFILE.rttMs > 0 ? ` with the site's packets held for a ${PROFILE.rttMs} ms RTT (${PROFILE.name}; delay${PROFILE.jitterMs ? ' and jitter' : ''} only)` : ''}; cache disabled; ${PAUSE_MS ? `${PAUSE_MS} ms between loads` : 'loads back to back'}; fresh
profile per block; ${BLOCKS} blocks, each running every variant once in its own shuffled order; one unrecorded warm-up
load per block. Ratios: the Hodges–Lehmann estimate of the ratio (the median of all pairwise ratios of two variants'
loads) with its 95 % interval. With the extension: the real
native host connected, page recording on, no consent (nothing is measured, as before a person agrees); it observes pages
through webNavigation and a content script in every frame, and webRequest in Firefox (in Chromium only where granted).

| run | loads | onLoad median ms | p5 | p95 | mean | rsd % |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
${[...variants].reverse().map(row).join('\n')}

Ratio with / without: **${ratio('with', 'without')}** (target: the interval's upper end ≤ 1.01); with / with an empty extension:
**${ratio('with', 'empty')}** (beyond loading any extension at all); floor / without:
**${ratio('floor', 'without')}** (what the browser charges for observing the page's requests and navigations);
with / floor: **${ratio('with', 'floor')}** (what dnscost's own recording code costs beyond that)${PEER_DIR ? `; with / IPvFoo:
**${ratio('with', 'peer')}** (target: the interval's upper end ≤ 1, dnscost no heavier than the peer); IPvFoo / without: **${ratio('peer', 'without')}**` : ''}${FLOORS.map((f) => `; ${DNSCOST_KINDS.includes(f) ? `dnscost ${f === 'granted' ? 'with webRequest granted' : f === 'bare' ? 'without its content script' : 'with its content script in the top frame only'}` : `${f} floor`} / without: **${ratio(f, 'without')}**`).join('')}.
`;
  process.stdout.write(report);
  const out = reportPath(values);
  if (out) writeFileSync(out, report);
}

await inLoopbackNamespace(import.meta.url, inner, 600_000);
