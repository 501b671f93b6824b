import { test } from 'vitest';
import assert from 'node:assert/strict';
import type os from 'node:os';
import { currentNetwork, networkFingerprint, parseArpMac, parseDefaultRoute, type NetworkFacts } from './network.js';

const ROUTE = `Iface	Destination	Gateway 	Flags	RefCnt	Use	Metric	Mask		MTU	Window	IRTT
wlan0	0000A8C0	00000000	0001	0	0	600	00FFFFFF	0	0	0
eth0	00000000	FE01A8C0	0003	0	0	100	00000000	0	0	0
wlan0	00000000	0101A8C0	0003	0	0	600	00000000	0	0	0
docker0	000011AC	00000000	0001	0	0	0	0000FFFF	0	0	0
`;
const ARP = `IP address       HW type     Flags       HW address            Mask     Device
192.168.1.254    0x1         0x2         AA:BB:CC:00:11:22     *        eth0
192.168.1.1      0x1         0x2         aa:bb:cc:00:11:33     *        wlan0
192.168.1.9      0x1         0x0         00:00:00:00:00:00     *        eth0
`;

test('/proc/net/route: the default route with the lowest metric; /proc/net/arp: its gateway\'s MAC', () => {
  assert.deepEqual(parseDefaultRoute(ROUTE), { address: '192.168.1.254', iface: 'eth0' });
  assert.equal(parseDefaultRoute(ROUTE.split('\n').filter((l) => !l.includes('\t0003\t')).join('\n')), null, 'no gateway route');
  assert.equal(parseDefaultRoute(''), null);
  assert.equal(parseArpMac(ARP, '192.168.1.254', 'eth0'), 'aa:bb:cc:00:11:22');
  assert.equal(parseArpMac(ARP, '192.168.1.254', 'wlan0'), null, 'other interface');
  assert.equal(parseArpMac(ARP, '192.168.1.9', 'eth0'), null, 'incomplete entry');
});

const iface = (address: string, netmask: string, internal = false): os.NetworkInterfaceInfo =>
  ({ address, netmask, family: 'IPv4', mac: '02:00:00:00:00:01', internal, cidr: null }) as os.NetworkInterfaceInfo;

test('fingerprint: stable on one network, different on another; loopback alone is no network', () => {
  const home: NetworkFacts = {
    gateway: { address: '192.168.1.1', iface: 'wlan0', mac: 'aa:bb:cc:00:11:33' },
    interfaces: { lo: [iface('127.0.0.1', '255.0.0.0', true)], wlan0: [iface('192.168.1.57', '255.255.255.0')] },
    resolvers: ['192.168.1.1'],
  };
  const a = networkFingerprint(home)!;
  assert.match(a.id, /^[0-9a-f]{16}$/);
  assert.equal(a.description, 'gateway 192.168.1.1 on wlan0 · 192.168.1.0/24 · DNS 192.168.1.1');
  // A new DHCP lease on the same network: same id.
  assert.equal(networkFingerprint({ ...home, interfaces: { ...home.interfaces, wlan0: [iface('192.168.1.80', '255.255.255.0')] } })!.id, a.id);
  // Another home network on the same addresses, told apart by its gateway's MAC.
  assert.notEqual(networkFingerprint({ ...home, gateway: { ...home.gateway!, mac: 'aa:bb:cc:99:99:99' } })!.id, a.id);
  // Another resolver, another subnet: other ids.
  assert.notEqual(networkFingerprint({ ...home, resolvers: ['1.1.1.1'] })!.id, a.id);
  assert.notEqual(networkFingerprint({ ...home, interfaces: { wlan0: [iface('10.2.3.4', '255.255.0.0')] } })!.id, a.id);
  // Without a gateway (an OS without /proc): subnets and resolvers still tell.
  assert.equal(networkFingerprint({ ...home, gateway: null })!.description, '192.168.1.0/24 · DNS 192.168.1.1');
  // Only loopback and link-local: nothing to tell a network by.
  assert.equal(networkFingerprint({ gateway: null, interfaces: { lo: [iface('127.0.0.1', '255.0.0.0', true)], eth0: [iface('169.254.3.4', '255.255.0.0')] }, resolvers: ['127.0.0.53'] }), null);
});

test('currentNetwork reads this machine without throwing (a fingerprint or, with no interface up, null)', () => {
  const n = currentNetwork();
  if (n) assert.match(n.id, /^[0-9a-f]{16}$/);
  assert.equal(currentNetwork()?.id, n?.id, 'the same twice in a row');
});
