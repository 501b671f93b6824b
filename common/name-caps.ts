// How many of a page's names one measurement may ask (issue 26 item 4): a page decides which names the host
// re-resolves, so a hostile page could make every dnscost user ask a victim's domain thousands of random
// subdomains through public resolvers, or mark its visitors with one-off beacon names. A measurement asks at most
// NAMES_PER_DOMAIN names under one registrable domain (random-subdomain labels collapse into their domain) and at most
// NAMES_PER_PAGE in all, the names the page needed first kept; of the names that look generated (one-off labels:
// looksGenerated) under one domain it asks one, the first needed, as the sample of them all. Enforced by the extension
// when it plans and again by the host, which does not trust the plan. Pure.
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
export type CapReason = 'domain-cap' | 'page-cap' | 'generated';

/**
 * A label that looks generated for one visit or one visitor (a beacon's `u7f3a9c2e`, a random subdomain's
 * `x8k2p0qz`, a UUID, a long hex or base32 token): 8 characters or more mixing letters and digits, with at least 3
 * digits, or 16 hex digits and dashes. Real hosts' labels (`cdn`, `static2`, `img-s`, `fonts`, `a1146`, `ib`) do not.
 */
export function looksGenerated(label: string): boolean {
  const l = label.toLowerCase();
  if (/^[0-9a-f-]{16,}$/.test(l) && /[0-9]/.test(l)) return true;
  return l.length >= 8 && /^[a-z0-9]+$/.test(l) && /[a-z]/.test(l) && (l.match(/[0-9]/g)?.length ?? 0) >= 3;
}

/** The labels of `name` below its registrable domain (`a.b` of `a.b.example.com`). */
function subLabels(name: string): string[] {
  const domain = capDomain(name);
  return name === domain ? [] : name.slice(0, -(domain.length + 1)).split('.');
}

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
  // Domains one of whose generated-looking names is kept: the sample of the rest.
  const sampled = new Set<string>();
  let counted = 0;
  for (const h of hosts) {
    if (opts.lab && isSpecialUseName(h.name)) {
      kept.push(h);
      continue;
    }
    const domain = capDomain(h.name);
    const n = perDomain.get(domain) ?? 0;
    const generated = subLabels(h.name).some(looksGenerated);
    if (generated && sampled.has(domain)) {
      dropped.push({ name: h.name, reason: 'generated' });
      continue;
    }
    if (n >= NAMES_PER_DOMAIN) {
      dropped.push({ name: h.name, reason: 'domain-cap' });
      continue;
    }
    if (counted >= NAMES_PER_PAGE) {
      dropped.push({ name: h.name, reason: 'page-cap' });
      continue;
    }
    perDomain.set(domain, n + 1);
    if (generated) sampled.add(domain);
    counted++;
    kept.push(h);
  }
  return { kept, dropped };
}
