// The HAR site on loopback (ports mapped to free ones): answers by Host and path over HTTP, HTTPS/1.1 and HTTP/2,
// waits the HAR's wait, sends exactly the body size, the HAR's status and Location, records what it served, and
// presents one certificate per recorded server (or the one given). The zone for a plan. Invented names only: every
// request goes to 127.0.0.1 with the name in Host/SNI, nothing is resolved.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect as h2connect } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type PeerCertificate } from 'node:tls';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { makeCerts } from '../certs.js';
import { parseHar } from '../../common/har.js';
import { pagePlan } from './plan.js';
import { startHarSite, type HarSite } from './site.js';
import { harZone, zoneNames } from './zone.js';

const T0 = Date.parse('2024-01-01T00:00:00.000Z');
function entry(url: string, at: number, ip: string, res: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return {
    startedDateTime: new Date(T0 + at).toISOString(), time: 10, serverIPAddress: ip,
    request: { method: 'GET', url }, response: { status: 200, headers: [], content: { size: 1234, mimeType: 'text/plain' }, ...res },
    timings: { wait: 40 }, ...extra,
  };
}
const plan = pagePlan(parseHar(JSON.stringify({ log: { entries: [
  entry('https://a.example/', 0, '203.0.113.1', { content: { size: 5000, mimeType: 'text/html' } }, { _resourceType: 'document' }),
  entry('https://a.example/old?x=1', 10, '203.0.113.1', { status: 302, redirectURL: 'https://b.example/new', content: { size: 0 } }),
  entry('https://b.example/new', 20, '203.0.113.2', { headers: [{ name: 'Timing-Allow-Origin', value: '*' }] }),
  // c.example shared b's server in the recording: one certificate for both.
  entry('https://c.example/x.js', 30, '203.0.113.2', { content: { size: 777, mimeType: 'application/javascript' } }),
  entry('http://d.example/plain', 40, '203.0.113.3', { status: 204 }),
  entry('http://10.1.2.3/by-address', 50, '10.1.2.3'),
  // A URL answered twice: a 302 to itself (a server setting a cookie), then on to another host.
  entry('https://e.example/loop', 60, '203.0.113.4', { status: 302, redirectURL: 'https://e.example/loop', content: { size: 0 } }),
  entry('https://e.example/loop', 70, '203.0.113.4', { status: 302, redirectURL: 'https://b.example/new', content: { size: 0 } }),
] } })));

const wanted = (path: string, host: string) => plan.resources.find((r) => r.host === host && r.path === path)!;
let site: HarSite;
let dir: string;
let caPem: string;
let port: Record<'http' | 'https', number>;

/** One request to the site on loopback with `host` in Host (and SNI): status, headers, body, time taken. */
function get(scheme: 'http' | 'https', host: string, path: string): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const options = { host: '127.0.0.1', port: port[scheme], path, headers: { host }, servername: host, ca: caPem };
    const req = (scheme === 'http' ? httpRequest : httpsRequest)(options, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts), ms: performance.now() - t0 }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The certificate the site presents for `name`. */
function peerCert(name: string): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ host: '127.0.0.1', port: port.https, servername: name, ca: caPem }, () => {
      resolve(s.getPeerCertificate());
      s.end();
    });
    s.on('error', reject);
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dnscost-har-site-unit-'));
  const certs = await makeCerts(dir);
  caPem = certs.caPem;
  site = await startHarSite(plan, { addresses: ['127.0.0.1'], ca: { certPem: certs.caPem, keyPem: forge.pki.privateKeyToPem(certs.ca.key) }, ports: { 80: 0, 443: 0 } });
  const find = (s: 'http' | 'https') => site.listeners.find((l) => l.scheme === s)!.port;
  port = { http: find('http'), https: find('https') };
});
afterAll(async () => {
  await site?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the HAR site', () => {
  test('answers by Host and path with the HAR size, wait and type', async () => {
    const doc = await get('https', 'a.example', '/');
    assert.equal(doc.status, 200);
    assert.equal(doc.body.length, 5000);
    assert.equal(doc.headers['content-length'], '5000');
    assert.match(String(doc.headers['content-type']), /^text\/html/);
    assert.ok(doc.ms >= 39, `waited ${doc.ms} ms`);
    const js = await get('https', 'c.example', '/x.js');
    assert.deepEqual([js.body.length, js.headers['content-type']], [777, 'text/javascript']);
  });
  test('redirects, statuses, Timing-Allow-Origin, either scheme, unknown paths', async () => {
    const r = await get('https', 'a.example', '/old?x=1');
    assert.deepEqual([r.status, r.headers.location, r.body.length], [302, 'https://b.example/new', 0]);
    assert.equal((await get('https', 'b.example', '/new')).headers['timing-allow-origin'], '*');
    const nobody = await get('http', 'd.example', '/plain');
    assert.deepEqual([nobody.status, nobody.body.length], [204, 0]);
    // A browser may upgrade http to https by itself (HSTS): the same resource answers on both.
    assert.equal((await get('https', 'd.example', '/plain')).status, 204);
    assert.equal((await get('http', 'a.example', '/')).body.length, 5000);
    assert.equal((await get('http', 'a.example', '/nope')).status, 404);
  });
  test('HTTP/2 over TLS', async () => {
    const session = h2connect(`https://a.example:${port.https}`, { ca: caPem, servername: 'b.example', host: '127.0.0.1' } as never);
    try {
      const { status, length } = await new Promise<{ status: number; length: number }>((resolve, reject) => {
        const req = session.request({ ':path': '/new', ':authority': 'b.example' });
        let status = 0;
        let length = 0;
        req.on('response', (h) => { status = Number(h[':status']); });
        req.on('data', (d: Buffer) => { length += d.length; });
        req.on('end', () => resolve({ status, length }));
        req.on('error', reject);
        req.end();
      });
      assert.deepEqual([status, length], [200, 1234]);
    } finally {
      session.close();
    }
  });
  test("a URL the recording answered twice gives its answers in order on a connection, then its last one; a new connection starts over", async () => {
    const loop = wanted('/loop', 'e.example');
    assert.deepEqual([loop.redirectTo, loop.earlier.map((a) => a.redirectTo)], ['https://b.example/new', ['https://e.example/loop']]);
    const answers = async (n: number) => {
      const session = h2connect(`https://e.example:${port.https}`, { ca: caPem, servername: 'e.example', host: '127.0.0.1' } as never);
      try {
        const out: string[] = [];
        for (let i = 0; i < n; i++) {
          out.push(await new Promise<string>((resolve, reject) => {
            const req = session.request({ ':path': '/loop', ':authority': 'e.example' });
            req.on('response', (h) => resolve(`${h[':status']} ${h.location}`));
            req.on('error', reject);
            req.resume();
            req.end();
          }));
        }
        return out;
      } finally {
        session.close();
      }
    };
    assert.deepEqual(await answers(3), ['302 https://e.example/loop', '302 https://b.example/new', '302 https://b.example/new']);
    assert.deepEqual(await answers(1), ['302 https://e.example/loop'], 'another load, another connection: the chain again');
  });
  test('one certificate per recorded server: hosts that shared one share it, no other', async () => {
    assert.deepEqual(plan.hostGroups, [['a.example'], ['b.example', 'c.example'], ['d.example'], ['10.1.2.3'], ['e.example']]);
    const sans = async (name: string) => (await peerCert(name)).subjectaltname;
    assert.equal(await sans('a.example'), 'DNS:a.example');
    assert.equal(await sans('b.example'), 'DNS:b.example, DNS:c.example');
    assert.equal(await sans('c.example'), 'DNS:b.example, DNS:c.example');
    // No SNI (a host named by its address): the certificate for the page's IP-literal hosts.
    const bare = await new Promise<PeerCertificate>((resolve, reject) => {
      const s = tlsConnect({ host: '127.0.0.1', port: port.https, ca: caPem, checkServerIdentity: () => undefined }, () => { resolve(s.getPeerCertificate()); s.end(); });
      s.on('error', reject);
    });
    assert.equal(bare.subjectaltname, 'IP Address:10.1.2.3');
  });
  test('records what it served', async () => {
    const before = site.served().length;
    await get('https', 'c.example', '/x.js');
    // The record is made when the server has handed the last byte over, which can be just after the client has it.
    for (let i = 0; i < 100 && site.served().length === before; i++) await new Promise((r) => setTimeout(r, 10));
    const s = site.served().slice(before)[0]!;
    assert.deepEqual([s.id, s.scheme, s.host, s.path, s.status, s.bytes], [wanted('/x.js', 'c.example').id, 'https', 'c.example', '/x.js', 200, 777]);
    assert.ok(s.firstByteAt - s.requestAt >= 39 && s.endAt >= s.firstByteAt);
    assert.ok(site.served().some((x) => x.id === null && x.path === '/nope'));
  });
  test('one certificate naming every host works too (makeCerts with extra names)', async () => {
    const certs = await makeCerts(join(dir, 'one'), zoneNames(plan).names);
    const one = await startHarSite(plan, { addresses: ['127.0.0.1'], cert: certs.certPem, key: certs.keyPem, ports: { 80: 0, 443: 0 } });
    try {
      const p = one.listeners.find((l) => l.scheme === 'https')!.port;
      const cert = await new Promise<PeerCertificate>((resolve, reject) => {
        const s = tlsConnect({ host: '127.0.0.1', port: p, servername: 'c.example', ca: certs.caPem }, () => { resolve(s.getPeerCertificate()); s.end(); });
        s.on('error', reject);
      });
      for (const h of ['a.example', 'b.example', 'c.example', 'd.example', 'e.example', 'dns.test']) assert.ok(cert.subjectaltname?.includes(`DNS:${h}`), h);
    } finally {
      await one.close();
    }
  });
});

describe('the zone of a plan', () => {
  test('every name answers the site, IP literals are left out', () => {
    assert.deepEqual(harZone(plan, '192.0.2.3'), { zone: ['a.example', 'b.example', 'c.example', 'd.example', 'e.example'], a: '192.0.2.3' });
    assert.deepEqual(harZone(plan, '192.0.2.3', '2001:db8::3').aaaa, '2001:db8::3');
    assert.deepEqual(zoneNames(plan).left, [{ host: '10.1.2.3', reason: 'an IP address' }]);
  });
});
