// The opt-in upload end to end in real headless Chromium with the real host, the lab resolver and a real collector
// (embedded store) on loopback: uploads are off until turned on in the options page; a measured page becomes a
// batch that waits while the collector is down and arrives once it is back; at most 3 pages a day are kept (the 4th
// is counted, not kept); its preview (the options page's "Show the next upload") is byte for byte what the collector stored (its
// SHA-256 of the body it received); each acknowledged batch is stored (published figures come per closed day, with
// noise: tests/integration/collector.test.ts), and survives a restart; "Delete everything I uploaded" removes the data; and no stored value holds a URL, a path, an IP address or a
// hostname outside the shipped list.
//
// The page is served as www.ikea.com (a name on the shipped popular list, and not on Chromium's HSTS preload list)
// from the local site: Chromium maps that name to loopback (--host-resolver-rules); the lab resolver, the only one
// in force, is asked for it.
// Same structure as the other browser tests: re-runs itself under `unshare --net` (root); Chromium only.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import type { Page } from 'puppeteer-core';
import { axeViolations, emulateScheme, unreachableByKeyboard } from '../../lab/a11y.js';
import { startCollector } from '../../collector/server.js';
import { openPgliteStore } from '../../collector/store-pglite.js';
import type { MeasureStatus } from '../../extension/src/messages/measure.js';
import { POPULAR_SITES } from '../../common/popular-sites.js';
import { PERSON_CAP } from '../../common/privacy-budget.js';
import type { ResolverSpec } from '../../common/schema.js';
import type { UploadStatus } from '../../extension/src/messages/upload.js';
import { launchWithExtension, poll, type BrowserName } from '../../lab/browsers.js';
import { outerBrowserTests } from '../support/namespace.js';
import { labResolverSpec, loadRecordedPage, sendFromPage } from '../../lab/extension-pages.js';
import { requireBuiltExtension } from '../../lab/extension-build.js';
import { startCoreDNS } from '../../lab/resolver.js';
import { startSite } from '../../lab/site/server.js';

const INNER = process.env.DNSCOST_UPLOAD_INNER as BrowserName | undefined;
const BUDGET_MS: Record<BrowserName, number> = { chromium: 120_000, firefox: 0 };
const SITE_HOST = 'www.ikea.com';

async function click(page: Page, id: string): Promise<void> {
  await page.evaluate((i) => (document.getElementById(i) as HTMLElement).click(), id);
}

function innerTests(): void {
  test('chromium: opt in, measure, preview = bytes stored, restart, delete', { timeout: BUDGET_MS.chromium - 10_000 }, async (t) => {
    const work = mkdtempSync(join(tmpdir(), 'dnscost-upload-'));
    t.onTestFinished(() => rmSync(work, { recursive: true, force: true }));
    const site = await startSite();
    t.onTestFinished(() => site.close());
    const lab = await startCoreDNS();
    t.onTestFinished(() => lab.stop());
    const dataDir = join(work, 'collector');
    let store = await openPgliteStore(dataDir);
    let collector: Awaited<ReturnType<typeof startCollector>> | null = await startCollector({ store });
    t.onTestFinished(async () => void (await collector?.close()));
    // Pages of ikea.com the collector holds (today's and yesterday's UTC day: a run may cross midnight); each page
    // carries 4 results (custom × udp/dot × cold/warm).
    const storedPages = async () => {
      const days = [0, 1].map((d) => new Date(Date.now() - d * 86_400_000).toISOString().slice(0, 10));
      const cells = (await Promise.all(days.map((e) => store.epochCounts(e)))).flat();
      return cells.filter((c) => c.site === 'ikea.com').reduce((n, c) => n + c.tally.pages, 0) / 4;
    };

    const b = await launchWithExtension('chromium', {
      extensionDir: requireBuiltExtension('chromium'), workDir: work,
      chromiumArgs: [`--host-resolver-rules=MAP ${SITE_HOST} 127.0.0.1`],
    });
    try {
      const options = await b.openExtensionPage('options/options.html');
      // The lab resolver over two transports keeps each measurement short.
      const full = labResolverSpec(lab);
      const spec: ResolverSpec = { ...full, endpoints: full.endpoints.filter((e) => e.transport === 'udp' || e.transport === 'dot') };
      assert.equal(((await sendFromPage(options, { type: 'settings-set', changes: { resolvers: [spec], currentDns: false, lab: true } })) as { ok: boolean }).ok, true);
      assert.equal(((await sendFromPage(options, { type: 'consent-give' })) as { ok: boolean }).ok, true);
      await poll('the host connects', 30_000, async () => (((await sendFromPage(options, { type: 'host-status' })) as { ok: boolean }).ok ? true : undefined));

      const tab = await b.browser.newPage();
      const sentAfter: number[] = [];
      /** Loads the page, measures it, and returns the tab's finished measurement. */
      const visitAndMeasure = async () => {
        const { tabId } = await loadRecordedPage(options, tab, site.url(SITE_HOST, '/plain.html'), site.url(SITE_HOST, '/'), 2);
        const start = (await sendFromPage(options, { type: 'measure-start', tabId })) as MeasureStatus;
        assert.equal(start.ok, true, JSON.stringify(start));
        return poll('the measurement finishes', 40_000, async () => {
          const s = (await sendFromPage(options, { type: 'measure-status', tabId })) as MeasureStatus;
          return s.measurement && s.measurement.state === 'done' ? s : undefined;
        });
      };
      const status = async () => (await sendFromPage(options, { type: 'upload-status' })) as UploadStatus;

      // Uploads are off: a measured page is not queued.
      await visitAndMeasure();
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual([(await status()).enabled, (await status()).pendingPages, (await status()).queued.length], [false, 0, 0]);

      // Turned on in the options page (a fresh load shows the saved state).
      await options.reload();
      await poll('the options page is ready', 10_000, async () => ((await options.evaluate(() => document.body.dataset.settings)) === 'ready' ? true : undefined));
      await options.evaluate((url) => {
        (document.getElementById('upload-enabled') as HTMLInputElement).checked = true;
        (document.getElementById('upload-collector') as HTMLInputElement).value = url;
        (document.getElementById('upload-network-type') as HTMLSelectElement).value = 'wifi';
      }, `${collector.url}/`);
      await click(options, 'upload-save');
      await poll('uploads are on', 10_000, async () => ((await status()).enabled ? true : undefined));

      const previews: Array<{ key: string; body: string }> = [];
      for (let i = 0; i < PERSON_CAP.pagesPerDay; i++) {
        await visitAndMeasure();
        await poll('the page waits for upload', 10_000, async () => ((await status()).pendingPages === 1 ? true : undefined));
        await options.evaluate(() => (document.getElementById('upload-preview-bytes')!.dataset.key = ''));
        await click(options, 'upload-preview');
        const shown = await poll('the preview is shown', 10_000, async () => {
          const p = await options.evaluate(() => {
            const pre = document.getElementById('upload-preview-bytes')!;
            return { key: pre.dataset.key ?? '', body: pre.textContent ?? '' };
          });
          return p.key ? p : undefined;
        });
        previews.push(shown);
        const batch = JSON.parse(shown.body) as { key: string; network: unknown; pages: Array<{ site: string; hosts: number; results: unknown[] }> };
        assert.equal(batch.key, shown.key);
        assert.deepEqual(batch.network, { type: 'wifi' });
        assert.equal(batch.pages.length, 1);
        assert.equal(batch.pages[0]!.site, 'ikea.com');
        assert.equal(batch.pages[0]!.hosts, 2);
        assert.equal(batch.pages[0]!.results.length, 4, 'custom × udp/dot × cold/warm');
        for (const bad of [SITE_HOST, 'site.localhost', '127.0.0.1', 'http', 'plain.html', 'Lab resolver']) assert.ok(!shown.body.includes(bad), `${bad} in the upload`);
        assert.equal(await storedPages(), i, 'the batches acknowledged so far are stored, and no other');
        if (i === 0) {
          // The collector is down: the batch stays queued with the reason; once it is back, it arrives exactly once.
          const port = Number(new URL(collector.url).port);
          await collector.close();
          await click(options, 'upload-send');
          const failed = await poll('the try fails', 20_000, async () => {
            const s = await status();
            return s.queued[0]?.lastError ? s : undefined;
          });
          assert.deepEqual([failed.queued.length, failed.queued[0]!.key, failed.queued[0]!.lastError!.code, failed.sent.length], [1, shown.key, 'unreachable', 0]);
          store = await openPgliteStore(dataDir);
          collector = await startCollector({ store, port });
        }
        await click(options, 'upload-send');
        await poll('the batch is acknowledged', 20_000, async () => ((await status()).sent.length === i + 1 ? true : undefined));
        sentAfter.push((await status()).sent.length);
      }
      assert.equal(await storedPages(), PERSON_CAP.pagesPerDay);
      assert.equal((await status()).refused.length, 0);
      // The day's cap is reached ("send now" made the day's sample final): a further page is measured, and not kept.
      await visitAndMeasure();
      const today = await poll('the fourth page is counted', 10_000, async () => {
        const s = await status();
        return s.today.measured === PERSON_CAP.pagesPerDay + 1 ? s : undefined;
      });
      assert.deepEqual([today.pendingPages, today.queued.length, today.today.kept], [0, 0, PERSON_CAP.pagesPerDay]);
      const words = await poll('the options page says so', 10_000, async () => {
        await options.evaluate(() => (document.getElementById('upload-send') as HTMLElement).click());
        const text = await options.evaluate(() => document.getElementById('upload-state')!.textContent ?? '');
        return text.includes(`${PERSON_CAP.pagesPerDay} of ${PERSON_CAP.pagesPerDay + 1}`) ? text : undefined;
      });
      assert.match(words, /at most 3 a day, chosen at random/);

      // What the collector stored: the preview's exact bytes (their SHA-256 as it received them), and no string but
      // an allowed value. The embedded store is one process's: the collector stops for the look, and starts again on
      // the same data and port (an acknowledged batch survives the restart).
      const port = Number(new URL(collector.url).port);
      await collector.close();
      collector = null;
      const allowed = new Set<string>([...POPULAR_SITES, 'other', 'custom', 'cloudflare', 'google', 'quad9', 'system', 'udp', 'tcp', 'dot', 'doh', 'doh1', 'doq', 'doh3', 'cold', 'warm', 'wifi']);
      const db = await PGlite.create(dataDir);
      try {
        const rows = (await db.query<{ key: string; body_sha256: string; network: string; pages: unknown }>('SELECT key, body_sha256, network, pages FROM batches')).rows;
        assert.equal(rows.length, PERSON_CAP.pagesPerDay);
        for (const p of previews) {
          const row = rows.find((r) => r.key === p.key);
          assert.ok(row, `batch ${p.key} stored`);
          assert.equal(row.body_sha256, createHash('sha256').update(p.body).digest('hex'), 'the collector received the previewed bytes');
          const strings: string[] = [row.network];
          JSON.stringify(row.pages, (k, v) => (typeof v === 'string' && k !== 'hour' ? void strings.push(v) : v));
          for (const s of strings) assert.ok(allowed.has(s), `stored string ${JSON.stringify(s)}`);
        }
      } finally {
        await db.close();
      }
      store = await openPgliteStore(dataDir);
      collector = await startCollector({ store, port });
      assert.equal(await storedPages(), PERSON_CAP.pagesPerDay, 'the same after a restart');

      // The collector's public dashboard, light and dark: drawn, axe-clean, every control reachable by keyboard.
      const board = await b.browser.newPage();
      await board.goto(`${collector.url}/`);
      await poll('the public dashboard draws', 20_000, async () => board.evaluate(() => (document.getElementById('total')!.textContent || document.getElementById('error')!.textContent) || undefined));
      assert.equal(await board.evaluate(() => document.getElementById('error')!.hidden), true, 'the public dashboard loaded its data');
      assert.deepEqual(await axeViolations(board), [], 'axe on the public dashboard');
      assert.deepEqual(await unreachableByKeyboard(board), [], 'the public dashboard by keyboard');
      for (const [scheme, background] of [['dark', 'rgb(28, 27, 34)'], ['light', 'rgb(255, 255, 255)']] as const) {
        await emulateScheme(board, scheme);
        assert.equal(await board.evaluate(() => getComputedStyle(document.body).backgroundColor), background, `the public dashboard, ${scheme}`);
      }
      await board.close();

      // Delete everything uploaded: nothing of the site is left.
      await click(options, 'upload-delete');
      await poll('the uploads are deleted', 20_000, async () => ((await status()).sent.length === 0 ? true : undefined));
      assert.equal(await storedPages(), 0);
      console.log(`chromium: ${sentAfter.length} batches uploaded and deleted`);
    } finally {
      await b.close();
    }
  });
}

if (INNER) {
  innerTests();
} else {
  outerBrowserTests(fileURLToPath(import.meta.url), 'DNSCOST_UPLOAD_INNER', () => 'chromium: upload end to end (loopback-only network namespace)', BUDGET_MS, ['chromium']);
}
