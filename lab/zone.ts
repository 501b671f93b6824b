// The lab's authoritative zone `test.`: generated, so tests can assert exact answers from LAB_ZONE.
import { v4Parts, v6Groups } from '../common/ip-address.js';

const HOSTS = 300;
const TTL = 300;

/** An SVCB/HTTPS record's parameters, as the lab zone uses them. */
interface SvcParams {
  mandatory?: readonly string[];
  alpn: readonly string[];
  noDefaultAlpn?: boolean;
  port?: number;
  ipv4hint?: readonly string[];
  ech?: string;
  ipv6hint?: readonly string[];
  dohpath?: string;
}

function svcRdata(priority: number, target: string, p: SvcParams): string {
  const u16 = (n: number) => Buffer.from([n >> 8, n & 0xff]);
  const name = Buffer.concat([
    ...target.split('.').filter(Boolean).map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])),
    Buffer.from([0]),
  ]);
  const param = (key: number, value: Buffer) => Buffer.concat([u16(key), u16(value.length), value]);
  const keyNumbers: Record<string, number> = { alpn: 1, ipv4hint: 4, ipv6hint: 6 };
  // Params in increasing key order, as the wire form requires.
  const parts = [u16(priority), name];
  if (p.mandatory) parts.push(param(0, Buffer.concat(p.mandatory.map((k) => u16(keyNumbers[k]!)))));
  parts.push(param(1, Buffer.concat(p.alpn.map((a) => Buffer.concat([Buffer.from([a.length]), Buffer.from(a)])))));
  if (p.noDefaultAlpn) parts.push(param(2, Buffer.alloc(0)));
  if (p.port !== undefined) parts.push(param(3, u16(p.port)));
  if (p.ipv4hint) parts.push(param(4, Buffer.from(p.ipv4hint.flatMap((ip) => v4Parts(ip)!))));
  if (p.ech) parts.push(param(5, Buffer.from(p.ech, 'base64')));
  if (p.ipv6hint) parts.push(param(6, Buffer.concat(p.ipv6hint.map((ip) => Buffer.concat(v6Groups(ip)!.map(u16))))));
  if (p.dohpath) parts.push(param(7, Buffer.from(p.dohpath)));
  const wire = Buffer.concat(parts);
  return `\\# ${wire.length} ${wire.toString('hex')}`;
}

// Deterministic filler text: a fixed alphabet rotated per string, no spaces or quotes to escape.
function bigStrings(count: number, len: number): string[] {
  const abc = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from({ length: count }, (_, k) =>
    Array.from({ length: len }, (_, j) => abc[(j + k) % abc.length]).join(''),
  );
}

const bigTxt = bigStrings(16, 250);

const hostName = (i: number): string => `h${i}.test`;
const expectedA = (i: number): string => (i < 200 ? `198.51.100.${i + 1}` : `203.0.113.${i - 199}`);
const expectedAAAA = (i: number): string => `2001:db8:100::${(i + 1).toString(16)}`;

/** Everything a test needs to know about the zone's content; names are absolute without a trailing dot. */
export const LAB_ZONE = {
  origin: 'test',
  ttl: TTL,
  nameserver: 'dns.test',
  nameserverA: '127.0.0.1',
  hostCount: HOSTS,
  /** Name of host i, 0 <= i < hostCount. */
  hostName,
  /** The single A of host i: 198.51.100.1-200, then 203.0.113.1-100. */
  expectedA,
  /** The single AAAA of host i, in the compressed form dig and kdig print. */
  expectedAAAA,
  multi: { name: 'multi.test', a: ['203.0.113.201', '203.0.113.202', '203.0.113.203', '203.0.113.204'] },
  /** CNAME chains: `names` are the owners in order (each CNAMEs to the next, the last to host `target`). */
  chains: {
    c3: { names: ['c3.test', 'c3-1.test', 'c3-2.test'], target: hostName(1), targetA: expectedA(1) },
    c5: {
      names: ['c5.test', 'c5-1.test', 'c5-2.test', 'c5-3.test', 'c5-4.test'],
      target: hostName(2),
      targetA: expectedA(2),
    },
  },
  /** A CNAME whose target does not exist: the answer is the CNAME with rcode NXDOMAIN. */
  dangling: { name: 'dangling.test', target: 'gone.test' },
  /** Any label under wild.test answers with this A. */
  wildcard: { parent: 'wild.test', a: '198.51.100.250' },
  /** TXT of 16 x 250-byte strings (~4 KB): truncated over UDP at a 1232-byte buffer, whole over TCP. */
  big: { name: 'big.test', strings: bigTxt, bytes: bigTxt.reduce((n, s) => n + s.length, 0) },
  /** HTTPS records: priority 1, target root (= owner), alpn as listed; full.test has every key RFC 9460 defines. */
  https: [
    { name: 'svc.test', priority: 1, target: '.', alpn: ['h2', 'h3'] },
    { name: 'h0.test', priority: 1, target: '.', alpn: ['h2'] },
    {
      name: 'full.test', priority: 2, target: 'edge.test.', alpn: ['h3', 'h2'], mandatory: ['alpn', 'ipv4hint'], noDefaultAlpn: true, port: 8443,
      ipv4hint: ['192.0.2.10', '192.0.2.11'], ech: 'AEX+DQBBpQAgACB/9wIQ0K3+7gAEAAEAAQASZWNoLmV4YW1wbGUudGVzdAAA', ipv6hint: ['2001:db8::10', '2001:db8:0:1::11'],
    },
  ] as ReadonlyArray<SvcParams & { name: string; priority: number; target: string }>,
  /** A DDR-style SVCB record for the lab resolver itself. */
  svcb: { name: '_dns.svc.test', priority: 1, target: 'dns.test.', alpn: ['dot', 'h2', 'h3'], dohpath: '/dns-query{?dns}' },
  /** Guaranteed not to exist. */
  nxdomain: 'nope.test',
} as const;

/** Returns the zone text for origin `test.` (CoreDNS file plugin and unbound auth-zone); serial tags an instance. */
export function labZone(serial = 1): string {
  const z = LAB_ZONE;
  const rel = (name: string) => name.replace(/\.test$/, '');
  const lines = [
    '$ORIGIN test.',
    `$TTL ${TTL}`,
    `@ IN SOA dns.test. hostmaster.test. ${serial} 3600 600 86400 60`,
    '@ IN NS dns.test.',
    `dns IN A ${z.nameserverA}`,
  ];
  for (let i = 0; i < HOSTS; i++) {
    lines.push(`h${i} IN A ${z.expectedA(i)}`, `h${i} IN AAAA ${z.expectedAAAA(i)}`);
  }
  for (const a of z.multi.a) lines.push(`multi IN A ${a}`);
  for (const { names, target } of Object.values(z.chains)) {
    names.forEach((n, k) => lines.push(`${rel(n)} IN CNAME ${names[k + 1] ?? target}.`));
  }
  lines.push(`${rel(z.dangling.name)} IN CNAME ${z.dangling.target}.`);
  lines.push(`*.${rel(z.wildcard.parent)} IN A ${z.wildcard.a}`);
  lines.push(`${rel(z.big.name)} IN TXT ${z.big.strings.map((s) => `"${s}"`).join(' ')}`);
  for (const h of z.https) lines.push(`${rel(h.name)} IN HTTPS ${svcRdata(h.priority, h.target, h)}`);
  const s = z.svcb;
  lines.push(`${rel(s.name)} IN SVCB ${svcRdata(s.priority, s.target, s)}`);
  return lines.join('\n') + '\n';
}
