// The lab's real resolvers answer labZone() correctly on every transport, checked with kdig and curl as peers.
import { afterAll, beforeAll, describe, test } from 'vitest';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import dnsPacket from 'dns-packet';
import { startCoreDNS, startUnbound, type LabResolver } from '../../../lab/resolver.js';
import { LAB_ZONE as Z } from '../../../lab/zone.js';

const CALL_TIMEOUT_MS = 5000;

type Transport = 'udp' | 'tcp' | 'dot' | 'doh' | 'doh-get';
const ALL: Transport[] = ['udp', 'tcp', 'dot', 'doh', 'doh-get'];

interface Reply {
  status: string;
  flags: string[];
  answers: { name: string; type: string; data: string }[];
  raw: string;
}

function exec(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: CALL_TIMEOUT_MS, encoding: 'latin1' }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    );
  });
}

function port(url: string): string {
  return new URL(url).port;
}

function transportArgs(r: LabResolver, t: Transport): string[] {
  const tls = [`+tls-ca=${r.certs.caFile}`, '+tls-hostname=dns.test'];
  switch (t) {
    case 'udp': return ['-p', port(r.endpoints.udp), '+notcp'];
    case 'tcp': return ['-p', port(r.endpoints.tcp), '+tcp'];
    case 'dot': return ['-p', port(r.endpoints.dot), '+tls', ...tls];
    case 'doh': return ['-p', port(r.endpoints.doh), '+https=/dns-query', ...tls];
    case 'doh-get': return ['-p', port(r.endpoints.doh), '+https=/dns-query', '+https-get', ...tls];
  }
}

// kdig's text output is stable enough to parse; its +json needs a newer knot than Debian 12 ships.
async function kdig(r: LabResolver, t: Transport, name: string, type: string, extra: string[] = []): Promise<Reply> {
  const args = [`@${r.address}`, ...transportArgs(r, t), '+time=2', '+retry=0', ...extra, name, type];
  const { code, stdout, stderr } = await exec('kdig', args);
  assert.equal(code, 0, `kdig ${args.join(' ')} failed: ${stderr}${stdout}`);
  const status = /opcode: \w+; status: (\w+)/.exec(stdout)?.[1] ?? '?';
  const flags = (/;; Flags: ([^;]*);/.exec(stdout)?.[1] ?? '').trim().split(/\s+/);
  const section = /;; ANSWER SECTION:\n([\s\S]*?)\n\n/.exec(stdout)?.[1] ?? '';
  const answers = section.split('\n').filter(Boolean).map((line) => {
    const [owner = '', , , rtype = '', ...data] = line.split(/\s+/);
    return { name: owner.replace(/\.$/, ''), type: rtype, data: data.join(' ') };
  });
  return { status, flags, answers, raw: stdout };
}

function data(reply: Reply, type: string): string[] {
  return reply.answers.filter((a) => a.type === type).map((a) => a.data);
}

// POSTs a wire query to the DoH endpoint with curl; --resolve pins dns.test so no resolver is ever asked.
async function curlDoH(r: LabResolver, httpFlag: string, name: string) {
  const q = join(r.certs.dir, 'query.bin');
  const out = join(r.certs.dir, 'reply.bin');
  await writeFile(q, dnsPacket.encode({ type: 'query', id: 0, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name }] }));
  const res = await exec('curl', [
    '-sS', httpFlag, '--max-time', '4', '--cacert', r.certs.caFile,
    '--resolve', `dns.test:${port(r.endpoints.doh)}:${r.address}`,
    '-H', 'content-type: application/dns-message', '-H', 'accept: application/dns-message',
    '--data-binary', `@${q}`, '-o', out, '-w', '%{http_version} %{http_code}', r.endpoints.doh,
  ]);
  return { ...res, body: res.code === 0 ? await readFile(out) : undefined };
}

/** The checks every lab resolver passes; `resolver()` is the one the enclosing suite started. */
function checkResolver(resolver: () => LabResolver): void {
  test('A and AAAA on every transport', async () => {
    const r = resolver();
    for (const tr of ALL) {
      const a = await kdig(r, tr, Z.hostName(42), 'A');
      assert.equal(a.status, 'NOERROR', tr);
      assert.deepEqual(data(a, 'A'), [Z.expectedA(42)], tr);
      const aaaa = await kdig(r, tr, Z.hostName(250), 'AAAA');
      assert.deepEqual(data(aaaa, 'AAAA'), [Z.expectedAAAA(250)], tr);
    }
  });

  test('multi-address name, wildcard', async () => {
    const r = resolver();
    const multi = await kdig(r, 'udp', Z.multi.name, 'A');
    assert.deepEqual(data(multi, 'A').sort(), [...Z.multi.a].sort());
    const wild = await kdig(r, 'tcp', `anything.${Z.wildcard.parent}`, 'A');
    assert.deepEqual(data(wild, 'A'), [Z.wildcard.a]);
  });

  test('CNAME chains are followed inside the zone', async () => {
    const r = resolver();
    for (const tr of ['udp', 'doh'] as const) {
      for (const chain of Object.values(Z.chains)) {
        const reply = await kdig(r, tr, chain.names[0]!, 'A');
        assert.equal(reply.status, 'NOERROR');
        assert.deepEqual(reply.answers.filter((a) => a.type === 'CNAME').map((a) => a.name), [...chain.names]);
        const last = reply.answers.at(-1);
        assert.equal(last?.name, chain.target);
        assert.equal(last?.data, chain.targetA);
      }
    }
  });

  test('dangling CNAME', async () => {
    const r = resolver();
    const reply = await kdig(r, 'udp', Z.dangling.name, 'A');
    assert.deepEqual(data(reply, 'CNAME'), [Z.dangling.target + '.']);
    // CoreDNS reports the chain's end (RFC 6604); unbound's auth-zone answers NOERROR.
    assert.equal(reply.status, r.name === 'coredns' ? 'NXDOMAIN' : 'NOERROR');
  });

  test('HTTPS and SVCB from generic RDATA', async () => {
    const r = resolver();
    // kdig's presentation of each record: every key the zone gave it, in key order (full.test has them all).
    const keys = (h: (typeof Z.https)[number]): string[] => [
      ...(h.mandatory ? [`mandatory=${h.mandatory.join(',')}`] : []),
      `alpn=${h.alpn.join(',')}`,
      ...(h.noDefaultAlpn ? ['no-default-alpn'] : []),
      ...(h.port !== undefined ? [`port=${h.port}`] : []),
      ...(h.ipv4hint ? [`ipv4hint=${h.ipv4hint.join(',')}`] : []),
      ...(h.ech ? [`ech=${h.ech}`] : []),
      ...(h.ipv6hint ? [`ipv6hint=${h.ipv6hint.join(',')}`] : []),
    ];
    for (const h of Z.https) {
      const reply = await kdig(r, 'tcp', h.name, 'HTTPS');
      assert.deepEqual(data(reply, 'HTTPS'), [[h.priority, h.target, ...keys(h)].join(' ')]);
    }
    const s = Z.svcb;
    const reply = await kdig(r, 'dot', s.name, 'SVCB');
    assert.deepEqual(data(reply, 'SVCB'), [`${s.priority} ${s.target} alpn=${s.alpn.join(',')} key7="${s.dohpath}"`]);
  });

  test('big TXT: TC over UDP at 1232 bytes, whole over TCP, DoT and DoH', async () => {
    const r = resolver();
    const udp = await kdig(r, 'udp', Z.big.name, 'TXT', ['+bufsize=1232', '+ignore']);
    assert.ok(udp.flags.includes('tc'), `no TC: ${udp.raw}`);
    assert.equal(udp.answers.length, 0);
    for (const tr of ['tcp', 'dot', 'doh'] as const) {
      const full = await kdig(r, tr, Z.big.name, 'TXT', ['+bufsize=1232']);
      assert.ok(!full.flags.includes('tc'), tr);
      assert.deepEqual(data(full, 'TXT'), [Z.big.strings.map((s) => `"${s}"`).join(' ')], tr);
    }
  });

  test('NXDOMAIN in the zone, REFUSED outside it (never recursion)', async () => {
    const r = resolver();
    for (const tr of ALL) {
      const nx = await kdig(r, tr, Z.nxdomain, 'A');
      assert.equal(nx.status, 'NXDOMAIN', tr);
    }
    for (const name of ['example.com', '.']) {
      const out = await kdig(r, 'udp', name, 'A');
      assert.equal(out.status, 'REFUSED', name);
    }
  });
}

describe('CoreDNS serves the lab zone', { timeout: 60_000 }, () => {
  let r: LabResolver;
  beforeAll(async () => {
    r = await startCoreDNS();
  });
  afterAll(() => r?.stop());
  checkResolver(() => r);
  test('DoH POST over HTTP/1.1 and h2 (curl)', async () => {
    assert.ok(r.endpoints.doq && r.endpoints.doh3);
    for (const [flag, version] of [['--http1.1', '1.1'], ['--http2', '2']] as const) {
      const res = await curlDoH(r, flag, Z.hostName(7));
      assert.equal(res.stdout, `${version} 200`, res.stderr);
      const reply = dnsPacket.decode(res.body!);
      assert.deepEqual(reply.answers?.map((a) => (a as { data?: unknown }).data), [Z.expectedA(7)]);
    }
  });
});

describe('unbound serves the lab zone', { timeout: 60_000 }, () => {
  let r: LabResolver;
  beforeAll(async () => {
    r = await startUnbound();
  });
  afterAll(() => r?.stop());
  checkResolver(() => r);
  test('DoH is h2 only: an HTTP/1.1 request gets no HTTP/1.1 answer', async () => {
    assert.equal(r.endpoints.doq, undefined);
    assert.equal((await curlDoH(r, '--http2', Z.hostName(7))).stdout, '2 200');
    const res = await curlDoH(r, '--http1.1', Z.hostName(7));
    assert.notEqual(res.code, 0);
    // unbound writes an h2 preface (curl: "HTTP/0.9 when not allowed") or, when it reads the request first and
    // drops it, closes the connection (curl: "Empty reply from server"); both mean no HTTP/1.1.
    assert.match(res.stderr, /HTTP\/0\.9|Empty reply from server/);
  });
});
