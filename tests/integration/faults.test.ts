// Every fault of the fault-injecting resolver yields its own stable error code, on every transport where the
// fault exists; no exchange outlives its timeout; nothing crashes.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { promisify } from 'node:util';
import type { ExchangeRecord } from '../../common/record.js';
import type { EndpointSpec, ResolverSpec } from '../../common/schema.js';
import type { TransportId } from '../../common/transports.js';
import { parseEndpoint } from '../../native-host/src/endpoints.js';
import { measure } from '../../native-host/src/engine/measure.js';
import { issueLeaf, LAB_CERT_IPS, LAB_CERT_NAMES, makeCA, type CertAuthority } from '../../lab/certs.js';
import { startFaultServer, type FaultServer, type FaultTlsMode, type FaultTransport } from '../../lab/fault-server/index.js';
import { HOST_BIN } from '../../lab/paths.js';

const TIMEOUT_MS = 1000;
/** Scheduling slack on 2 busy cores; an exchange that ends later than this has hung past its timeout. */
const SLACK_MS = 250;
// The fault server speaks the TCP-based transports and UDP; QUIC faults are not injected (a real QUIC stack is needed).
const ALL: FaultTransport[] = ['udp', 'tcp', 'dot', 'doh', 'doh1'];
const STREAMS: FaultTransport[] = ['tcp', 'dot', 'doh', 'doh1'];
const HTTP: TransportId[] = ['doh', 'doh1'];

/** fault label → expected code per transport (null = the exchange succeeds). */
const NAME_FAULTS: Array<{ label: string; expect: Partial<Record<TransportId, string | null>> }> = [
  { label: 'ok', expect: each(ALL, null) },
  { label: 'delay-200', expect: each(ALL, null) },
  { label: 'delay-5000', expect: each(ALL, 'timeout') },
  { label: 'drop', expect: each(ALL, 'timeout') },
  { label: 'tc', expect: each(ALL, 'truncated') },
  { label: 'servfail', expect: each(ALL, 'servfail') },
  { label: 'refused', expect: each(ALL, 'refused') },
  { label: 'nxdomain', expect: each(ALL, 'nxdomain') },
  { label: 'formerr', expect: each(ALL, 'rcode') },
  { label: 'malformed', expect: each(ALL, 'malformed-answer') },
  { label: 'short', expect: each(ALL, 'short-answer') },
  { label: 'wrong-id', expect: each(ALL, 'id-mismatch') },
  { label: 'wrong-question', expect: each(ALL, 'question-mismatch') },
  { label: 'close-mid', expect: { udp: 'timeout', ...each(STREAMS, 'connection-closed') } },
  { label: 'reset', expect: { udp: 'timeout', ...each(STREAMS, 'connection-reset') } },
  { label: 'goaway', expect: { doh: 'http2-goaway' } },
  { label: 'rst-stream', expect: { doh: 'http2-stream-reset' } },
  { label: 'http-404', expect: each(HTTP, 'http-status') },
  { label: 'http-503', expect: each(HTTP, 'http-status') },
  { label: 'bad-ctype', expect: each(HTTP, 'http-content-type') },
  { label: 'big', expect: { udp: 'truncated', ...each(STREAMS, null) } },
];

function each(ts: TransportId[], code: string | null): Partial<Record<TransportId, string | null>> {
  return Object.fromEntries(ts.map((t) => [t, code]));
}

let ca: CertAuthority;
let caPem: string;
const servers: FaultServer[] = [];

async function server(tls: FaultTlsMode = 'ok'): Promise<FaultServer> {
  const leaf = issueLeaf(ca, { names: LAB_CERT_NAMES, ips: LAB_CERT_IPS });
  const s = await startFaultServer({
    certPem: leaf.certPem,
    keyPem: leaf.keyPem,
    tls,
    expiredCert: issueLeaf(ca, { names: LAB_CERT_NAMES, notBefore: new Date(Date.now() - 86_400_000 * 30), notAfter: new Date(Date.now() - 86_400_000) }),
    wrongNameCert: issueLeaf(ca, { names: ['other.test'] }),
  });
  servers.push(s);
  return s;
}

function endpoints(s: FaultServer): Record<FaultTransport, EndpointSpec> {
  const connect = new Map([['dns.test', s.address]]);
  return {
    udp: parseEndpoint(s.endpoints.udp),
    tcp: parseEndpoint(s.endpoints.tcp),
    dot: parseEndpoint(s.endpoints.dot, { connect }),
    doh: parseEndpoint(s.endpoints.doh, { connect }),
    doh1: parseEndpoint(s.endpoints.doh1, { connect, http1: true }),
  };
}

async function run(resolver: ResolverSpec, hosts: string[], mode: 'cold' | 'warm'): Promise<ExchangeRecord[]> {
  const { records } = await measure({ id: 'f', type: 'measure', hosts, resolvers: [resolver], modes: [mode], timeoutMs: TIMEOUT_MS });
  for (const r of records) assert.ok(r.timings.total <= TIMEOUT_MS + SLACK_MS, `${r.endpoint} ${r.host} took ${r.timings.total} ms`);
  return records;
}

beforeAll(async () => {
  ca = makeCA('dnscost fault CA');
  caPem = ca.certPem;
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

describe('faults by name, every transport', { timeout: 300_000 }, () => {
  for (const mode of ['cold', 'warm'] as const) {
    test(`${mode} connections`, async () => {
      const s = await server();
      const eps = endpoints(s);
      for (const transport of ALL) {
        const cases = NAME_FAULTS.filter((f) => transport in f.expect);
        // In warm mode a fault that kills the connection must not leak into the next exchange: one resolver per case.
        for (const f of cases) {
          const resolver: ResolverSpec = { id: 'fault', name: 'fault', ca: caPem, endpoints: [eps[transport]] };
          const [rec] = await run(resolver, [`${f.label}.fault.test`], mode);
          const want = f.expect[transport];
          const label = `${mode} ${transport} ${f.label}: ${JSON.stringify(rec!.error)}`;
          if (want === null) assert.equal(rec!.ok, true, label);
          else assert.equal(rec!.error?.code, want, label);
        }
      }
    });
  }

  test('a warm connection killed by a fault is replaced, and the replacement is recorded', async () => {
    const s = await server();
    const resolver: ResolverSpec = { id: 'fault', name: 'fault', ca: caPem, endpoints: [endpoints(s).dot] };
    const records = await run(resolver, ['ok.fault.test', 'reset.fault.test', 'ok2.fault.test'], 'warm');
    assert.deepEqual(records.map((r) => r.error?.code ?? 'ok'), ['ok', 'connection-reset', 'ok']);
    const [first, , third] = records;
    assert.notEqual(third!.connection, first!.connection);
    assert.equal(third!.reused, false);
    assert.ok(third!.timings.tls !== null, 'the replacement handshake is paid by (and timed in) the exchange');
    assert.ok(third!.events.some((e) => e.type === 'connection-opened'));
  });
});

describe('TLS and connection faults', { timeout: 120_000 }, () => {
  const cases: Array<{ tls: FaultTlsMode; code: string }> = [
    { tls: 'stall', code: 'timeout' },
    { tls: 'alert', code: 'tls-alert' },
    { tls: 'expired', code: 'tls-cert-expired' },
    { tls: 'wrong-name', code: 'tls-cert-name' },
  ];
  for (const c of cases) {
    test(`${c.tls} → ${c.code} on dot, doh, doh1`, async () => {
      const s = await server(c.tls);
      const eps = endpoints(s);
      for (const t of ['dot', 'doh', 'doh1'] as const) {
        const [rec] = await run({ id: 'fault', name: 'fault', ca: caPem, endpoints: [eps[t]] }, ['ok.fault.test'], 'cold');
        assert.equal(rec!.error?.code, c.code, `${t}: ${JSON.stringify(rec!.error)}`);
        if (c.tls === 'stall') assert.match(rec!.error!.message, /TLS handshake/);
        // A failed handshake still cost a TCP connection and a ClientHello: the record says how much.
        assert.ok(rec!.timings.connect !== null && rec!.timings.tls === null, `${t}: ${JSON.stringify(rec!.timings)}`);
        assert.ok(rec!.bytes.sent > 300 && rec!.packets.sent >= 3, `${t}: ${JSON.stringify(rec!.bytes)} ${JSON.stringify(rec!.packets)}`);
      }
    });
  }

  test('an untrusted CA → tls-cert-untrusted; a closed port → connect-refused', async () => {
    const s = await server();
    const eps = endpoints(s);
    for (const t of ['dot', 'doh', 'doh1'] as const) {
      const [rec] = await run({ id: 'fault', name: 'fault', endpoints: [eps[t]] }, ['ok.fault.test'], 'cold');
      assert.equal(rec!.error?.code, 'tls-cert-untrusted', t);
    }
    await s.stop();
    for (const t of STREAMS) {
      const [rec] = await run({ id: 'fault', name: 'fault', ca: caPem, endpoints: [eps[t]] }, ['ok.fault.test'], 'cold');
      assert.equal(rec!.error?.code, 'connect-refused', t);
    }
  });

  test('the CLI process survives every fault and exits 0', async () => {
    const s = await server();
    const dir = mkdtempSync(join(tmpdir(), 'dnscost-faults-'));
    const caFile = join(dir, 'ca.pem');
    writeFileSync(caFile, caPem);
    const names = NAME_FAULTS.map((f) => `${f.label}.fault.test`).filter((n) => !n.startsWith('delay-5000'));
    const args = [HOST_BIN, 'measure', '--json', '--quiet', '--timeout', String(TIMEOUT_MS), '--ca', caFile, '--connect', `dns.test=${s.address}`];
    for (const e of Object.values(s.endpoints)) args.push('--endpoint', e);
    const { stdout } = await promisify(execFile)(process.execPath, [...args, ...names], { timeout: 120_000, maxBuffer: 64 << 20 });
    const lines = stdout.trim().split('\n').map((l) => JSON.parse(l) as ExchangeRecord);
    assert.equal(lines.length, names.length * 5);
  });
});
