// Benchmark (not a test): how long the popup takes to draw a 200-host cost panel in headless Chromium. The local
// site's page is recorded by the extension; a finished measurement of 200 hosts of it (× 5 transports × cold/warm ×
// A/AAAA × 3 = 12,000 records) is written to the extension's storage and read back by a restarted worker; then the
// popup is opened N times as a page for that tab. Draw time is the panel's own reading (`#cost` data-draw-ms: from
// the records in hand to the panel in the document); open-to-drawn is the wall time from opening the page until the
// panel reads `results` (polled every 10 ms). Target: draw ≤ 100 ms. Runs in a loopback-only network namespace.
//
//   node dist/bench/popup-draw.js [--opens 30] [--hosts 200] [--out bench/results/popup-draw.md] [--smoke]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { PageRecord } from '../common/page-record.js';
import { summarize } from '../common/stats.js';
import { extensionBase, launchWithExtension, poll } from '../lab/browsers.js';
import { requireBuiltExtension } from '../lab/extension-build.js';
import { sendFromPage, tabIdOf } from '../lab/extension-pages.js';
import { panelDrawn, restartChromiumWorker, writeSyntheticMeasurement } from '../lab/synthetic-measurement.js';
import { NORMAL_PAGE_HOSTS, startSite } from '../lab/site/server.js';
import { inLoopbackNamespace } from './loopback-namespace.js';
import { reportPath, SMOKE_OPTION } from './smoke.js';

const { values } = parseArgs({ options: { opens: { type: 'string', default: '30' }, hosts: { type: 'string', default: '200' }, out: { type: 'string' }, ...SMOKE_OPTION } });
// --smoke: 2 opens of a 20-host panel.
const OPENS = values.smoke ? 2 : Number(values.opens);
const HOSTS = values.smoke ? 20 : Number(values.hosts);
if (!(OPENS >= 1 && OPENS <= 1000 && HOSTS >= 1 && HOSTS <= 500)) throw new Error('--opens 1…1000, --hosts 1…500');

async function inner(): Promise<void> {
  const site = await startSite();
  const work = mkdtempSync(join(tmpdir(), 'dnscost-popup-draw-'));
  const b = await launchWithExtension('chromium', { extensionDir: requireBuiltExtension('chromium'), workDir: work });
  const draw: number[] = [];
  const open: number[] = [];
  try {
    const ext = await b.openExtensionPage('popup/popup.html');
    const page = await b.browser.newPage();
    await page.goto(site.url(NORMAL_PAGE_HOSTS.start, '/'), { waitUntil: 'load' });
    const tabId = await tabIdOf(ext, site.url(NORMAL_PAGE_HOSTS.page, '/'));
    const record = await poll('the page is recorded', 15_000, async () => {
      const r = (await sendFromPage(ext, { type: 'page-report', tabId })) as { ok: boolean; record?: PageRecord };
      return r.ok && r.record!.onLoadMs !== null ? r.record : undefined;
    });
    const records = await writeSyntheticMeasurement(ext, tabId, record, Array.from({ length: HOSTS }, (_, i) => `h${i}.site.localhost`));
    await restartChromiumWorker(b.browser);
    for (let i = 0; i <= OPENS; i++) {
      const popup = await b.browser.newPage();
      const started = performance.now();
      await popup.goto(`${extensionBase('chromium')}popup/popup.html?tab=${tabId}`);
      const drawn = await poll('the panel is drawn', 30_000, async () => {
        const s = await panelDrawn(popup);
        return s.state === 'results' ? s : undefined;
      }, 10);
      if (drawn.rows !== HOSTS) throw new Error(`the panel drew ${drawn.rows} rows, not ${HOSTS}`);
      // The first open also wakes the restarted worker, which reads the stored measurement: not counted.
      if (i > 0) {
        draw.push(drawn.drawMs);
        open.push(performance.now() - started);
      }
      await popup.close();
    }
    const d = summarize(draw);
    const o = summarize(open);
    const row = (name: string, s: ReturnType<typeof summarize>) =>
      `| ${name} | ${s.n} | ${s.median!.toFixed(1)} | ${s.p5!.toFixed(1)} | ${s.p95!.toFixed(1)} | ${s.mean!.toFixed(1)} |`;
    const report = `# Benchmark: the popup's time to draw a ${HOSTS}-host cost panel (headless Chromium)

Command: \`node dist/bench/popup-draw.js --opens ${OPENS} --hosts ${HOSTS}${values.out ? ` --out ${values.out}` : ''}\` (as root, after \`scripts/setup\`)
Date: ${new Date().toISOString()}; machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Debian Chromium, headless.
Panel: ${HOSTS} hosts × 5 transports × cold/warm, ${records} stored records (A/AAAA × 3 repeats), read back by a restarted
service worker; the popup opened ${OPENS} times as \`popup.html?tab=ID\` (one more, first, uncounted).

| ms | opens | median | p5 | p95 | mean |
| --- | ---: | ---: | ---: | ---: | ---: |
${row('draw (records in hand → panel in the document)', d)}
${row('open → panel drawn (page load, records from the worker, draw)', o)}

Target: draw ≤ 100 ms — median **${d.median!.toFixed(1)} ms**, p95 ${d.p95!.toFixed(1)} ms.
`;
    process.stdout.write(report);
    const out = reportPath(values);
    if (out) writeFileSync(out, report);
  } finally {
    await b.close();
    await site.close();
    rmSync(work, { recursive: true, force: true });
  }
}

await inLoopbackNamespace(import.meta.url, inner, 600_000);
