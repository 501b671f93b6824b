// Addresses of a rebuilt page's servers in the lab network (lab/har/). The server namespace's lab resolver holds 53,
// 853 and 443 on its address (DoT and DoH included), so the page's web servers listen on a second address of the same
// namespace, behind the same emulated link, as a page's servers and its resolver are different hosts on the web. A
// HAR that names a host by its IP address gets that address in the lab too: added to the server side, routed to it
// from the client side, so the request stays inside the namespaces (neither has a route anywhere else).
import type { LabNet } from '../netns.js';
import type { PagePlan } from './plan.js';

/** The site's addresses: in the lab's documentation ranges, next to the resolver's 192.0.2.2 / 2001:db8::2. */
export const HAR_SITE_ADDRESS = { v4: '192.0.2.3', v6: '2001:db8::3' } as const;

/** Whether a plan's host is an IP address (v4, or v6 as URL.hostname writes it, in brackets). */
export function isAddress(host: string): boolean {
  return /^\d+\.\d+\.\d+\.\d+$/.test(host) || host.includes(':');
}

/** The plan's hosts that are IP addresses (without brackets): the site must listen on them. */
export function literalAddresses(plan: PagePlan): string[] {
  return plan.hosts.filter(isAddress).map((h) => h.replace(/^\[(.*)\]$/, '$1'));
}

async function serverMac(net: LabNet): Promise<string> {
  const [link] = JSON.parse((await net.execIn('server', 'ip', ['-j', 'link', 'show', 'dev', net.server.iface])).stdout) as { address: string }[];
  if (!link) throw new Error(`no link ${net.server.iface} in ${net.server.ns}`);
  return link.address;
}

/** Adds the site's addresses to the server side of `net` and pins them in the client's neighbour table (as createLabNet pins its own). */
export async function addSiteAddress(net: LabNet, v4: string = HAR_SITE_ADDRESS.v4, v6: string = HAR_SITE_ADDRESS.v6): Promise<{ v4: string; v6: string }> {
  await net.execIn('server', 'ip', ['addr', 'add', `${v4}/24`, 'dev', net.server.iface]);
  await net.execIn('server', 'ip', ['addr', 'add', `${v6}/64`, 'dev', net.server.iface, 'nodad']);
  const mac = await serverMac(net);
  // A fresh neighbour entry can stall the first packet for a retransmit: pin it, so no page load pays for that.
  for (const a of [v4, v6]) await net.execIn('client', 'ip', ['neigh', 'replace', a, 'lladdr', mac, 'dev', net.client.iface, 'nud', 'permanent']);
  return { v4, v6 };
}

/** Gives the server side each of `addresses` (a HAR's IP-literal hosts), routed from the client over the lab link. */
export async function addLiteralAddresses(net: LabNet, addresses: string[]): Promise<void> {
  const mac = addresses.length ? await serverMac(net) : '';
  for (const a of addresses) {
    const v6 = a.includes(':');
    await net.execIn('server', 'ip', ['addr', 'add', `${a}/${v6 ? 128 : 32}`, 'dev', net.server.iface, ...(v6 ? ['nodad'] : [])]);
    await net.execIn('client', 'ip', [...(v6 ? ['-6'] : []), 'route', 'replace', `${a}/${v6 ? 128 : 32}`, 'dev', net.client.iface]);
    await net.execIn('client', 'ip', ['neigh', 'replace', a, 'lladdr', mac, 'dev', net.client.iface, 'nud', 'permanent']);
  }
}
