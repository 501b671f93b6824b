// What a cache would save (issue 29 item 6), end to end in real Chromium: with consent, the person visits a page of
// ordinary names (the local site under example.com, mapped to loopback by Chromium's host-resolver rules) twice a few
// seconds apart; the background notes each host's two needs, a measurement against the lab resolver notes the TTL it
// answers (60 s) and each host's warm lookup; the dashboard's table then says a cache honouring those TTLs would have
// answered every second need (half of them) and the lookup time that saves.
//
// Re-runs itself under `unshare --net` (root) with DNSCOST_CACHE_INNER naming the browser.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'vitest';
import type { MeasureStatus } from '../../extension/src/messages/measure.js';
import { launchWithExtension, poll, type BrowserName } from '../../lab/browsers.js';
import { requireBuiltExtension } from '../../lab/extension-build.js';
import { finishedMeasurement, labResolverSpec, loadRecordedPage, sendFromPage } from '../../lab/extension-pages.js';
import { startCoreDNS } from '../../lab/resolver.js';
import { DEMO_DOMAIN, pageHosts, startSite } from '../../lab/site/server.js';
import { outerBrowserTests } from '../support/namespace.js';

const INNER = process.env.DNSCOST_CACHE_INNER as BrowserName | undefined;
const BUDGET_MS: Record<BrowserName, number> = { chromium: 75_000, firefox: 75_000 };
const HOSTS = pageHosts(DEMO_DOMAIN);
/** The sampler (and so the revisits) looks at a page this long after its load (measure-wiring.ts SAMPLE_DELAY_MS), and a bit. */
const NOTED_AFTER_MS = 4_000;

function innerTest(name: BrowserName): void {
  test(`${name}: two visits, a measurement, and the dashboard says what a cache would have answered`, { timeout: BUDGET_MS[name] - 5_000 }, async (t) => {
    const extensionDir = requireBuiltExtension(name);
    const work = mkdtempSync(join(tmpdir(), `dnscost-cache-${name}-`));
    t.onTestFinished(() => rmSync(work, { recursive: true, force: true }));
    const site = await startSite({ domain: DEMO_DOMAIN });
    t.onTestFinished(() => site.close());
    const lab = await startCoreDNS({ siteZone: { zone: DEMO_DOMAIN, a: '127.0.0.1' } });
    t.onTestFinished(() => lab.stop());
    const b = await launchWithExtension(name, { extensionDir, workDir: work, chromiumArgs: [`--host-resolver-rules=MAP *.${DEMO_DOMAIN} 127.0.0.1`] });
    try {
      const ext = await b.openExtensionPage('options/options.html');
      const set = (await sendFromPage(ext, { type: 'settings-set', changes: { resolvers: [labResolverSpec(lab)], currentDns: false, budget: { pagesPerHour: 0, remeasureAfterHours: 24 } } })) as { ok: boolean };
      assert.equal(set.ok, true, JSON.stringify(set));
      assert.equal(((await sendFromPage(ext, { type: 'consent-give' })) as { ok: boolean }).ok, true);
      await poll('the host connects', 30_000, async () => ((await sendFromPage(ext, { type: 'host-status' })) as { ok: boolean }).ok || undefined);

      const tab = await b.browser.newPage();
      const url = site.url(HOSTS.start, '/');
      const { tabId, record } = await loadRecordedPage(ext, tab, url, site.url(HOSTS.page, '/'));
      await new Promise((r) => setTimeout(r, NOTED_AFTER_MS));
      await loadRecordedPage(ext, tab, url, site.url(HOSTS.page, '/'));
      await new Promise((r) => setTimeout(r, NOTED_AFTER_MS));
      const start = (await sendFromPage(ext, { type: 'measure-start', tabId })) as MeasureStatus;
      assert.equal(start.ok, true, JSON.stringify(start));
      const done = await finishedMeasurement(ext, tabId, 40_000);
      assert.equal(done.measurement!.state, 'done', JSON.stringify(done.measurement!.error));
      const measured = new Set(done.records!.filter((r) => r.ok && r.ttl === 60).map((r) => r.host));
      const needed = record.hosts.filter((h) => h.measurable).map((h) => h.name);
      assert.ok(measured.size >= 3 && needed.every((h) => measured.has(h)), `${[...measured].join(', ')} against ${needed.join(', ')}`);

      const page = await b.openExtensionPage('dashboard/dashboard.html');
      const row = await poll('the cache table', 15_000, async () => page.evaluate(() => {
        const r = document.querySelector<HTMLTableRowElement>('#cache tbody tr[data-resolver="lab"]');
        return r ? [...r.cells].map((c) => c.textContent ?? '') : undefined;
      }));
      const [, hosts, needs, served, saved, ttl] = row;
      console.log(`${name}: the dashboard: ${row.join(' | ')}`);
      // Each host needed twice, the second time seconds after the first: well within the 60 s TTL.
      assert.deepEqual([hosts, needs, served, ttl], [String(needed.length), String(2 * needed.length), `${needed.length} (50 %)`, '60 s']);
      assert.match(saved!, /^[\d.,]+ m?s( to [\d.,]+ m?s)?$/, `lookup time saved: ${saved}`);
    } finally {
      await b.close();
    }
  });
}

if (INNER) innerTest(INNER);
else outerBrowserTests(import.meta.url, 'DNSCOST_CACHE_INNER', (n) => `${n}: what a cache would save, from real visits (loopback-only network namespace)`, BUDGET_MS, ['chromium']);
