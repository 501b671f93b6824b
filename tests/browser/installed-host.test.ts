// The packaged host as a person installs it, reached by real browsers: the linux-x64 archive (scripts/package) is
// unpacked into a fresh HOME and installed from there, inside a mount namespace where no node, no go and no checkout
// can be seen (lab/no-checkout.ts); the archive is deleted; the installed copy's `doctor` passes. Then the browser runs
// in such a namespace too, so the host it starts is the one `install` registered and nothing else could run:
// Chromium on its default user-data dir in that HOME (where `install` wrote its manifest) with the unpacked store
// build, Firefox with that HOME and the store's xpi installed permanently, then restarted. Each reaches the installed
// host (its process is the installed executable), and a page of the lab site is measured from the popup's own button:
// the panel announces the start and the end and opens with its verdict.
//
// Re-runs itself inside a loopback-only network namespace (unshare --net, root), one browser at a time.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'vitest';
import type { MeasureStatus } from '../../extension/src/messages/measure.js';
import { EXECUTABLES, findBrowser, launchWithExtension, poll, type BrowserName, type ExtensionBrowser } from '../../lab/browsers.js';
import { requireBuiltExtension } from '../../lab/extension-build.js';
import { labResolverSpec, loadRecordedPage, sendFromPage } from '../../lab/extension-pages.js';
import { noCheckoutPrelude, writeNoCheckoutWrapper } from '../../lab/no-checkout.js';
import { ROOT } from '../../lab/paths.js';
import { startCoreDNS } from '../../lab/resolver.js';
import { NORMAL_PAGE_HOSTS, startSite } from '../../lab/site/server.js';
import { outerBrowserTests } from '../support/namespace.js';
import { PROTOCOL_VERSION } from '../../common/schema.js';
import { FIREFOX_NOW_ID } from '../../common/default-resolvers.js';

const INNER = process.env.DNSCOST_INSTALLED_INNER as BrowserName | undefined;
const BUDGET_MS: Record<BrowserName, number> = { chromium: 120_000, firefox: 150_000 };
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const ARCHIVE = join(ROOT, 'build', 'package', `dnscost-${VERSION}-linux-x64.tar.gz`);

/** The pids whose executable is `path` (the installed host: a browser started it). */
function processesOf(path: string): number[] {
  return readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
    try {
      return readlinkSync(`/proc/${p}/exe`) === path;
    } catch {
      return false;
    }
  }).map(Number);
}

function innerTests(name: BrowserName): void {
  test(`${name}: installed from the archive with no node, go or checkout; the browser reaches the installed host and a page is measured from the popup`, { timeout: BUDGET_MS[name] - 10_000 }, async (t) => {
    const root = mkdtempSync(join(tmpdir(), `dnscost-installed-${name}-`));
    t.onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    const home = join(root, 'home');
    // A home where the browser has run (so install finds it) and nothing of dnscost is.
    mkdirSync(join(home, name === 'firefox' ? '.mozilla' : '.config/chromium'), { recursive: true });
    mkdirSync(join(root, 'download'));
    copyFileSync(ARCHIVE, join(root, 'download', 'dnscost.tar.gz'));
    // The store builds, copied out of the checkout (which the browser cannot see): the unpacked Chromium build, which
    // keeps the store's id through its key, and Firefox's xpi.
    const built = requireBuiltExtension(name);
    const extensionDir = join(root, 'store', `extension-${name}`);
    cpSync(built, extensionDir, { recursive: true });
    if (name === 'firefox') copyFileSync(join(built, '..', 'dnscost-firefox.xpi'), join(root, 'store', 'dnscost-firefox.xpi'));
    const prelude = noCheckoutPrelude(root);
    const timings: string[] = [];
    let started = Date.now();

    const sh = (script: string) => {
      const r = spawnSync('/usr/bin/unshare', ['-m', 'sh', '-c', `${prelude}\n${script}`], { cwd: root, env: { HOME: home, PATH: '/usr/bin:/bin' }, encoding: 'utf8', timeout: 120_000 });
      return { code: r.status, out: r.stdout + r.stderr };
    };
    const installed = join(home, '.local', 'share', 'dnscost', 'dnscost-host');
    const inst = sh(['mkdir unpacked', 'tar -xzf download/dnscost.tar.gz -C unpacked', `unpacked/dnscost-${VERSION}-linux-x64/dnscost-host install`, 'rm -rf unpacked download'].join('\n'));
    assert.equal(inst.code, 0, inst.out);
    assert.match(inst.out, new RegExp(`^${name}\\s+created\\s+${home}/${name === 'firefox' ? '\\.mozilla/native-messaging-hosts' : '\\.config/chromium/NativeMessagingHosts'}/org\\.dnscost\\.host\\.json$`, 'm'));
    assert.ok(!existsSync(join(root, 'download')) && !existsSync(join(root, 'unpacked')), 'the download is gone');
    const doctor = sh(`${installed} doctor --browser ${name}`);
    assert.equal(doctor.code, 0, doctor.out);
    assert.match(doctor.out, new RegExp(`ok {4}hello: answered: dnscost-host ${VERSION.replace(/\./g, '\\.')}, protocol ${PROTOCOL_VERSION}`));
    timings.push(`install and doctor ${Date.now() - started} ms`);

    const site = await startSite();
    t.onTestFinished(() => site.close());
    const lab = await startCoreDNS();
    t.onTestFinished(() => lab.stop());
    // The browser in a namespace of its own without node, go or checkout; it starts whatever host is registered.
    const executable = writeNoCheckoutWrapper(root, name, prelude, findBrowser(name) ?? EXECUTABLES[name][0]!);
    const common = { extensionDir, workDir: root, registerHost: false, executable } as const;
    let b: ExtensionBrowser;
    started = Date.now();
    if (name === 'firefox') {
      // Installed for good, then the browser restarts on the same profile: what follows runs in the restarted one.
      const first = await launchWithExtension('firefox', { ...common, firefoxInstall: 'permanent' });
      await first.close();
      b = await launchWithExtension('firefox', { ...common, firefoxInstall: 'installed' });
      timings.push(`xpi installed permanently, restarted ${Date.now() - started} ms`);
    } else {
      b = await launchWithExtension('chromium', { ...common, chromiumDefaultProfile: true });
      timings.push(`launch on the default user-data dir ${Date.now() - started} ms`);
    }
    try {
      started = Date.now();
      const ext = await b.openExtensionPage('options/options.html', 30_000);
      const set = (await sendFromPage(ext, { type: 'settings-set', changes: { resolvers: [labResolverSpec(lab)], currentDns: false, lab: true } })) as { ok: boolean };
      assert.equal(set.ok, true, JSON.stringify(set));
      assert.equal(((await sendFromPage(ext, { type: 'consent-give' })) as { ok: boolean }).ok, true);
      const status = await poll('the host connects', 30_000, async () => {
        const s = (await sendFromPage(ext, { type: 'host-status' })) as { ok: boolean; version?: string };
        return s.ok ? s : undefined;
      });
      assert.equal(status.version, VERSION);
      // The host the browser started is the installed executable, and in its view of the machine there is no
      // checkout and no node (its mount namespace, read through /proc/PID/root).
      const pids = processesOf(installed);
      assert.ok(pids.length >= 1, `a process of ${installed} runs`);
      for (const pid of pids) {
        assert.equal(existsSync(`/proc/${pid}/root${join(ROOT, 'package.json')}`), false, 'the host cannot see the checkout');
        assert.equal(statSync(`/proc/${pid}/root${realpathSync(process.execPath)}`).size, 0, 'the host cannot see node');
      }
      timings.push(`host connected ${Date.now() - started} ms`);

      started = Date.now();
      const { tabId } = await loadRecordedPage(ext, await b.browser.newPage(), site.url(NORMAL_PAGE_HOSTS.start, '/'), site.url(NORMAL_PAGE_HOSTS.page, '/'));
      // The popup (as a page for that tab): nothing measured yet, so it offers to measure; its button starts it.
      const popup = await b.openExtensionPage(`popup/popup.html?tab=${tabId}`);
      await poll('the panel offers to measure', 10_000, async () =>
        (await popup.evaluate(() => document.getElementById('cost')?.dataset.state === 'nothing-yet' && !!document.getElementById('measure-start'))) ? true : undefined);
      await popup.bringToFront();
      await popup.evaluate(() => document.getElementById('measure-start')!.click());
      await poll('the panel announces the measurement', 10_000, async () =>
        (await popup.evaluate(() => document.getElementById('announce')?.textContent)) === 'Measuring this page.' ? true : undefined);
      const said = await poll('the panel announces the end', 60_000, async () => {
        const s = await popup.evaluate(() => document.getElementById('announce')?.textContent ?? '');
        return /^Measurement finished/.test(s) ? s : undefined;
      });
      const done = (await sendFromPage(ext, { type: 'measure-status', tabId, records: true })) as MeasureStatus;
      assert.equal(done.measurement!.state, 'done', JSON.stringify(done.measurement!.error));
      // Firefox's own path (firefox-path.ts) joins the lab resolver's replays in Firefox.
      assert.ok(done.records!.length > 0 && done.records!.every((r) => r.resolver === 'lab' || (name === 'firefox' && r.resolver === FIREFOX_NOW_ID)), `${done.records!.length} records of the lab resolver`);
      const verdict = await poll('the panel shows its verdict', 10_000, async () =>
        popup.evaluate(() => {
          const first = document.querySelector<HTMLElement>('#cost > :first-child');
          return document.getElementById('cost')?.dataset.state === 'results' && first?.id === 'verdict' ? first.textContent ?? '' : undefined;
        }));
      assert.match(verdict, /^With .+ over \S+.* this page would /, verdict);
      timings.push(`measured from the popup ${Date.now() - started} ms (${done.records!.length} records): "${said}"; "${verdict}"`);
    } finally {
      await b.close();
    }
    console.log(`${name}: ${timings.join('; ')}`);
  });
}

if (INNER) {
  innerTests(INNER);
} else if (!existsSync(ARCHIVE)) {
  test.skip(`the installed packaged host in real browsers: ${ARCHIVE} is not built (scripts/package)`, () => {});
} else {
  outerBrowserTests(fileURLToPath(import.meta.url), 'DNSCOST_INSTALLED_INNER', (name) => `${name}: reaches the host installed from the packaged archive, no node or checkout in sight (loopback-only network namespace)`, BUDGET_MS);
}
