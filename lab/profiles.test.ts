// The network profiles: presets by name, custom ones from `rtt=…,jitter=…,loss=…,down=…,up=…`, and clear errors.
import assert from 'node:assert/strict';
import { test } from 'vitest';
import { parseProfile, parseProfileList, PROFILES } from './profiles.js';

test('a preset name gives the preset; a comma list gives each', () => {
  assert.deepEqual(parseProfile('fiber'), PROFILES.fiber);
  assert.deepEqual(parseProfileList('fiber, dsl,4g').map((p) => p.name), ['fiber', 'dsl', '4g']);
  assert.throws(() => parseProfileList('fiber,nope'), /unknown network profile "nope"/);
});

test('a custom spec sets the fields it names; the rest are zero and unshaped', () => {
  assert.deepEqual(parseProfile('rtt=50,jitter=2,loss=1.5,down=10,up=2.5'), {
    name: 'rtt=50,jitter=2,loss=1.5,down=10,up=2.5', rttMs: 50, jitterMs: 2, lossPct: 1.5, downMbit: 10, upMbit: 2.5, source: 'custom',
  });
  assert.deepEqual(parseProfile('loss=2, rtt=80'), { name: 'loss=2, rtt=80', rttMs: 80, jitterMs: 0, lossPct: 2, downMbit: null, upMbit: null, source: 'custom' });
  assert.equal(parseProfileList('rtt=30,loss=1').length, 1, 'a spec is one profile, commas and all');
});

test('a bad custom spec says what is wrong', () => {
  assert.throws(() => parseProfile('rtt=50,delay=3'), /unknown key "delay"/);
  assert.throws(() => parseProfile('rtt=fast'), /is not KEY=NUMBER/);
  assert.throws(() => parseProfile('rtt=-5'), /is not KEY=NUMBER/);
  assert.throws(() => parseProfile('rtt=5,rtt=6'), /given twice/);
  assert.throws(() => parseProfile('loss=100'), /below 100/);
  assert.throws(() => parseProfile('down=0'), /above 0/);
});
