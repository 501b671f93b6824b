// The fault engine: decodes one query, records it, and turns its first label into a Plan (the vocabulary is
// documented at the top of index.ts); also builds the answers the plans carry. Pure but for the `seen` log it
// appends to: no sockets, no timers.
import dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket, Packet, Question } from 'dns-packet';
import { debug } from './runtime.js';
import type { FaultTransport, SeenQuery } from './types.js';

const MAX_SEEN = 10_000;
const MAX_DELAY_MS = 60_000;
/** The TTL of every answer record, and the max-age of every DoH answer. */
export const TTL = 60;
// The EDNS size we advertise back: the DNS Flag Day 2020 default.
const OUR_EDNS_SIZE = 1232;
const BIG_TARGET_BYTES = 3000;
const RCODES = { noerror: 0, formerr: 1, servfail: 2, nxdomain: 3, refused: 5 } as const;

/** What to do with one query; transports turn this into bytes, silence or a broken connection. */
export type Plan =
  | { kind: 'reply'; bytes: Buffer; delayMs: number; packet?: Packet; contentType?: string }
  | { kind: 'drop' }
  | { kind: 'unparseable' }
  | { kind: 'close-mid'; bytes: Buffer }
  | { kind: 'reset' }
  | { kind: 'goaway' }
  | { kind: 'rst-stream' }
  | { kind: 'http'; status: number };

const isStream = (t: FaultTransport) => t !== 'udp';
const isHttp = (t: FaultTransport) => t === 'doh' || t === 'doh1';

// RFC 1035 §4.1.1: keep the opcode and RD of the query; we are a "recursive" server, so RA is set.
function responseFlags(query: DecodedPacket, rcode: number, tc = false): number {
  const f = query.flags ?? 0;
  return (
    (f & 0x7800) |
    (f & dnsPacket.RECURSION_DESIRED) |
    (f & dnsPacket.CHECKING_DISABLED) |
    dnsPacket.RECURSION_AVAILABLE |
    (tc ? dnsPacket.TRUNCATED_RESPONSE : 0) |
    (rcode & 0xf)
  );
}

// A header-only FORMERR for queries whose header reads but whose body does not (RFC 1035 §4.1.1).
function formerrHeader(query: Buffer): Buffer {
  const out = Buffer.alloc(12);
  out.writeUInt16BE(query.readUInt16BE(0), 0);
  const qflags = query.readUInt16BE(2);
  out.writeUInt16BE(0x8000 | (qflags & 0x7800) | (qflags & 0x0100) | 0x0080 | RCODES.formerr, 2);
  return out;
}

/** The query's EDNS OPT record (RFC 6891), if it carries one. */
export function queryOpt(query: DecodedPacket): { udpPayloadSize: number } | undefined {
  for (const a of query.additionals ?? []) {
    if (a.type === 'OPT') return a;
  }
  return undefined;
}

function records(name: string, qtype: string, count: number): Answer[] {
  const out: Answer[] = [];
  for (let i = 0; i < count; i++) {
    // RFC 2181 §5: an RRset holds no duplicates, so every record gets its own documentation address.
    if (qtype === 'AAAA') {
      out.push({ type: 'AAAA', name, class: 'IN', ttl: TTL, data: count === 1 ? '2001:db8::53' : `2001:db8::${(i + 1).toString(16)}` });
    } else {
      out.push({ type: 'A', name, class: 'IN', ttl: TTL, data: count === 1 ? '192.0.2.53' : `192.0.2.${i + 1}` });
    }
  }
  return out;
}

function response(query: DecodedPacket, q: Question, opts: { rcode?: number; tc?: boolean; answers?: Answer[]; id?: number; question?: Question }): Packet {
  const additionals: Answer[] = [];
  // RFC 6891 §7: a responder that understands EDNS answers an OPT with an OPT.
  if (queryOpt(query)) additionals.push({ type: 'OPT', name: '.', udpPayloadSize: OUR_EDNS_SIZE, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] });
  return {
    type: 'response',
    id: opts.id ?? query.id ?? 0,
    flags: responseFlags(query, opts.rcode ?? 0, opts.tc ?? false),
    questions: [opts.question ?? q],
    answers: opts.answers ?? [],
    additionals,
  };
}

/** This process's SOA serial: the lab's readiness probe (lab/resolver.ts READY_PROBE) reads it back through a front. */
const SERIAL = Math.floor(Date.now() / 1000) >>> 0;

function okAnswers(q: Question): Answer[] {
  if (q.type === 'SOA') {
    return [{ type: 'SOA', name: q.name, class: 'IN', ttl: TTL, data: { mname: 'ns.fault.test', rname: 'hostmaster.fault.test', serial: SERIAL, refresh: 3600, retry: 600, expire: 86_400, minimum: TTL } }];
  }
  return q.type === 'A' || q.type === 'AAAA' ? records(q.name, q.type, 1) : [];
}

function bigAnswers(q: Question): Answer[] {
  const qtype = q.type === 'AAAA' ? 'AAAA' : 'A';
  const one = dnsPacket.encodingLength({ answers: records(q.name, qtype, 1) }) - 12;
  const fixed = 12 + dnsPacket.encodingLength({ questions: [q] }) - 12;
  const count = Math.min(250, Math.max(1, Math.ceil((BIG_TARGET_BYTES - fixed) / one)));
  return records(q.name, qtype, count);
}

/** Most records `many-<n>` sends: 4,000 A records (16 bytes each, names compressed) still fit one UDP datagram. */
export const MAX_MANY = 4000;
/** Largest UDP payload over IPv4 (65,535 − 8 − 20), below TCP's 65,535-byte message limit too. */
const MAX_MESSAGE = 65_507;

/**
 * A hostile server's flood: `count` distinct records of the asked type (A from 198.18.0.0/15, AAAA from
 * 2001:db8::/32), each owner name a pointer to the question (RFC 1035 §4.1.4; dns-packet does not compress), as many
 * as fit one message. No OPT record: the server ignores what the client said it can take.
 */
function manyAnswers(query: DecodedPacket, q: Question, count: number): Buffer {
  const head = dnsPacket.encode({ type: 'response', id: query.id ?? 0, flags: responseFlags(query, 0), questions: [q] });
  const size = q.type === 'AAAA' ? 28 : 16;
  const n = Math.min(count, Math.floor((MAX_MESSAGE - head.length) / size));
  const out = Buffer.alloc(head.length + n * size);
  head.copy(out);
  out.writeUInt16BE(n, 6); // ANCOUNT
  for (let i = 0, at = head.length; i < n; i++, at += size) {
    out.writeUInt16BE(0xc00c, at); // the question's name, at offset 12
    out.writeUInt16BE(q.type === 'AAAA' ? 28 : 1, at + 2);
    out.writeUInt16BE(1, at + 4); // IN
    out.writeUInt32BE(TTL, at + 6);
    out.writeUInt16BE(size - 12, at + 10);
    if (q.type === 'AAAA') {
      out.writeUInt32BE(0x20010db8, at + 12);
      out.writeUInt32BE(i + 1, at + 24);
    } else out.writeUInt32BE(((198 << 24) | (18 << 16) | (i + 1)) >>> 0, at + 12);
  }
  return out;
}

function reply(packet: Packet, delayMs = 0, contentType?: string): Plan {
  const plan: Plan = { kind: 'reply', bytes: dnsPacket.encode(packet), delayMs, packet };
  if (contentType) plan.contentType = contentType;
  return plan;
}

/** The engine: decodes one query, records it in `seen`, and decides the fault for `transport`. */
export function planFor(msg: Buffer, transport: FaultTransport, seen: SeenQuery[]): { plan: Plan; query?: DecodedPacket } {
  if (msg.length < 12) return { plan: { kind: 'unparseable' } };
  // Never answer a response (QR=1): two resolvers echoing each other would loop.
  if (msg[2]! & 0x80) return { plan: { kind: 'drop' } };
  let query: DecodedPacket;
  try {
    query = dnsPacket.decode(msg);
  } catch (err) {
    debug(transport, 'undecodable query', err);
    return { plan: { kind: 'reply', bytes: formerrHeader(msg), delayMs: 0 } };
  }
  const q = query.questions?.[0];
  // RFC 1035 §4.1.2: a query without a question is malformed; the FORMERR echoes the header only.
  if (!q || typeof q.name !== 'string') return { plan: { kind: 'reply', bytes: formerrHeader(msg), delayMs: 0 } };
  seen.push({ transport, name: q.name, qtype: String(q.type), at: Date.now() });
  if (seen.length > MAX_SEEN) seen.splice(0, seen.length - MAX_SEEN);

  const label = (q.name.split('.')[0] ?? '').toLowerCase();
  const ok = () => response(query, q, { answers: okAnswers(q) });
  const plan = ((): Plan => {
    const delay = /^delay-(\d+)$/.exec(label);
    if (delay) return reply(ok(), Math.min(MAX_DELAY_MS, Number(delay[1])));
    const many = /^many-(\d+)$/.exec(label);
    if (many) {
      // Hostile: the whole answer on every transport, over UDP too, whatever size the client said it takes (no
      // `packet`, so udp.ts does not truncate it).
      return { kind: 'reply', bytes: manyAnswers(query, q, Math.min(MAX_MANY, Number(many[1]))), delayMs: 0 };
    }
    const http = /^http-(\d{3})$/.exec(label);
    if (http) {
      const status = Number(http[1]);
      if (!isHttp(transport) || status < 200 || status > 599) return reply(ok());
      return { kind: 'http', status };
    }
    switch (label) {
      case 'drop':
        return { kind: 'drop' };
      case 'tc':
        return reply(response(query, q, { tc: true }));
      case 'servfail':
      case 'refused':
      case 'nxdomain':
      case 'formerr':
        return reply(response(query, q, { rcode: RCODES[label] }));
      case 'malformed':
        return { kind: 'reply', bytes: Buffer.alloc(40, 0xff), delayMs: 0 };
      case 'short':
        return { kind: 'reply', bytes: dnsPacket.encode(ok()).subarray(0, 7), delayMs: 0 };
      case 'wrong-id': {
        const id = query.id ?? 0;
        // RFC 8484 §4.1: DoH clients send id 0, and 0+1 is too easy to mistake for "any id"; 0x1234 is unmistakable.
        return reply(response(query, q, { answers: okAnswers(q), id: id === 0 ? 0x1234 : (id + 1) & 0xffff }));
      }
      case 'wrong-question': {
        const other: Question = { name: 'other.fault.test', type: q.type, class: q.class ?? 'IN' };
        return reply(response(query, q, { question: other, answers: okAnswers(other) }));
      }
      case 'close-mid':
        return isStream(transport) ? { kind: 'close-mid', bytes: dnsPacket.encode(ok()) } : { kind: 'drop' };
      case 'reset':
        return isStream(transport) ? { kind: 'reset' } : { kind: 'drop' };
      case 'goaway':
        return transport === 'doh' ? { kind: 'goaway' } : { kind: 'drop' };
      case 'rst-stream':
        return transport === 'doh' ? { kind: 'rst-stream' } : { kind: 'drop' };
      case 'bad-ctype':
        return reply(ok(), 0, isHttp(transport) ? 'text/html' : undefined);
      case 'big':
        return reply(response(query, q, { answers: bigAnswers(q) }));
      default:
        return reply(ok());
    }
  })();
  return { plan, query };
}
