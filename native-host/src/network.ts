// Which network the machine is on, so a person's results can be told apart by network (home, office, phone
// hotspot): the dashboard's recommendation is "for the network the person is on". A fingerprint, not a name: a
// hash of what identifies an access network from inside it, plus a short description for the person's own eyes.
// Neither leaves the machine except in the host's replies to the extension (the upload never carries it).
//
// What goes in, where the OS exposes it:
// - the default gateway's address, interface and link-layer address (Linux: /proc/net/route and /proc/net/arp) —
//   the gateway's MAC tells two home networks that both use 192.168.1.0/24 apart;
// - the IPv4 subnets of the interfaces that are up (os.networkInterfaces(), every OS);
// - the system resolver's addresses (resolv.conf, where there is one; zone ids left out).
// Nothing in it changes between two measurements on the same network (no ports, no time, no IPv6 privacy address).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { MAX_NETWORK_DESCRIPTION, type NetworkInfo } from '../../common/schema.js';
import { parseResolvConf } from './current-dns/parse.js';

/** The default route: gateway address and interface, with the gateway's link-layer address when known. */
export interface Gateway {
  address: string;
  iface: string;
  mac: string | null;
}

/** What the fingerprint is made of (gathered by currentNetwork, or given by a test). */
export interface NetworkFacts {
  gateway: Gateway | null;
  interfaces: NodeJS.Dict<os.NetworkInterfaceInfo[]>;
  resolvers: string[];
}

/** The IPv4 default route from /proc/net/route text (little-endian hex fields), or null. */
export function parseDefaultRoute(text: string): { address: string; iface: string } | null {
  let best: { address: string; iface: string; metric: number } | null = null;
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 8) continue;
    const [iface, dest, gw, flags, , , metric, mask] = f as [string, string, string, string, string, string, string, string];
    // RTF_UP | RTF_GATEWAY, destination and mask 0: the default route.
    if (dest !== '00000000' || mask !== '00000000' || (Number.parseInt(flags, 16) & 3) !== 3 || !/^[0-9A-Fa-f]{8}$/.test(gw)) continue;
    const n = Number.parseInt(gw, 16);
    const address = [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, n >>> 24].join('.');
    const m = Number(metric);
    if (!best || m < best.metric) best = { address, iface, metric: m };
  }
  return best ? { address: best.address, iface: best.iface } : null;
}

/** The link-layer address of `address` on `iface` from /proc/net/arp text, or null. */
export function parseArpMac(text: string, address: string, iface: string): string | null {
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f[0] === address && f[5] === iface && f[3] && /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/i.test(f[3]) && f[3] !== '00:00:00:00:00:00') return f[3].toLowerCase();
  }
  return null;
}

/** `a.b.c.d/len` of an IPv4 interface address and its netmask. */
function subnet(address: string, netmask: string): string {
  const a = address.split('.').map(Number);
  const m = netmask.split('.').map(Number);
  const len = m.reduce((s, x) => s + (x.toString(2).match(/1/g)?.length ?? 0), 0);
  return `${a.map((x, i) => x & (m[i] ?? 0)).join('.')}/${len}`;
}

/** The fingerprint of `facts`; null when there is nothing to tell a network by (no interface up beyond loopback). */
export function networkFingerprint(facts: NetworkFacts): NetworkInfo | null {
  const subnets = new Set<string>();
  for (const [name, list] of Object.entries(facts.interfaces)) {
    for (const i of list ?? []) {
      if (i.internal || i.family !== 'IPv4' || i.address.startsWith('169.254.')) continue;
      subnets.add(`${subnet(i.address, i.netmask)} ${name}`);
    }
  }
  const nets = [...subnets].sort();
  if (nets.length === 0 && !facts.gateway) return null;
  const resolvers = [...facts.resolvers].sort();
  const g = facts.gateway;
  const id = createHash('sha256').update(JSON.stringify({ g: g ? [g.address, g.iface, g.mac] : null, nets, resolvers })).digest('hex').slice(0, 16);
  const parts = [
    ...(g ? [`gateway ${g.address} on ${g.iface}`] : []),
    ...(nets.length ? [nets.map((n) => n.split(' ')[0]).join(', ')] : []),
    ...(resolvers.length ? [`DNS ${resolvers.join(', ')}`] : []),
  ];
  return { id, description: parts.join(' · ').slice(0, MAX_NETWORK_DESCRIPTION) };
}

function readOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** The network the machine is on now (see the top of this file); null when there is none to tell. */
export function currentNetwork(): NetworkInfo | null {
  const route = parseDefaultRoute(readOr('/proc/net/route'));
  const gateway = route ? { ...route, mac: parseArpMac(readOr('/proc/net/arp'), route.address, route.iface) } : null;
  return networkFingerprint({ gateway, interfaces: os.networkInterfaces(), resolvers: parseResolvConf(readOr('/etc/resolv.conf')).servers.map((s) => s.address.replace(/%.*$/, '')) });
}
