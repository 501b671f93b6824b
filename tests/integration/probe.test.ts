// `dnscost-host probe` against four real servers, each as the lab configures it: CoreDNS, unbound, AdGuard dnsproxy
// and BIND 9.18 (a validating resolver over two DNSSEC-signed zones). Every item of the probe's table is compared
// with what the server is configured to do and known to support; each expected cell says why. Each server is asked as a
// resolver with every transport it is started with, and doh1 too (a server without HTTP/1.1 says no).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, describe, test } from 'vitest';
import type { EndpointSpec, ResolverSpec } from '../../common/schema.js';
import type { ProbeItem, ProbeRow } from '../../common/probe.js';
import { probe } from '../../native-host/src/probe/probe.js';
import { companionPath } from '../../native-host/src/transports/quic-companion.js';
import { startBind } from '../../lab/bind.js';
import { dnsproxyBinary, startDnsproxy } from '../../lab/dnsproxy.js';
import { signZones, SIGNED_ZONES } from '../../lab/dnssec.js';
import { labResolverSpec } from '../../lab/extension-pages.js';
import { HOST_BIN } from '../../lab/paths.js';
import { labDir, startCoreDNS, startUnbound } from '../../lab/resolver.js';

// The lab zone has no "who am I" service (lab/cdn.ts has: tests/integration/cdn.test.ts): ecs-upstream is n/a here.
const NAMES = { name: 'h1.test', signed: SIGNED_ZONES.signed, bogus: SIGNED_ZONES.bogus, https: 'svc.test', whoami: 'h1.test' };
type Yn = 'yes' | 'no' | 'n/a';
/** Expected results: per item, one result for every endpoint it is checked on, or per transport. */
type Expected = Partial<Record<ProbeItem, Yn | Partial<Record<EndpointSpec['transport'], Yn>>>>;

function missing(): string[] {
  const out: string[] = [];
  if (!existsSync(dnsproxyBinary())) out.push(`${dnsproxyBinary()} (run: bash lab/build.sh)`);
  if (!existsSync(companionPath())) out.push(`${companionPath()} (run: bash native-host/quic/build.sh)`);
  if (!existsSync('/usr/sbin/named')) out.push('/usr/sbin/named (run: scripts/setup, Debian package bind9)');
  return out;
}

/** Each row's result against the table; every cell the table names must have a row, and no row may be unexpected. */
function check(rows: ProbeRow[], expected: Expected): void {
  const transportOf = (r: ProbeRow): string => {
    const scheme = r.endpoint?.split(':')[0];
    if (r.endpoint?.endsWith('(HTTP/1.1)')) return 'doh1';
    return { udp: 'udp', tcp: 'tcp', tls: 'dot', https: 'doh', quic: 'doq', h3: 'doh3' }[scheme ?? ''] ?? '?';
  };
  const problems: string[] = [];
  for (const r of rows) {
    const want = expected[r.item];
    const cell = typeof want === 'string' ? want : want?.[transportOf(r) as EndpointSpec['transport']];
    if (cell === undefined) problems.push(`unexpected row ${r.item} on ${r.endpoint}: ${r.result} (${r.detail})`);
    else if (r.result !== cell) problems.push(`${r.item} on ${r.endpoint}: ${r.result}, expected ${cell} (${r.detail})`);
  }
  for (const [item, want] of Object.entries(expected)) {
    const transports = typeof want === 'string' ? [undefined] : Object.keys(want!);
    for (const t of transports) {
      if (!rows.some((r) => r.item === item && (t === undefined || transportOf(r) === t))) problems.push(`no row for ${item}${t ? ` on ${t}` : ''}`);
    }
  }
  assert.deepEqual(problems, [], `\n${rows.map((r) => `${r.item} ${r.endpoint} ${r.result} ${r.detail}`).join('\n')}`);
}

// Items every lab server answers alike (the same zone behind each).
const ZONE_ITEMS: Expected = {
  // Every name of labZone() exists; HTTPS records are a type like any other to each of them.
  'https-rr': 'yes',
  // Two questions in one query: RFC 9619 makes QDCOUNT > 1 an error, and each answers FORMERR.
  'qdcount-2': 'no',
  // The whoami name (h1.test) has no TXT record: no "who am I" service to read ECS from.
  'ecs-upstream': 'n/a',
};

// A server whose DoH is HTTP/2 only (unbound, BIND) over TLS 1.2 and 1.3 with OpenSSL's default session tickets: its
// https endpoint offered as HTTP/1.1 (doh1) answers nothing.
const OPENSSL_H2_ONLY: Expected = {
  answers: { udp: 'yes', tcp: 'yes', dot: 'yes', doh: 'yes', doh1: 'no' },
  'tls-1.0': 'no', 'tls-1.1': 'no', 'tls-1.2': 'yes', 'tls-1.3': 'yes',
  'alpn-h2': 'yes', 'alpn-http/1.1': 'no',
  'doh-get': { doh: 'yes', doh1: 'no' }, 'doh-post': { doh: 'yes', doh1: 'no' }, 'dns-json': 'no',
  resumption: 'yes',
};

if (missing().length) console.log(`probe: missing ${missing().join(', ')}`);
describe.skipIf(missing().length > 0)('dnscost-host probe: four servers, item by item', { timeout: 120_000 }, () => {
  const stops: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const s of stops.reverse()) await s();
  });
  const run = (r: ResolverSpec) => probe(r, { names: NAMES, timeoutMs: 3000 });

  test('CoreDNS: DoT, DoH over h2 and HTTP/1.1, DoQ, DoH3; TLS 1.2+; an authoritative server without DNSSEC, padding, EDE or ECS', async () => {
    const coredns = await startCoreDNS();
    stops.push(() => coredns.stop());
    check(await run(labResolverSpec(coredns, { quic: true })), {
      ...ZONE_ITEMS,
      answers: 'yes',
      // Go's crypto/tls server: TLS 1.2 is the lowest it accepts.
      'tls-1.0': 'no', 'tls-1.1': 'no', 'tls-1.2': 'yes', 'tls-1.3': 'yes',
      // The https plugin is Go's net/http server: h2 and HTTP/1.1 both.
      'alpn-h2': 'yes', 'alpn-http/1.1': 'yes', 'alpn-h3': 'yes',
      'doh-get': 'yes', 'doh-post': 'yes', 'dns-json': 'no',
      // Go's TLS and quic-go issue session tickets. DoH3 is http3.Server (ListenEarly, Allow0RTT); DoQ is quic.Listen
      // with Allow0RTT: TLS accepts early data, but early packets that come before the connection exists are dropped.
      resumption: 'yes', '0-rtt': { doq: 'yes', doh3: 'yes' },
      // The query's padding option is copied back as it came, not padded to a block; no EDE; ECS is not kept.
      padding: 'no', ede: 'no', ecs: 'no', dnssec: 'no',
    });
  });

  test('unbound: DoT and DoH over h2 only; TLS 1.2+ (OpenSSL 3); responses padded to 468 over TLS; no validation in an auth-zone', async () => {
    const unbound = await startUnbound();
    stops.push(() => unbound.stop());
    check(await run(labResolverSpec(unbound, { quic: false })), {
      ...ZONE_ITEMS,
      // unbound sets TLS 1.2 as its floor (listen_sslctx_setup); it chooses http/1.1 when offered alone, then closes:
      // its DoH serves HTTP/2 only (netevent.c); no SSL_OP_NO_TICKET.
      ...OPENSSL_H2_ONLY,
      // pad-responses: yes and pad-responses-block-size: 468 are unbound's defaults, over TLS (DoT) for queries that pad.
      padding: 'yes',
      // ede: no is its default; the iterator alone (module-config) validates nothing.
      ede: 'no', ecs: 'no', dnssec: 'no',
    });
  });

  test('AdGuard dnsproxy: every transport, 0-RTT on QUIC', async () => {
    const coredns = await startCoreDNS();
    stops.push(() => coredns.stop());
    const proxy = await startDnsproxy(coredns);
    stops.push(() => proxy.stop());
    check(await run(labResolverSpec({ address: proxy.address, certs: coredns.certs, endpoints: proxy.endpoints }, { quic: true })), {
      ...ZONE_ITEMS,
      answers: 'yes',
      // The lab's dnsproxy (lab/dnsproxy/main.go) sets MinVersion TLS 1.2; dnsproxy's own command line would start from 1.0.
      'tls-1.0': 'no', 'tls-1.1': 'no', 'tls-1.2': 'yes', 'tls-1.3': 'yes',
      'alpn-h2': 'yes', 'alpn-http/1.1': 'yes', 'alpn-h3': 'yes',
      // Only ?dns= and application/dns-message (proxy/serverhttps.go).
      'doh-get': 'yes', 'doh-post': 'yes', 'dns-json': 'no',
      // quic-go's ListenEarly with Allow0RTT for DoQ and DoH3 (proxy/serverquic.go).
      resumption: 'yes', '0-rtt': 'yes',
      // Every OPT of the upstream's answer dropped and a bare one added: no padding, EDE or ECS (no --edns).
      padding: 'no', ede: 'no', ecs: 'no',
      // It forwards to CoreDNS's authoritative answers: nothing validated.
      dnssec: 'no',
    });
  });

  test('BIND 9.18: a validating resolver (AD on signed.test, SERVFAIL on bogus.test); TLS 1.2 and 1.3 as configured; DoH over h2 only; padding as configured', async () => {
    const dir = labDir('probe-bind');
    stops.push(async () => (await import('node:fs')).rmSync(dir, { recursive: true, force: true }));
    const signed = await signZones(dir);
    const authority = await startBind({ zones: signed.zones });
    stops.push(() => authority.stop());
    const dnsPort = Number(authority.endpoints.udp.split(':').at(-1));
    const resolver = await startBind({ certs: authority.certs, forward: { zones: signed.zones.map((z) => z.name), to: { address: authority.address, port: dnsPort }, anchors: signed.anchors } });
    stops.push(() => resolver.stop());
    check(await run(labResolverSpec(resolver, { quic: false })), {
      ...ZONE_ITEMS,
      // `protocols { TLSv1.2; TLSv1.3; }` in its tls block; its DoH acknowledges no ALPN but h2 (lib/isc/tls.c).
      ...OPENSSL_H2_ONLY,
      // response-padding { any; } block-size 468: over TCP, DoT and DoH.
      padding: 'yes',
      // 9.18 sends EDE only for ACL refusals and stale answers, none for a bogus answer.
      ede: 'no',
      // Open-source BIND resolves without ECS but echoes the option with scope 0 (lib/ns/client.c).
      ecs: 'yes',
      dnssec: 'yes',
    });
  });

  test('the command line: the table and --json give the same rows for the lab\'s CoreDNS', async () => {
    const coredns = await startCoreDNS();
    stops.push(() => coredns.stop());
    const args = [
      'probe', '--endpoint', coredns.endpoints.udp, '--endpoint', coredns.endpoints.dot, '--endpoint', coredns.endpoints.doh,
      '--connect', `dns.test=${coredns.address}`, '--ca', coredns.certs.caFile,
      '--name', NAMES.name, '--signed', NAMES.signed, '--bogus', NAMES.bogus, '--https-name', NAMES.https,
    ];
    const run = (extra: string[]) => spawnSync(process.execPath, [HOST_BIN, ...args, ...extra], { encoding: 'utf8', timeout: 60_000 });
    const json = run(['--json']);
    assert.equal(json.status, 0, json.stderr);
    const rows = (JSON.parse(json.stdout) as { resolvers: { id: string; rows: ProbeRow[] }[] }).resolvers[0]!.rows;
    assert.deepEqual(rows.filter((r) => r.item === 'answers').map((r) => r.result), ['yes', 'yes', 'yes']);
    assert.equal(rows.find((r) => r.item === 'https-rr')?.result, 'yes');
    assert.equal(rows.find((r) => r.item === 'dnssec')?.result, 'no');
    const table = run([]);
    assert.equal(table.status, 0, table.stderr);
    const lines = table.stdout.trim().split('\n');
    assert.match(lines[1]!, /^item\s+endpoint\s+result\s+detail$/);
    // One table line per JSON row, in the same order, with the same item and result.
    assert.deepEqual(lines.slice(2).map((l) => l.split(/\s+/).slice(0, 3).join(' ')), rows.map((r) => `${r.item} ${r.endpoint?.split(' ')[0] ?? '-'} ${r.result}`));
  });
});
