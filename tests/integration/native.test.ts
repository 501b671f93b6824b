// The native host as a browser runs it: hello, a real measurement against the lab, then 1,000 malformed requests;
// a framing error ends it; it keeps private names from resolvers on its own.
import { existsSync } from 'node:fs';
import { companionPath } from '../../native-host/src/transports/quic-companion.js';
import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from 'vitest';
import { encodeFrame } from '../../native-host/src/framing.js';
import { startHost } from '../../lab/host-process.js';
import { startCoreDNS, type LabResolver } from '../../lab/resolver.js';
import { parseEndpoint } from '../../native-host/src/endpoints.js';

let lab: LabResolver;
beforeAll(async () => {
  lab = await startCoreDNS();
});
afterAll(async () => {
  await lab?.stop();
});

function labResolver() {
  const connect = new Map([['dns.test', lab.address]]);
  const e = lab.endpoints;
  return {
    id: 'lab',
    name: 'Lab CoreDNS',
    ca: lab.certs.caPem,
    endpoints: [parseEndpoint(e.udp), parseEndpoint(e.tcp), parseEndpoint(e.dot, { connect }), parseEndpoint(e.doh, { connect }), parseEndpoint(e.doh, { connect, http1: true })],
  };
}

test('hello, measure, 1,000 malformed frames, still answering, clean exit on stdin close', { timeout: 120_000 }, async () => {
  const host = startHost(undefined, { DNSCOST_FRAME_STALL_MS: '100' });
  host.send({ id: 1, type: 'hello' });
  const hello = await host.next();
  assert.equal(hello.id, 1);
  assert.equal(hello.type, 'hello');
  // doq and doh3 only where the QUIC companion is built (scripts/setup builds it).
  assert.deepEqual(hello.transports, ['udp', 'tcp', 'dot', 'doh', 'doh1', ...(existsSync(companionPath()) ? ['doq', 'doh3'] : [])]);
  assert.match(String(hello.version), /^\d+\.\d+\.\d+/);

  host.send({ id: 'm1', type: 'measure', hosts: ['h1.test', { name: 'h2.test', firstNeededMs: 12 }], resolvers: [labResolver()], modes: ['cold', 'warm'], repeat: 2, seed: 7, lab: true });
  const replies = await host.until((r) => r.type === 'done' || r.type === 'error', 60_000);
  const done = replies.at(-1)!;
  assert.equal(done.type, 'done', JSON.stringify(done));
  assert.equal(done.id, 'm1');
  assert.equal(done.seed, 7);
  const records = replies.filter((r) => r.type === 'records').flatMap((r) => r.records as Array<Record<string, unknown>>);
  assert.equal(records.length, 2 * 5 * 2 * 2);
  assert.equal(done.exchanges, records.length);
  for (const r of records) assert.equal(r.ok, true, JSON.stringify(r.error));
  assert.deepEqual(new Set(records.map((r) => r.transport)), new Set(['udp', 'tcp', 'dot', 'doh', 'doh1']));
  const progress = replies.filter((r) => r.type === 'progress');
  assert.equal(progress.at(-1)!.done, records.length);
  for (const r of replies) assert.equal(r.id, 'm1');

  // 1,000 malformed requests in well-formed frames, of every kind; each must get exactly one error reply with its code,
  // and the host goes on answering.
  const expected: string[] = [];
  const codes: string[] = [];
  const errorCode = async (): Promise<string> => {
    const reply = await host.next(20_000);
    assert.equal(reply.type, 'error', JSON.stringify(reply));
    // The one failure shape at every boundary: { ok: false, code, message }.
    assert.equal(reply.ok, false, JSON.stringify(reply));
    assert.equal(typeof reply.message, 'string');
    return String(reply.code);
  };
  for (let i = 0; i < 1000; i++) {
    const kind = i % 9;
    if (kind === 0) {
      host.sendRaw(encodeFrame('{"id":1,"type":'));
      expected.push('bad-json');
    } else if (kind === 1) {
      host.sendRaw(encodeFrame(Buffer.from([0xff, 0xfe, 0x7b])));
      expected.push('bad-json');
    } else if (kind === 2) {
      host.send({ id: i, type: 'measure', hosts: 'h1.test', resolvers: [] });
      expected.push('bad-request');
    } else if (kind === 3) {
      host.send({ id: i, type: 'launch-missiles' });
      expected.push('unknown-type');
    } else if (kind === 4) {
      host.send({ id: i, type: 'measure', hosts: ['192.168.1.1'], resolvers: [labResolver()] });
      expected.push('bad-hostname');
    } else if (kind === 5) {
      host.send({ id: i, type: 'measure', hosts: Array.from({ length: 600 }, (_, k) => `h${k}.test`), resolvers: [labResolver()] });
      expected.push('bad-request');
    } else if (kind === 6) {
      host.sendRaw(encodeFrame('[1,2,3]'));
      expected.push('bad-request');
    } else if (kind === 7) {
      host.send({ id: i, type: 'measure', hosts: ['h1.test'], resolvers: [{ id: 'x', name: 'x', endpoints: [{ transport: 'udp', address: 'evil.example', port: 53 }] }] });
      expected.push('bad-request');
    } else {
      host.sendRaw(encodeFrame('null'));
      expected.push('bad-request');
    }
  }
  while (codes.length < expected.length) codes.push(await errorCode());
  // Replies to different requests may overtake each other (a measure fails after an await); compare as multisets.
  const count = (xs: string[]) => Object.fromEntries([...new Set(xs)].sort().map((c) => [c, xs.filter((x) => x === c).length]));
  assert.deepEqual(count(codes), count(expected));

  host.send({ id: 'again', type: 'hello' });
  const again = await host.next();
  assert.equal(again.id, 'again');
  assert.equal(again.type, 'hello');
  assert.equal(await host.exit(), 0, host.stderr());
});

test('a framing error ends the host after its error frame (the stream is out of step): a frame over 1 MiB, a frame that stops arriving', { timeout: 30_000 }, async () => {
  const big = Buffer.alloc(1024 * 1024 + 16, 0x20);
  const header = Buffer.alloc(4);
  header.writeUInt32LE(big.length);
  const oversized = startHost(undefined, { DNSCOST_FRAME_STALL_MS: '100' });
  oversized.sendRaw(Buffer.concat([header, big]));
  const tooLarge = await oversized.next(10_000);
  assert.deepEqual([tooLarge.type, tooLarge.code], ['error', 'frame-too-large']);
  assert.equal(await oversized.exit(), 1, oversized.stderr());

  const truncated = startHost(undefined, { DNSCOST_FRAME_STALL_MS: '100' });
  const frame = encodeFrame(JSON.stringify({ id: 1, type: 'hello' }));
  truncated.sendRaw(frame.subarray(0, frame.length - 3));
  const bad = await truncated.next(10_000);
  assert.deepEqual([bad.type, bad.code], ['error', 'bad-frame']);
  assert.equal(await truncated.exit(), 1, truncated.stderr());
});

test('Firefox-style launch (manifest path + add-on id) speaks the same protocol', async () => {
  const host = startHost(['/home/user/.mozilla/native-messaging-hosts/dnscost.json', 'dnscost@dnscost.org']);
  host.send({ id: 'ff', type: 'hello' });
  const hello = await host.next();
  assert.equal(hello.type, 'hello');
  assert.equal(await host.exit(), 0);
});

test('cancel stops a running measurement and reports it as cancelled', async () => {
  const host = startHost(['native']);
  const hosts = Array.from({ length: 200 }, (_, k) => `h${k}.test`);
  host.send({ id: 'long', type: 'measure', hosts, resolvers: [labResolver()], transports: ['dot'], modes: ['cold'], lab: true });
  await host.until((r) => r.type === 'progress');
  host.send({ id: 'c', type: 'cancel', target: 'long' });
  const replies = await host.until((r) => r.id === 'long' && (r.type === 'done' || r.type === 'error'), 30_000);
  const done = replies.at(-1)!;
  assert.equal(done.type, 'done');
  assert.equal(done.cancelled, true);
  assert.ok((done.exchanges as number) < hosts.length);
  assert.equal(await host.exit(), 0);
});

test('the host alone keeps private names from resolvers: special-use names without the lab setting, .onion always, private names from a global resolver', { timeout: 60_000 }, async () => {
  const host = startHost();
  // A resolver on a global address: nothing may reach it here, and nothing does — every name below is kept back
  // before any lookup (the request fails with the list, no exchange starts).
  const global = { id: 'public', name: 'Public', endpoints: [{ transport: 'udp', address: '9.9.9.9', port: 53 }] };
  const names = ['x.onion', 'printer.internal', 'a.test', 'fileserver', { name: 'nas.example.com', reached: ['192.168.1.20'] }];
  host.send({ id: 'p1', type: 'measure', hosts: names, resolvers: [global], lab: true });
  const refused = await host.next();
  assert.equal(refused.type, 'error', JSON.stringify(refused));
  assert.equal(refused.code, 'no-measurable-hosts');
  for (const why of ['x.onion (onion)', 'printer.internal (special-use)', 'a.test (special-use)', 'fileserver (single-label)', 'nas.example.com (reached-non-global)']) {
    assert.match(String(refused.message), new RegExp(why.replace(/[.()]/g, '\\$&')));
  }
  // The lab resolver (loopback): special-use names only with the lab setting; .onion never.
  host.send({ id: 'p2', type: 'measure', hosts: ['h1.test', 'x.onion'], resolvers: [labResolver()], transports: ['udp'], modes: ['cold'] });
  const noLab = await host.next();
  assert.deepEqual([noLab.type, noLab.code], ['error', 'no-measurable-hosts']);
  host.send({ id: 'p3', type: 'measure', hosts: ['h1.test', 'x.onion'], resolvers: [labResolver()], transports: ['udp'], modes: ['cold'], lab: true });
  let done: Record<string, unknown>;
  do done = await host.next();
  while (done.type !== 'done' && done.type !== 'error');
  assert.equal(done.type, 'done', JSON.stringify(done));
  assert.deepEqual(done.withheld, [{ name: 'x.onion', reason: 'onion' }]);
  assert.ok((done.exchanges as number) > 0);
  assert.equal(await host.exit(), 0, host.stderr());
});

test('probe: what the resolvers can do, one at a time; with noCleartext only the encrypted endpoints are asked', { timeout: 60_000 }, async () => {
  const host = startHost();
  try {
    host.send({ id: 'p1', type: 'probe', resolvers: [labResolver()] });
    host.send({ id: 'p2', type: 'probe', resolvers: [labResolver()] });
    const busy = (await host.until((r) => r.id === 'p2', 30_000)).at(-1)!;
    assert.deepEqual([busy.type, busy.code], ['error', 'busy']);
    const first = (await host.until((r) => r.id === 'p1', 30_000)).at(-1)!;
    assert.equal(first.type, 'probe-result', JSON.stringify(first));
    assert.equal(first.plainLeftOut, false);
    const rows = (first.resolvers as Array<{ id: string; rows: Array<{ item: string; endpoint: string | null; result: string }> }>)[0]!.rows;
    // Every endpoint was asked (the lab zone has no example.com: CoreDNS refuses it), the TLS ones handshaken.
    assert.deepEqual(rows.filter((r) => r.item === 'answers').map((r) => r.endpoint!.split(':')[0]), ['udp', 'tcp', 'tls', 'https', 'https']);
    assert.equal(rows.filter((r) => r.item === 'tls-1.3' && r.result === 'yes').length, 3);
    host.send({ id: 'p3', type: 'probe', resolvers: [labResolver()], noCleartext: true });
    const second = (await host.until((r) => r.id === 'p3', 30_000)).at(-1)!;
    assert.equal(second.plainLeftOut, true);
    const asked = (second.resolvers as Array<{ rows: Array<{ endpoint: string | null }> }>)[0]!.rows.map((r) => r.endpoint?.split(':')[0]);
    assert.ok(!asked.includes('udp') && !asked.includes('tcp') && asked.includes('tls'), asked.join(' '));
  } finally {
    await host.exit();
  }
});
