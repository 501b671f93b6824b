// Split DNS fails closed (issue 26 item 2): on a VPN that sends `corp.example.com` to its own servers, no name under it
// reaches a public resolver, whichever OS told the host so — macOS (`scutil --dns`, a supplemental resolver), Windows
// (the NRPT rules), Linux (systemd-resolved's per-link routing domain), each from a fixture of the real output — and a
// name whose split-horizon check lost its A query (the AAAA answered NODATA) stays home too. In a network namespace of
// the test's own, where a capture on its only interface sees every packet; the host runs in-process with the current
// DNS each OS's discovery found.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { test } from 'vitest';
import { Capture } from '../../lab/capture.js';
import { READY_PROBE, startCoreDNS } from '../../lab/resolver.js';
import { discoverCurrentDns, type DiscoverDeps } from '../../native-host/src/current-dns/discover.js';
import { encodeFrame } from '../../native-host/src/framing.js';
import { runNative } from '../../native-host/src/native.js';
import { collectReplies } from '../../native-host/src/test-replies.js';
import type { CurrentDns } from '../../common/schema.js';
import { currentDnsServer } from '../support/current-dns-server.js';
import { runInNamespace, vitestCommand } from '../support/namespace.js';

const INNER = process.env.DNSCOST_SPLIT_INNER;
const PUBLIC_ADDR = '9.9.9.9';
const CURRENT_ADDR = '10.53.0.2';
const PUBLIC_NAME = 'www.dnscost-lab.net';
const SPLIT_NAME = 'jira.corp.example.com';
// Its A question is dropped by the current DNS (a lost packet); its AAAA answered with no data.
const LOST_NAME = 'lost.dnscost-lab.net';
const fixture = (name: string) => readFileSync(new URL(`../../native-host/src/current-dns/fixtures/${name}`, import.meta.url), 'utf8');


/** What each OS's discovery finds on a machine on the VPN (its fixture), with the lab's current DNS as its server. */
async function currentDnsOf(os: 'darwin' | 'win32' | 'linux'): Promise<CurrentDns> {
  const commands: Record<string, string> = {
    'scutil --dns': fixture('scutil-dns-vpn.txt'),
    'ipconfig /all': fixture('ipconfig-all.txt'),
    'powershell -NoProfile -NonInteractive -Command Get-DnsClientNrptPolicy | Format-List Namespace': fixture('nrpt-policy.txt'),
    'resolvectl status --no-pager': fixture('resolvectl-status-vpn.txt'),
  };
  const deps: DiscoverDeps = {
    platform: os, read: (p) => (p === '/etc/resolv.conf' ? 'nameserver 127.0.0.53\n' : null), list: () => [],
    run: async (cmd, args) => commands[[cmd, ...args].join(' ')] ?? null, processes: () => ['systemd-resolve'], nodeServers: () => [],
  };
  const found = await discoverCurrentDns(deps);
  assert.ok(found.splitDomains?.includes('corp.example.com'), `${os}: ${JSON.stringify(found)}`);
  // The fixtures' own servers are other machines': the check asks the lab's current DNS instead.
  return { ...found, servers: [{ address: CURRENT_ADDR, port: 53 }], stub: null };
}

if (INNER) {
  test('inside the namespace: names under a split domain, and a name whose check was lost, reach no public resolver', { timeout: 60_000 }, async (t) => {
    const work = mkdtempSync(join(tmpdir(), 'dnscost-split-'));
    t.onTestFinished(() => rmSync(work, { recursive: true, force: true }));
    for (const a of [PUBLIC_ADDR, CURRENT_ADDR]) execFileSync('ip', ['addr', 'add', `${a}/32`, 'dev', 'lo']);
    // The current DNS (the VPN's view of the world): every name a global address, but LOST_NAME's A question lost.
    const current = await currentDnsServer(CURRENT_ADDR, (name, type) => (name === LOST_NAME && type === 'A' ? 'drop' : { a: '93.184.216.34' }));
    t.onTestFinished(() => {
      current.close();
    });
    const pub = await startCoreDNS({ address: PUBLIC_ADDR, ports: { dns: 53 }, logQueries: true, siteZone: { zone: ['dnscost-lab.net', 'example.com'], a: '93.184.216.34' } });
    t.onTestFinished(() => pub.stop());
    const pcap = join(work, 'capture.pcap');
    const capture = new Capture(pcap, [53]);
    await capture.start();
    t.onTestFinished(() => capture.kill());

    for (const os of ['darwin', 'win32', 'linux'] as const) {
      const dns = await currentDnsOf(os);
      const input = new PassThrough();
      const output = new PassThrough();
      const replies = collectReplies(output);
      const ran = runNative({ input, output, log: () => undefined, discover: { currentDns: async () => dns, networkId: () => 'vpn' }, browserDoh: async () => null });
      input.write(encodeFrame(JSON.stringify({ id: os, type: 'measure', hosts: [PUBLIC_NAME, SPLIT_NAME, LOST_NAME], resolvers: [{ id: 'public', name: 'public', endpoints: [{ transport: 'udp', address: PUBLIC_ADDR, port: 53 }] }], modes: ['cold'], warmup: false, timeoutMs: 1000 })));
      let end: Record<string, unknown> | undefined;
      for (let i = 0; i < 200 && !end; i++) {
        await new Promise((r) => setTimeout(r, 50));
        end = replies.find((r) => r.id === os && (r.type === 'done' || r.type === 'error'));
      }
      input.end();
      assert.equal(await ran, true);
      assert.equal(end?.type, 'done', JSON.stringify(end ?? replies).slice(0, 2000));
      assert.deepEqual(Object.fromEntries((end!.withheld as Array<{ name: string; reason: string }>).map((w) => [w.name, w.reason])), { [SPLIT_NAME]: 'split-horizon', [LOST_NAME]: 'split-horizon' }, os);
    }
    await capture.stop();

    const asked = [...pub.logs().matchAll(/dnscost-query \S+ (\S+) (\S+)/g)].filter((m) => !(m[1] === READY_PROBE.type && m[2] === READY_PROBE.name)).map((m) => m[2]!.toLowerCase().replace(/\.$/, ''));
    assert.deepEqual([...new Set(asked)], [PUBLIC_NAME], 'the public resolver was asked only the public name');
    const toPublic = execFileSync('tshark', ['-r', pcap, '-Y', `ip.dst == ${PUBLIC_ADDR} && dns`, '-T', 'fields', '-e', 'dns.qry.name'], { encoding: 'utf8' }).split('\n').map((l) => l.trim().toLowerCase()).filter(Boolean);
    assert.deepEqual([...new Set(toPublic)], [PUBLIC_NAME], `the capture: questions to ${PUBLIC_ADDR}`);
    // The split name was not even checked with the current DNS: its domain decides (nothing of it left the host).
    const checked = execFileSync('tshark', ['-r', pcap, '-Y', `dns.qry.name == "${SPLIT_NAME}"`, '-T', 'fields', '-e', 'frame.number'], { encoding: 'utf8' }).trim();
    assert.equal(checked, '', 'no packet carried the split name');
  });
} else {
  test('split DNS fails closed: macOS, Windows and Linux split domains, a lost check (in a namespace of its own)', { timeout: 80_000 }, async (t) => {
    if (process.getuid?.() !== 0) return t.skip('needs root: a network namespace of its own (unshare)');
    const out = await runInNamespace(`ip link set lo up && ${vitestCommand(import.meta.url)}`, { DNSCOST_SPLIT_INNER: '1' }, 70_000);
    assert.equal(out.code, 0, out.text.slice(-8000));
  });
}
