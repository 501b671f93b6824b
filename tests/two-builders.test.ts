// The popup's number is the validation's, on real loads (issue 24 item 7): for real pages rebuilt in the lab and
// loaded by both browsers (bench/results/validation/4g-har-*.raw.json.gz), every Do53 load's recorded page (built by
// common/page-builder.ts, the one writer the extension's recorder uses too) goes through the extension's own
// measurement path — the scheduler plans it for a lab resolver, a host answers over a native port, the measurement is
// stored and read back — and the popup's computeResults prices it with that load's replay records; the validation
// prices the same load with its own path (bench/validate/analysis.ts). Per load the two estimates are equal, and the
// row's prediction made from the popup's per-load estimates equals the row the validation reports.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { test } from 'vitest';
import { analyse, LAB_SYSTEM_RETRY_MS, predictedShift, visitPrediction } from '../bench/validate/analysis.js';
import { upgradeRun } from '../bench/validate/legacy.js';
import type { Visit } from '../bench/validate/types.js';
import { PROTOCOL_VERSION } from '../common/schema.js';
import type { Mode } from '../common/transports.js';
import { HostConnection } from '../extension/src/background/host-connection.js';
import { MeasurementScheduler } from '../extension/src/background/measurements.js';
import { FakeArea, FakeNativePort, LOOPBACK_LAB, POPUP_SENDER } from '../extension/src/background/test-fixtures.js';
import { testI18n } from '../extension/src/i18n-fixtures.js';
import type { MeasureStatus } from '../extension/src/messages/measure.js';
import { computeResults } from '../extension/src/popup/cost-view.js';
import { defaultSettings } from '../extension/src/settings.js';
import type { PageRecord } from '../common/page-record.js';

const LAB = LOOPBACK_LAB;
const EXT = POPUP_SENDER;


/** The measurement the extension stores for `page` (planned, sent to a host over a port, done), read back. */
async function storedMeasurement(page: PageRecord): Promise<NonNullable<MeasureStatus['measurement']>> {
  const port = new FakeNativePort();
  const conn = new HostConnection({ connect: () => port, lastError: () => undefined, setTimer: () => 0, clearTimer: () => undefined, now: () => 1 });
  conn.start();
  // The current DNS the host finds in the lab (resolv.conf naming the lab resolver, no stub): glibc's retry timer.
  const currentDns = { source: '/etc/resolv.conf', servers: [{ address: '127.0.0.1', port: 53 }], search: [], stub: null, encrypted: null, retryMs: LAB_SYSTEM_RETRY_MS, description: 'your current DNS (127.0.0.1)' };
  port.reply({ id: (port.sent[0] as { id: string }).id, type: 'hello', version: '0.1.0', protocol: PROTOCOL_VERSION, transports: ['udp', 'dot', 'doh', 'doq'], currentDns });
  const scheduler = new MeasurementScheduler({
    area: new FakeArea(), host: conn,
    loadSettings: async () => ({ ...defaultSettings([LAB]), consent: { given: true, at: 1, for: null } }),
    pageReport: async () => ({ ok: true, record: JSON.parse(JSON.stringify(page)) as PageRecord }),
    isIncognitoTab: async () => false,
    now: () => 5_000, newId: () => 'req-1', log: () => undefined, selfSender: EXT,
  });
  const started = await scheduler.start(7, EXT);
  assert.equal(started.ok, true, JSON.stringify(started));
  const request = port.sent.find((m) => m.type === 'measure')!;
  port.reply({ id: request.id, type: 'done', seed: 1, primed: true, warmedUp: true, order: [], exchanges: 0, cancelled: false, summary: [] });
  const status = (await scheduler.status(7, EXT, true)) as MeasureStatus;
  assert.equal(status.measurement?.state, 'done');
  assert.equal(status.measurement!.plan.currentDns?.retryMs, LAB_SYSTEM_RETRY_MS, "the system's retry timer reaches the popup's model");
  return status.measurement!;
}

const PAGES = ['bing', 'calibreapp', 'vercel'] as const;
const ROWS = (JSON.parse(readFileSync(new URL('../bench/results/validation/rows.json', import.meta.url), 'utf8')) as { rows: Array<{ browser: string; profile: string; page: string; transport: string; scenario: string; control: boolean; predicted: { delta: number } | null }> }).rows;
const MODES: Mode[] = ['cold', 'warm'];

for (const page of PAGES) {
  for (const browser of ['chromium', 'firefox'] as const) {
    test(`${page} in ${browser}: every load's popup estimate is the validation's, and so is every cold and warm row's prediction`, { timeout: 60_000 }, async () => {
      // Read as --from reads a raw file (older runs' records are upgraded to the stored form).
      const run = upgradeRun(JSON.parse(gunzipSync(readFileSync(new URL(`../bench/results/validation/4g-har-${page}-${browser}.raw.json.gz`, import.meta.url))).toString('utf8')));
      const profile = run.profiles[0]!;
      const rows = analyse(run);
      let compared = 0;
      for (const scenario of MODES) {
        const base = profile.visits.filter((v) => v.browser === browser && v.scenario === scenario && v.transport === 'do53' && v.onLoad !== null && !v.error);
        assert.ok(base.length >= 5, `${base.length} Do53 loads`);
        // The extension's way, per load: its stored measurement of the recorded page, priced by the popup.
        const popup = await Promise.all(base.map(async (v: Visit) => (v.pageRecord && v.records ? computeResults(await storedMeasurement(v.pageRecord as PageRecord), v.records, testI18n('en')).cells : null)));
        for (const transport of ['dot', 'doh', 'doq'] as const) {
          const priced: Array<{ onLoad: number; estimate: { delta: number; lower: number; upper: number } }> = [];
          base.forEach((v, i) => {
            const cell = popup[i]?.find((c) => c.transport === transport && c.mode === scenario);
            const mine = cell && cell.onLoad.delta !== null ? { delta: cell.onLoad.delta, lower: cell.onLoad.lower!, upper: cell.onLoad.upper! } : null;
            if (mine) assert.ok([mine.delta, mine.lower, mine.upper].every(Number.isFinite), `${transport} ${scenario}, load ${v.round}: ${JSON.stringify(mine)}`);
            assert.deepEqual(mine, visitPrediction(v, transport, scenario)?.estimate ?? null, `${transport} ${scenario}, load ${v.round}`);
            if (mine) priced.push({ onLoad: v.onLoad!, estimate: mine });
            compared++;
          });
          const row = rows.find((r) => r.browser === browser && r.transport === transport && r.scenario === scenario && !r.control)!;
          assert.ok(row, `${transport} ${scenario} row`);
          assert.ok(priced.length > 0, `${transport} ${scenario}: no load priced`);
          const shifted = predictedShift(priced, (e) => e.delta);
          assert.ok(Number.isFinite(shifted), `${transport} ${scenario}: ${shifted}`);
          assert.equal(shifted, row.predicted?.delta, `${transport} ${scenario}: the row's prediction`);
          // And it is the row the committed rows file reports (bench/results/validation/rows.json).
          const committed = ROWS.find((r) => r.browser === browser && r.profile === '4g' && r.page === row.page && r.transport === transport && r.scenario === scenario && !r.control);
          assert.equal(committed?.predicted?.delta, shifted, `${transport} ${scenario}: rows.json`);
        }
      }
      assert.ok(compared >= 30, `${compared} load estimates compared`);
    });
  }
}
