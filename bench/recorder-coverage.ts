// Benchmark (not a test): how completely the extension's page record names what a page needed, against the truth:
// the lab resolver's query log for that load (issue 27: every load's record holds ≥ 99 % of the page names the
// resolver was asked, and no name it was not asked). Each page — the HAR pages rebuilt in the lab, the validation's
// synthetic pages — is loaded once per load in a fresh browser with the extension (a fresh profile: no cache answers
// a name), in the lab's client namespace with the lab resolver as the machine's; the record is read back from the
// extension once it holds the load and has not changed for 2 s.
//   node dist/bench/recorder-coverage.js [--browser chromium,firefox] [--har FILE,…] [--pages 10,30] [--loads 3]
//     [--webrequest] [--out bench/results/recorder-coverage.md] [--smoke]
// --webrequest: the build with its optional webRequest permission granted (lab/extension-build.ts), instead of the
// build as installed (webNavigation and every frame's Resource Timing).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { PageRecord } from '../common/page-record.js';
import { isolateDns, zoneWithProbe } from '../lab/browser-dns.js';
import { launchWithExtension, poll, type BrowserName } from '../lab/browsers.js';
import { extensionWithWebRequest, requireBuiltExtension } from '../lab/extension-build.js';
import { sendFromPage, tabIdOf } from '../lab/extension-pages.js';
import { addLiteralAddresses, addSiteAddress } from '../lab/har/address.js';
import { CHROMIUM_AS_RECORDED, FIREFOX_AS_RECORDED } from '../lab/har/load.js';
import { createLabNet } from '../lab/netns.js';
import { startCoreDNS } from '../lab/resolver.js';
import { namesOf } from './validate/analysis.js';
import { harLiterals, labPageGroups, startSite, type PageGroup } from './validate/groups.js';
import { QueryLog } from './validate/querylog.js';
import { SERVER } from './validate/types.js';
import { reportPath, SMOKE_OPTION } from './smoke.js';

const INNER_ENV = 'DNSCOST_COVERAGE_INNER';
/** The record counts as settled when its names have not changed for this long after the load event. */
const SETTLE_MS = 2000;
/** How long one question to the extension may take before it is asked again from a fresh extension page. */
const ASK_MS = 5000;
/** What every load must show (issue 27). */
const TARGET = 0.99;

/** One load's comparison. */
interface LoadResult {
  browser: BrowserName;
  page: string;
  load: number;
  /** Page names the resolver was asked during the load. */
  asked: string[];
  /** Of those, the ones the record lacks. */
  missed: string[];
  /** Of the missed, those first asked before the page's load event (the ones its onLoad can have waited for). */
  missedBeforeLoad: string[];
  /** Names the record holds that the resolver was not asked during the load (any name). */
  extra: string[];
  error: string | null;
}

interface Config {
  serverNs: string;
  harAddress: string;
  browsers: BrowserName[];
  hars: string[];
  pages: number[];
  loads: number;
  webRequest: boolean;
  work: string;
  out: string;
}

/** Loads `url` once in a fresh browser with the extension; returns the settled record (null: none) and any load error. */
async function recordOnce(name: BrowserName, url: string, extensionDir: string, caFile: string, work: string): Promise<{ record: PageRecord | null; error: string | null }> {
  const b = await launchWithExtension(name, {
    extensionDir, workDir: work, caFile, chromiumArgs: CHROMIUM_AS_RECORDED,
    firefoxPrefs: { ...FIREFOX_AS_RECORDED, 'network.dns.disablePrefetch': true, 'network.connectivity-service.enabled': false, 'network.captive-portal-service.enabled': false },
  });
  try {
    let ext = await b.openExtensionPage('options/options.html');
    const tab = await b.browser.newPage();
    let error: string | null = null;
    // Firefox's WebDriver BiDi may report a navigation its page replaced as aborted while the page loads on.
    await tab.goto(url, { waitUntil: 'load', timeout: 45_000 }).catch((err: Error) => {
      if (!/NS_BINDING_ABORTED/.test(String(err))) error = err.message.slice(0, 200);
    });
    const tabId = await tabIdOf(ext, 'http'); // the one web page open (http or https)
    // Headless Chromium runs only the tab in front at full speed: the extension page asks from the front.
    await ext.bringToFront();
    let seen = '';
    let since = Date.now();
    let last: PageRecord | null = null;
    await poll('a settled record', 30_000, async () => {
      const asked = sendFromPage(ext, { type: 'page-report', tabId }) as Promise<{ ok: boolean; record?: PageRecord }>;
      const r = await Promise.race([asked, new Promise<null>((done) => setTimeout(() => done(null), ASK_MS))]);
      if (r === null) {
        // Now and then an extension page stops answering for good after a heavy page loaded: ask from a new one.
        asked.catch(() => undefined);
        ext = await b.openExtensionPage('options/options.html');
        await ext.bringToFront();
        return undefined;
      }
      if (!r.ok || !r.record) return undefined;
      last = r.record;
      const names = namesOf(r.record).sort().join(' ');
      if (names !== seen) [seen, since] = [names, Date.now()];
      return r.record.onLoadMs !== null && Date.now() - since >= SETTLE_MS ? true : undefined;
    }).catch((err: Error) => (error ??= err.message.slice(0, 200)));
    return { record: last, error };
  } finally {
    await b.close().catch(() => undefined);
  }
}

/** Every load of every page of `group`, in each browser; the query log stamps each name asked. */
async function loadsOf(group: PageGroup, c: Config, caFile: string, log: QueryLog, progress: (s: string) => void): Promise<LoadResult[]> {
  const out: LoadResult[] = [];
  for (const browser of c.browsers) {
    const extensionDir = c.webRequest ? extensionWithWebRequest(browser, join(c.work, `extension-${browser}`)) : requireBuiltExtension(browser);
    for (const page of group.pages) {
      for (let load = 1; load <= c.loads; load++) {
        const work = mkdtempSync(join(c.work, `${browser}-`));
        const from = Date.now();
        const { record, error } = await recordOnce(browser, page.url, extensionDir, caFile, work);
        // The browser is closed: every query of the load has been logged by now.
        const window = log.entries.filter((q) => q.at >= from);
        const everyName = new Set(window.map((q) => q.name));
        const asked = [...new Set(window.filter((q) => group.isPageName(q.name)).map((q) => q.name))].sort();
        const names = new Set(record ? namesOf(record).map((n) => n.toLowerCase()) : []);
        const missed = asked.filter((n) => !names.has(n));
        // The load event on the extension's clock (the navigation's start, ms since the epoch, plus onLoad).
        const loadAt = record?.onLoadMs != null ? record.startedAt + record.onLoadMs : Infinity;
        const firstAsked = (n: string) => Math.min(...window.filter((q) => q.name === n).map((q) => q.at));
        const r: LoadResult = {
          browser, page: page.id, load, asked, missed, missedBeforeLoad: missed.filter((n) => firstAsked(n) <= loadAt),
          extra: [...names].filter((n) => !everyName.has(n)).sort(), error,
        };
        out.push(r);
        progress(`${browser} ${page.id} load ${load}: ${asked.length - r.missed.length} of ${asked.length} asked names recorded, ${r.extra.length} not asked${error ? ` (${error})` : ''}`);
        log.entries.length = 0;
        rmSync(work, { recursive: true, force: true });
      }
    }
  }
  return out;
}

/** The inner half, in the lab's client namespace and a private mount namespace. */
async function inner(configFile: string): Promise<void> {
  const c = JSON.parse(readFileSync(configFile, 'utf8')) as Config;
  const progress = (s: string) => process.stdout.write(`progress ${s}\n`);
  isolateDns(c.work); // the machine's resolver is the lab's, at SERVER
  const { certs, groups } = await labPageGroups(c.work, c.pages, c.hars, c.harAddress);
  const results: LoadResult[] = [];
  for (const group of groups) {
    const log = new QueryLog();
    const dir = join(c.work, `${group.id}-coredns`);
    mkdirSync(dir, { recursive: true });
    const dns = await startCoreDNS({
      netns: c.serverNs, address: SERVER, certs, siteZone: zoneWithProbe(group.siteZone), others: 'nxdomain', logQueries: true, onOutput: (t) => log.feed(t), workDir: dir,
    });
    const site = await startSite(group, c.serverNs).catch(async (err: unknown) => {
      await dns.stop();
      throw err;
    });
    try {
      results.push(...(await loadsOf(group, c, certs.caFile, log, progress)));
    } finally {
      await site.stop();
      await dns.stop();
    }
  }
  writeFileSync(c.out, JSON.stringify(results));
}

const pct = (a: number, b: number) => (b === 0 ? '–' : `${((100 * a) / b).toFixed(1)} %`);

/** The report: per browser × page, and a verdict over every load. */
function report(results: LoadResult[], label: string, command: string): string {
  const lines = [
    `## Recorder coverage: ${label} (${new Date().toISOString().slice(0, 10)})`, '',
    `\`${command}\``, '',
    'Per browser × page: the page names the lab resolver was asked during each load (a fresh browser each), how many of ' +
      'them the extension\'s record holds, the worst load, the names it missed (and which of them were first asked before ' +
      'the load event, the ones onLoad can have waited for), and names the record holds that the resolver was not asked.', '',
    '| browser | page | loads | names asked (per load) | recorded | worst load | missed (any load) | of those, asked before onLoad | recorded, not asked |',
    '| --- | --- | ---: | ---: | ---: | ---: | --- | --- | --- |',
  ];
  const keys = [...new Set(results.map((r) => `${r.browser}\t${r.page}`))];
  for (const k of keys) {
    const [browser, page] = k.split('\t') as [string, string];
    const rs = results.filter((r) => r.browser === browser && r.page === page);
    const asked = rs.reduce((s, r) => s + r.asked.length, 0);
    const got = rs.reduce((s, r) => s + r.asked.length - r.missed.length, 0);
    const worst = Math.min(...rs.map((r) => (r.asked.length ? 1 - r.missed.length / r.asked.length : 1)));
    const missed = [...new Set(rs.flatMap((r) => r.missed))];
    const beforeLoad = [...new Set(rs.flatMap((r) => r.missedBeforeLoad))];
    const extra = [...new Set(rs.flatMap((r) => r.extra))];
    const sizes = rs.map((r) => r.asked.length);
    const list = (xs: string[]) => (xs.length ? `${xs.slice(0, 6).join(', ')}${xs.length > 6 ? ` (+${xs.length - 6})` : ''}` : 'none');
    const failed = rs.filter((r) => r.error).length;
    lines.push(`| ${browser} | ${page} | ${rs.length}${failed ? ` (${failed} with an error)` : ''} | ${Math.min(...sizes)}–${Math.max(...sizes)} | ` +
      `${pct(got, asked)} | ${(100 * worst).toFixed(1)} % | ${list(missed)} | ${list(beforeLoad)} | ${list(extra)} |`);
  }
  const holds = results.every((r) => r.asked.length > 0 && r.missed.length <= (1 - TARGET) * r.asked.length && r.extra.length === 0);
  const errors = results.filter((r) => r.error).map((r) => `${r.browser} ${r.page} load ${r.load}: ${r.error}`);
  lines.push('', `Every load ≥ ${TARGET * 100} % of the names asked and no name not asked: **${holds ? 'yes' : 'no'}** (${results.length} loads).`);
  if (errors.length) lines.push('', 'Errors:', ...errors.map((e) => `- ${e}`));
  return lines.join('\n') + '\n';
}

async function outer(): Promise<void> {
  const { values } = parseArgs({
    options: {
      browser: { type: 'string', default: 'chromium,firefox' }, har: { type: 'string', default: '' }, pages: { type: 'string', default: '10,30' },
      loads: { type: 'string', default: '3' }, webrequest: { type: 'boolean', default: false }, out: { type: 'string' }, ...SMOKE_OPTION,
    },
  });
  const browsers = values.browser!.split(',').filter(Boolean) as BrowserName[];
  for (const b of browsers) if (b !== 'chromium' && b !== 'firefox') throw new Error(`--browser: chromium, firefox or both, not ${b}`);
  const hars = values.smoke ? [] : values.har!.split(',').filter(Boolean).map((f) => resolve(f));
  const pages = values.smoke ? [3] : values.pages!.split(',').filter(Boolean).map(Number);
  const loads = values.smoke ? 1 : Number(values.loads);
  if (!(Number.isInteger(loads) && loads >= 1 && loads <= 50)) throw new Error(`--loads: 1 to 50, not ${values.loads}`);
  const work = mkdtempSync(join(tmpdir(), 'dnscost-coverage-'));
  const net = await createLabNet({ profile: 'none' });
  try {
    const harAddress = (await addSiteAddress(net)).v4;
    await addLiteralAddresses(net, [...new Set((await Promise.all(hars.map(harLiterals))).flat())]);
    const config: Config = {
      serverNs: net.server.ns, harAddress, browsers: values.smoke ? ['chromium'] : browsers, hars, pages, loads,
      webRequest: values.webrequest!, work, out: join(work, 'results.json'),
    };
    writeFileSync(join(work, 'config.json'), JSON.stringify(config));
    await new Promise<void>((done, fail) => {
      const child = net.spawnIn('client', 'unshare', ['--mount', '--propagation', 'private', process.execPath, fileURLToPath(import.meta.url)], {
        env: { ...process.env, [INNER_ENV]: join(work, 'config.json') }, stdio: ['ignore', 'pipe', 'pipe'],
      });
      let tail = '';
      child.stdout!.on('data', (d: Buffer) => {
        for (const line of d.toString().split('\n')) {
          if (line.startsWith('progress ')) console.error(line.slice(9));
          else if (line) tail = (tail + line + '\n').slice(-6000);
        }
      });
      child.stderr!.on('data', (d: Buffer) => (tail = (tail + d.toString()).slice(-6000)));
      child.once('exit', (code) => (code === 0 ? done() : fail(new Error(`the coverage run failed (${code}):\n${tail}`))));
    });
    const short = (a: string) => a.split(',').map((f) => f.replace(/^.*\/shared\/pages\//, '../shared/pages/')).join(',');
    const command = `node dist/bench/recorder-coverage.js ${process.argv.slice(2).map(short).join(' ')}`;
    const label = values.webrequest ? 'webRequest granted' : 'as installed (Chromium: webNavigation and every frame\'s Resource Timing; Firefox: webRequest too)';
    const text = report(JSON.parse(readFileSync(config.out, 'utf8')) as LoadResult[], label, command);
    process.stdout.write(text);
    const out = reportPath(values, null);
    if (out) writeFileSync(out, text);
  } finally {
    await net.destroy();
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.env[INNER_ENV]) await inner(process.env[INNER_ENV]!);
else await outer();
