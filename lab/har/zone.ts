// The lab resolver's zone for a page rebuilt from a HAR (lab/har/): every hostname of the plan answers the site's
// address (A, and AAAA when given), so a browser in the lab's client namespace resolves each one for real through
// whichever DNS path a test sets up, and nothing is resolved or fetched outside the lab. It is startCoreDNS's
// `siteZone` with a list of names (each name a zone of its own, so only the page's names and names below them answer;
// any other name is REFUSED as before), plus the names it leaves out and why.
import { isAddress } from './address.js';
import type { PagePlan } from './plan.js';

/** The CoreDNS site zone (startCoreDNS's `siteZone` option) for a plan. */
export interface HarZone {
  zone: string[];
  a: string;
  aaaa?: string;
}

// IP literals need no resolver; `localhost` names never reach one in browsers; `test.` and `site.localhost.` are
// the lab's own zones (CoreDNS refuses a zone named twice).
function why(host: string): string | null {
  if (isAddress(host)) return 'an IP address';
  if (host === 'localhost' || host.endsWith('.localhost')) return 'a localhost name (browsers answer it themselves)';
  if (host === 'test' || host.endsWith('.test')) return "under the lab's own zone test.";
  return null;
}

/** The plan's hosts a resolver answers (in order of first request), and the others with the reason. */
export function zoneNames(plan: PagePlan): { names: string[]; left: { host: string; reason: string }[] } {
  const names: string[] = [];
  const left: { host: string; reason: string }[] = [];
  for (const host of plan.hosts) {
    const reason = why(host);
    if (reason) left.push({ host, reason });
    else names.push(host.replace(/\.$/, ''));
  }
  return { names, left };
}

/** startCoreDNS's `siteZone` answering every resolvable host of `plan` with `a` (and `aaaa`). */
export function harZone(plan: PagePlan, a: string, aaaa?: string): HarZone {
  const { names } = zoneNames(plan);
  if (!names.length) throw new Error('the plan has no hostname a resolver could answer');
  return { zone: names, a, ...(aaaa ? { aaaa } : {}) };
}
