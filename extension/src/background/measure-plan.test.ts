// The plan's limits on what a page can make the host ask (common/name-caps.ts; issue 26 item 4).
import assert from 'node:assert/strict';
import { test } from 'vitest';
import type { ResolverSpec } from '../../../common/schema.js';
import { NAMES_PER_DOMAIN } from '../../../common/name-caps.js';
import { measurableHosts, planMeasurement } from './measure-plan.js';
import { host, pageRecord } from './test-fixtures.js';

const PUBLIC: ResolverSpec = { id: 'quad9', name: 'Quad9', endpoints: [{ transport: 'udp', address: '9.9.9.9', port: 53 }] };

test('a page does not decide how much is asked (common/name-caps.ts): no name whose every request failed; at most NAMES_PER_DOMAIN under one domain, the first needed', () => {
  const flood = Array.from({ length: 400 }, (_, i) => host(`r${i}.victim.com`, 100 + i));
  const page = pageRecord('p', [host('www.example.com', 0), host('gone.example.com', 5, { requests: 3, errors: 3 }), host('flaky.example.com', 6, { requests: 3, errors: 2 }), ...flood, host('late.example.net', 900)]);
  const plan = measurableHosts(page, [PUBLIC]);
  assert.deepEqual(plan.hosts.map((h) => h.name), ['www.example.com', 'flaky.example.com', ...flood.slice(0, NAMES_PER_DOMAIN).map((h) => h.name), 'late.example.net']);
  assert.deepEqual(plan.skipped.find((x) => x.name === 'gone.example.com'), { name: 'gone.example.com', reason: 'not-completed' });
  assert.equal(plan.skipped.filter((x) => x.reason === 'domain-cap').length, 400 - NAMES_PER_DOMAIN);
  // The plan's request carries only those names.
  assert.equal(planMeasurement(page, [PUBLIC])!.request.hosts.length, NAMES_PER_DOMAIN + 3);
});


test('the request replays each name when the browser asked for it (common/lookup-starts.ts), not at its first need', () => {
  const lookup = (startMs: number) => ({ startMs, endMs: startMs + 20, durationMs: 20, nextHopProtocol: 'h2' });
  // Resource Timing counts from timeOrigin, 4 ms after the page's start; b is hidden between two exposed names.
  const page = { ...pageRecord('p', [host('www.example.com', 0), host('a.example.net', 30, { lookup: lookup(86) }), host('b.example.net', 30), host('c.example.net', 30, { lookup: lookup(146) })]), startedAt: 1000, timeOrigin: 1004 };
  const offsets = planMeasurement(page, [PUBLIC])!.request.hosts.map((h) => (typeof h === 'string' ? [h] : [h.name, h.firstNeededMs]));
  assert.deepEqual(offsets, [['www.example.com', 0], ['a.example.net', 90], ['b.example.net', 120], ['c.example.net', 150]]);
});
