// Hostnames, one way everywhere: the one parser (parseHost: a raw host as a URL, a page or a message gives it → the
// A-label form kept, or why not) and the one list of special-use and private-use suffixes, which the page records,
// the extension's plan and the host's name rule (name-privacy.ts) all read.
import { CODES, DnscostError } from './errors.js';
import { IPV4_LITERAL, isGlobalAddress } from './ip-address.js';

/** One label of a name as kept (lower case, LDH plus `_` as in `_dmarc`): 1–63 characters, no `-` at either end. */
export const DNS_LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

/** Longest name accepted: RFC 1035 §2.3.4 (255 octets on the wire is 253 characters in text). */
export const MAX_HOSTNAME_LENGTH = 253;

/**
 * Special-use and private-use suffixes (a name equal to one, or under it). `local`: a person's own network uses it,
 * so its names are private to that network (and a page's host under it is flagged internal); the others are
 * reserved for testing, documentation, other name systems or never resolving.
 */
export const SPECIAL_USE: ReadonlyArray<{ suffix: string; local: boolean }> = [
  // RFC 6761
  { suffix: 'test', local: false }, { suffix: 'localhost', local: true }, { suffix: 'invalid', local: false }, { suffix: 'example', local: false },
  // RFC 6762 (mDNS), RFC 8375, RFC 9476, RFC 7686
  { suffix: 'local', local: true }, { suffix: 'home.arpa', local: true }, { suffix: 'alt', local: false }, { suffix: 'onion', local: false },
  // ICANN's private-use TLD (2024) and the suffixes home routers and offices use
  ...['internal', 'lan', 'home', 'corp', 'intranet', 'private', 'localdomain', 'domain', 'mail', 'workgroup'].map((suffix) => ({ suffix, local: true })),
  { suffix: 'i2p', local: false },
  // Reverse zones of private, loopback, link-local, shared and ULA addresses (RFC 6303's locally served zones): a
  // name under them says which private address a page pointed at.
  ...['10.in-addr.arpa', '127.in-addr.arpa', '254.169.in-addr.arpa', '168.192.in-addr.arpa',
    ...Array.from({ length: 16 }, (_, i) => `${16 + i}.172.in-addr.arpa`), ...Array.from({ length: 64 }, (_, i) => `${64 + i}.100.in-addr.arpa`),
    'c.f.ip6.arpa', 'd.f.ip6.arpa', '8.e.f.ip6.arpa', '9.e.f.ip6.arpa', 'a.e.f.ip6.arpa', 'b.e.f.ip6.arpa'].map((suffix) => ({ suffix, local: true })),
];

/** Every special-use and private-use suffix. */
export const SPECIAL_USE_SUFFIXES: readonly string[] = SPECIAL_USE.map((s) => s.suffix);

/** A name as compared: lower case, no trailing dot. */
export const cleanName = (name: string): string => name.toLowerCase().replace(/\.$/, '');
/** True when `name` is `suffix` or a name under it (both clean). */
export const isUnder = (name: string, suffix: string): boolean => name === suffix || name.endsWith(`.${suffix}`);

/** True for names under a special-use or private-use suffix (`.onion` included). */
export function isSpecialUseName(name: string): boolean {
  const n = cleanName(name);
  return SPECIAL_USE.some((s) => isUnder(n, s.suffix));
}

/** True for names only a person's own network can mean: a single label, or under a suffix such networks use. */
export function isLocalName(name: string): boolean {
  const n = cleanName(name);
  return !n.includes('.') || SPECIAL_USE.some((s) => s.local && isUnder(n, s.suffix));
}

/** Why a raw host was not kept: the stable codes of parseHost's refusals. */
export const HOST_REFUSALS = {
  EMPTY: 'empty',
  NOT_A_HOST: 'not-a-host',
  TOO_LONG: 'name-too-long',
  LABEL_TOO_LONG: 'label-too-long',
  BAD_LABEL: 'bad-label',
} as const;
export type HostRefusal = (typeof HOST_REFUSALS)[keyof typeof HOST_REFUSALS];

/** A hostname as kept: its A-label (or IP literal) form and whether it may ever be sent to a resolver. */
export interface ClassifiedHost {
  ok: true;
  name: string;
  kind: 'name' | 'ip';
  /** A name only the person's network can mean (isLocalName), or a non-global IP literal. */
  internal: boolean;
  /** True only for a name that is not internal: what a resolver may be asked (name-privacy.ts decides which). */
  measurable: boolean;
}

/** Characters no URL host may contain (WHATWG forbidden host code points, and whitespace / controls). */
const FORBIDDEN_HOST = /[\u0000-\u0020\u007f#%/:<>?@[\\\]^|"'`{}]/;

/** The WHATWG URL parser, a global wherever this runs (browsers, workers, Node) but in no library this folder loads. */
const WhatwgUrl = (globalThis as unknown as { URL: new (input: string) => { hostname: string } }).URL;

/**
 * Converts a raw host (as in a URL, or as a hostile page or message sends it) to the form kept: lower-case A-label
 * through the URL parser (UTS #46, so `bücher.example` → `xn--bcher-kva.example`), IP literals as the parser writes
 * them; refuses names over 253 characters or with a label over 63 after conversion, and anything that is not a host
 * at all. Never throws.
 */
export function parseHost(raw: unknown): ClassifiedHost | { ok: false; reason: HostRefusal } {
  if (typeof raw !== 'string') return { ok: false, reason: HOST_REFUSALS.NOT_A_HOST };
  let input = raw.trim();
  if (input.endsWith('.')) input = input.slice(0, -1);
  if (input.length === 0) return { ok: false, reason: HOST_REFUSALS.EMPTY };
  // Longer than any name could be even before conversion (A-labels only grow): refuse without parsing.
  if (input.length > 4 * MAX_HOSTNAME_LENGTH) return { ok: false, reason: HOST_REFUSALS.TOO_LONG };
  const bracketed = /^\[([0-9a-fA-F:.]+)\]$/.exec(input);
  if (!bracketed && FORBIDDEN_HOST.test(input)) return { ok: false, reason: HOST_REFUSALS.NOT_A_HOST };
  let host: string;
  try {
    host = new WhatwgUrl(`http://${bracketed ? `[${bracketed[1]}]` : input}/`).hostname;
  } catch {
    return { ok: false, reason: HOST_REFUSALS.NOT_A_HOST };
  }
  if (host.startsWith('[')) {
    const ip = host.slice(1, -1);
    return { ok: true, name: ip, kind: 'ip', internal: !isGlobalAddress(ip), measurable: false };
  }
  if (IPV4_LITERAL.test(host)) return { ok: true, name: host, kind: 'ip', internal: !isGlobalAddress(host), measurable: false };
  if (host.length > MAX_HOSTNAME_LENGTH) return { ok: false, reason: HOST_REFUSALS.TOO_LONG };
  for (const label of host.split('.')) {
    if (label.length > 63) return { ok: false, reason: HOST_REFUSALS.LABEL_TOO_LONG };
    if (!DNS_LABEL.test(label)) return { ok: false, reason: HOST_REFUSALS.BAD_LABEL };
  }
  const internal = isLocalName(host);
  return { ok: true, name: host, kind: 'name', internal, measurable: !internal };
}

/**
 * A hostname as the wire carries it, or `bad-hostname`: parseHost's form, which must be a name (not an IP literal)
 * and already the A-label the input gave (an IDN must arrive as `xn--…`: the wire format carries only that).
 */
export function normalizeHostname(input: unknown): string {
  if (typeof input !== 'string') throw new DnscostError(CODES.BAD_HOSTNAME, 'hostname must be a string');
  const given = cleanName(input.trim());
  const shown = JSON.stringify(given.length > 80 ? `${given.slice(0, 80)}…` : given);
  const c = parseHost(given);
  if (!c.ok) throw new DnscostError(CODES.BAD_HOSTNAME, `hostname ${shown} refused (${c.reason})`);
  if (c.kind === 'ip') throw new DnscostError(CODES.BAD_HOSTNAME, `${shown} is an IP literal, not a hostname`);
  if (c.name !== given) throw new DnscostError(CODES.BAD_HOSTNAME, `hostname ${shown} is not in its A-label form (${c.name})`);
  return c.name;
}
