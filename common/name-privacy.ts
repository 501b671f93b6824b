// Which names may go to which resolver (issue 13): one rule, enforced by the extension when it plans a measurement
// and again by the host before it sends anything.
//
// A resolver on a globally routable address (Cloudflare, Google, Quad9, any public one) may be asked a name only if
// - it is not special-use: RFC 6761 (test, localhost, invalid, example), 6762 (local), 7686 (onion), 8375
//   (home.arpa), 9476 (alt), ICANN's private-use `internal`, and the suffixes home and office networks use (lan,
//   home, corp, intranet, private, localdomain, i2p …);
// - it is not private to the person's network: not a single label, not reached by the browser at a non-global
//   address, not under the system's search domains, and not answered by the person's current DNS with a non-global
//   address (split horizon: the host asks the current DNS first).
// A resolver on a non-global address (loopback, RFC 1918, CGNAT, link-local, ULA, the TEST-NETs …) is inside the
// person's own network and may be asked private names, and — only when the person turned the lab setting on —
// special-use names too (a loopback stub such as systemd-resolved or dnsmasq forwards what it cannot answer upstream,
// so special-use names go nowhere by default). `.onion` never goes to DNS at all (RFC 7686 §2).
//
// Pure: no I/O; the host's split-horizon lookup (native-host/src/private-names.ts) feeds `answeredNonGlobal`.
import { IPV4_LITERAL } from './hostname.js';

/** Special-use and private-use suffixes (a name equal to one, or under it). */
export const SPECIAL_USE_SUFFIXES = [
  // RFC 6761
  'test', 'localhost', 'invalid', 'example',
  // RFC 6762 (mDNS), RFC 8375, RFC 9476, RFC 7686
  'local', 'home.arpa', 'alt', 'onion',
  // ICANN's private-use TLD (2024) and the suffixes home routers and offices use
  'internal', 'lan', 'home', 'corp', 'intranet', 'private', 'localdomain', 'domain', 'i2p', 'mail', 'workgroup',
] as const;

/**
 * Why a name may not be asked of a resolver: `onion` (never sent to DNS, RFC 7686); `special-use` (a special- or
 * private-use suffix, and not the lab setting with a resolver on the person's own network); `single-label` (only
 * meaningful inside the person's network); `reached-non-global` (the browser reached it at a non-global address);
 * `search-domain` (under one of the system's search domains); `split-horizon` (the person's current DNS answers it
 * with a non-global address, or could not be asked).
 */
export const WITHHELD_REASONS = ['onion', 'special-use', 'single-label', 'reached-non-global', 'search-domain', 'split-horizon'] as const;
export type Withheld = (typeof WITHHELD_REASONS)[number];

/** What is known of a name beside itself. */
export interface NameContext {
  /** Addresses the browser reached it at. */
  reached?: readonly string[] | undefined;
  /** The system's search domains (the current DNS's `search`). */
  searchDomains?: readonly string[] | undefined;
  /** The current DNS answered it with a non-global address (true), with global ones only (false), or was not asked / did not answer (undefined). */
  answeredNonGlobal?: boolean | undefined;
  /** The person's lab setting: special-use names may go to resolvers on non-global addresses. */
  lab?: boolean | undefined;
}

const clean = (name: string) => name.toLowerCase().replace(/\.$/, '');
const under = (name: string, suffix: string) => name === suffix || name.endsWith(`.${suffix}`);

/** True for names under a special-use or private-use suffix (`.onion` included). */
export function isSpecialUseName(name: string): boolean {
  const n = clean(name);
  return SPECIAL_USE_SUFFIXES.some((s) => under(n, s));
}

function v4Parts(ip: string): number[] | null {
  const m = IPV4_LITERAL.exec(ip);
  if (!m) return null;
  const parts = m.slice(1, 5).map(Number);
  return parts.every((p) => p <= 255) ? parts : null;
}

/** IPv6 text to eight 16-bit groups (an embedded IPv4 tail allowed, a `%zone` dropped); null when not IPv6. */
function v6Groups(ip: string): number[] | null {
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

/**
 * Why `name` may not be asked of a resolver at `resolverAddress` (an IP literal), or null when it may. The order of
 * the checks is the order of the reasons' strength: `.onion` never, special-use names only in the lab on the
 * person's own network, private names only on the person's own network.
 */
export function withheldFrom(name: string, resolverAddress: string, ctx: NameContext = {}): Withheld | null {
  const n = clean(name);
  if (under(n, 'onion')) return 'onion';
  const global = isGlobalAddress(resolverAddress);
  if (isSpecialUseName(n)) return ctx.lab && !global ? null : 'special-use';
  if (!global) return null;
  return privateReason(n, ctx);
}

/** Why `name` is private to the person's network (so no global resolver may be asked it), or null. */
export function privateReason(name: string, ctx: NameContext = {}): Withheld | null {
  const n = clean(name);
  if (!n.includes('.')) return 'single-label';
  if ((ctx.reached ?? []).some((ip) => (v4Parts(ip) || v6Groups(ip)) && !isGlobalAddress(ip))) return 'reached-non-global';
  if ((ctx.searchDomains ?? []).some((d) => d && under(n, clean(d)))) return 'search-domain';
  if (ctx.answeredNonGlobal === true) return 'split-horizon';
  return null;
}

/** Why `name` may not be asked of every one of `resolverAddresses` (the first reason met), or null when it may. */
export function withheldFromAny(name: string, resolverAddresses: readonly string[], ctx: NameContext = {}): Withheld | null {
  for (const a of resolverAddresses) {
    const why = withheldFrom(name, a, ctx);
    if (why) return why;
  }
  return null;
}
