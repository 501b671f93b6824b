// The CDN penalty's pricing (common/edges.ts): a resolver's edge against the browser's, times a new connection's
// set-up round trips; 0 for the browser's own address; unknown when a handshake failed.
import assert from 'node:assert/strict';
import { test } from 'vitest';
import * as v from 'valibot';
import { edgePenalty, edgeRows, pagePenalties, setupRoundTrips, type EdgeRow } from './edges.js';

const row = (host: string, port: 80 | 443, browserMs: number | null, resolvers: Array<[string, string, number | null]>): EdgeRow => ({
  host, port, browser: { address: '192.0.2.1', ms: browserMs }, resolvers: resolvers.map(([resolver, address, ms]) => ({ resolver, address, ms })),
});

test('a farther edge costs its extra round trip once per set-up round trip: two on https (TCP, TLS 1.3), one on http', () => {
  assert.deepEqual([setupRoundTrips(443), setupRoundTrips(80)], [2, 1]);
  const https = row('a.example', 443, 10, [['near', '192.0.2.1', 10.4], ['far', '192.0.2.9', 50]]);
  assert.equal(edgePenalty(https, 'far'), 80);
  assert.equal(edgePenalty(https, 'near'), 0, 'the browser\'s own address: nothing to price, whatever the noise');
  assert.equal(edgePenalty(row('b.example', 80, 10, [['far', '192.0.2.9', 50]]), 'far'), 40);
  assert.equal(edgePenalty(row('c.example', 443, null, [['far', '192.0.2.9', 50]]), 'far'), null, 'no handshake with the browser\'s server');
  assert.equal(edgePenalty(row('d.example', 443, 10, [['far', '192.0.2.9', null]]), 'far'), null);
  assert.equal(edgePenalty(https, 'other'), null, 'a resolver without an answer for the host');
  // A nearer edge is a gain, said as such.
  assert.equal(edgePenalty(row('e.example', 443, 30, [['closer', '192.0.2.7', 20]]), 'closer'), -20);
});

test('per resolver over a page: hosts checked, those sent elsewhere, the largest penalty', () => {
  const rows = [
    row('a.example', 443, 10, [['near', '192.0.2.1', 10], ['far', '192.0.2.9', 50]]),
    row('b.example', 80, 10, [['near', '192.0.2.1', 10], ['far', '192.0.2.8', 30]]),
  ];
  assert.deepEqual(pagePenalties(rows), [
    { resolver: 'near', hosts: 2, elsewhere: 0, maxMs: 0 },
    { resolver: 'far', hosts: 2, elsewhere: 2, maxMs: 80 },
  ]);
  assert.deepEqual(pagePenalties([]), []);
});

test('rows from the host are checked where they enter the extension: an address that is not one, a port the browser did not use', () => {
  assert.equal(v.is(edgeRows, [row('a.example', 443, 10, [['far', '192.0.2.9', 50]])]), true);
  assert.equal(v.is(edgeRows, [{ ...row('a.example', 443, 10, []), port: 8443 }]), false);
  assert.equal(v.is(edgeRows, [row('a.example', 443, 10, [['far', '<script>', 50]])]), false);
  assert.equal(v.is(edgeRows, [row('a.example', 443, -1, [])]), false);
});
