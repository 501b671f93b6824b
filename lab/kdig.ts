// kdig as the reference for answer comparisons: the lab zone's questions, kdig's arguments per transport, and its
// output and dnscost's answers in one comparable form (`name type data` lines, sorted).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { AnswerData } from '../common/record.js';
import type { EndpointSpec } from '../common/schema.js';
import type { QType } from '../common/transports.js';
import { LAB_ZONE } from './zone.js';

const run = promisify(execFile);

/** The questions asked, covering every record type and shape the lab zone has. */
export const CASES: Array<{ name: string; qtype: QType }> = [
  { name: LAB_ZONE.hostName(1), qtype: 'A' },
  { name: LAB_ZONE.hostName(250), qtype: 'AAAA' },
  { name: LAB_ZONE.multi.name, qtype: 'A' },
  { name: LAB_ZONE.chains.c3.names[0], qtype: 'A' },
  { name: LAB_ZONE.chains.c5.names[0], qtype: 'AAAA' },
  { name: LAB_ZONE.dangling.name, qtype: 'A' },
  { name: `anything.${LAB_ZONE.wildcard.parent}`, qtype: 'A' },
  { name: LAB_ZONE.https[0]!.name, qtype: 'HTTPS' },
  { name: LAB_ZONE.https[2]!.name, qtype: 'HTTPS' },
  { name: LAB_ZONE.hostName(0), qtype: 'HTTPS' },
  { name: LAB_ZONE.svcb.name, qtype: 'SVCB' },
  { name: LAB_ZONE.big.name, qtype: 'TXT' },
  { name: LAB_ZONE.nxdomain, qtype: 'A' },
];

export interface Reference {
  status: string;
  answers: string[];
}

/** kdig's arguments for the same transport, endpoint and CA. */
export function kdigArgs(e: EndpointSpec, ca: string): string[] {
  const base = [`@${e.address}`, '-p', String(e.port), '+noall', '+answer', '+header', '+retry=0', '+timeout=5'];
  const tls = [`+tls-ca=${ca}`, `+tls-hostname=${e.serverName}`];
  switch (e.transport) {
    case 'udp':
      return [...base, '+notcp', '+ignore', '+bufsize=1232'];
    case 'tcp':
      return [...base, '+tcp'];
    case 'dot':
      return [...base, ...tls];
    case 'doh':
      return [...base, ...tls, `+https=${e.path}`, ...(e.method === 'GET' ? ['+https-get'] : [])];
    case 'doh1':
      // kdig speaks DoH over HTTP/2 only; the same server's HTTP/2 answer is the reference for HTTP/1.1.
      return [...base, ...tls, `+https=${e.path}`];
    case 'doq':
      // Debian's kdig crashes with +quic: the same server's DoT answer is the reference for DoQ (same port number).
      return [...base, ...tls];
    case 'doh3':
      // kdig has no HTTP/3: the same server's DoH (HTTP/2) answer is the reference for DoH3 (same port number).
      return [...base, ...tls, `+https=${e.path}`, ...(e.method === 'GET' ? ['+https-get'] : [])];
  }
}

/** Asks kdig and returns the status and answer records as `name type data` lines. */
export async function kdig(e: EndpointSpec, ca: string, name: string, qtype: QType): Promise<Reference> {
  const { stdout } = await run('kdig', [...kdigArgs(e, ca), '-t', qtype, name], { timeout: 15_000 });
  const status = /opcode: \w+; status: (\w+)/.exec(stdout)?.[1] ?? 'none';
  const answers = stdout
    .split('\n')
    .filter((l) => l && !l.startsWith(';'))
    .map((l) => {
      const [owner, , , type, ...data] = l.trim().split(/\s+/);
      // Knot DNS before 3.3 has no name for RFC 9461's key 7 and writes it as an unknown key.
      const rdata = data.join(' ').replace(/\.$/, '').replace(/\bkey7="([^"]*)"/, 'dohpath=$1');
      // RFC 3597 hex is case-insensitive; kdig prints upper case.
      return `${owner!.replace(/\.$/, '').toLowerCase()} ${type} ${rdata.startsWith('\\#') ? rdata.toLowerCase() : rdata}`;
    });
  return { status, answers: answers.sort() };
}

/** dnscost's answers as kdig's lines. */
export const show = (answers: AnswerData[]): string[] =>
  answers.map((a) => `${a.name.toLowerCase()} ${a.type} ${a.data.replace(/\.$/, '')}`).sort();
