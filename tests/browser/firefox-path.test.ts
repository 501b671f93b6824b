// "Firefox as configured now" (issue 29 item 4) against the host's own replay, in real Firefox: Firefox resolves over
// the lab's DoH server only (its DNSOverHTTPS policy without fallback: TRR mode 3), every answer from that server
// arrives 40 ms late (the lab's netem delayer on the server's port: a 40 ms round trip for Firefox and the host
// alike), and a 10-host page of the validation site is measured from the extension. After the host's replays the
// extension times each of the page's names through Firefox's own resolver (browser.dns.resolve, bypassing its cache):
// their median lookup is within max(5 %, 2 ms) of the host's warm DoH replay of the same names to the same server,
// and the panel shows the row. The host finds Firefox's DoH itself (the policy file), as on a person's machine.
//
// Re-runs itself under `unshare --net --mount` (root) with DNSCOST_FIREFOX_PATH_INNER set.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { test } from 'vitest';
import type { MeasureStatus } from '../../extension/src/messages/measure.js';
import { FIREFOX_NOW_ID } from '../../common/default-resolvers.js';
import { median as medianOf } from '../../common/stats.js';
import { pageLookupMs, type StoredRecord } from '../../common/stored-record.js';
import { findBrowser, launchWithExtension, poll } from '../../lab/browsers.js';
import { FIREFOX_LAB_POLICY, isolateDns, isolatedNetwork, LAB_SERVER, zoneWithProbe } from '../../lab/browser-dns.js';
import { requireBuiltExtension } from '../../lab/extension-build.js';
import { finishedMeasurement, labResolverSpec, loadRecordedPage, sendFromPage } from '../../lab/extension-pages.js';
import { startNetem } from '../../lab/netns.js';
import { RUN_DIR } from '../../lab/paths.js';
import { startCoreDNS } from '../../lab/resolver.js';
import { pageUrl, startValidationSite, VALIDATION_ZONE } from '../../lab/site/validation-site.js';
import { linesOf, runInNamespace, vitestCommand } from '../support/namespace.js';
import { MOZ_LOG_PREFS, mozLogEnv, mozLogFiles, mozLogLookups } from '../../bench/validate/mozlog.js';

const INNER = process.env.DNSCOST_FIREFOX_PATH_INNER;
const BUDGET_MS = 150_000;
const DOH_URL = `https://${LAB_SERVER}/dns-query`;
const RTT_MS = 40;
const PAGE_HOSTS = 10;
// DNSCOST_FIREFOX_PATH_MOZLOG=1: Firefox writes its resolver's log (MOZ_LOG nsHostResolver:5), and the test prints, per
// name, its lookup through Firefox as the extension timed it beside Firefox's own account of it (queue to answer).
const MOZLOG = Boolean(process.env.DNSCOST_FIREFOX_PATH_MOZLOG);

/** Per host, its lookup in `records` (the last record type's answer, median over repeats); then the median over hosts. */
function medianLookup(records: readonly StoredRecord[]): { hosts: number; median: number } {
  const byHostRepeat = new Map<string, number>();
  for (const r of records) {
    const key = `${r.host} ${r.repeat}`;
    byHostRepeat.set(key, Math.max(byHostRepeat.get(key) ?? 0, pageLookupMs(r)));
  }
  const perHost = new Map<string, number[]>();
  for (const [key, ms] of byHostRepeat) {
    const name = key.split(' ')[0]!;
    perHost.set(name, [...(perHost.get(name) ?? []), ms]);
  }
  const median = (xs: number[]) => medianOf(xs) ?? NaN;
  const medians = [...perHost.values()].map(median);
  return { hosts: medians.length, median: median(medians) };
}

function innerTest(): void {
  test(`firefox: its own resolver path priced within max(5 %, 2 ms) of the host's warm DoH replay at a ${RTT_MS} ms round trip`, { timeout: BUDGET_MS - 5_000 }, async (t) => {
    const extensionDir = requireBuiltExtension('firefox');
    const work = mkdtempSync(join(tmpdir(), 'dnscost-firefox-path-'));
    t.onTestFinished(() => rmSync(work, { recursive: true, force: true }));
    mkdirSync(RUN_DIR, { recursive: true });
    isolatedNetwork(false);
    const { firefoxPolicies } = isolateDns(work);
    const doh = await startCoreDNS({ address: LAB_SERVER, ports: { dns: 53, tls: 853, https: 443 }, siteZone: zoneWithProbe({ zone: VALIDATION_ZONE, a: LAB_SERVER }), others: 'nxdomain' });
    t.onTestFinished(() => doh.stop());
    const site = await startValidationSite(LAB_SERVER, 80);
    t.onTestFinished(() => site.close());
    assert.ok(firefoxPolicies, 'Firefox has a distribution folder for its policies');
    writeFileSync(firefoxPolicies, JSON.stringify({
      policies: { ...FIREFOX_LAB_POLICY.policies, DNSOverHTTPS: { Enabled: true, ProviderURL: DOH_URL, Fallback: false, Locked: true }, Certificates: { Install: [doh.certs.caFile] } },
    }));
    // Every packet from the DoH server waits RTT_MS in the lab's delayer: Firefox's TRR and the host pay it alike.
    const netem = await startNetem({ queue: 7, delayMs: RTT_MS, jitterMs: 0 });
    t.onTestFinished(() => void netem.kill('SIGTERM'));
    execFileSync('iptables', ['-A', 'INPUT', '-p', 'tcp', '-s', LAB_SERVER, '--sport', '443', '-j', 'NFQUEUE', '--queue-num', '7'], { timeout: 5000 });

    const logFile = join(work, 'resolver');
    const b = await launchWithExtension('firefox', {
      extensionDir, workDir: work,
      env: { NODE_EXTRA_CA_CERTS: doh.certs.caFile, ...(MOZLOG ? mozLogEnv(logFile) : {}) },
      firefoxPrefs: { 'dom.security.https_first': false, ...(MOZLOG ? MOZ_LOG_PREFS : {}) },
    });
    let own: StoredRecord[] = [];
    try {
      const ext = await b.openExtensionPage('options/options.html');
      // The lab resolver's DoH endpoint beside Firefox's own DoH (the same server): two replays to compare with.
      const lab = labResolverSpec(doh);
      const set = (await sendFromPage(ext, { type: 'settings-set', changes: { resolvers: [{ ...lab, endpoints: lab.endpoints.filter((e) => e.transport === 'doh') }], lab: true } })) as { ok: boolean };
      assert.equal(set.ok, true, JSON.stringify(set));
      assert.equal(((await sendFromPage(ext, { type: 'consent-give' })) as { ok: boolean }).ok, true);
      const status = await poll('the host connects', 30_000, async () => {
        const s = (await sendFromPage(ext, { type: 'host-status' })) as { ok: boolean; browserDoh?: { active: boolean } | null };
        return s.ok ? s : undefined;
      });
      assert.equal(status.browserDoh?.active, true, `the host found Firefox's DoH: ${JSON.stringify(status.browserDoh)}`);

      const { tabId } = await loadRecordedPage(ext, await b.browser.newPage(), pageUrl(PAGE_HOSTS), pageUrl(PAGE_HOSTS), PAGE_HOSTS);
      const start = (await sendFromPage(ext, { type: 'measure-start', tabId })) as MeasureStatus;
      assert.equal(start.ok, true, JSON.stringify(start));
      const done = await finishedMeasurement(ext, tabId, 90_000);
      assert.equal(done.measurement!.state, 'done', JSON.stringify(done.measurement!.error));
      const records = done.records!;
      own = records.filter((r) => r.resolver === FIREFOX_NOW_ID);
      assert.equal(own.length, PAGE_HOSTS, 'one lookup through Firefox per name of the page');
      assert.deepEqual(own.filter((r) => !r.ok || r.transport !== 'doh').map((r) => `${r.host} ${r.transport} ${r.error}`), [], 'every one answered by its TRR');
      const firefox = medianLookup(own);
      const replay = medianLookup(records.filter((r) => r.resolver === 'browser' && r.transport === 'doh' && r.mode === 'warm' && r.ok));
      assert.equal(replay.hosts, PAGE_HOSTS);
      const diff = firefox.median - replay.median;
      const bound = Math.max(0.05 * replay.median, 2);
      console.log(`firefox: Firefox as configured now: median lookup ${firefox.median.toFixed(2)} ms over ${firefox.hosts} names; the host's warm DoH replay to the same server ${replay.median.toFixed(2)} ms; difference ${diff.toFixed(2)} ms (bound ±${bound.toFixed(2)}) at a ${RTT_MS} ms round trip`);
      assert.ok(replay.median >= RTT_MS, `the emulated round trip holds (${replay.median} ms)`);
      // Issue 29's must-show. A full-suite run once read 8.23 ms apart: the test asked for every record each 250 ms while
      // Firefox's lookups were timed, and each ask held their answers up in the background (up to 25 ms, where
      // Firefox's own log had 44-46 ms); it now waits as the popup does (finishedMeasurement).
      assert.ok(Math.abs(diff) <= bound, `Firefox's own path ${firefox.median.toFixed(2)} ms against the replay's ${replay.median.toFixed(2)} ms: ${diff.toFixed(2)} ms apart, over ±${bound.toFixed(2)}`);
      assert.ok(firefox.median >= RTT_MS, `every lookup through Firefox crossed the emulated round trip (${firefox.median} ms)`);

      const popup = await b.openExtensionPage(`popup/popup.html?tab=${tabId}`);
      const row = await poll('the panel shows the row', 20_000, async () =>
        popup.evaluate((id) => (document.getElementById('cost')?.dataset.state === 'results' ? document.querySelector(`#cost tr[data-resolver="${id}"]`)?.textContent ?? '' : undefined), FIREFOX_NOW_ID),
      );
      assert.match(row, /^Firefox as configured now/);
      await popup.screenshot({ path: join(RUN_DIR, 'firefox-path.png'), fullPage: true });
      console.log(`firefox: the panel's row: ${row}`);
    } finally {
      await b.close();
      if (MOZLOG) printFirefoxAccount(own, logFile);
    }
  });
}

/** Per name: the extension's time for its lookup through Firefox, and the last lookup of it in Firefox's own log. */
function printFirefoxAccount(own: readonly StoredRecord[], logFile: string): void {
  const files = mozLogFiles(logFile);
  for (const f of files) copyFileSync(f, join(RUN_DIR, `firefox-path-${basename(f)}`));
  const lookups = files.flatMap((f) => mozLogLookups(readFileSync(f, 'utf8'))).sort((a, b) => a.askedAt - b.askedAt);
  const last = own.map((r) => lookups.filter((x) => x.name === r.host).at(-1));
  const first = Math.min(...last.map((l) => l?.askedAt ?? Infinity));
  for (const [i, r] of own.entries()) {
    const l = last[i];
    const doh = (l?.transactions ?? []).map((t) => `${t.qtype} ${t.endedAt === null ? '?' : (t.endedAt - t.startedAt).toFixed(1)}`).join(', ');
    const queue = l?.startedAt != null ? (l.startedAt - l.askedAt).toFixed(1) : '?';
    const whole = l?.endedAt != null ? (l.endedAt - l.askedAt).toFixed(1) : '?';
    const at = l ? (l.askedAt - first).toFixed(1) : '?';
    console.log(`firefox: ${r.host}: extension ${pageLookupMs(r).toFixed(1)} ms; Firefox's log: asked at +${at}, ${whole} ms (queued ${queue}; DoH ${doh})`);
  }
}

if (INNER) innerTest();
else {
  test("firefox: its own resolver path against the host's replay (its own network and mount namespace)", { timeout: BUDGET_MS + 15_000 }, async (t) => {
    if (process.getuid?.() !== 0) return t.skip('needs root: network and mount namespaces (unshare), iptables');
    if (!findBrowser('firefox')) assert.fail('firefox is not installed: scripts/setup installs it');
    requireBuiltExtension('firefox');
    const out = await runInNamespace(vitestCommand(import.meta.url), { DNSCOST_FIREFOX_PATH_INNER: '1' }, BUDGET_MS, ['--net', '--mount', '--propagation', 'private']);
    console.log(linesOf(out, 'firefox: ').join('\n'));
    assert.equal(out.code, 0, out.text.slice(-8000));
  });
}
