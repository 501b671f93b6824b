// Never weaker than the browser (issue 26 item 1), the host's half: while the browser that started the host resolves
// over DoH, the host sends no name in clear text — not to the person's current DNS (the split-horizon check goes to
// the browser's own DoH server instead), not to any plain-DNS endpoint (refused). In a network namespace of the
// test's own, where a capture on its only interface sees every packet. The browser's half (the extension's plan and
// panel) is in extension/src/background/measurements.test.ts.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { test } from 'vitest';
import { Capture } from '../../lab/capture.js';
import { startCoreDNS } from '../../lab/resolver.js';
import type { BrowserDoh, CurrentDns, EndpointSpec, ResolverSpec } from '../../common/schema.js';
import { encodeFrame } from '../../native-host/src/framing.js';
import { collectReplies } from '../../native-host/src/test-replies.js';
import { runNative } from '../../native-host/src/native.js';
import { currentDnsServer } from '../support/current-dns-server.js';
import { runInNamespace, vitestCommand } from '../support/namespace.js';

const INNER = process.env.DNSCOST_CLEARTEXT_INNER;
// The browser's DoH server on a global-looking address (inside the namespace), and the person's current DNS, a plain
// Do53 server that logs every question and answers every name with a public address.
const DOH_ADDR = '9.9.9.9';
const CURRENT_ADDR = '10.53.0.2';
const PUBLIC_NAME = 'www.dnscost-lab.net';
// Outside the DoH server's zones: it refuses it, so the check has no answer and the name stays home.
const INTERNAL_NAME = 'printer.corp-intra.net';


/** An in-process host with this browser DoH and current DNS; `ask` sends a measure request and waits for its end. */
function host(browserDoh: BrowserDoh | null, dns: CurrentDns) {
  const input = new PassThrough();
  const output = new PassThrough();
  const replies = collectReplies(output);
  const ran = runNative({ input, output, log: () => undefined, discover: { currentDns: async () => dns, networkId: () => 'lab' }, browserDoh: async () => browserDoh });
  return {
    async ask(id: string, req: Record<string, unknown>): Promise<Record<string, unknown>> {
      input.write(encodeFrame(JSON.stringify({ id, type: 'measure', modes: ['cold'], warmup: false, timeoutMs: 1000, ...req })));
      for (let i = 0; i < 300; i++) {
        const end = replies.find((r) => r.id === id && (r.type === 'done' || r.type === 'error'));
        if (end) return end;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`no end for ${id} in 15 s: ${JSON.stringify(replies).slice(0, 2000)}`);
    },
    async end(): Promise<boolean> {
      input.end();
      return ran;
    },
  };
}

if (INNER) {
  test('inside the namespace: with the browser on DoH, no name in clear text from the host', { timeout: 90_000 }, async (t) => {
    const work = mkdtempSync(join(tmpdir(), 'dnscost-cleartext-'));
    t.onTestFinished(() => rmSync(work, { recursive: true, force: true }));
    for (const a of [DOH_ADDR, CURRENT_ADDR]) execFileSync('ip', ['addr', 'add', `${a}/32`, 'dev', 'lo']);
    writeFileSync(join(work, 'resolv.conf'), `nameserver ${CURRENT_ADDR}\n`);
    execFileSync('mount', ['--bind', join(work, 'resolv.conf'), '/etc/resolv.conf']);
    const asked: string[] = [];
    const current = await currentDnsServer(CURRENT_ADDR, () => ({ a: '93.184.216.34' }), asked);
    t.onTestFinished(() => {
      current.close();
    });
    const doh = await startCoreDNS({ address: DOH_ADDR, ports: { dns: 53, tls: 853, https: 443 }, logQueries: true, siteZone: { zone: 'dnscost-lab.net', a: '93.184.216.34' } });
    t.onTestFinished(() => doh.stop());
    // Every packet to or from a DNS or HTTPS port (the lab's Capture: it knows when tshark really captures).
    const pcap = join(work, 'capture.pcap');
    const capture = new Capture(pcap, [53, 443]);
    await capture.start();
    t.onTestFinished(() => capture.kill());

    const endpoint: EndpointSpec = { transport: 'doh', address: DOH_ADDR, port: 443, serverName: 'dns.test', path: '/dns-query', method: 'POST' };
    const browserDoh: BrowserDoh = { browser: 'firefox', product: 'Firefox', mode: 'secure', active: true, templates: ['https://dns.test/dns-query'], source: 'test', setBy: 'settings', fallback: false, upgradedFrom: null, endpoint };
    const dns: CurrentDns = { source: 'test', servers: [{ address: CURRENT_ADDR, port: 53 }], search: [], stub: null, encrypted: null, description: `your current DNS (${CURRENT_ADDR})` };
    const browser: ResolverSpec = { id: 'browser', name: "Firefox's DNS over HTTPS (dns.test)", endpoints: [endpoint], ca: doh.certs.caPem };
    const hosts = [PUBLIC_NAME, INTERNAL_NAME];

    const encrypting = host(browserDoh, dns);
    // 1. A plain-DNS endpoint beside the browser's: refused, nothing sent.
    const plain = await encrypting.ask('plain', { hosts, resolvers: [browser, { id: 'public', name: 'public', endpoints: [{ transport: 'udp', address: DOH_ADDR, port: 53 }] }] });
    assert.equal(plain.type, 'error', JSON.stringify(plain));
    assert.equal(plain.code, 'cleartext-refused', JSON.stringify(plain));
    // 2. The browser's own DoH server alone (the baseline): the check asks it, over DoH, not the current DNS; the
    // name it cannot answer stays home.
    const own = await encrypting.ask('own', { hosts, resolvers: [browser] });
    assert.equal(own.type, 'done', JSON.stringify(own).slice(0, 2000));
    assert.deepEqual(own.withheld, [{ name: INTERNAL_NAME, reason: 'split-horizon' }]);
    assert.equal(await encrypting.end(), true);
    // 3. A page that went through a proxy, its browser on plain DNS: no plain endpoint either, and no check in clear
    // text: with no encrypted resolver of the browser's to ask, every name bound for a global resolver stays home.
    const proxied = host(null, dns);
    const viaProxy = await proxied.ask('proxied-plain', { hosts, resolvers: [browser, { id: 'public', name: 'public', endpoints: [{ transport: 'udp', address: DOH_ADDR, port: 53 }] }], noCleartext: true });
    assert.equal(viaProxy.code, 'cleartext-refused', JSON.stringify(viaProxy));
    assert.match(String(viaProxy.message), /went through a proxy/);
    const kept = await proxied.ask('proxied', { hosts, resolvers: [browser], noCleartext: true });
    assert.equal(kept.code, 'no-measurable-hosts', JSON.stringify(kept).slice(0, 2000));
    assert.equal(await proxied.end(), true);
    assert.equal(asked.length, 0, `the current DNS was asked nothing while the browser encrypts or the page was proxied: ${asked.join(', ')}`);
    const overHttps = [...doh.logs().matchAll(/dnscost-query (\S+) \S+ (\S+)/g)].filter((m) => m[2]!.toLowerCase().startsWith(PUBLIC_NAME));
    assert.ok(overHttps.length > 0 && overHttps.every((m) => m[1] === 'https'), `the browser's server was asked over DoH only: ${overHttps.map((m) => m[1]).join(', ')}`);

    await capture.stop();
    const plainPackets = execFileSync('tshark', ['-r', pcap, '-Y', 'udp.port == 53 || tcp.port == 53', '-T', 'fields', '-e', 'frame.number'], { encoding: 'utf8' }).trim();
    assert.equal(plainPackets, '', 'the capture: not one packet to or from port 53');
    const https = execFileSync('tshark', ['-r', pcap, '-Y', `ip.dst == ${DOH_ADDR} && tcp.dstport == 443`, '-T', 'fields', '-e', 'frame.number'], { encoding: 'utf8' }).trim();
    assert.notEqual(https, '', 'the capture sees the DoH traffic (it would see plain DNS too)');

    // 4. The control: the same request with a browser that does not encrypt asks the current DNS, which logs it.
    const plainBrowser = host(null, dns);
    const checked = await plainBrowser.ask('control', { hosts, resolvers: [browser] });
    assert.equal(checked.type, 'done', JSON.stringify(checked).slice(0, 2000));
    assert.equal(await plainBrowser.end(), true);
    assert.ok(asked.includes(PUBLIC_NAME), `without DoH in the browser the check asks the current DNS (the log works): ${asked.join(', ')}`);
  });
} else {
  test('while the browser resolves over DoH the host sends no name in clear text (in a namespace of its own)', { timeout: 110_000 }, async (t) => {
    if (process.getuid?.() !== 0) return t.skip('needs root: a network and mount namespace of its own (unshare)');
    const out = await runInNamespace(`ip link set lo up && ${vitestCommand(import.meta.url)}`, { DNSCOST_CLEARTEXT_INNER: '1' }, 100_000, ['--net', '--mount', '--propagation', 'private']);
    assert.equal(out.code, 0, out.text.slice(-8000));
  });
}
