import assert from 'node:assert/strict';
import { test } from 'vitest';
import { currentPresets, PUBLIC_RESOLVERS, publicResolvers } from './default-resolvers.js';
import { isResolverSpec } from './schema.js';

test('the public presets: each transport its resolver offers today, at IPv4 or IPv6 addresses, every one a valid spec', () => {
  const transports = (id: string, family: 4 | 6 = 4) => publicResolvers(family).find((r) => r.id === id)!.endpoints.map((e) => e.transport);
  assert.deepEqual(transports('cloudflare'), ['udp', 'tcp', 'dot', 'doh', 'doh1', 'doh3']);
  assert.deepEqual(transports('google'), ['udp', 'tcp', 'dot', 'doh', 'doh1']);
  assert.deepEqual(transports('quad9'), ['udp', 'tcp', 'dot', 'doh', 'doq', 'doh3'], 'no DoH over HTTP/1.1 since 2025-12-15');
  assert.deepEqual(PUBLIC_RESOLVERS, publicResolvers(4));
  const v6 = publicResolvers(6);
  assert.deepEqual(v6.map((r) => [...new Set(r.endpoints.map((e) => e.address))]), [['2606:4700:4700::1111'], ['2001:4860:4860::8888'], ['2620:fe::fe']]);
  for (const r of [...PUBLIC_RESOLVERS, ...v6]) {
    assert.ok(isResolverSpec(r), r.id);
    for (const e of r.endpoints) if (e.transport !== 'udp' && e.transport !== 'tcp') assert.ok(e.serverName, `${r.id} ${e.transport} names its server`);
  }
  const quad9doq = v6.find((r) => r.id === 'quad9')!.endpoints.find((e) => e.transport === 'doq')!;
  assert.deepEqual([quad9doq.serverName, quad9doq.port], ['dns.quad9.net', 853]);
});

test('currentPresets: public ids take this version\'s preset in the machine\'s address family; others stay', () => {
  const own = { id: 'office', name: 'Office', endpoints: [{ transport: 'udp' as const, address: '192.0.2.1', port: 53 }] };
  const old = { id: 'google', name: 'Google (old copy)', endpoints: [] };
  assert.deepEqual(currentPresets([old, own], false), [publicResolvers(4)[1], own]);
  assert.deepEqual(currentPresets([old, own], true), [publicResolvers(6)[1], own]);
  assert.deepEqual(currentPresets([old], null), [publicResolvers(4)[1]]);
});
