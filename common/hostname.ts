// Hostname checks shared by the extension and the host: what may be sent to a resolver at all.
import { CODES, DnscostError } from './errors.js';

/** One label of a name as kept (lower case, LDH plus `_` as in `_dmarc`): 1–63 characters, no `-` at either end. */
export const DNS_LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;
/** A dotted-quad IPv4 literal, its four parts captured. */
export const IPV4_LITERAL = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** Longest name accepted: RFC 1035 §2.3.4 (255 octets on the wire is 253 characters in text). */
export const MAX_HOSTNAME_LENGTH = 253;

/**
 * Normalises a hostname (lower case, no trailing dot) or throws `bad-hostname`.
 * IP literals, empty labels, labels over 63 characters and non-LDH characters are refused; an IDN must arrive as
 * its A-label (`xn--…`) form, because the wire format carries only that.
 */
export function normalizeHostname(input: unknown): string {
  if (typeof input !== 'string') throw new DnscostError(CODES.BAD_HOSTNAME, 'hostname must be a string');
  let name = input.trim().toLowerCase();
  if (name.endsWith('.')) name = name.slice(0, -1);
  const shown = JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name);
  if (name.length === 0) throw new DnscostError(CODES.BAD_HOSTNAME, 'hostname is empty');
  if (name.length > MAX_HOSTNAME_LENGTH) {
    throw new DnscostError(CODES.BAD_HOSTNAME, `hostname ${shown} is longer than ${MAX_HOSTNAME_LENGTH} characters`);
  }
  if (name.includes(':') || name.startsWith('[') || IPV4_LITERAL.test(name)) {
    throw new DnscostError(CODES.BAD_HOSTNAME, `${shown} is an IP literal, not a hostname`);
  }
  const labels = name.split('.');
  for (const label of labels) {
    if (!DNS_LABEL.test(label)) throw new DnscostError(CODES.BAD_HOSTNAME, `hostname ${shown} has an invalid label`);
  }
  // An all-numeric last label is never a TLD; such a "name" is an address in disguise (WHATWG URL host parser).
  if (/^\d+$/.test(labels[labels.length - 1]!)) {
    throw new DnscostError(CODES.BAD_HOSTNAME, `${shown} ends in a numeric label (an IP literal in disguise)`);
  }
  return name;
}

/** True for names that must never reach a public resolver: single-label and private-use suffixes (RFC 6761, 6762, 8375). */
export function isInternalName(name: string): boolean {
  const n = name.toLowerCase().replace(/\.$/, '');
  if (!n.includes('.')) return true;
  return ['.local', '.internal', '.home.arpa', '.localhost', '.lan', '.intranet', '.corp'].some(
    (suffix) => n.endsWith(suffix) || n === suffix.slice(1),
  );
}
