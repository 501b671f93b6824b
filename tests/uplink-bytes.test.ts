// bench/uplink-bytes.ts: which path a captured upstream frame belongs to, and what each load sent in its window.
import assert from 'node:assert/strict';
import { test } from 'vitest';
import { parseFrames, pathOf, visitBytes, type Frame } from '../bench/uplink-bytes.js';
import type { ValidationRun } from '../bench/validate/types.js';

const frame = (dst: string, port: number, udp: boolean, len = 100, t = 0): Frame => ({ t, dst, port, udp, len });

test('a frame belongs to the page (port 80, or the HAR site address) or to a DNS path by its port and protocol', () => {
  assert.equal(pathOf(frame('192.0.2.2', 80, false)), 'page');
  assert.equal(pathOf(frame('192.0.2.3', 443, false)), 'page');
  assert.equal(pathOf(frame('192.0.2.2', 53, true)), 'do53');
  assert.equal(pathOf(frame('192.0.2.2', 853, false)), 'dot');
  assert.equal(pathOf(frame('192.0.2.2', 853, true)), 'doq');
  assert.equal(pathOf(frame('192.0.2.2', 443, false)), 'doh');
  assert.equal(pathOf(frame('192.0.2.2', 8530, true)), 'other');
});

test('only frames the lab client sent are read, with their protocol from which port field is set', () => {
  const tsv = ['1.5\t192.0.2.1\t192.0.2.2\t853\t\t120', '1.6\t192.0.2.2\t192.0.2.1\t\t853\t90', '1.7\t192.0.2.1\t192.0.2.2\t\t853\t110', ''].join('\n');
  assert.deepEqual(parseFrames(tsv), [
    { t: 1500, dst: '192.0.2.2', udp: false, port: 853, len: 120 },
    { t: 1700, dst: '192.0.2.2', udp: true, port: 853, len: 110 },
  ]);
});

test('a load counts the frames between its navigation (its end less its onLoad) and its end, by path', () => {
  const run = {
    profiles: [{ profile: { name: 'dsl' }, visits: [{ browser: 'chromium', page: '30', scenario: 'cold', transport: 'dot', onLoad: 1000, endedAt: 5000, pageRecord: { hosts: [{ lookup: { endMs: 10 }, completedMs: 110 }] } }] }],
  } as unknown as ValidationRun;
  const frames = [frame('192.0.2.2', 853, false, 100, 3999), frame('192.0.2.2', 853, false, 200, 4000), frame('192.0.2.2', 80, false, 300, 4500), frame('192.0.2.2', 853, false, 400, 5001)];
  const [row] = visitBytes(run, frames);
  assert.deepEqual(row!.bytes, { dot: 200, page: 300 });
  assert.deepEqual(row!.fetch, [100]);
  assert.equal(row!.key, 'dsl chromium page 30 cold');
});

test("busy bytes: a DNS path's bytes in 50 ms bins where the page's own traffic already used half the uplink", () => {
  const run = (upMbit: number | null) => ({
    profiles: [{ profile: { name: 'dsl', upMbit }, visits: [{ browser: 'chromium', page: '30', scenario: 'cold', transport: 'dot', onLoad: 1000, endedAt: 5000 }] }],
  }) as unknown as ValidationRun;
  // 0.8 Mbit/s carries 5,000 bytes in 50 ms: 3,000 of the page's beside 200 of DoT is busy, 100 beside 300 is not.
  const frames = [frame('192.0.2.2', 80, false, 3000, 4100), frame('192.0.2.2', 853, false, 200, 4110), frame('192.0.2.2', 80, false, 100, 4300), frame('192.0.2.2', 853, false, 300, 4310)];
  assert.equal(visitBytes(run(0.8), frames)[0]!.busyDns, 200);
  assert.equal(visitBytes(run(0.8), frames.slice(1))[0]!.busyDns, 0);
  assert.equal(visitBytes(run(null), frames)[0]!.busyDns, null);
});
