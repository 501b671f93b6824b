// The person's current DNS is the baseline, found on the machine, measured by default, in real Chromium and Firefox:
// the test's own mount namespace gives the machine a resolv.conf naming a lab resolver (CoreDNS on 127.0.0.2:53),
// once directly and once behind a local caching stub (unbound on 127.0.0.1:53, its /etc/unbound/unbound.conf
// forwarding to the lab resolver). With no resolver configured but the lab's own, the extension's measurement of a
// page asks the current DNS first (`system`, and `system-stub` for unbound), and the panel says it compares with
// "your current DNS". Nothing is set to make it do so: the host finds it, as on a person's machine.
//
// Re-runs itself under `unshare --net --mount` (root) with DNSCOST_CURRENT_DNS_INNER naming browser and setup; the
// bind mounts exist only in that namespace, so the machine's own /etc is never touched.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'vitest';
import type { MeasureStatus } from '../../extension/src/messages/measure.js';
import { findBrowser, launchWithExtension, poll, type BrowserName } from '../../lab/browsers.js';
import { requireBuiltExtension } from '../../lab/extension-build.js';
import { finishedMeasurement, labResolverSpec, loadRecordedPage, sendFromPage } from '../../lab/extension-pages.js';
import { RUN_DIR } from '../../lab/paths.js';
import { startCoreDNS } from '../../lab/resolver.js';
import { NORMAL_PAGE_HOSTS, startSite } from '../../lab/site/server.js';
import { linesOf, runInNamespace, vitestCommand } from '../support/namespace.js';

type Setup = 'resolv-conf' | 'behind-unbound';
const INNER = process.env.DNSCOST_CURRENT_DNS_INNER;
const BUDGET_MS: Record<BrowserName, number> = { chromium: 90_000, firefox: 110_000 };
/** The lab resolver the machine's resolv.conf names (any 127/8 address is on lo in the namespace). */
const CURRENT = '127.0.0.2';

/** unbound as the machine's caching stub: listens on 127.0.0.1:53, forwards everything to the lab resolver. */
const UNBOUND_CONF = `server:
  interface: 127.0.0.1
  port: 53
  do-ip6: no
  do-not-query-localhost: no
  username: ""
  chroot: ""
  directory: "/tmp"
  pidfile: ""
  use-syslog: no
  logfile: ""
  verbosity: 0
  # unbound answers test. itself (RFC 6761) unless told otherwise; the lab zone lives there.
  local-zone: "test." nodefault
  domain-insecure: "test"
forward-zone:
  name: "."
  forward-addr: ${CURRENT}@53
`;

function innerTests(name: BrowserName, setup: Setup): void {
  test(`${name}, ${setup}: the current DNS is measured by default and is what the panel compares with`, { timeout: BUDGET_MS[name] - 5_000 }, async (t) => {
    const extensionDir = requireBuiltExtension(name);
    const work = mkdtempSync(join(tmpdir(), `dnscost-current-${name}-`));
    t.onTestFinished(() => rmSync(work, { recursive: true, force: true }));
    mkdirSync(RUN_DIR, { recursive: true });
    const site = await startSite();
    t.onTestFinished(() => site.close());
    const lab = await startCoreDNS({ address: CURRENT, ports: { dns: 53 } });
    t.onTestFinished(() => lab.stop());
    if (setup === 'behind-unbound') {
      const stub = spawn('unbound', ['-d', '-c', '/etc/unbound/unbound.conf'], { stdio: ['ignore', 'ignore', 'pipe'] });
      t.onTestFinished(() => void stub.kill('SIGTERM'));
      let err = '';
      stub.stderr.on('data', (d: Buffer) => (err += d.toString()));
      // Ready when it answers: a lookup through it reaches the lab resolver.
      await poll('unbound answers on 127.0.0.1:53', 10_000, async () => {
        const { Resolver } = await import('node:dns/promises');
        const r = new Resolver({ timeout: 500, tries: 1 });
        r.setServers(['127.0.0.1']);
        return r.resolve4('h1.test').then(() => true, () => (stub.exitCode !== null ? Promise.reject(new Error(`unbound exited: ${err}`)) : undefined));
      });
    }
    const b = await launchWithExtension(name, { extensionDir, workDir: work });
    try {
      const ext = await b.openExtensionPage('options/options.html');
      // Only the lab's resolver configured: the current DNS is not among the person's resolvers, the host finds it.
      assert.equal(((await sendFromPage(ext, { type: 'settings-set', changes: { resolvers: [labResolverSpec(lab)], lab: true } })) as { ok: boolean }).ok, true);
      assert.equal(((await sendFromPage(ext, { type: 'consent-give' })) as { ok: boolean }).ok, true);
      const status = await poll('the host connects', 30_000, async () => {
        const s = (await sendFromPage(ext, { type: 'host-status' })) as { ok: boolean; currentDns?: { servers: Array<{ address: string }>; stub: { software: string } | null; description: string } };
        return s.ok ? s : undefined;
      });
      assert.deepEqual(status.currentDns!.servers.map((s) => s.address), [CURRENT], status.currentDns!.description);
      assert.equal(status.currentDns!.stub?.software ?? null, setup === 'behind-unbound' ? 'unbound' : null);

      const { tabId } = await loadRecordedPage(ext, await b.browser.newPage(), site.url(NORMAL_PAGE_HOSTS.start, '/'), site.url(NORMAL_PAGE_HOSTS.page, '/'));
      const start = (await sendFromPage(ext, { type: 'measure-start', tabId })) as MeasureStatus;
      assert.equal(start.ok, true, JSON.stringify(start));
      const ids = start.measurement!.plan.resolvers.map((r) => r.id);
      assert.deepEqual(ids, setup === 'behind-unbound' ? ['system', 'system-stub', 'lab'] : ['system', 'lab'], 'the current DNS first, by default');
      const system = start.measurement!.plan.resolvers[0]!;
      assert.deepEqual(system.transports, ['udp', 'tcp']);
      assert.match(system.name, new RegExp(`^your current DNS \\(${CURRENT.replaceAll('.', '\\.')}`));
      const done = await finishedMeasurement(ext, tabId, 60_000);
      assert.equal(done.measurement!.state, 'done', JSON.stringify(done.measurement!.error));
      const asked = done.records!.filter((r) => r.resolver === 'system');
      assert.ok(asked.length > 0 && asked.every((r) => r.transport === 'udp' || r.transport === 'tcp'), 'the current DNS was asked over Do53');

      const popup = await b.openExtensionPage(`popup/popup.html?tab=${tabId}`);
      const text = await poll('the panel shows the results', 20_000, async () =>
        popup.evaluate(() => (document.getElementById('cost')?.dataset.state === 'results' ? document.querySelector('#cost .compared-with')?.textContent ?? '' : undefined)),
      );
      assert.match(text, /^Compared with your current DNS \(127\.0\.0\.2/);
      if (setup === 'behind-unbound') assert.match(text, /through unbound on 127\.0\.0\.1/);
      await popup.screenshot({ path: join(RUN_DIR, `current-dns-${name}-${setup}.png`), fullPage: true });
      console.log(`${name}: ${setup}: ${text}`);
    } finally {
      await b.close();
    }
  });
}

if (INNER) {
  const [name, setup] = INNER.split(':') as [BrowserName, Setup];
  innerTests(name, setup);
} else {
  for (const name of ['chromium', 'firefox'] as const) {
    for (const setup of ['resolv-conf', 'behind-unbound'] as const) {
      test(`${name}, ${setup}: the current DNS as the baseline (its own network and mount namespace)`, { timeout: BUDGET_MS[name] + 15_000 }, async (t) => {
        if (process.getuid?.() !== 0) return t.skip('needs root: network and mount namespaces (unshare)');
        if (!findBrowser(name)) assert.fail(`${name} is not installed: scripts/setup installs it`);
        requireBuiltExtension(name);
        const dir = mkdtempSync(join(tmpdir(), 'dnscost-current-etc-'));
        t.onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
        writeFileSync(join(dir, 'resolv.conf'), `nameserver ${setup === 'behind-unbound' ? '127.0.0.1' : CURRENT}\n`);
        writeFileSync(join(dir, 'unbound.conf'), UNBOUND_CONF);
        const mounts = [`mount --bind '${join(dir, 'resolv.conf')}' /etc/resolv.conf`];
        if (setup === 'behind-unbound') mounts.push(`mount --bind '${join(dir, 'unbound.conf')}' /etc/unbound/unbound.conf`);
        const script = ['ip link set lo up', ...mounts, vitestCommand(import.meta.url)].join(' && ');
        const out = await runInNamespace(script, { DNSCOST_CURRENT_DNS_INNER: `${name}:${setup}` }, BUDGET_MS[name], ['--net', '--mount', '--propagation', 'private']);
        console.log(linesOf(out, `${name}: `).join('\n'));
        assert.equal(out.code, 0, out.text.slice(-8000));
      });
    }
  }
}
