// Which names may go to which resolver (issue 13): one rule, enforced by the extension when it plans a measurement
// and again by the host before it sends anything.
// Pure: no I/O; the host's split-horizon lookup (native-host/src/private-names.ts) feeds `answeredNonGlobal`.
import { cleanName, isSpecialUseName, isUnder } from './hostname.js';
import { isGlobalAddress, isIpAddress } from './ip-address.js';

export { isSpecialUseName, SPECIAL_USE_SUFFIXES } from './hostname.js';
export { isGlobalAddress } from './ip-address.js';

/**
 * Why a name may not be asked of a resolver: `onion` (never sent to DNS, RFC 7686); `special-use` (a special- or
 * private-use suffix, and not the lab setting with a resolver on the person's own network); `single-label` (only
 * meaningful inside the person's network); `reached-non-global` (the browser reached it at a non-global address);
 * `search-domain` (under one of the system's search domains); `split-horizon` (the person's current DNS answers it
 * with a non-global address, or could not be asked). Besides these, a page does not decide how much is asked
 * (common/name-caps.ts): `domain-cap` (more names under one registrable domain than a measurement asks), `page-cap`
 * (more names than a measurement asks), `not-completed` (every request the page made to it failed: a name that never
 * served the page is not re-resolved).
 */
export const WITHHELD_REASONS = ['onion', 'special-use', 'single-label', 'reached-non-global', 'search-domain', 'split-horizon', 'domain-cap', 'page-cap', 'generated', 'not-completed'] as const;
export type Withheld = (typeof WITHHELD_REASONS)[number];

/** What is known of a name beside itself. */
export interface NameContext {
  /** Addresses the browser reached it at. */
  reached?: readonly string[] | undefined;
  /**
   * Domains whose names the system sends to servers of their own (the current DNS's `splitDomains`: a VPN's
   * supplemental resolvers on macOS, Windows NRPT rules, systemd-resolved routing domains): private to the network.
   */
  splitDomains?: readonly string[] | undefined;
  /** The system's search domains (the current DNS's `search`). */
  searchDomains?: readonly string[] | undefined;
  /** The current DNS answered it with a non-global address (true), with global ones only (false), or was not asked / did not answer (undefined). */
  answeredNonGlobal?: boolean | undefined;
  /** The person's lab setting: special-use names may go to resolvers on non-global addresses. */
  lab?: boolean | undefined;
}


/**
 * Why `name` may not be asked of a resolver at `resolverAddress` (an IP literal), or null when it may. The order of
 * the checks is the order of the reasons' strength: `.onion` never, special-use names only in the lab on the
 * person's own network, private names only on the person's own network.
 *
 * A resolver on a globally routable address (Cloudflare, Google, Quad9, any public one) may be asked a name only if
 * - it is not special-use: RFC 6761 (test, localhost, invalid, example), 6762 (local), 7686 (onion), 8375
 *   (home.arpa), 9476 (alt), ICANN's private-use `internal`, and the suffixes home and office networks use (lan,
 *   home, corp, intranet, private, localdomain, i2p …);
 * - it is not private to the person's network: not a single label, not reached by the browser at a non-global
 *   address, not under the system's search domains or a domain it sends to servers of its own (a VPN's split DNS),
 *   and not answered by the person's current DNS with a non-global address (split horizon: the host asks it first).
 * A resolver on a non-global address (loopback, RFC 1918, CGNAT, link-local, ULA, the TEST-NETs …) is inside the
 * person's own network and may be asked private names, and — only when the person turned the lab setting on —
 * special-use names too (a loopback stub such as systemd-resolved or dnsmasq forwards what it cannot answer upstream,
 * so special-use names go nowhere by default). `.onion` never goes to DNS at all (RFC 7686 §2).
 */
export function withheldFrom(name: string, resolverAddress: string, ctx: NameContext = {}): Withheld | null {
  const n = cleanName(name);
  if (isUnder(n, 'onion')) return 'onion';
  const global = isGlobalAddress(resolverAddress);
  if (isSpecialUseName(n)) return ctx.lab && !global ? null : 'special-use';
  if (!global) return null;
  return privateReason(n, ctx);
}

/** Why `name` is private to the person's network (so no global resolver may be asked it), or null. */
export function privateReason(name: string, ctx: NameContext = {}): Withheld | null {
  const n = cleanName(name);
  if (!n.includes('.')) return 'single-label';
  if ((ctx.reached ?? []).some((ip) => isIpAddress(ip) && !isGlobalAddress(ip))) return 'reached-non-global';
  if ((ctx.searchDomains ?? []).some((d) => d && isUnder(n, cleanName(d)))) return 'search-domain';
  if ((ctx.splitDomains ?? []).some((d) => d && isUnder(n, cleanName(d)))) return 'split-horizon';
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
