// The built extension in real Chromium and Firefox talks to the real native host: from inside the extension's popup
// page, the background reports the host's own hello (version, protocol, transports), rejects malformed messages,
// and the popup and options page say so in words; with no host registered it reports host-missing and shows the
// install command, and once the host manifest appears "Check again" connects without waiting for the backoff.
//
// Browsers reach for outside services even with every "no background networking" flag, so each browser runs in a
// loopback-only network namespace: this file re-runs itself under `unshare --net` (root only) with
// DNSCOST_BROWSER_INNER naming the browser, one browser at a time. Screenshots of the popup go to tests/.run/.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'puppeteer-core';
import { PROTOCOL_VERSION } from '../../common/schema.js';
import { launchWithExtension, poll, welcomePage, type BrowserName } from '../../lab/browsers.js';
import { outerBrowserTests } from '../support/namespace.js';
import { axeViolations, inoperableByKeyboard, unreachableByKeyboard } from '../../lab/a11y.js';
import { requireBuiltExtension } from '../../lab/extension-build.js';
import { sendFromPage } from '../../lab/extension-pages.js';
import { startHost } from '../../lab/host-process.js';
import { ROOT } from '../../lab/paths.js';

const INNER = process.env.DNSCOST_BROWSER_INNER as BrowserName | undefined;
const RUN_DIR = join(ROOT, 'tests/.run');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
/** Inner-run budgets: Chromium reaches its first native message in ≈ 1 s, Firefox in 3–4 s (LAB.md). */
const BUDGET_MS: Record<BrowserName, number> = { chromium: 90_000, firefox: 120_000 };

/** The popup's rendered state (data-state of #host-status) and text, once it is not `loading`/`host-connecting`. */
async function settledPopup(page: Page, timeoutMs: number): Promise<{ state: string; text: string }> {
  return poll('the popup settles', timeoutMs, async () => {
    const r = await page.evaluate(() => {
      const e = document.getElementById('host-status');
      return { state: e?.dataset.state ?? '', text: document.body.innerText };
    });
    return r.state && r.state !== 'loading' && r.state !== 'host-connecting' ? r : undefined;
  });
}

/** The welcome page the extension opens by itself on install (background/index.ts), once it has drawn everything. */
async function welcomeDrawn(b: Awaited<ReturnType<typeof launchWithExtension>>): Promise<Page> {
  const page = await welcomePage(b.browser, 30_000);
  await page.bringToFront();
  await settledPopup(page, 30_000);
  await poll('the welcome page draws its sections', 10_000, async () => page.evaluate(() =>
    document.body.dataset.settings === 'ready' && document.getElementById('first')!.dataset.state !== 'loading' &&
    document.getElementById('host-steps')!.dataset.os !== 'unknown' ? true : undefined));
  return page;
}

/** The host's own hello, asked directly (not through a browser), to compare with what the extension reports. */
async function directHello(): Promise<Record<string, unknown>> {
  const host = startHost();
  try {
    host.send({ id: 1, type: 'hello' });
    return await host.next(10_000);
  } finally {
    host.child.stdin.end();
    await host.exit();
  }
}

function innerTests(name: BrowserName): void {
  test(`${name}: the extension's background reports the real host's hello`, { timeout: BUDGET_MS[name] - 15_000 }, async (t) => {
    const extensionDir = requireBuiltExtension(name);
    const work = mkdtempSync(join(tmpdir(), `dnscost-${name}-`));
    t.onTestFinished(() => rmSync(work, { recursive: true, force: true }));
    mkdirSync(RUN_DIR, { recursive: true });
    const hello = await directHello();
    assert.equal(hello.version, VERSION);
    const timings: string[] = [];

    let started = Date.now();
    const b = await launchWithExtension(name, { extensionDir, workDir: join(work, 'with-host'), keepWelcome: true });
    try {
      timings.push(`launch ${Date.now() - started} ms`);
      started = Date.now();
      const page = await b.openExtensionPage('popup/popup.html');
      const shown = await settledPopup(page, 30_000);
      timings.push(`popup to connected ${Date.now() - started} ms`);
      assert.equal(shown.state, 'connected', shown.text);
      assert.match(shown.text, new RegExp(`Connected to the dnscost native host, version ${VERSION.replaceAll('.', '\\.')}\\.`));
      const { browserDoh, ...status } = (await sendFromPage(page, { type: 'host-status' })) as { browserDoh?: { browser?: string; product?: string } | null };
      assert.deepEqual(status, {
        ok: true,
        connected: true,
        version: VERSION,
        protocol: PROTOCOL_VERSION,
        transports: hello.transports,
        // The host's own finding, passed on as it is (in this namespace: the machine's /etc/resolv.conf).
        currentDns: hello.currentDns ?? null,
        // The host's IPv6 probe (in this loopback-only namespace: no global route).
        ipv6: hello.ipv6 ?? null,
      });
      // The browser DoH differs by who started the host: the browser finds itself (its parent), a direct start none.
      assert.equal(hello.browserDoh ?? null, null, 'a host started outside a browser finds no browser');
      assert.equal(browserDoh?.browser, name, `the host found the browser that started it: ${JSON.stringify(browserDoh)}`);
      assert.equal(hello.ipv6, false, 'no global IPv6 route in a loopback-only namespace');
      assert.ok(hello.currentDns, 'the host reports the current DNS in its hello');
      assert.ok(Array.isArray(hello.transports) && hello.transports.length > 0);
      for (const bad of [{ type: 'no-such-message' }, { type: 'host-status', extra: true }, 'host-status', null]) {
        const reply = (await sendFromPage(page, bad)) as { ok: boolean; code: string };
        assert.equal(reply.ok, false, JSON.stringify(bad));
        assert.equal(reply.code, 'bad-request', JSON.stringify(bad));
      }
      await page.screenshot({ path: join(RUN_DIR, `popup-${name}.png`) });

      // The welcome page: consent not given yet (and given from there), the host connected, no page measured yet.
      const welcome = await welcomeDrawn(b);
      const w = await welcome.evaluate(() => ({
        consent: document.getElementById('consent')!.dataset.state,
        host: document.getElementById('host-status')!.dataset.state,
        os: document.getElementById('host-steps')!.dataset.os,
        first: document.getElementById('first')!.dataset.state,
        privacy: document.querySelector<HTMLAnchorElement>('a[href="../privacy/privacy.html"]')?.href ?? '',
      }));
      assert.deepEqual({ ...w, privacy: undefined }, { consent: 'not-given', host: 'connected', os: 'linux', first: 'waiting', privacy: undefined });
      assert.ok(w.privacy.endsWith('/privacy/privacy.html'), w.privacy);
      await welcome.evaluate(() => document.getElementById('consent-give')!.click());
      await poll('consent given from the welcome page', 10_000, async () =>
        (await welcome.evaluate(() => document.getElementById('consent')!.dataset.state)) === 'given' ? true : undefined);
      const view = (await sendFromPage(page, { type: 'settings-get' })) as { settings: { consent: { given: boolean } } };
      assert.equal(view.settings.consent.given, true);
      await welcome.screenshot({ path: join(RUN_DIR, `welcome-${name}.png`), fullPage: true });
      assert.deepEqual(await axeViolations(welcome), [], 'axe on the welcome page');

      const options = await b.openExtensionPage('options/options.html');
      const optionsShown = await settledPopup(options, 30_000);
      assert.equal(optionsShown.state, 'connected', optionsShown.text);
      assert.match(optionsShown.text, new RegExp(`Extension version ${VERSION.replaceAll('.', '\\.')}\\.`));
      assert.deepEqual(await axeViolations(options), [], 'axe on the options page');
      assert.deepEqual(await unreachableByKeyboard(options), [], 'keyboard on the options page');
      assert.deepEqual(await inoperableByKeyboard(options), [], 'keys operate the options page');
    } finally {
      await b.close();
    }

    // The same browser with no host manifest: the popup names the problem and the install command.
    started = Date.now();
    const bare = await launchWithExtension(name, { extensionDir, workDir: join(work, 'no-host'), registerHost: false, keepWelcome: true });
    try {
      const page = await bare.openExtensionPage('popup/popup.html');
      const shown = await settledPopup(page, 30_000);
      timings.push(`no host: launch to host-missing ${Date.now() - started} ms`);
      assert.equal(shown.state, 'host-missing', shown.text);
      assert.match(shown.text, /not installed/);
      assert.match(shown.text, /npx dnscost-host install/);
      const status = (await sendFromPage(page, { type: 'host-status' })) as { ok: boolean; code: string; retryAt: number | null };
      assert.equal(status.ok, false);
      assert.equal(status.code, 'host-missing');
      assert.equal(typeof status.retryAt, 'number', 'a next attempt is scheduled');
      await page.screenshot({ path: join(RUN_DIR, `popup-${name}-no-host.png`) });
      // The welcome page says the host is missing and how to install it on this system.
      const welcome = await welcomeDrawn(bare);
      const steps = await welcome.evaluate(() => ({ host: document.getElementById('host-status')!.dataset.state, text: document.getElementById('host-steps')!.innerText }));
      assert.equal(steps.host, 'host-missing');
      assert.match(steps.text, /npx dnscost-host install/);

      // Installing the host, then "Check again": connected at once, without waiting for the backoff.
      bare.registerHost();
      started = Date.now();
      await page.bringToFront(); // the welcome tab opened in front of it
      await page.click('#check-again');
      const after = await settledPopup(page, 30_000);
      timings.push(`"Check again" after installing to connected ${Date.now() - started} ms`);
      assert.equal(after.state, 'connected', after.text);
      assert.equal(((await sendFromPage(page, { type: 'host-status' })) as { version: string }).version, VERSION);
    } finally {
      await bare.close();
    }
    if (name === 'firefox') {
      // Firefox's pages in the dark scheme: its WebDriver BiDi cannot emulate it per page, so a browser launched dark.
      started = Date.now();
      const dark = await launchWithExtension(name, { extensionDir, workDir: join(work, 'dark'), colorScheme: 'dark', keepWelcome: true });
      try {
        const welcome = await welcomeDrawn(dark);
        const ink = await welcome.evaluate(() => getComputedStyle(document.body).backgroundColor);
        assert.match(ink, /^rgb\((\d|[1-5]\d), (\d|[1-5]\d), (\d|[1-5]\d)\)$/, `a dark page: ${ink}`);
        const problems: string[] = [];
        for (const [what, page] of [['welcome', welcome], ['options', await dark.openExtensionPage('options/options.html')],
          ['dashboard', await dark.openExtensionPage('dashboard/dashboard.html')], ['popup', await dark.openExtensionPage('popup/popup.html')]] as const) {
          await poll(`${what} settles`, 15_000, async () => (await page.evaluate(() => document.readyState)) === 'complete' ? true : undefined);
          await new Promise((r) => setTimeout(r, 500));
          problems.push(...(await axeViolations(page)).map((v) => `${what}: ${v}`));
          await page.screenshot({ path: join(RUN_DIR, `${what}-${name}-dark.png`), fullPage: true });
        }
        assert.deepEqual(problems, [], 'axe on every page, dark');
        timings.push(`dark: launch and four pages checked ${Date.now() - started} ms`);
      } finally {
        await dark.close();
      }
    }
    console.log(`${name}: ${timings.join('; ')}`);
  });
}

if (INNER) {
  innerTests(INNER);
} else {
  outerBrowserTests(fileURLToPath(import.meta.url), 'DNSCOST_BROWSER_INNER', (name) => `${name} with the extension and the real host (loopback-only network namespace)`, BUDGET_MS);
}
