// "Install from AMO in developer mode": the store's xpi (build/dnscost-firefox.xpi) installed in Firefox ESR as a
// regular add-on — not a temporary one — with signature checks off (xpinstall.signatures.required, which ESR and
// Developer Edition honour), is still there after the browser restarts on the same profile: its pages open, it reaches
// the real native host, and it does not greet again (the welcome opens on install only).
//
// Runs itself again inside a loopback-only network namespace, as the other browser tests do.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchWithExtension, poll, welcomePage, type BrowserName } from '../../lab/browsers.js';
import { requireBuiltExtension } from '../../lab/extension-build.js';
import { sendFromPage } from '../../lab/extension-pages.js';
import { outerBrowserTests } from '../support/namespace.js';

const INNER = process.env.DNSCOST_XPI_INNER as BrowserName | undefined;
const BUDGET_MS: Record<BrowserName, number> = { chromium: 0, firefox: 110_000 };

/** The extension's own view of itself and the host, asked from one of its pages. */
async function connected(b: Awaited<ReturnType<typeof launchWithExtension>>): Promise<{ ok: boolean; version?: string }> {
  const page = await b.openExtensionPage('options/options.html', 30_000);
  return poll('the host connects', 30_000, async () => {
    const s = (await sendFromPage(page, { type: 'host-status' })) as { ok: boolean; version?: string };
    return s.ok ? s : undefined;
  });
}

if (INNER) {
  test('firefox: the xpi installs permanently and is still there, reaching the host, after a restart', { timeout: BUDGET_MS.firefox - 10_000 }, async (t) => {
    const extensionDir = requireBuiltExtension('firefox');
    const work = mkdtempSync(join(tmpdir(), 'dnscost-xpi-'));
    t.onTestFinished(() => rmSync(work, { recursive: true, force: true }));
    const timings: string[] = [];
    let started = Date.now();
    const first = await launchWithExtension('firefox', { extensionDir, workDir: work, firefoxInstall: 'permanent', keepWelcome: true });
    let version: string | undefined;
    try {
      await welcomePage(first.browser, 20_000);
      version = (await connected(first)).version;
      assert.ok(version, 'the host answered with its version');
      timings.push(`install and host ${Date.now() - started} ms`);
    } finally {
      await first.close();
    }
    started = Date.now();
    const again = await launchWithExtension('firefox', { extensionDir, workDir: work, firefoxInstall: 'installed' });
    try {
      const status = await connected(again);
      assert.equal(status.version, version);
      // A temporary add-on would be gone: its pages would not load. The welcome is not shown again.
      const greeted = await welcomePage(again.browser, 3_000).then(() => true, () => false);
      assert.equal(greeted, false, 'no second welcome after a restart');
      timings.push(`restart, still installed, host ${Date.now() - started} ms`);
    } finally {
      await again.close();
    }
    console.log(`firefox: ${timings.join('; ')}`);
  });
} else {
  outerBrowserTests(fileURLToPath(import.meta.url), 'DNSCOST_XPI_INNER', () => 'firefox: the xpi installed for good survives a restart (loopback-only network namespace)', BUDGET_MS, ['firefox']);
}
