import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'vitest';
import dnsPacket from 'dns-packet';
import { DnscostError } from '../../../common/errors.js';
import type { MeasureRequest } from '../../../common/schema.js';
import { measure } from '../engine/measure.js';
import { monotonic } from '../dial.js';
import { encodeQuery, QUERY_PAD_BLOCK } from '../dns-wire.js';
import { DOH3 } from './doh3.js';
import { DOQ } from './doq.js';
import { QuicCompanion } from './quic-companion.js';
import { quicTransport } from './quic.js';
import { availableTransports, REGISTRY } from './registry.js';

const missing = () => new QuicCompanion('/nonexistent/dnscost-quic');

function request(endpoints: MeasureRequest['resolvers'][number]['endpoints']): MeasureRequest {
  return { id: 't', type: 'measure', hosts: ['h1.test'], resolvers: [{ id: 'lab', name: 'lab', endpoints }], warmup: false, timeoutMs: 200 };
}

test('without the companion, doq and doh3 are unavailable, not failed, and hello leaves them out', async () => {
  const c = missing();
  const transports = { ...REGISTRY, doq: quicTransport(DOQ, () => c), doh3: quicTransport(DOH3, () => c) };
  assert.deepEqual(availableTransports(transports), ['udp', 'tcp', 'dot', 'doh', 'doh1']);
  await assert.rejects(
    measure(request([{ transport: 'doq', address: '127.0.0.1', port: 853, serverName: 'dns.test' }]), {}, undefined, { clock: monotonic, transports }),
    (err: unknown) => err instanceof DnscostError && err.code === 'transport-unavailable' && /not built/.test(err.message),
  );
  // Alongside a transport that can run: the QUIC endpoint is set aside and reported, no record is made for it.
  const result = await measure(
    request([
      { transport: 'udp', address: '127.0.0.1', port: 9 },
      { transport: 'doh3', address: '127.0.0.1', port: 443, serverName: 'dns.test', path: '/dns-query', method: 'POST' },
    ]),
    {},
    undefined,
    { clock: monotonic, transports },
  );
  assert.deepEqual(result.records.map((r) => r.transport), ['udp']);
  assert.equal(result.unavailable.length, 1);
  assert.deepEqual({ ...result.unavailable[0], message: '' }, { resolver: 'lab', endpoint: 'h3://dns.test:443/dns-query', transport: 'doh3', code: 'transport-unavailable', message: '' });
});

test('a companion that speaks garbage makes QUIC unavailable with the reason', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dnscost-quic-test-'));
  try {
    const fake = join(dir, 'dnscost-quic');
    // A frame header announcing 5 bytes, then 5 bytes that are not JSON.
    writeFileSync(fake, "#!/bin/sh\nprintf '\\000\\000\\000\\005hello'\nsleep 5\n");
    chmodSync(fake, 0o755);
    const c = new QuicCompanion(fake);
    assert.equal(c.unavailable(), null);
    await c.prepare();
    assert.match(c.unavailable() ?? '', /invalid frame from the QUIC companion: not JSON/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("DoQ's queries go bare, as the DoQ path people run (AdGuard's dnsproxy) sends them; DoH3's padded, as browsers pad DoH", () => {
  const q = { name: 'p100-h12.val.example', qtype: 'A' } as const;
  const [doq, doh3] = [quicTransport(DOQ, missing), quicTransport(DOH3, missing)];
  const bare = encodeQuery(q, 0, doq.pad);
  assert.ok(bare.length < QUERY_PAD_BLOCK, `${bare.length} bytes`);
  const opt = dnsPacket.decode(bare).additionals?.find((r) => r.type === 'OPT') as dnsPacket.OptAnswer | undefined;
  assert.ok(opt && !opt.options.some((o) => o.code === 12), 'EDNS without a padding option (RFC 7830: 12)');
  assert.equal(encodeQuery(q, 0, doh3.pad).length, QUERY_PAD_BLOCK);
});
