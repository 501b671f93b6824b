// Never weaker than the browser (issue 26 item 1), in real Chromium and Firefox: each resolves over the lab's DoH
// server only (Chromium's DnsOverHttpsMode "secure" by managed policy, Firefox's DNSOverHTTPS policy without fallback:
// TRR mode 3), while the machine's resolver (resolv.conf in the test's own mount namespace) is a lab Do53 server that
// logs every question. A browsing session of three lab pages and the full measurement of each leaves not one question
// in that server's log; the measurement's plan has no plain-DNS endpoint, and the panel names the browser's own
// resolver as its baseline. Nothing is set to make the host do so: it finds the browser's DoH as on a person's
// machine (the policy files), the extension plans from what the host found. The same with each browser on plain DNS
// behind an HTTP proxy (Firefox's Proxy policy, Chromium's ProxyMode; the lab's proxy resolves every name itself):
// Firefox says so per request, Chromium does not and the host reads its policy; the pages are marked proxied,
// nothing goes out in clear text, and the panel says there is no baseline.
//
// Re-runs itself under `unshare --net --mount` (root) with DNSCOST_NO_CLEARTEXT_INNER naming browser and setup.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'vitest';
import type { MeasureStatus } from '../../extension/src/messages/measure.js';
import type { PageRecord } from '../../common/page-record.js';
import { findBrowser, launchWithExtension, poll, type BrowserName } from '../../lab/browsers.js';
import { certDb, FIREFOX_LAB_POLICY, isolateDns, isolatedNetwork, LAB_SERVER, setSystemResolver, zoneWithProbe } from '../../lab/browser-dns.js';
import { requireBuiltExtension } from '../../lab/extension-build.js';
import { finishedMeasurement, labResolverSpec, sendFromPage, tabIdOf } from '../../lab/extension-pages.js';
import { RUN_DIR } from '../../lab/paths.js';
import { READY_PROBE, startCoreDNS } from '../../lab/resolver.js';
import { DEMO_DOMAIN, pageHosts, startSite } from '../../lab/site/server.js';
import { startHttpProxy } from '../../lab/http-proxy.js';
import { linesOf, runInNamespace, vitestCommand } from '../support/namespace.js';

type Setup = 'doh' | 'proxy';
const INNER = process.env.DNSCOST_NO_CLEARTEXT_INNER;
const BUDGET_MS: Record<BrowserName, number> = { chromium: 120_000, firefox: 150_000 };
/** The machine's own resolver (plain Do53, logging): on an address of the lab network beside the DoH server's. */
const CURRENT = '192.0.2.53';
const HOSTS = pageHosts(DEMO_DOMAIN);
const DOH_URL = `https://${LAB_SERVER}/dns-query`;

/** Every name the plain resolver was asked (its readiness probe aside). */
const askedOf = (log: string) => [...log.matchAll(/dnscost-query (\S+) (\S+) (\S+)/g)]
  .filter((m) => !(m[2] === READY_PROBE.type && m[3] === READY_PROBE.name))
  .map((m) => `${m[1]} ${m[2]} ${m[3]}`);

async function visit(ext: Awaited<ReturnType<Awaited<ReturnType<typeof launchWithExtension>>['openExtensionPage']>>, open: (url: string) => Promise<void>, url: string, needed: string[]): Promise<number> {
  await open(url);
  const tabId = await tabIdOf(ext, url.replace(HOSTS.start, HOSTS.page).replace(/\/$/, '/page.html'));
  await poll(`the record of ${url}`, 30_000, async () => {
    const r = (await sendFromPage(ext, { type: 'page-report', tabId })) as { ok: boolean; record?: PageRecord };
    return r.ok && r.record!.onLoadMs !== null && needed.every((n) => r.record!.hosts.some((h) => h.name === n)) ? true : undefined;
  });
  return tabId;
}

function innerTest(name: BrowserName, setup: Setup): void {
  test(`${name}, ${setup}: no question reaches the machine's plain resolver, by the browser or by dnscost`, { timeout: BUDGET_MS[name] - 5_000 }, async (t) => {
    const extensionDir = requireBuiltExtension(name);
    const work = mkdtempSync(join(tmpdir(), `dnscost-cleartext-${name}-`));
    t.onTestFinished(() => rmSync(work, { recursive: true, force: true }));
    mkdirSync(RUN_DIR, { recursive: true });
    isolatedNetwork(false);
    execFileSync('ip', ['addr', 'add', `${CURRENT}/24`, 'dev', 'lab0']);
    const { chromiumPolicy, firefoxPolicies } = isolateDns(work);
    setSystemResolver(CURRENT);
    // The machine's resolver answers the site too: a leak would load, and be logged.
    const plain = await startCoreDNS({ address: CURRENT, ports: { dns: 53 }, logQueries: true, siteZone: { zone: DEMO_DOMAIN, a: LAB_SERVER }, others: 'nxdomain' });
    t.onTestFinished(() => plain.stop());
    const doh = await startCoreDNS({ address: LAB_SERVER, ports: { dns: 53, tls: 853, https: 443 }, logQueries: true, siteZone: zoneWithProbe({ zone: DEMO_DOMAIN, a: LAB_SERVER }), others: 'nxdomain' });
    t.onTestFinished(() => doh.stop());
    const site = await startSite({ domain: DEMO_DOMAIN, address: LAB_SERVER, port: 80 });
    t.onTestFinished(() => site.close());

    // Each browser's DoH (or Firefox's proxy) where a person's administrator would set it; the lab CA trusted by the
    // browser and the host.
    const proxy = setup === 'proxy' ? await startHttpProxy({ address: LAB_SERVER, upstream: LAB_SERVER, port: 3128 }) : null;
    t.onTestFinished(() => proxy?.close());
    writeFileSync(chromiumPolicy, JSON.stringify(setup === 'doh'
      ? { DnsOverHttpsMode: 'secure', DnsOverHttpsTemplates: `${DOH_URL}{?dns}` }
      : { ProxyMode: 'fixed_servers', ProxyServer: `http://${LAB_SERVER}:${proxy!.port}` }));
    if (firefoxPolicies) {
      writeFileSync(firefoxPolicies, JSON.stringify({
        policies: {
          ...FIREFOX_LAB_POLICY.policies,
          ...(setup === 'doh'
            ? { DNSOverHTTPS: { Enabled: true, ProviderURL: DOH_URL, Fallback: false, Locked: true } }
            : {
                DNSOverHTTPS: { Enabled: false, Locked: true },
                Proxy: { Mode: 'manual', HTTPProxy: `${LAB_SERVER}:${proxy!.port}`, UseHTTPProxyForAllProtocols: true, Locked: true },
              }),
          Certificates: { Install: [doh.certs.caFile] },
        },
      }));
    }
    certDb(join(work, 'home', '.pki', 'nssdb'), doh.certs.caFile);
    // Firefox itself asks the machine's resolver for a page's HTTPS record even behind a proxy (CI14 saw `HTTPS
    // start.example.com` in the log; network.dns.native_https_query): off, so that whatever the log holds is dnscost's.
    // And no HTTPS-First (its fallback to http now and then leaves the page's record holding the document alone, a
    // recorder bug lab/demo.ts works around by opening the page again; CI15 hit it here): this test is about clear text.
    const firefoxPrefs = { 'dom.security.https_first': false, ...(setup === 'proxy' ? { 'network.dns.native_https_query': false } : {}) };
    const b = await launchWithExtension(name, { extensionDir, workDir: work, chromiumDefaultProfile: true, env: { NODE_EXTRA_CA_CERTS: doh.certs.caFile }, firefoxPrefs });
    try {
      const ext = await b.openExtensionPage('options/options.html');
      // The lab resolver as the person's one resolver besides their current DNS (on by default), every transport.
      const set = (await sendFromPage(ext, { type: 'settings-set', changes: { resolvers: [labResolverSpec(doh)] } })) as { ok: boolean };
      assert.equal(set.ok, true, JSON.stringify(set));
      assert.equal(((await sendFromPage(ext, { type: 'consent-give' })) as { ok: boolean }).ok, true);
      const status = await poll('the host connects', 30_000, async () => {
        const s = (await sendFromPage(ext, { type: 'host-status' })) as { ok: boolean; browserDoh?: { active: boolean; endpoint?: { address: string } | null; proxy?: string | null } | null };
        return s.ok ? s : undefined;
      });
      if (setup === 'doh') {
        assert.equal(status.browserDoh?.active, true, `the host found the browser's DoH: ${JSON.stringify(status.browserDoh)}`);
        assert.equal(status.browserDoh?.endpoint?.address, LAB_SERVER);
      } else {
        assert.notEqual(status.browserDoh?.active, true, JSON.stringify(status.browserDoh));
        // Chromium says nothing of a proxy per request: the host read it from the browser's policy.
        if (name === 'chromium') assert.match(status.browserDoh?.proxy ?? '', /ProxyMode fixed_servers/, JSON.stringify(status.browserDoh));
      }

      const tab = await b.browser.newPage();
      const open = async (url: string) => {
        try {
          await tab.goto(url, { waitUntil: 'load', timeout: 20_000 });
        } catch (err) {
          if (!String(err).includes('NS_BINDING_ABORTED')) throw err; // Firefox's HTTPS-First fallback (lab/demo.ts)
        }
      };
      // Three pages, each measured in full.
      const pages: Array<[string, string[]]> = [
        [site.url(HOSTS.start, '/'), [HOSTS.page, HOSTS.css, HOSTS.img]],
        [site.url(HOSTS.frame, '/frame.html'), [HOSTS.frame, HOSTS.inner]],
        [site.url(HOSTS.js, '/plain.html'), [HOSTS.js, HOSTS.img]],
      ];
      let panelText = '';
      for (const [url, needed] of pages) {
        const tabId = await visit(ext, open, url, needed);
        const start = (await sendFromPage(ext, { type: 'measure-start', tabId })) as MeasureStatus;
        assert.equal(start.ok, true, JSON.stringify(start));
        const plan = start.measurement!.plan;
        assert.deepEqual(plan.resolvers.map((r) => r.id), setup === 'doh' ? ['browser', 'lab'] : ['lab'], "the browser's DoH first; the current DNS (plain) is not measured");
        if (setup === 'proxy') assert.equal(plan.proxied, true, 'the page is marked proxied');
        assert.deepEqual(plan.resolvers.flatMap((r) => r.transports).filter((x) => x === 'udp' || x === 'tcp'), [], 'no plain-DNS endpoint');
        const done = await finishedMeasurement(ext, tabId, 60_000);
        assert.equal(done.measurement!.state, 'done', JSON.stringify(done.measurement!.error));
        assert.ok(done.records!.some((r) => r.resolver === (setup === 'doh' ? 'browser' : 'lab') && r.transport === 'doh' && r.ok), 'measured over DoH');
        const popup = await b.openExtensionPage(`popup/popup.html?tab=${tabId}`);
        panelText = await poll('the panel shows the results', 20_000, async () =>
          popup.evaluate(() => (document.getElementById('cost')?.dataset.state === 'results' ? document.querySelector('#cost .compared-with')?.textContent ?? '' : undefined)),
        );
        assert.match(panelText, setup === 'doh' ? /^Compared with your browser's own DNS over HTTPS/ : /^This page went through a proxy/);
        await popup.close();
      }
      const asked = askedOf(plain.logs());
      assert.deepEqual(asked, [], `the machine's plain resolver was asked: ${asked.slice(0, 10).join(', ')}`);
      const overDoh = askedOf(doh.logs()).filter((q) => q.startsWith('https ') && q.includes(DEMO_DOMAIN));
      assert.ok(overDoh.length > 0, 'the lab resolver was asked the pages\' names over DoH (the log works)');
      if (proxy) assert.ok(proxy.seen.some((x) => x.endsWith(HOSTS.page)), `the pages went through the proxy: ${proxy.seen.slice(0, 5).join(', ')}`);
      console.log(`${name}: ${setup}: ${overDoh.length} questions over DoH, 0 in clear text; the panel: ${panelText}`);
    } finally {
      await b.close();
    }
  });
}

if (INNER) {
  const [name, setup] = INNER.split(':') as [BrowserName, Setup];
  innerTest(name, setup);
} else {
  for (const [name, setup] of [['chromium', 'doh'], ['chromium', 'proxy'], ['firefox', 'doh'], ['firefox', 'proxy']] as const) {
    test(`${name}, ${setup}: nothing in clear text (its own network and mount namespace)`, { timeout: BUDGET_MS[name] + 15_000 }, async (t) => {
      if (process.getuid?.() !== 0) return t.skip('needs root: network and mount namespaces (unshare)');
      if (!findBrowser(name)) assert.fail(`${name} is not installed: scripts/setup installs it`);
      requireBuiltExtension(name);
      const out = await runInNamespace(vitestCommand(import.meta.url), { DNSCOST_NO_CLEARTEXT_INNER: `${name}:${setup}` }, BUDGET_MS[name], ['--net', '--mount', '--propagation', 'private']);
      console.log(linesOf(out, `${name}: `).join('\n'));
      assert.equal(out.code, 0, out.text.slice(-8000));
    });
  }
}
