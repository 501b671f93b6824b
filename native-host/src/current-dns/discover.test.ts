// The person's current DNS on Linux (plain resolv.conf; systemd-resolved with and without DNS over TLS; dnsmasq;
// NetworkManager's dnsmasq; unbound forwarding over TLS and recursing; stubby; an unknown stub), macOS and Windows,
// each from fixture files of the real formats.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'vitest';
import { discoverCurrentDns, type DiscoverDeps } from './discover.js';
import { parseDnsmasqConf, parseIpconfigAll, parseNrptPolicy, parseResolvConf, parseResolvectl, parseScutilDns, parseStubbyYml, parseUnboundConf } from './parse.js';
import { withheldFrom } from '../../../common/name-privacy.js';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const parent = (name: string): string => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');

/** A machine made of files, command outputs and processes. */
function machine(opts: { platform?: NodeJS.Platform; files?: Record<string, string>; commands?: Record<string, string>; processes?: string[]; nodeServers?: string[] }): DiscoverDeps {
  const files = opts.files ?? {};
  return {
    platform: opts.platform ?? 'linux',
    read: (p) => files[p] ?? null,
    list: (dir) => Object.keys(files).filter((p) => p.startsWith(`${dir}/`)).map((p) => p.slice(dir.length + 1)).sort(),
    run: async (cmd, args) => opts.commands?.[[cmd, ...args].join(' ')] ?? null,
    processes: () => opts.processes ?? [],
    nodeServers: () => opts.nodeServers ?? [],
  };
}

const addrs = (servers: Array<{ address: string; port: number }>) => servers.map((s) => (s.port === 53 ? s.address : `${s.address}:${s.port}`));

test('formats: resolv.conf, resolvectl, dnsmasq, unbound, stubby, scutil, ipconfig', () => {
  const multi = parseResolvConf(parent('resolv-multi.conf'));
  assert.deepEqual(addrs(multi.servers), ['10.0.0.2', 'fe80::1%eth0', '2001:db8::53']);
  assert.deepEqual(multi.search, ['example.internal']);
  assert.deepEqual(parseResolvConf('search a.example b.example.\nnameserver 1.2.3.4\ndomain c.example\n').search, ['c.example'], 'the last search/domain line wins');

  const dot = parseResolvectl(fixture('resolvectl-status-dot.txt'));
  assert.equal(dot.dot, 'yes');
  assert.deepEqual(addrs(dot.servers), ['192.168.1.1', 'fe80::1%2'], 'the default-route link, current server first');
  assert.deepEqual(dot.search, ['lan']);
  const plainStatus = parseResolvectl(fixture('resolvectl-status-plain.txt'));
  assert.equal(plainStatus.dot, 'no');
  assert.deepEqual(addrs(plainStatus.servers), ['192.168.178.1', 'fd00::1']);

  const dnsmasq = parseDnsmasqConf(fixture('dnsmasq.conf'));
  assert.deepEqual(addrs(dnsmasq.servers), ['192.168.10.1', '9.9.9.9:5353'], 'per-domain servers and comments are not upstreams');
  assert.equal(dnsmasq.noResolv, true);

  const unbound = parseUnboundConf(fixture('unbound-forward-tls.conf'));
  assert.deepEqual(unbound.servers, [{ address: '1.1.1.1', port: 853, tlsName: 'cloudflare-dns.com' }, { address: '2606:4700:4700::1111', port: 853, tlsName: 'cloudflare-dns.com' }]);
  assert.equal(unbound.tls, true);
  assert.equal(unbound.recursive, false);
  assert.equal(parseUnboundConf(fixture('unbound-recursive.conf')).recursive, true);

  assert.deepEqual(parseStubbyYml(fixture('stubby.yml')).servers, [
    { address: '145.100.185.15', port: 853, tlsName: 'dnsovertls.sinodun.com' },
    { address: '2001:610:1:40ba:145:100:185:15', port: 853, tlsName: 'dnsovertls.sinodun.com' },
  ]);

  const mac = parseScutilDns(fixture('scutil-dns.txt'));
  assert.deepEqual(addrs(mac.servers), ['fe80::1%en0', '192.168.1.1']);
  assert.deepEqual(mac.search, ['lan']);
  assert.deepEqual(addrs(parseScutilDns(fixture('scutil-dns-vpn.txt')).servers), ['192.168.0.1', '8.8.4.4'], "a VPN's supplemental per-domain resolver is not the default");

  const win = parseIpconfigAll(fixture('ipconfig-all.txt'));
  assert.deepEqual(addrs(win.servers), ['fe80::1%12', '192.168.1.1'], 'the connected adapter with a gateway, not WSL, not the disconnected one');
  assert.deepEqual(win.search, ['home']);
});

test('a port that is no port (a fraction, zero, over 65,535, not digits) skips its server: the fuzz\'s find, every server a real one', () => {
  assert.deepEqual(parseDnsmasqConf('server=9.9.9.9#5.53\nserver=1.1.1.1#5353\nserver=8.8.8.8#0\n').servers, [{ address: '1.1.1.1', port: 5353 }]);
  assert.deepEqual(parseUnboundConf('forward-zone:\n  name: "."\n  forward-addr: 9.9.9.9@99999\n  forward-addr: 149.112.112.112@53\n').servers, [{ address: '149.112.112.112', port: 53 }]);
  assert.deepEqual(parseResolvectl('Global\n  DNS Servers: 10.0.0.1:70000 10.0.0.2:5353\n').servers.map((x) => x.port), [5353]);
  assert.deepEqual(parseStubbyYml('upstream_recursive_servers:\n  - address_data: 9.9.9.9\n    tls_port: 0\n').servers, [{ address: '9.9.9.9', port: 853 }]);
});

test('Linux, plain resolv.conf: the nameservers are the current DNS, no stub', async () => {
  const dns = await discoverCurrentDns(machine({ files: { '/etc/resolv.conf': 'nameserver 192.168.1.1\nnameserver 192.168.1.2\nsearch home.example\n' } }));
  assert.deepEqual(addrs(dns.servers), ['192.168.1.1', '192.168.1.2']);
  assert.equal(dns.stub, null);
  assert.equal(dns.encrypted, null);
  assert.deepEqual(dns.search, ['home.example']);
  assert.equal(dns.description, 'your current DNS (192.168.1.1, 192.168.1.2)');
});

test('Linux behind systemd-resolved: its upstreams, the stub labelled; DNS over TLS is reported as already encrypted', async () => {
  const files = { '/etc/resolv.conf': parent('resolv-systemd.conf'), '/run/systemd/resolve/resolv.conf': fixture('systemd-upstream-resolv.conf') };
  const plain = await discoverCurrentDns(machine({ files, commands: { 'resolvectl status --no-pager': fixture('resolvectl-status-plain.txt') }, processes: ['systemd-resolve'] }));
  assert.deepEqual(addrs(plain.servers), ['192.168.178.1', 'fd00::1']);
  assert.deepEqual(plain.stub, { address: '127.0.0.53', software: 'systemd-resolved' });
  assert.equal(plain.encrypted, null);
  assert.match(plain.description, /192\.168\.178\.1, fd00::1, through systemd-resolved on 127\.0\.0\.53/);
  // Without resolvectl (no D-Bus in a container): the upstream resolv.conf systemd-resolved writes.
  const noCommand = await discoverCurrentDns(machine({ files, processes: [] }));
  assert.equal(noCommand.source, '/run/systemd/resolve/resolv.conf');
  assert.deepEqual(addrs(noCommand.servers), ['192.168.178.1', 'fd00::1']);
  assert.deepEqual(noCommand.search, ['fritz.box']);
  const dot = await discoverCurrentDns(machine({ files, commands: { 'resolvectl status --no-pager': fixture('resolvectl-status-dot.txt') } }));
  assert.deepEqual(dot.encrypted, { transport: 'dot', by: 'systemd-resolved', opportunistic: false });
});

test('Linux behind dnsmasq (its own servers, else its resolv-file or NetworkManager\'s), unbound, stubby, or an unknown stub', async () => {
  const loopback = 'nameserver 127.0.0.1\n';
  const dnsmasq = await discoverCurrentDns(machine({ files: { '/etc/resolv.conf': loopback, '/etc/dnsmasq.conf': fixture('dnsmasq.conf') }, processes: ['bash', 'dnsmasq'] }));
  assert.deepEqual(addrs(dnsmasq.servers), ['192.168.10.1', '9.9.9.9:5353']);
  assert.deepEqual(dnsmasq.stub, { address: '127.0.0.1', software: 'dnsmasq' });
  const nm = await discoverCurrentDns(machine({ files: { '/etc/resolv.conf': loopback, '/run/NetworkManager/no-stub-resolv.conf': fixture('nm-no-stub-resolv.conf') }, processes: ['dnsmasq'] }));
  assert.deepEqual(addrs(nm.servers), ['10.20.0.1', '2001:db8:20::1']);

  const unbound = await discoverCurrentDns(machine({ files: { '/etc/resolv.conf': loopback, '/etc/unbound/unbound.conf': 'include: "/etc/unbound/unbound.conf.d/*.conf"\n', '/etc/unbound/unbound.conf.d/forward.conf': fixture('unbound-forward-tls.conf') }, processes: ['unbound'] }));
  assert.deepEqual(addrs(unbound.servers), ['1.1.1.1:853', '2606:4700:4700::1111:853']);
  assert.deepEqual(unbound.encrypted, { transport: 'dot', by: 'unbound', opportunistic: false });
  const recursive = await discoverCurrentDns(machine({ files: { '/etc/resolv.conf': loopback, '/etc/unbound/unbound.conf': fixture('unbound-recursive.conf') }, processes: ['unbound'] }));
  assert.deepEqual(addrs(recursive.servers), ['127.0.0.1'], 'a resolver that recurses itself is the current DNS');
  assert.equal(recursive.stub?.software, 'unbound (recursive)');
  assert.match(recursive.description, /your computer's own resolver/);

  const stubby = await discoverCurrentDns(machine({ files: { '/etc/resolv.conf': loopback, '/etc/stubby/stubby.yml': fixture('stubby.yml') }, processes: ['stubby'] }));
  assert.equal(stubby.encrypted?.by, 'stubby');
  assert.equal(stubby.servers.length, 2);

  const unknown = await discoverCurrentDns(machine({ files: { '/etc/resolv.conf': loopback } }));
  assert.deepEqual(addrs(unknown.servers), ['127.0.0.1']);
  assert.equal(unknown.stub, null, 'a resolver on this machine that is none of the known stubs is the current DNS itself');
  assert.equal(unknown.description, 'your current DNS (127.0.0.1, a resolver on this computer)');
  const none = await discoverCurrentDns(machine({}));
  assert.deepEqual(none.servers, []);
  assert.equal(none.description, 'no DNS server found');
});

test("the retry timer a browser resolving through the system pays for a lost Do53 query: glibc's `timeout:` (5 s unless set), Windows' 1 s, unknown behind a stub or on macOS", async () => {
  assert.equal(parseResolvConf('nameserver 192.168.1.1\n').retryMs, 5000);
  assert.equal(parseResolvConf('options rotate timeout:2 attempts:3\nnameserver 192.168.1.1\n').retryMs, 2000);
  assert.equal(parseResolvConf('options timeout:0\noptions timeout:99\n').retryMs, 30_000, 'the last one wins, at most 30 s as glibc caps it');
  assert.equal(parseResolvConf('options timeout:0\n').retryMs, 1000, 'glibc waits at least a second');
  const direct = await discoverCurrentDns(machine({ files: { '/etc/resolv.conf': 'options timeout:3\nnameserver 192.168.1.1\n' } }));
  assert.equal(direct.retryMs, 3000);
  const stub = await discoverCurrentDns(machine({ files: { '/etc/resolv.conf': 'nameserver 127.0.0.1\n', '/etc/stubby/stubby.yml': fixture('stubby.yml') }, processes: ['stubby'] }));
  assert.equal(stub.retryMs ?? null, null, 'the stub asks upstream on a timer of its own');
  const win = await discoverCurrentDns(machine({ platform: 'win32', commands: { 'ipconfig /all': fixture('ipconfig-all.txt') } }));
  assert.equal(win.retryMs, 1000);
  const mac = await discoverCurrentDns(machine({ platform: 'darwin', commands: { 'scutil --dns': fixture('scutil-dns.txt') } }));
  assert.equal(mac.retryMs, null);
});

test('macOS from scutil --dns; Windows from ipconfig /all, else node:dns getServers()', async () => {
  const mac = await discoverCurrentDns(machine({ platform: 'darwin', commands: { 'scutil --dns': fixture('scutil-dns.txt') } }));
  assert.equal(mac.source, 'scutil --dns');
  assert.deepEqual(addrs(mac.servers), ['fe80::1%en0', '192.168.1.1']);
  const win = await discoverCurrentDns(machine({ platform: 'win32', commands: { 'ipconfig /all': fixture('ipconfig-all.txt') }, nodeServers: ['9.9.9.9'] }));
  assert.equal(win.source, 'ipconfig /all');
  assert.deepEqual(addrs(win.servers), ['fe80::1%12', '192.168.1.1']);
  const fallback = await discoverCurrentDns(machine({ platform: 'win32', nodeServers: ['192.168.1.1', '[fe80::1]:53'] }));
  assert.equal(fallback.source, 'node:dns getServers()');
  assert.deepEqual(addrs(fallback.servers), ['192.168.1.1', 'fe80::1']);
});

test("split DNS fails closed: the domains a VPN or a local stub sends to servers of their own are found on every OS, and their names go to no global resolver", async () => {
  // systemd-resolved: a VPN link without the default route, its routing domains (~) and its plain one.
  const vpn = parseResolvectl(fixture('resolvectl-status-vpn.txt'));
  assert.deepEqual(addrs(vpn.servers), ['192.168.178.1'], 'the VPN link is not where other lookups go');
  assert.deepEqual(vpn.split.sort(), ['10.in-addr.arpa', 'corp.example.com', 'intra.example.net']);
  // macOS: a supplemental resolver's domain and search domain.
  assert.deepEqual(parseScutilDns(fixture('scutil-dns-vpn.txt')).split, ['corp.example.com']);
  // Windows: the NRPT rules' namespaces (a suffix, a name, several in braces; `.` is the default rule, not a domain).
  assert.deepEqual(parseNrptPolicy(fixture('nrpt-policy.txt')), ['corp.example.com', 'vpn.example.org', 'build.example.net']);
  // dnsmasq's per-domain servers, unbound's other forward and stub zones.
  assert.deepEqual(parseDnsmasqConf('server=/corp.example.com/10.0.0.1\nserver=/a.example/b.example/10.0.0.2#5353\nlocal=/lan/\nserver=9.9.9.9\n').split, ['corp.example.com', 'a.example', 'b.example', 'lan']);
  assert.deepEqual(parseUnboundConf('forward-zone:\n  name: "corp.example.com."\n  forward-addr: 10.0.0.1\nstub-zone:\n  name: "intra.example"\n  stub-addr: 10.0.0.2\nforward-zone:\n  name: "."\n  forward-addr: 9.9.9.9\n').split, ['corp.example.com', 'intra.example']);

  // Discovered, each OS's current DNS carries them.
  const linux = await discoverCurrentDns(machine({ files: { '/etc/resolv.conf': 'nameserver 127.0.0.53\n' }, commands: { 'resolvectl status --no-pager': fixture('resolvectl-status-vpn.txt') }, processes: ['systemd-resolve'] }));
  assert.ok(linux.splitDomains?.includes('corp.example.com'), JSON.stringify(linux));
  const mac = await discoverCurrentDns(machine({ platform: 'darwin', commands: { 'scutil --dns': fixture('scutil-dns-vpn.txt') } }));
  assert.deepEqual(mac.splitDomains, ['corp.example.com']);
  const win = await discoverCurrentDns(machine({ platform: 'win32', commands: { 'ipconfig /all': fixture('ipconfig-all.txt'), 'powershell -NoProfile -NonInteractive -Command Get-DnsClientNrptPolicy | Format-List Namespace': fixture('nrpt-policy.txt') } }));
  assert.deepEqual(win.splitDomains, ['corp.example.com', 'vpn.example.org', 'build.example.net']);

  // The rule: a name under a split domain goes to no global resolver, to one on the person's network it may.
  const ctx = { splitDomains: linux.splitDomains };
  assert.equal(withheldFrom('jira.corp.example.com', '1.1.1.1', ctx), 'split-horizon');
  assert.equal(withheldFrom('corp.example.com', '8.8.8.8', ctx), 'split-horizon');
  assert.equal(withheldFrom('www.example.com', '1.1.1.1', ctx), null);
  assert.equal(withheldFrom('jira.corp.example.com', '10.8.0.1', ctx), null);
});
