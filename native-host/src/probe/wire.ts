// The probe's DNS messages: queries with the flags and EDNS options a capability needs (DO, AD, client subnet,
// padding, two questions), and what an answer says about them. The measuring engine's queries stay in dns-wire.ts.
import type DnsPacket from 'dns-packet';
import { dnsPacket, EDNS_BUFFER, paddedToBlock, RCODE_NAMES, svcbText } from '../dns-wire.js';

const TYPES = { A: 1, AAAA: 28, TXT: 16, HTTPS: 65 } as const;
const OPT_CLIENT_SUBNET = 8;
const OPT_PADDING = 12;
const OPT_EDE = 15;

/** What a probe query asks and how. */
export interface ProbeQuery {
  questions: { name: string; type: keyof typeof TYPES }[];
  /** DNSSEC OK (RFC 3225) and AD (RFC 6840 §5.7): "tell me whether you validated". */
  dnssec?: boolean;
  /** An ECS option (RFC 7871) for this IPv4 /24; the probe sends a documentation prefix, never the person's. */
  clientSubnet?: string;
  /** RFC 7830 padding to a 128-octet block, as on encrypted transports. */
  pad?: boolean;
}

/** An Extended DNS Error (RFC 8914): its info code and extra text. */
export interface Ede {
  code: number;
  text: string;
}

/** What the probe reads from an answer. */
export interface ProbeAnswer {
  rcode: string;
  /** Authenticated Data: the resolver validated the answer with DNSSEC. */
  ad: boolean;
  questions: number;
  /** Records in the answer section, by type name. */
  answerTypes: string[];
  /** HTTPS records in presentation form (RFC 9460), as kdig prints them. */
  https: string[];
  /** TXT records, each one string. */
  txt: string[];
  /** The answer's length in bytes and whether it carried an EDNS padding option. */
  bytes: number;
  padded: boolean;
  ede: Ede[];
  /** The ECS option the answer carried: its scope prefix length; null without one. */
  clientSubnetScope: number | null;
}

/** Encodes a probe query with EDNS0 (buffer 1232) and a random id. */
export function encodeProbeQuery(q: ProbeQuery, id: number): Buffer {
  const options = (extra: DnsPacket.OptAnswer['options']): DnsPacket.OptAnswer['options'] => [
    ...(q.clientSubnet ? [{ code: 'CLIENT_SUBNET', family: 1, sourcePrefixLength: 24, scopePrefixLength: 0, ip: q.clientSubnet }] : []),
    ...extra,
  ] as DnsPacket.OptAnswer['options'];
  const make = (extra: DnsPacket.OptAnswer['options']): Buffer =>
    dnsPacket.encode({
      type: 'query',
      id,
      flags: dnsPacket.RECURSION_DESIRED | (q.dnssec ? dnsPacket.AUTHENTIC_DATA : 0),
      questions: q.questions.map((x) => ({ type: `UNKNOWN_${TYPES[x.type]}` as DnsPacket.RecordType, name: x.name, class: 'IN' })),
      additionals: [{ type: 'OPT', name: '.', udpPayloadSize: EDNS_BUFFER, flags: q.dnssec ? dnsPacket.DNSSEC_OK : 0, options: options(extra) } as DnsPacket.OptAnswer],
    });
  return q.pad ? paddedToBlock(make) : make([]);
}

/** Thrown for an answer that is not a DNS response to the query (the probe reports it, never guesses). */
export class ProbeWireError extends Error {}

/** Reads an answer to a probe query with id `id`; throws ProbeWireError when it is not one. */
export function readProbeAnswer(buf: Buffer, id: number): ProbeAnswer {
  let msg: DnsPacket.Packet;
  try {
    msg = dnsPacket.decode(buf);
  } catch (err) {
    throw new ProbeWireError(`the answer is not a DNS message (${(err as Error).message})`);
  }
  if (msg.type !== 'response') throw new ProbeWireError('the answer is a query, not a response');
  if (msg.id !== id) throw new ProbeWireError(`the answer's id ${msg.id} is not the query's ${id}`);
  const flags = msg.flags ?? 0;
  const opt = (msg.additionals ?? []).find((a) => a.type === 'OPT') as DnsPacket.OptAnswer | undefined;
  const options = (opt?.options ?? []) as { code: number; data?: Buffer; scopePrefixLength?: number }[];
  const typeName = (t: string): string => {
    const n = t.startsWith('UNKNOWN_') ? Number(t.slice(8)) : NaN;
    return n === TYPES.HTTPS ? 'HTTPS' : Number.isNaN(n) ? t : `TYPE${n}`;
  };
  const answers = (msg.answers ?? []) as { type: string; data?: unknown }[];
  const extended = ((opt as { extendedRcode?: number } | undefined)?.extendedRcode ?? 0) << 4;
  const rcode = extended | (flags & 0xf);
  const subnet = options.find((o) => o.code === OPT_CLIENT_SUBNET);
  return {
    rcode: RCODE_NAMES[rcode] ?? `RCODE${rcode}`,
    ad: (flags & dnsPacket.AUTHENTIC_DATA) !== 0,
    questions: msg.questions?.length ?? 0,
    answerTypes: answers.map((a) => typeName(a.type)),
    https: answers.filter((a) => typeName(a.type) === 'HTTPS' && Buffer.isBuffer(a.data)).map((a) => svcbText(a.data as Buffer)),
    txt: answers.filter((a) => a.type === 'TXT' && Array.isArray(a.data)).map((a) => (a.data as Buffer[]).map((b) => b.toString('utf8')).join('')),
    bytes: buf.length,
    padded: options.some((o) => o.code === OPT_PADDING),
    ede: options.filter((o) => o.code === OPT_EDE && o.data && o.data.length >= 2).map((o) => ({ code: o.data!.readUInt16BE(0), text: o.data!.subarray(2).toString('utf8') })),
    clientSubnetScope: subnet ? (subnet.scopePrefixLength ?? (subnet.data && subnet.data.length >= 4 ? subnet.data[3]! : 0)) : null,
  };
}
