// The lab network really delays and drops: measured with the reference client against its own
// responder, so this test depends on no other lab server.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createLabNet, type LabNet } from '../../../lab/netns.js';
import { labBin } from '../../../lab/paths.js';

const root = process.getuid?.() === 0;
// Needs root (network namespaces, iptables, tc); skipped otherwise.
const skip = !root;

interface Exchange { ok: boolean; ms: number; rcode: string | null; error: string | null; connect_ms: number | null }

function requireBins(): void {
  for (const b of ['netem', 'refclient']) {
    if (!existsSync(labBin(b))) throw new Error(`${labBin(b)} is missing: run \`bash lab/build.sh\``);
  }
}

async function startServer(net: LabNet): Promise<ChildProcess> {
  const srv = net.spawnIn('server', labBin('refclient'), ['serve', '--listen', `${net.server.addr4}:53`], { stdio: ['ignore', 'pipe', 'inherit'] });
  const ready = new Promise<void>((resolve, reject) => {
    srv.stdout!.on('data', (d: Buffer) => { if (d.toString().includes('ready')) resolve(); });
    srv.once('exit', (code) => reject(new Error(`refclient serve exited (${code})`)));
  });
  await Promise.race([ready, new Promise((_, reject) => setTimeout(() => reject(new Error('refclient serve not ready in 5 s')), 5000).unref())]);
  return srv;
}

async function refclient(net: LabNet, args: string[], timeoutMs = 30_000): Promise<Exchange[]> {
  const { stdout } = await net.execIn('client', labBin('refclient'), [...args, '--server', `${net.server.addr4}:53`, '--name', 'h1.test'], { timeoutMs });
  return stdout.trim().split('\n').map((l) => JSON.parse(l) as Exchange);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function namespaces(): string {
  return execFileSync('ip', ['netns', 'list'], { timeout: 5000 }).toString();
}

test('a 40 ms lab link delays UDP by one RTT and a cold TCP query by two', { skip, timeout: 60_000 }, async () => {
  requireBins();
  const net = await createLabNet({ rttMs: 40, seed: 7 });
  try {
    await startServer(net);
    const udp = await refclient(net, ['--transport', 'udp', '--mode', 'cold', '--count', '20']);
    assert.ok(udp.every((x) => x.ok && x.rcode === 'NOERROR'), JSON.stringify(udp.filter((x) => !x.ok)));
    const udpMedian = median(udp.map((x) => x.ms));
    assert.ok(udpMedian >= 40 && udpMedian < 50, `udp median ${udpMedian} ms`);

    const tcp = await refclient(net, ['--transport', 'tcp', '--mode', 'cold', '--count', '10']);
    assert.ok(tcp.every((x) => x.ok), JSON.stringify(tcp.filter((x) => !x.ok)));
    const tcpMedian = median(tcp.map((x) => x.ms));
    assert.ok(tcpMedian >= 80 && tcpMedian < 100, `tcp cold median ${tcpMedian} ms`);
  } finally {
    await net.destroy();
  }
  const left = namespaces();
  assert.ok(!left.includes(net.client.ns) && !left.includes(net.server.ns), left);
});

test('100 % loss drops every query, and the failures are bounded by the timeout', { skip, timeout: 30_000 }, async () => {
  requireBins();
  const net = await createLabNet({ profile: 'none', lossPct: 100 });
  try {
    assert.equal(net.profile.name, 'none+custom');
    await startServer(net);
    const udp = await refclient(net, ['--transport', 'udp', '--mode', 'cold', '--count', '3', '--timeout', '300']);
    assert.equal(udp.length, 3);
    for (const x of udp) {
      assert.equal(x.ok, false);
      assert.match(x.error ?? '', /timeout/);
      assert.ok(x.ms >= 300 && x.ms < 600, `${x.ms}`);
    }
    const tcp = await refclient(net, ['--transport', 'tcp', '--mode', 'cold', '--count', '1', '--timeout', '300']);
    assert.equal(tcp[0]?.ok, false);
    assert.equal(tcp[0]?.connect_ms, null, 'the SYN must not get through');
  } finally {
    await net.destroy();
  }
  const left = namespaces();
  assert.ok(!left.includes(net.client.ns) && !left.includes(net.server.ns), left);
});
