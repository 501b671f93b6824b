import assert from 'node:assert/strict';
import { test } from 'vitest';
import { encodeFrame, FrameDecoder } from './framing.js';

const roundTrip = (body: string): void => {
  const frame = encodeFrame(body);
  // The declared length must equal the bytes written after it.
  assert.equal(frame.readUInt32LE(0), frame.length - 4);
  const events = new FrameDecoder(1 << 20).push(frame);
  assert.equal(events.length, 1);
  assert.equal(events[0]!.kind, 'frame');
  assert.equal((events[0] as { body: Buffer }).body.toString('utf8'), body);
};

test('frames round-trip, including multi-byte UTF-8 and empty bodies', () => {
  for (const body of ['{}', '{"id":1,"type":"hello"}', '{"name":"bücher ✓ 日本"}', '', 'x'.repeat(70_000)]) roundTrip(body);
});

test('a frame split across any chunk boundary decodes the same', () => {
  const frames = Buffer.concat([encodeFrame('{"a":1}'), encodeFrame('{"b":22}'), encodeFrame('{"c":333}')]);
  for (let size = 1; size <= frames.length; size++) {
    const d = new FrameDecoder(1024);
    const bodies: string[] = [];
    for (let i = 0; i < frames.length; i += size) {
      for (const e of d.push(frames.subarray(i, i + size))) if (e.kind === 'frame') bodies.push(e.body.toString());
    }
    assert.deepEqual(bodies, ['{"a":1}', '{"b":22}', '{"c":333}'], `chunk size ${size}`);
    assert.equal(d.pending, false);
  }
});

test('an oversized frame is skipped without being held, and the next frame still decodes', () => {
  const d = new FrameDecoder(16);
  const header = Buffer.alloc(4);
  header.writeUInt32LE(1_000_000);
  const events = d.push(header);
  assert.deepEqual(events, [{ kind: 'too-large', length: 1_000_000 }]);
  assert.equal(d.skippingBytes, 1_000_000);
  for (let i = 0; i < 100; i++) assert.deepEqual(d.push(Buffer.alloc(10_000)), []);
  assert.equal(d.skippingBytes, 0);
  const next = d.push(encodeFrame('{"ok":1}'));
  assert.equal(next.length, 1);
  assert.equal(next[0]!.kind, 'frame');
});

test('abandon reports a truncated frame and resets', () => {
  const d = new FrameDecoder(1024);
  d.push(encodeFrame('{"abc":1}').subarray(0, 7));
  assert.equal(d.pending, true);
  assert.deepEqual(d.abandon(), { kind: 'truncated', expected: 9, received: 3 });
  assert.equal(d.pending, false);
  assert.equal(d.abandon(), null);
  d.push(Buffer.from([1, 0]));
  assert.deepEqual(d.abandon(), { kind: 'truncated', expected: 4, received: 2 });
});
