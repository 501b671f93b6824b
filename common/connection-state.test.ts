import assert from 'node:assert/strict';
import { test } from 'vitest';
import { expectedMode, HOLDERS, holderOf } from './connection-state.js';

test('who holds the connection: the browser for DoH, the machine\'s stub for DoT, dnsproxy for DoQ; nobody for Do53', () => {
  assert.equal(holderOf('doh', 'chromium'), 'chromium-doh');
  assert.equal(holderOf('doh', 'firefox'), 'firefox-trr');
  assert.equal(holderOf('doh3', null), 'chromium-doh');
  assert.equal(holderOf('dot', 'firefox'), 'systemd-resolved', "Linux's default DoT path");
  assert.equal(holderOf('dot', 'chromium', 'unbound'), 'unbound');
  assert.equal(holderOf('dot', 'chromium', 'stubby'), 'stubby');
  assert.equal(holderOf('doq', 'chromium'), 'dnsproxy');
  assert.equal(holderOf('udp', 'chromium'), null);
  assert.equal(holderOf('tcp', 'chromium'), null);
});

test('the expected state: warm when the holder (and the server, where known) keeps the connection as long as the browser was idle', () => {
  assert.equal(expectedMode(null, 'firefox-trr'), 'cold', 'the first page since the browser started');
  assert.equal(expectedMode(5_000, 'stubby'), 'warm');
  assert.equal(expectedMode(HOLDERS.stubby.idleMs, 'stubby'), 'warm', 'up to the limit');
  assert.equal(expectedMode(HOLDERS.stubby.idleMs + 1, 'stubby'), 'cold');
  assert.equal(expectedMode(59_000, 'unbound'), 'warm');
  assert.equal(expectedMode(61_000, 'unbound'), 'cold');
  assert.equal(expectedMode(3_000_000, 'firefox-trr'), 'warm');
  assert.equal(expectedMode(3_500_000, 'firefox-trr'), 'cold');
  assert.equal(expectedMode(86_400_000, 'chromium-doh'), 'warm', 'no limit of its own');
  assert.equal(expectedMode(30_000, 'chromium-doh', 10_000), 'cold', 'a server that closes idle connections after 10 s');
  assert.equal(expectedMode(1_000, null), 'cold');
  assert.equal(expectedMode(30_000, 'dnsproxy', 10_000), 'warm', 'dnsproxy pings: a server limit does not end its connection');
});
