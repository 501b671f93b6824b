// How many of a page's names one measurement may ask (issue 26 item 4): a page decides which names the host
// re-resolves, so a hostile page could make every dnscost user ask a victim's domain thousands of random
// subdomains through public resolvers, or mark its visitors with one-off beacon names. A measurement asks at most
// NAMES_PER_DOMAIN names under one registrable domain (random-subdomain labels collapse into their domain) and at most
// NAMES_PER_PAGE in all, the names the page needed first kept. Enforced by the extension when it plans and again by
// the host, which does not trust the plan. Pure.
import { getDomain } from 'tldts';
import { isSpecialUseName } from './hostname.js';

/**
 * Names under one registrable domain (the Public Suffix List's, private suffixes included, so each
 * `*.cloudfront.net` customer is a domain of its own). The real pages in ../shared/pages need at most 5.
 */
export const NAMES_PER_DOMAIN = 10;
/** Names in one measurement: the heaviest real page the project has (zdnet) needs 99. */
export const NAMES_PER_PAGE = 150;

/** Why a name was left out by the caps. */
export type CapReason = 'domain-cap' | 'page-cap';

/** The registrable domain a name counts against (the name itself where the list has none: a bare suffix, an IP). */
export function capDomain(name: string): string {
  return getDomain(name, { allowPrivateDomains: true }) ?? name;
}

/**
 * The names within the caps, in the order given (put the first-needed first), and those left out with why. With
 * `lab` (the person's lab setting), special-use names are not counted: they go only to resolvers on the person's own
 * network (common/name-privacy.ts), never to a public one, so they cannot be turned on anyone else.
 */
export function capNames<T extends { name: string }>(hosts: readonly T[], opts: { lab?: boolean | undefined } = {}): { kept: T[]; dropped: Array<{ name: string; reason: CapReason }> } {
  const kept: T[] = [];
  const dropped: Array<{ name: string; reason: CapReason }> = [];
  const perDomain = new Map<string, number>();
  let counted = 0;
  for (const h of hosts) {
    if (opts.lab && isSpecialUseName(h.name)) {
      kept.push(h);
      continue;
    }
    const domain = capDomain(h.name);
    const n = perDomain.get(domain) ?? 0;
    if (n >= NAMES_PER_DOMAIN) {
      dropped.push({ name: h.name, reason: 'domain-cap' });
      continue;
    }
    if (counted >= NAMES_PER_PAGE) {
      dropped.push({ name: h.name, reason: 'page-cap' });
      continue;
    }
    perDomain.set(domain, n + 1);
    counted++;
    kept.push(h);
  }
  return { kept, dropped };
}
