// DNS messages on the wire (dns-packet): the queries dnscost sends and the checks every answer passes.
import type DnsPacket from 'dns-packet';
import { createRequire } from 'node:module';
import { CODES, DnscostError, type ErrorCode } from '../../common/errors.js';
import type { AnswerData } from '../../common/record.js';
import { presentSvcb, SvcbError } from '../../common/svcb.js';
import type { QType } from '../../common/transports.js';

// Loaded with require, not import: importing CommonJS from ESM starts node's WASM module lexer, ~11 MB of RSS.
export const dnsPacket = createRequire(import.meta.url)('dns-packet') as typeof DnsPacket;

/** Numeric type for each record type dnscost asks (dns-packet knows no HTTPS/SVCB by name). */
const QTYPE_NUMBERS: Record<QType, number> = { A: 1, NS: 2, CNAME: 5, MX: 15, TXT: 16, AAAA: 28, SVCB: 64, HTTPS: 65 };
/** RCODE names by number (RFC 1035 §4.1.1); others are written `RCODEn`. */
export const RCODE_NAMES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];
const DNS_HEADER_BYTES = 12;

/** EDNS UDP payload size: the DNS Flag Day 2020 value, as browsers and stubs now send. */
export const EDNS_BUFFER = 1232;
/** RFC 8467 §4.1: pad queries to a multiple of 128 octets on encrypted transports. */
export const QUERY_PAD_BLOCK = 128;

/** What a query asks. */
export interface Question {
  name: string;
  qtype: QType;
}

/**
 * Queries already encoded, by name, type and padding, with id 0: a repeated question (a run's repeats, a replay's
 * names per endpoint) is copied and given its id instead of encoded again. Bounded: emptied when full.
 */
const encoded = new Map<string, Buffer>();
const ENCODED_MAX = 4096;

/** Encodes a recursive query with EDNS0; `pad` adds RFC 7830 padding to a 128-octet block. */
export function encodeQuery(q: Question, id: number, pad: boolean): Buffer {
  const key = `${pad ? 'p' : '-'}${q.qtype} ${q.name}`;
  let template = encoded.get(key);
  if (!template) {
    if (encoded.size >= ENCODED_MAX) encoded.clear();
    template = encodeFresh(q, 0, pad);
    encoded.set(key, template);
  }
  const query = Buffer.from(template);
  query.writeUInt16BE(id, 0);
  return query;
}

function encodeFresh(q: Question, id: number, pad: boolean): Buffer {
  const type = `UNKNOWN_${QTYPE_NUMBERS[q.qtype]}`;
  const make = (options: DnsPacket.OptAnswer['options']): Buffer =>
    dnsPacket.encode({
      type: 'query',
      id,
      flags: dnsPacket.RECURSION_DESIRED,
      questions: [{ type: type as DnsPacket.RecordType, name: q.name, class: 'IN' }],
      additionals: [{ type: 'OPT', name: '.', udpPayloadSize: EDNS_BUFFER, options } as DnsPacket.OptAnswer],
    });
  return pad ? paddedToBlock(make) : make([]);
}

/**
 * The message `make` encodes with one more EDNS option, RFC 7830 padding, long enough to make it a multiple of
 * QUERY_PAD_BLOCK (RFC 8467 §4.1): `make` encodes the message with the options it is given.
 */
export function paddedToBlock(make: (options: DnsPacket.OptAnswer['options']) => Buffer): Buffer {
  const bare = make([]).length + 4; // + option code and length
  const padding = (QUERY_PAD_BLOCK - (bare % QUERY_PAD_BLOCK)) % QUERY_PAD_BLOCK;
  return make([{ code: 'PADDING', length: padding } as never]);
}

/** A checked answer: its rcode, its records and whether the server truncated it. */
export interface ParsedAnswer {
  rcode: string;
  truncated: boolean;
  answers: AnswerData[];
}

function fail(code: ErrorCode, message: string): never {
  throw new DnscostError(code, message);
}

/** Parses and checks an answer against its query: id, question, length. Throws a coded error on any mismatch. */
export function parseAnswer(buf: Buffer, q: Question, id: number): ParsedAnswer {
  if (buf.length < DNS_HEADER_BYTES) fail(CODES.SHORT_ANSWER, `answer of ${buf.length} bytes is shorter than a DNS header`);
  let msg: DnsPacket.Packet;
  try {
    msg = dnsPacket.decode(buf);
  } catch (err) {
    fail(CODES.MALFORMED_ANSWER, `answer is not a DNS message: ${(err as Error).message}`);
  }
  if (msg.type !== 'response') fail(CODES.MALFORMED_ANSWER, 'message is a query, not a response');
  if (msg.id !== id) fail(CODES.ID_MISMATCH, `answer id ${msg.id} does not match query id ${id}`);
  const question = msg.questions?.[0];
  const wanted = `UNKNOWN_${QTYPE_NUMBERS[q.qtype]}`;
  const askedType = question ? typeNumber(question.type) : -1;
  if (!question || msg.questions!.length !== 1 || question.name.toLowerCase() !== q.name.toLowerCase() || askedType !== typeNumber(wanted)) {
    const got = question ? `${question.name} ${question.type}` : 'no question';
    fail(CODES.QUESTION_MISMATCH, `answer is for ${got}, not ${q.name} ${q.qtype}`);
  }
  const rcodeNumber = (msg.flags ?? 0) & 0xf;
  return {
    rcode: RCODE_NAMES[rcodeNumber] ?? `RCODE${rcodeNumber}`,
    truncated: ((msg.flags ?? 0) & dnsPacket.TRUNCATED_RESPONSE) !== 0,
    answers: (msg.answers ?? []).map(presentAnswer),
  };
}

/**
 * What of an answer's records goes to the extension (native.ts, when a request asks for answers): a hostile server
 * may answer with thousands of records, so the first MAX_ANSWERS, each record's data cut to MAX_ANSWER_DATA
 * characters. The engine itself keeps the whole answer (the CLI and the answer tests compare it with kdig's).
 */
export const MAX_ANSWERS = 16;
export const MAX_ANSWER_DATA = 512;

/** `answers` capped for the extension (see MAX_ANSWERS). */
export function cappedAnswers(answers: readonly AnswerData[]): AnswerData[] {
  return answers.slice(0, MAX_ANSWERS).map((a) => (a.data.length > MAX_ANSWER_DATA ? { ...a, data: `${a.data.slice(0, MAX_ANSWER_DATA)}…` } : a));
}

function typeNumber(type: string): number {
  if (type.startsWith('UNKNOWN_')) return Number(type.slice(8));
  const entry = Object.entries(QTYPE_NUMBERS).find(([name]) => name === type);
  return entry ? entry[1] : -1;
}

/** RFC 3597's generic presentation: `\# len hex`. */
const genericText = (rdata: Buffer): string => `\\# ${rdata.length}${rdata.length ? ' ' + rdata.toString('hex') : ''}`;

/** An SVCB or HTTPS rdata as kdig presents it (common/svcb.ts); one that does not follow RFC 9460 in the generic form. */
export function svcbText(rdata: Buffer): string {
  try {
    return presentSvcb(rdata);
  } catch (e) {
    if (e instanceof SvcbError) return genericText(rdata);
    throw e;
  }
}

/** Presentation form of one record: SVCB and HTTPS decoded (RFC 9460), other types dns-packet does not decode in RFC 3597's generic form. */
function presentAnswer(a: DnsPacket.Answer): AnswerData {
  const rec = a as { name: string; type: string; ttl?: number; data?: unknown };
  const n = typeNumber(rec.type);
  const type = n === 64 ? 'SVCB' : n === 65 ? 'HTTPS' : rec.type;
  let data: string;
  if (Buffer.isBuffer(rec.data) && (n === 64 || n === 65)) data = svcbText(rec.data);
  else if (Buffer.isBuffer(rec.data)) data = genericText(rec.data);
  else if (rec.type === 'TXT' && Array.isArray(rec.data)) data = (rec.data as Buffer[]).map((s) => JSON.stringify(s.toString('latin1'))).join(' ');
  else if (typeof rec.data === 'string') data = rec.data;
  // A record without `data`: dns-packet decodes an OPT (or a flipped type byte read as one) in the answer section
  // into `options`; JSON.stringify(undefined) is undefined, which broke every reader of `data` (found by fuzzing).
  else data = JSON.stringify(rec.data ?? (a as { options?: unknown }).options ?? null) ?? '';
  return { name: String(rec.name ?? ''), type: String(type), ttl: typeof rec.ttl === 'number' ? rec.ttl : 0, data };
}

/** The smallest TTL of an answer's records (how long a cache may keep it), or null without records. */
export function answerTtl(answers: readonly AnswerData[]): number | null {
  return answers.length ? Math.min(...answers.map((a) => a.ttl)) : null;
}

/** Human rcode → stable error code for answers that arrived but did not resolve the name. */
export function rcodeError(rcode: string): ErrorCode | null {
  switch (rcode) {
    case 'NOERROR':
      return null;
    case 'SERVFAIL':
      return CODES.SERVFAIL;
    case 'REFUSED':
      return CODES.REFUSED;
    case 'NXDOMAIN':
      return CODES.NXDOMAIN;
    default:
      return CODES.RCODE;
  }
}

/** A fresh random DNS id for transports that use one (DoH uses 0, RFC 8484 §4.1). */
export function randomId(): number {
  return Math.floor(Math.random() * 0x10000);
}
