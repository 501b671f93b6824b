// Chromium's automatic upgrade: in `automatic` mode with no templates of its own, Chromium sends its lookups over
// DNS over HTTPS when a DNS server the system gives it belongs to a provider in its table, to that provider's DoH
// server (and still falls back to the plain server when DoH fails). The table below restates the provider list in
// Chromium's net/dns/public/doh_provider_entry.cc (its current form, where each entry carries a base::Feature that is
// enabled or disabled by default; older copies of Chromium's net/, e.g. klzgrad/naiveproxy's, predate that): only the
// entries that name plain DNS addresses and are enabled by default, each with its addresses and DoH template.
// Entries without addresses (DNS4EU, IIJ, NextDNS) are choices in the settings page, never upgrades; "Quad9Secure"
// (9.9.9.9, 149.112.112.112) is disabled by default there, so a system on 9.9.9.9 is not upgraded. Pure.

/** One provider Chromium upgrades to: its plain DNS addresses and its DoH template. */
interface UpgradeEntry {
  provider: string;
  addresses: string[];
  template: string;
}

/** Chromium's auto-upgrade table (see the note above); several entries may share addresses (Spectrum). */
export const CHROMIUM_UPGRADES: readonly UpgradeEntry[] = [
  { provider: 'CleanBrowsing (adult filter)', addresses: ['185.228.168.10', '185.228.169.11', '2a0d:2a00:1::1', '2a0d:2a00:2::1'], template: 'https://doh.cleanbrowsing.org/doh/adult-filter{?dns}' },
  { provider: 'CleanBrowsing (family filter)', addresses: ['185.228.168.168', '185.228.169.168', '2a0d:2a00:1::', '2a0d:2a00:2::'], template: 'https://doh.cleanbrowsing.org/doh/family-filter{?dns}' },
  { provider: 'CleanBrowsing (security filter)', addresses: ['185.228.168.9', '185.228.169.9', '2a0d:2a00:1::2', '2a0d:2a00:2::2'], template: 'https://doh.cleanbrowsing.org/doh/security-filter{?dns}' },
  { provider: 'Cloudflare', addresses: ['1.1.1.1', '1.0.0.1', '2606:4700:4700::1111', '2606:4700:4700::1001'], template: 'https://chrome.cloudflare-dns.com/dns-query' },
  { provider: 'Comcast', addresses: ['75.75.75.75', '75.75.76.76', '2001:558:feed::1', '2001:558:feed::2'], template: 'https://doh.xfinity.com/dns-query{?dns}' },
  { provider: 'Cox', addresses: ['68.105.28.11', '68.105.28.12', '2001:578:3f::30'], template: 'https://doh.cox.net/dns-query' },
  { provider: 'CZ.NIC', addresses: ['185.43.135.1', '193.17.47.1', '2001:148f:fffe::1', '2001:148f:ffff::1'], template: 'https://odvr.nic.cz/doh' },
  { provider: 'DNS.SB', addresses: ['185.222.222.222', '45.11.45.11', '2a09::', '2a11::'], template: 'https://doh.dns.sb/dns-query{?dns}' },
  { provider: 'Google', addresses: ['8.8.8.8', '8.8.4.4', '2001:4860:4860::8888', '2001:4860:4860::8844'], template: 'https://dns.google/dns-query{?dns}' },
  { provider: 'Google (DNS64)', addresses: ['2001:4860:4860::64', '2001:4860:4860::6464'], template: 'https://dns64.dns.google/dns-query{?dns}' },
  { provider: 'Levonet', addresses: ['109.236.119.2', '109.236.120.2', '2a02:6ca3:0:1::2', '2a02:6ca3:0:2::2'], template: 'https://dns.levonet.sk/dns-query{?dns}' },
  { provider: 'OpenDNS', addresses: ['208.67.222.222', '208.67.220.220', '2620:119:35::35', '2620:119:53::53'], template: 'https://doh.opendns.com/dns-query{?dns}' },
  { provider: 'OpenDNS (FamilyShield)', addresses: ['208.67.222.123', '208.67.220.123', '2620:119:35::123', '2620:119:53::123'], template: 'https://doh.familyshield.opendns.com/dns-query{?dns}' },
  { provider: 'Quad9 (ECS)', addresses: ['9.9.9.11', '149.112.112.11', '2620:fe::11', '2620:fe::fe:11'], template: 'https://dns11.quad9.net/dns-query' },
  { provider: 'Quad9 (unfiltered)', addresses: ['9.9.9.10', '149.112.112.10', '2620:fe::10', '2620:fe::fe:10'], template: 'https://dns10.quad9.net/dns-query' },
  { provider: 'Quickline', addresses: ['212.60.61.246', '212.60.63.246', '2001:1a88:10:ffff::1', '2001:1a88:10:ffff::2'], template: 'https://doh.quickline.ch/dns-query{?dns}' },
  { provider: 'Spectrum', addresses: ['209.18.47.61', '209.18.47.62', '2001:1998:f00:1::1', '2001:1998:f00:2::1'], template: 'https://doh-01.spectrum.com/dns-query{?dns}' },
  { provider: 'Spectrum', addresses: ['209.18.47.61', '209.18.47.62', '2001:1998:f00:1::1', '2001:1998:f00:2::1'], template: 'https://doh-02.spectrum.com/dns-query{?dns}' },
];

/** An IP literal in one spelling (IPv6 as the URL standard serialises it, zone dropped); the text itself if not one. */
export function canonicalIp(text: string): string {
  const a = text.replace(/%.*$/, '').toLowerCase();
  if (!a.includes(':')) return a;
  try {
    return new URL(`http://[${a}]/`).hostname;
  } catch {
    return a;
  }
}

/**
 * What Chromium's automatic mode upgrades to for the DNS servers it sees: the template of every entry naming one of
 * `servers` (in the table's order), and the first server that matched; null when none is in the table.
 */
export function chromiumUpgrade(servers: readonly string[]): { from: string; templates: string[] } | null {
  const ips = servers.map(canonicalIp);
  const matches = CHROMIUM_UPGRADES.filter((e) => e.addresses.some((a) => ips.includes(canonicalIp(a))));
  if (matches.length === 0) return null;
  const from = servers.find((s) => matches.some((e) => e.addresses.some((a) => canonicalIp(a) === canonicalIp(s))))!;
  return { from, templates: [...new Set(matches.map((e) => e.template))] };
}
