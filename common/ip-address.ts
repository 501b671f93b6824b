// IP addresses as text, pure: which are global, and one canonical form to compare them in.
/** A dotted-quad IPv4 literal, its four parts captured. */
export const IPV4_LITERAL = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** IPv4 text to its four parts; null when not a dotted-quad address. */
export function v4Parts(ip: string): number[] | null {
  const m = IPV4_LITERAL.exec(ip);
  if (!m) return null;
  const parts = m.slice(1, 5).map(Number);
  return parts.every((p) => p <= 255) ? parts : null;
}

/** IPv6 text to eight 16-bit groups (an embedded IPv4 tail allowed, a `%zone` dropped); null when not IPv6. */
export function v6Groups(ip: string): number[] | null {
  let s = ip.toLowerCase().replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!s.includes(':')) return null;
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (tail) {
    const p = v4Parts(tail[1]!);
    if (!p) return null;
    s = `${s.slice(0, -tail[1]!.length)}${((p[0]! << 8) | p[1]!).toString(16)}:${((p[2]! << 8) | p[3]!).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const part = (h: string) => (h === '' ? [] : h.split(':'));
  const head = part(halves[0]!);
  const rest = halves.length === 2 ? part(halves[1]!) : [];
  const fill = halves.length === 2 ? 8 - head.length - rest.length : 0;
  if (fill < 0 || (halves.length === 1 && head.length !== 8)) return null;
  const groups = [...head, ...Array<string>(fill).fill('0'), ...rest];
  if (groups.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null;
  return groups.map((g) => parseInt(g, 16));
}

/**
 * True for an address on the global internet; false for loopback, unspecified, private (RFC 1918), shared (CGNAT,
 * RFC 6598), link-local, the TEST-NETs and benchmarking ranges, multicast, reserved, and their IPv6 counterparts
 * (ULA, link-local, documentation, NAT64's local-use prefix, IPv4-mapped private addresses). Not an address: false.
 */
export function isGlobalAddress(ip: string): boolean {
  const v4 = v4Parts(ip);
  if (v4) return isGlobalV4(v4);
  const g = v6Groups(ip);
  if (!g) return false;
  if (g.every((x) => x === 0) || (g.slice(0, 7).every((x) => x === 0) && g[7] === 1)) return false; // :: and ::1
  // IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::/96): the IPv4 address decides.
  const embedded = [g[6]! >> 8, g[6]! & 255, g[7]! >> 8, g[7]! & 255];
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return isGlobalV4(embedded);
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return isGlobalV4(embedded);
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return false; // 64:ff9b:1::/48, local-use NAT64
  if ((g[0]! & 0xe000) !== 0x2000) return false; // outside 2000::/3 (ULA fc00::/7, link-local fe80::/10, multicast …)
  if (g[0] === 0x2001 && g[1] === 0xdb8) return false; // documentation
  if (g[0] === 0x3fff && g[1]! <= 0x0fff) return false; // documentation (RFC 9637)
  if (g[0] === 0x2001 && g[1]! < 0x200) return g[1] === 0x1 || g[1] === 0x3 || g[1] === 0x4 || g[1] === 0x5; // IETF protocol assignments: only the anycast services are global
  if (g[0] === 0x2002) return isGlobalV4([g[1]! >> 8, g[1]! & 255, g[2]! >> 8, g[2]! & 255]); // 6to4
  return true;
}

function isGlobalV4([a, b, c]: number[]): boolean {
  if (a === 0 || a === 10 || a === 127 || a! >= 224) return false; // this network, private, loopback, multicast and reserved
  if (a === 100 && b! >= 64 && b! <= 127) return false; // shared address space (CGNAT)
  if (a === 169 && b === 254) return false; // link-local
  if (a === 172 && b! >= 16 && b! <= 31) return false;
  if (a === 192 && b === 168) return false;
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return false; // IETF protocol assignments, TEST-NET-1
  if (a === 198 && (b === 18 || b === 19)) return false; // benchmarking
  if (a === 198 && b === 51 && c === 100) return false; // TEST-NET-2
  if (a === 203 && b === 0 && c === 113) return false; // TEST-NET-3
  return true;
}

/** True for an IPv4 or IPv6 address in text (brackets and a `%zone` allowed). */
export function isIpAddress(ip: string): boolean {
  return v4Parts(ip) !== null || v6Groups(ip) !== null;
}

/**
 * One text form per address, to compare addresses: IPv4 dotted-quad (an IPv4-mapped IPv6 address becomes its IPv4
 * one), IPv6 lower case with the longest run of zero groups compressed (RFC 5952); anything else as given.
 */
export function canonicalIp(ip: string): string {
  const v4 = v4Parts(ip);
  if (v4) return v4.join('.');
  const g = v6Groups(ip);
  if (!g) return ip;
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return [g[6]! >> 8, g[6]! & 255, g[7]! >> 8, g[7]! & 255].join('.');
  let best = { at: -1, len: 0 };
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > best.len && j - i > 1) best = { at: i, len: j - i };
    i = j;
  }
  const hex = g.map((x) => x.toString(16));
  if (best.at < 0) return hex.join(':');
  return `${hex.slice(0, best.at).join(':')}::${hex.slice(best.at + best.len).join(':')}`;
}
