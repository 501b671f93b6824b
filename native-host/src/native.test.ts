// The native host's loop on in-memory streams: a measurement that stays silent for long (priming and warming up
// against a resolver that never answers) still tells the extension it is alive, by repeating its progress; a process
// stopped in the middle of reading a frame does not give the frame up when it wakes.
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { test } from 'vitest';
import { encodeFrame, FrameDecoder } from './framing.js';
import { collectReplies } from './test-replies.js';
import { runNative } from './native.js';

test('a measurement against a black-holed UDP resolver repeats its progress every heartbeat while nothing finishes, then ends done with timeouts', { timeout: 30_000 }, async () => {
  const hole = createSocket('udp4');
  hole.on('message', () => undefined); // never answers
  hole.bind(0, '127.0.0.1');
  await once(hole, 'listening');
  const input = new PassThrough();
  const output = new PassThrough();
  const frames: Array<{ at: number; reply: Record<string, unknown> }> = [];
  const decoder = new FrameDecoder(64 * 1024 * 1024);
  const t0 = performance.now();
  output.on('data', (chunk: Buffer) => {
    for (const e of decoder.push(chunk)) if (e.kind === 'frame') frames.push({ at: performance.now() - t0, reply: JSON.parse(e.body.toString('utf8')) as Record<string, unknown> });
  });
  const ran = runNative({ input, output, heartbeatMs: 100, log: () => undefined });
  const timeoutMs = 500;
  input.write(encodeFrame(JSON.stringify({
    id: 'm', type: 'measure', hosts: ['a.test', 'b.test'], lab: true, prime: true, timeoutMs, modes: ['cold'], repeat: 1, qtypes: ['A'],
    resolvers: [{ id: 'void', name: 'Void', endpoints: [{ transport: 'udp', address: '127.0.0.1', port: hole.address().port }] }],
  })));
  for (let i = 0; i < 100 && !frames.some((f) => f.reply.type === 'done' || f.reply.type === 'error'); i++) await new Promise((r) => setTimeout(r, 100));
  input.end();
  assert.equal(await ran, true);
  hole.close();

  const done = frames.find((f) => f.reply.type === 'done');
  assert.ok(done, JSON.stringify(frames.map((f) => f.reply)));
  const firstRecords = frames.find((f) => f.reply.type === 'records')!;
  // Priming (a timeout, then the rest stop after the second) and the warm-up exchange: about 3 timeouts of silence.
  assert.ok(firstRecords.at >= 2 * timeoutMs, `records at ${firstRecords.at} ms`);
  const before = frames.filter((f) => f.at < firstRecords.at && f.reply.type === 'progress');
  assert.ok(before.length >= 5, `${before.length} progress frames before the first record (${firstRecords.at.toFixed(0)} ms)`);
  assert.deepEqual(before[0]!.reply, { id: 'm', type: 'progress', done: 0, total: 2 }, 'the total is told at once');
  // No gap between frames longer than a few heartbeats, from the request to done.
  const gaps = frames.map((f, i) => f.at - (i ? frames[i - 1]!.at : 0));
  assert.ok(Math.max(...gaps) < 1000, `longest silence ${Math.max(...gaps).toFixed(0)} ms`);
  const records = frames.filter((f) => f.reply.type === 'records').flatMap((f) => f.reply.records as Array<{ ok: boolean; error: { code: string } }>);
  assert.deepEqual(records.map((r) => r.error?.code), ['timeout', 'timeout']);
});

test('a frame whose rest arrived while the process was stopped is read, not given up (its stall timer is overdue on waking)', { timeout: 20_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dnscost-native-'));
  const server = net.createServer();
  server.listen(join(dir, 'stdin.sock'));
  await once(server, 'listening');
  const client = net.connect(join(dir, 'stdin.sock'));
  const [input] = (await once(server, 'connection')) as [net.Socket];
  const output = new PassThrough();
  const replies = collectReplies(output);
  const ran = runNative({ input, output, stallMs: 100, log: () => undefined });
  // A request that fails at once by its own code (no frame error): a cancel of nothing.
  const frame = encodeFrame(JSON.stringify({ id: 'c', type: 'cancel', target: 'nothing' }));
  client.write(frame.subarray(0, 10));
  await new Promise((r) => setTimeout(r, 50));
  client.write(frame.subarray(10)); // in the kernel's buffer at once
  // The process "stopped" for 3 stall limits: on waking, the stall timer is overdue and the rest is waiting.
  const t = Date.now();
  while (Date.now() - t < 300) { /* stopped */ }
  for (let i = 0; i < 50 && replies.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(replies.map((r) => [r.id, r.code]), [['c', 'bad-request']]);
  client.end();
  assert.equal(await ran, true, 'no framing error');
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a framing error while a measurement runs: frame-too-large, the records so far, no `done` (nobody cancelled it), the host ends', { timeout: 20_000 }, async () => {
  const hole = createSocket('udp4');
  hole.on('message', () => undefined);
  hole.bind(0, '127.0.0.1');
  await once(hole, 'listening');
  const input = new PassThrough();
  const output = new PassThrough();
  const replies = collectReplies(output);
  const ran = runNative({ input, output, heartbeatMs: 100, log: () => undefined });
  input.write(encodeFrame(JSON.stringify({
    id: 'm', type: 'measure', hosts: ['a.test'], lab: true, timeoutMs: 300, modes: ['cold'], repeat: 50, qtypes: ['A'],
    resolvers: [{ id: 'void', name: 'Void', endpoints: [{ transport: 'udp', address: '127.0.0.1', port: hole.address().port }] }],
  })));
  for (let i = 0; i < 100 && !replies.some((r) => r.type === 'records'); i++) await new Promise((r) => setTimeout(r, 50));
  const header = Buffer.alloc(4);
  header.writeUInt32LE(1.2 * 1024 * 1024);
  input.write(header);
  assert.equal(await ran, false, 'a framing error ends the host');
  hole.close();
  const codes = replies.filter((r) => r.type === 'error').map((r) => [r.id, r.code]);
  assert.deepEqual(codes, [[null, 'frame-too-large']]);
  assert.ok(replies.some((r) => r.id === 'm' && r.type === 'records'));
  assert.equal(replies.filter((r) => r.type === 'done').length, 0, JSON.stringify(replies.at(-1)));
});

test('the current DNS is found again when the network changes (another Wi-Fi, a VPN up): the check asks the DNS of the network the person is on now', { timeout: 10_000 }, async () => {
  let network = 'home';
  let found = 0;
  const discover = {
    networkId: () => network,
    currentDns: async () => {
      found++;
      return { source: 'test', servers: [{ address: network === 'home' ? '192.168.1.1' : '10.8.0.1', port: 53 }], search: [], stub: null, encrypted: null, description: `${network} DNS` };
    },
  };
  const input = new PassThrough();
  const output = new PassThrough();
  const replies = collectReplies(output);
  const ran = runNative({ input, output, log: () => undefined, discover });
  const hello = async (id: string) => {
    input.write(encodeFrame(JSON.stringify({ id, type: 'hello' })));
    for (let i = 0; i < 50 && !replies.some((r) => r.id === id); i++) await new Promise((r) => setTimeout(r, 20));
    const reply = replies.find((r) => r.id === id);
    assert.ok(reply?.currentDns, JSON.stringify(replies));
    return reply as { currentDns?: { description: string } };
  };
  assert.equal((await hello('a')).currentDns?.description, 'home DNS');
  assert.equal((await hello('b')).currentDns?.description, 'home DNS');
  assert.equal(found, 1, 'the same network: found once');
  network = 'vpn';
  assert.equal((await hello('c')).currentDns?.description, 'vpn DNS');
  assert.equal(found, 2);
  input.end();
  assert.equal(await ran, true);
});
