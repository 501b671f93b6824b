// What dnscost's own code costs a page load in CPU (Chromium): its background (the service worker) and its content
// script, each sampled by V8's profiler (DevTools' Profiler domain, 100 µs) over N loads of the lab site's page (9
// hostnames, a redirect and an iframe) with a pause between loads, every load's work included (the background's events,
// its storage writes, the sampler's work a few seconds after each page). The onLoad ratio (extension-overhead.ts) says
// what a page pays in all, at ±5 % a run on loopback; this says, with little noise, how much of it is dnscost's own
// JavaScript and where. The browser's own work for an extension (injecting a content script, routing events to the
// worker, the storage backend) is in neither profile. In a loopback-only network namespace.
//
//   node dist/bench/extension-cpu.js [--loads 60] [--pause 1000] [--extension DIR] [--out bench/results/extension-cpu.md]
//        [--smoke]
// --extension: another unpacked Chromium build of dnscost (an older one, to compare), default build/extension-chromium.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { CDPSession } from 'puppeteer-core';
import { launchWithExtension } from '../lab/browsers.js';
import { requireBuiltExtension } from '../lab/extension-build.js';
import { NORMAL_PAGE_HOSTS, startSite } from '../lab/site/server.js';
import { inLoopbackNamespace } from './loopback-namespace.js';
import { timedLoads } from './onload.js';
import { reportPath, SMOKE_OPTION } from './smoke.js';

const { values } = parseArgs({ options: { loads: { type: 'string', default: '60' }, pause: { type: 'string', default: '1000' }, extension: { type: 'string' }, out: { type: 'string' }, ...SMOKE_OPTION } });
const LOADS = values.smoke ? 3 : Number(values.loads);
const PAUSE_MS = Number(values.pause);
if (!(Number.isInteger(LOADS) && LOADS >= 1 && LOADS <= 1000)) throw new Error(`--loads: a whole number from 1 to 1000, not ${values.loads}`);
if (!(Number.isInteger(PAUSE_MS) && PAUSE_MS >= 0 && PAUSE_MS <= 60_000)) throw new Error(`--pause: ms from 0 to 60000, not ${values.pause}`);

interface Profile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  samples: number[];
  timeDeltas: number[];
}

/** Busy time (ms) of a profile, in all and by function: idle, program and DevTools' own evaluations left out. */
function busy(p: Profile, keep: (url: string) => boolean): { total: number; top: Array<[string, number]> } {
  const nodes = new Map(p.nodes.map((n) => [n.id, n.callFrame]));
  const byFn = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const f = nodes.get(p.samples[i]!)!;
    if (f.functionName === '(idle)' || f.functionName === '(program)' || !keep(f.url)) continue;
    const ms = (p.timeDeltas[i] ?? 0) / 1000;
    total += ms;
    const name = `${f.functionName || '(anonymous)'}${f.url ? ` (${f.url.replace(/^.*\//, '')}:${f.lineNumber + 1})` : ''}`;
    byFn.set(name, (byFn.get(name) ?? 0) + ms);
  }
  return { total, top: [...byFn].sort((a, b) => b[1] - a[1]).slice(0, 8) };
}

async function profiling(cdp: CDPSession): Promise<() => Promise<Profile>> {
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
  await cdp.send('Profiler.start');
  return async () => (await cdp.send('Profiler.stop')).profile as unknown as Profile;
}

async function inner(): Promise<void> {
  const site = await startSite();
  const url = site.url(NORMAL_PAGE_HOSTS.start, '/');
  const work = mkdtempSync(join(tmpdir(), 'dnscost-cpu-'));
  const b = await launchWithExtension('chromium', { extensionDir: values.extension ? resolve(values.extension) : requireBuiltExtension('chromium'), workDir: work });
  let report: string;
  try {
    // The worker runs (and its host is connected) before the first load, as in extension-overhead.ts.
    await (await b.openExtensionPage('popup/popup.html')).close();
    const worker = await b.browser.waitForTarget((t) => t.type() === 'service_worker' && t.url().startsWith('chrome-extension://'), { timeout: 15_000 });
    const page = await b.browser.newPage();
    await page.setCacheEnabled(false);
    await page.goto(url, { waitUntil: 'load' }); // warm-up, not counted
    const stopWorker = await profiling(await worker.createCDPSession());
    const stopPage = await profiling(await page.createCDPSession());
    const onLoads = await timedLoads(page, url, LOADS, PAUSE_MS);
    // The sampler's work comes a few seconds after a page (measure-wiring.ts SAMPLE_DELAY_MS): the last page's too.
    await new Promise((r) => setTimeout(r, 4000));
    const w = busy(await stopWorker(), () => true);
    const c = busy(await stopPage(), (u) => u.startsWith('chrome-extension://'));
    onLoads.sort((x, y) => x - y);
    const perLoad = (ms: number) => (ms / LOADS).toFixed(2);
    const rows = (top: Array<[string, number]>) => top.map(([f, ms]) => `| ${f.replace(/\|/g, '\\|')} | ${perLoad(ms)} |`).join('\n');
    report = `# Benchmark: dnscost's own CPU per page load (Chromium)

Command: \`node dist/bench/extension-cpu.js --loads ${LOADS} --pause ${PAUSE_MS}${values.extension ? ` --extension ${values.extension}` : ''}${values.out ? ` --out ${values.out}` : ''}\` (as root, after \`scripts/setup\`)
Date: ${new Date().toISOString()}; machine: ${os.cpus().length} × ${os.cpus()[0]?.model.split(' ')[0] ?? '?'}, Debian Chromium; page: the local test site's
page with 9 hostnames, a redirect and an iframe (lab/site), on loopback; cache off; ${PAUSE_MS} ms between loads; the extension
as installed (no webRequest), its host connected, page recording on, no consent. onLoad median ${onLoads[Math.floor(LOADS / 2)]!.toFixed(1)} ms.

| where | busy ms per load |
| --- | ---: |
| the background (service worker), all its JavaScript and the API calls it makes | ${perLoad(w.total)} |
| the content script (every frame) | ${perLoad(c.total)} |

### The background's busiest functions (self time)

| function | ms per load |
| --- | ---: |
${rows(w.top)}

### The content script's busiest functions (self time)

| function | ms per load |
| --- | ---: |
${rows(c.top)}
`;
    await page.close();
  } finally {
    await b.close();
    await site.close();
    rmSync(work, { recursive: true, force: true });
  }
  const out = reportPath(values);
  if (out) writeFileSync(out, report);
  process.stdout.write(report);
}

await inLoopbackNamespace(import.meta.url, inner, 600_000);
