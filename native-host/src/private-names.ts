// The host's own check of the name-privacy rule (common/name-privacy.ts), before a measurement sends anything: the
// extension already left out what it knows is private, and the host does not trust that. A name stays only if every
// endpoint of the request may be asked it; the host adds what only it can know: the system's search domains and the
// split horizon — before any name goes to a resolver on a global address, the person's current DNS (the one their
// browser asked anyway) is asked for it, and a name it answers with a non-global address, or cannot answer, stays home.
// And the page does not decide how much is asked: the caps per registrable domain and per measurement
// (common/name-caps.ts) apply before any name is sent, to the check as to the resolvers.
import { Resolver } from 'node:dns/promises';
import { capNames } from '../../common/name-caps.js';
import { isGlobalAddress, withheldFromAny, type Withheld } from '../../common/name-privacy.js';
import type { CurrentDns, MeasureRequest } from '../../common/schema.js';

/** A name's addresses from the current DNS: a list (empty when it has none), or null when either question could not be answered. */
export type CurrentLookup = (name: string) => Promise<string[] | null>;

/** Longest the current DNS may take per question; questions run this many at once. */
const LOOKUP_TIMEOUT_MS = 1500;
const LOOKUP_CONCURRENCY = 16;

/** Asks the system's current DNS (its local stub, else its servers) for a name's A and AAAA. */
export function currentDnsLookup(dns: CurrentDns): CurrentLookup {
  const servers = dns.stub ? [dns.stub.address] : dns.servers.map((s) => (s.port === 53 ? s.address : s.address.includes(':') ? `[${s.address}]:${s.port}` : `${s.address}:${s.port}`));
  return async (name) => {
    if (servers.length === 0) return null;
    const r = new Resolver({ timeout: LOOKUP_TIMEOUT_MS, tries: 1 });
    try {
      r.setServers(servers);
    } catch {
      return null;
    }
    const ask = (f: () => Promise<string[]>) => f().then((a) => a, (e: NodeJS.ErrnoException) => (e.code === 'ENODATA' || e.code === 'ENOTFOUND' ? [] : null));
    const [a, aaaa] = await Promise.all([ask(() => r.resolve4(name)), ask(() => r.resolve6(name))]);
    // Either question lost or failed: not known to be public (a lost A beside a NODATA AAAA is no answer at all).
    return a === null || aaaa === null ? null : [...a, ...aaaa];
  };
}

/** The request's names (lower case, no trailing dot) with what the request says of each, the first needed first. */
function names(req: MeasureRequest): Array<{ name: string; reached: string[] }> {
  return req.hosts.map((h) => (typeof h === 'string' ? { name: h, reached: [], at: 0 } : { name: h.name, reached: h.reached ?? [], at: h.firstNeededMs ?? 0 }))
    .map((h) => ({ ...h, name: h.name.trim().toLowerCase().replace(/\.$/, '') }))
    .sort((a, b) => a.at - b.at);
}

/**
 * The request with only the names every endpoint may be asked, and the names kept back with why. The current DNS is
 * asked only for names that would otherwise go to a resolver on a global address.
 */
export async function withholdPrivateNames(req: MeasureRequest, dns: CurrentDns | null, lookup: CurrentLookup | null): Promise<{ request: MeasureRequest; withheld: Array<{ name: string; reason: Withheld }> }> {
  const addresses = [...new Set(req.resolvers.flatMap((r) => r.endpoints.map((e) => e.address)))];
  const anyGlobal = addresses.some(isGlobalAddress);
  const base = { searchDomains: dns?.search ?? [], splitDomains: dns?.splitDomains ?? [], lab: req.lab === true };
  const why = new Map<string, Withheld>();
  const ask: string[] = [];
  const allowed: Array<{ name: string }> = [];
  for (const h of names(req)) {
    const reason = withheldFromAny(h.name, addresses, { ...base, reached: h.reached });
    if (reason) why.set(h.name, reason);
    else allowed.push(h);
  }
  // The page does not decide how much is asked: the caps come before anything is sent, the split-horizon check too.
  const { kept: capped, dropped } = capNames(allowed, { lab: base.lab });
  for (const d of dropped) why.set(d.name, d.reason);
  if (anyGlobal) ask.push(...capped.map((h) => h.name));
  // Split horizon: what the current DNS says of each name still bound for a global resolver (no answer: kept home).
  const todo = [...new Set(ask)];
  for (let i = 0; i < todo.length; i += LOOKUP_CONCURRENCY) {
    const chunk = todo.slice(i, i + LOOKUP_CONCURRENCY);
    const answers = await Promise.all(chunk.map((n) => (lookup ? lookup(n) : Promise.resolve(null))));
    chunk.forEach((n, k) => {
      const got = answers[k]!;
      const answeredNonGlobal = got === null || got.some((ip) => !isGlobalAddress(ip));
      const reason = withheldFromAny(n, addresses, { ...base, answeredNonGlobal });
      if (reason) why.set(n, reason);
    });
  }
  const kept = req.hosts.filter((h) => !why.has((typeof h === 'string' ? h : h.name).trim().toLowerCase().replace(/\.$/, '')));
  return { request: { ...req, hosts: kept }, withheld: [...why].map(([name, reason]) => ({ name, reason })) };
}
