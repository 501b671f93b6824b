// Browser-like reuse: one DoT/TCP connection carries pipelined queries matched by id, one HTTP/2 connection
// multiplexes DoH streams, and HTTP/1.1 queues behind the request in flight (head-of-line blocking, shown honestly).
import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from 'vitest';
import { parseEndpoint } from '../../native-host/src/endpoints.js';
import { monotonic } from '../../native-host/src/dial.js';
import { encodeQuery, parseAnswer, randomId } from '../../native-host/src/dns-wire.js';
import { REGISTRY } from '../../native-host/src/transports/registry.js';
import type { TransportId } from '../../common/transports.js';
import { issueLeaf, LAB_CERT_IPS, LAB_CERT_NAMES, makeCA } from '../../lab/certs.js';
import { startFaultServer, type FaultServer } from '../../lab/fault-server/index.js';

let server: FaultServer;
let caPem: string;
beforeAll(async () => {
  const ca = makeCA('dnscost pipelining CA');
  caPem = ca.certPem;
  const leaf = issueLeaf(ca, { names: LAB_CERT_NAMES, ips: LAB_CERT_IPS });
  server = await startFaultServer({ certPem: leaf.certPem, keyPem: leaf.keyPem });
});
afterAll(async () => {
  await server?.stop();
});

async function race(transport: TransportId, url: string, http1 = false): Promise<string[]> {
  const endpoint = parseEndpoint(url, { connect: new Map([['dns.test', server.address]]), http1 });
  const t = REGISTRY[transport];
  const session = await t.open(endpoint, { timeoutMs: 5000, clock: monotonic, ca: caPem });
  const order: string[] = [];
  const ask = async (name: string): Promise<void> => {
    const id = t.zeroId ? 0 : randomId();
    const answer = await session.exchange(encodeQuery({ name, qtype: 'A' }, id, t.pad), id, 5000);
    assert.equal(parseAnswer(answer, { name, qtype: 'A' }, id).rcode, 'NOERROR');
    order.push(name.split('.')[0]!);
  };
  try {
    await Promise.all([ask('delay-300.fault.test'), ask('a.fault.test'), ask('b.fault.test')]);
    assert.equal(session.usable, true);
  } finally {
    session.close();
  }
  const seen = server.seen.filter((s) => s.transport === transport).slice(-3).map((s) => s.name.split('.')[0]);
  assert.deepEqual(seen.sort(), ['a', 'b', 'delay-300'], 'all three reached the server over this transport');
  return order;
}

test('DoT and TCP pipeline queries on one connection; answers are matched by id, out of order', async () => {
  for (const [t, url] of [['dot', server.endpoints.dot], ['tcp', server.endpoints.tcp]] as const) {
    const order = await race(t, url);
    assert.equal(order.at(-1), 'delay-300', `${t}: the slow answer came last: ${order}`);
  }
});

test('DoH multiplexes streams on one HTTP/2 connection', async () => {
  const order = await race('doh', server.endpoints.doh);
  assert.equal(order.at(-1), 'delay-300', String(order));
});

test('DoH over HTTP/1.1 queues behind the request in flight (head-of-line blocking)', async () => {
  const order = await race('doh1', server.endpoints.doh1, true);
  assert.deepEqual(order, ['delay-300', 'a', 'b']);
});
