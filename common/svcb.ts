// SVCB and HTTPS records (RFC 9460): the wire form decoded into the presentation form kdig prints
// (`1 . alpn=h2,h3 ipv4hint=192.0.2.1 ech=AEX+…`), and what a presentation says a host offers (HTTP/3, ECH). Pure
// (no `node:`): the host decodes answers with it; the extension reads the facts from the answers' text.
import { canonicalIp } from './ip-address.js';

/** SvcParamKey numbers and their presentation names (RFC 9460 §14.3.2; dohpath RFC 9461; ohttp RFC 9540). */
const KEYS: Record<number, string> = { 0: 'mandatory', 1: 'alpn', 2: 'no-default-alpn', 3: 'port', 4: 'ipv4hint', 5: 'ech', 6: 'ipv6hint', 7: 'dohpath', 8: 'ohttp' };
const keyName = (k: number): string => KEYS[k] ?? `key${k}`;

/** Why an rdata could not be read as SVCB. */
export class SvcbError extends Error {
  override name = 'SvcbError';
}

/** A character-string value as presentation text: printable ASCII as is, but `"`, `\` (and `,` in lists) escaped, other bytes as \DDD. */
function escaped(bytes: Uint8Array, inList: boolean): string {
  let s = '';
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    if (b < 0x21 || b > 0x7e) s += `\\${String(b).padStart(3, '0')}`;
    else if (c === '"' || c === '\\' || (inList && c === ',')) s += `\\${c}`;
    else s += c;
  }
  return s;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Standard base64 with padding (RFC 4648 §4), as kdig writes an ECH config. */
function base64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    const left = bytes.length - i;
    out += B64[n >> 18]! + B64[(n >> 12) & 63]! + (left > 1 ? B64[(n >> 6) & 63]! : '=') + (left > 2 ? B64[n & 63]! : '=');
  }
  return out;
}

/** Reads the uncompressed target name at `at` (RFC 9460 §2.2 forbids compression); returns it and where it ends. */
function targetName(rdata: Uint8Array, at: number): { name: string; end: number } {
  const labels: string[] = [];
  for (let hops = 0; hops < 128; hops++) {
    const len = rdata[at];
    if (len === undefined) throw new SvcbError('the target name runs past the record');
    if (len === 0) return { name: labels.length ? `${labels.join('.')}.` : '.', end: at + 1 };
    if (len > 63) throw new SvcbError('the target name is compressed or has a label over 63 bytes');
    if (at + 1 + len > rdata.length) throw new SvcbError('a target label runs past the record');
    labels.push(escaped(rdata.subarray(at + 1, at + 1 + len), false).replace(/\./g, '\\.'));
    at += 1 + len;
  }
  throw new SvcbError('the target name has too many labels');
}

/** One SvcParam's value in presentation form (empty for keys without one). */
function paramValue(key: number, v: Uint8Array): string {
  const u16 = (i: number) => (v[i]! << 8) | v[i + 1]!;
  const each = (size: number, f: (i: number) => string): string => {
    if (v.length === 0 || v.length % size) throw new SvcbError(`${keyName(key)} has ${v.length} bytes, not a multiple of ${size}`);
    return Array.from({ length: v.length / size }, (_, n) => f(n * size)).join(',');
  };
  switch (key) {
    case 0:
      return each(2, (i) => keyName(u16(i)));
    case 1: {
      const ids: string[] = [];
      for (let i = 0; i < v.length; i += 1 + v[i]!) {
        if (v[i] === 0 || i + 1 + v[i]! > v.length) throw new SvcbError('alpn has an empty or cut protocol id');
        ids.push(escaped(v.subarray(i + 1, i + 1 + v[i]!), true));
      }
      return ids.join(',');
    }
    case 2:
    case 8:
      if (v.length) throw new SvcbError(`${keyName(key)} has a value`);
      return '';
    case 3:
      if (v.length !== 2) throw new SvcbError(`port has ${v.length} bytes`);
      return String(u16(0));
    case 4:
      return each(4, (i) => [...v.subarray(i, i + 4)].join('.'));
    case 5:
      return base64(v);
    case 6:
      return each(16, (i) => canonicalIp(Array.from({ length: 8 }, (_, g) => u16(i + 2 * g).toString(16)).join(':')));
    case 7:
      return escaped(v, false);
    default:
      // A key this decoder does not know: its value as a quoted string, as kdig writes one.
      return `"${escaped(v, false)}"`;
  }
}

/** Presentation form of an SVCB or HTTPS rdata, as kdig prints it: priority, target, then each param `key=value`. */
export function presentSvcb(rdata: Uint8Array): string {
  if (rdata.length < 3) throw new SvcbError('shorter than a priority and a target');
  const priority = (rdata[0]! << 8) | rdata[1]!;
  const { name, end } = targetName(rdata, 2);
  const parts = [String(priority), name];
  let last = -1;
  for (let at = end; at < rdata.length; ) {
    if (at + 4 > rdata.length) throw new SvcbError('a param header runs past the record');
    const key = (rdata[at]! << 8) | rdata[at + 1]!;
    const len = (rdata[at + 2]! << 8) | rdata[at + 3]!;
    if (key <= last) throw new SvcbError('params are not in strictly increasing key order');
    if (key === 65535) throw new SvcbError('key65535 is reserved');
    if (at + 4 + len > rdata.length) throw new SvcbError(`${keyName(key)} runs past the record`);
    const value = paramValue(key, rdata.subarray(at + 4, at + 4 + len));
    parts.push(key === 2 || key === 8 ? keyName(key) : `${keyName(key)}=${value}`);
    last = key;
    at += 4 + len;
  }
  return parts.join(' ');
}

/** What an HTTPS record's presentation says the host offers. */
export interface SvcbFacts {
  /** The protocols it advertises (alpn, plus http/1.1 unless no-default-alpn). */
  alpn: string[];
  /** It advertises an ECH config: the TLS handshake can hide the name, so only the DNS lookup would still show it. */
  ech: boolean;
  /** A port other than the scheme's default, if any. */
  port: number | null;
}

/** The facts in one presentation (`presentSvcb`'s form); null for an alias-mode record (priority 0) or unreadable text. */
export function svcbFacts(presentation: string): SvcbFacts | null {
  const [priority, , ...params] = presentation.trim().split(/\s+/);
  if (!/^\d+$/.test(priority ?? '') || Number(priority) === 0) return null;
  const value = (k: string) => params.find((p) => p === k || p.startsWith(`${k}=`))?.slice(k.length + 1);
  const alpn = (value('alpn') ?? '').split(/(?<!\\),/).filter(Boolean).map((a) => a.replace(/\\(.)/g, '$1'));
  if (value('no-default-alpn') === undefined && !alpn.includes('http/1.1')) alpn.push('http/1.1');
  const port = value('port');
  return { alpn, ech: value('ech') !== undefined, port: port && /^\d+$/.test(port) ? Number(port) : null };
}

/** The page's hosts whose HTTPS record advertises HTTP/3 and ECH, by any resolver's answer (sorted, each once). */
export interface Advertised {
  h3: string[];
  ech: string[];
}

/** Most hosts listed per kind (a page keeps at most 500; the panel shows counts). */
const MAX_ADVERTISED = 500;

/**
 * What the HTTPS answers among `records` advertise, added to `into`. Records come from the host as they are (their
 * answers unchecked by the reply's validator), so anything that is not an answered HTTPS record of text is passed over.
 */
export function advertisedBy(records: readonly unknown[], into: Advertised = { h3: [], ech: [] }): Advertised {
  const h3 = new Set(into.h3);
  const ech = new Set(into.ech);
  for (const r of records) {
    const rec = r as { host?: unknown; qtype?: unknown; ok?: unknown; answers?: unknown };
    if (rec?.qtype !== 'HTTPS' || rec.ok !== true || typeof rec.host !== 'string' || !Array.isArray(rec.answers)) continue;
    for (const a of rec.answers as unknown[]) {
      const answer = a as { type?: unknown; data?: unknown };
      if (answer?.type !== 'HTTPS' || typeof answer.data !== 'string') continue;
      const facts = svcbFacts(answer.data);
      if (facts?.alpn.includes('h3') && h3.size < MAX_ADVERTISED) h3.add(rec.host);
      if (facts?.ech && ech.size < MAX_ADVERTISED) ech.add(rec.host);
    }
  }
  return { h3: [...h3].sort(), ech: [...ech].sort() };
}
