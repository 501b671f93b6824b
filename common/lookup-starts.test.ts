import assert from 'node:assert/strict';
import { test } from 'vitest';
import { lookupStarts, MAX_REPLAY_AT_MS, replayAt, type LookupStartsInput } from './lookup-starts.js';

type Host = LookupStartsInput['hosts'][number];
const host = (name: string, firstNeededMs: number, askedMs: number | null = null, types: Record<string, number> = { image: 1 }): Host => ({
  name, kind: 'name', firstNeededMs, types,
  lookup: askedMs === null ? null : { startMs: askedMs, endMs: askedMs + 20, durationMs: 20, nextHopProtocol: 'http/1.1' },
});
const page = (hosts: Host[], timeOrigin: number | null = 1000): LookupStartsInput => ({ host: 'doc.test', startedAt: 1000, timeOrigin, hosts: [host('doc.test', 0, null, { main_frame: 1 }), ...hosts] });

test('exposed lookups start where Resource Timing says, counted from the page start, not timeOrigin', () => {
  // timeOrigin 3 ms after the page's start: a lookup at 40 ms from timeOrigin is at 43 from the page's start.
  const starts = lookupStarts(page([host('a.test', 30, 40), host('b.test', 30, 90)], 1003));
  assert.deepEqual([...starts], [['doc.test', 0], ['a.test', 43], ['b.test', 93]]);
});

test('hidden lookups go between the exposed ones around them, by rank in first-need order', () => {
  const starts = lookupStarts(page([
    host('e0.test', 50, 60), host('h1.test', 50), host('h2.test', 50), host('e3.test', 50, 120),
  ]));
  assert.equal(starts.get('e0.test'), 60);
  assert.equal(starts.get('h1.test'), 80);
  assert.equal(starts.get('h2.test'), 100);
  assert.equal(starts.get('e3.test'), 120);
});

test('at either end a hidden lookup takes its neighbour\'s delay; never before its own first need; none exposed: first need', () => {
  const starts = lookupStarts(page([host('h0.test', 10), host('e1.test', 20, 50), host('h2.test', 200)]));
  assert.equal(starts.get('h0.test'), 40, 'before the first exposed one: 10 + its 30 ms delay');
  assert.equal(starts.get('h2.test'), 230, 'after the last: 200 + 30');
  // Interpolation that would place a lookup before its first need waits for the need.
  const late = lookupStarts(page([host('e0.test', 0, 10), host('h1.test', 500), host('e2.test', 500, 520)]));
  assert.equal(late.get('h1.test'), 500);
  assert.deepEqual([...lookupStarts(page([host('a.test', 12.4), host('b.test', 70.6)]))], [['doc.test', 0], ['a.test', 12], ['b.test', 71]]);
  // No timing report (timeOrigin unknown): first need.
  assert.equal(lookupStarts(page([host('a.test', 12, 300)], null)).get('a.test'), 12);
});

test('the document and its navigation\'s hosts (redirect legs) start at first need; IP literals are not looked up', () => {
  const starts = lookupStarts(page([host('leg.test', 5, null, { main_frame: 1 }), host('e.test', 100, 400), { ...host('192.0.2.9', 50), kind: 'ip' }]));
  assert.equal(starts.get('doc.test'), 0);
  assert.equal(starts.get('leg.test'), 5, 'the redirect leg is not moved by the subresources\' delay');
  assert.equal(starts.has('192.0.2.9'), false);
});

test('replayAt rounds and clamps', () => {
  assert.equal(replayAt(-3), 0);
  assert.equal(replayAt(2.5), 3);
  assert.equal(replayAt(MAX_REPLAY_AT_MS + 1), MAX_REPLAY_AT_MS);
  assert.equal(replayAt(Number.NaN), 0);
});
