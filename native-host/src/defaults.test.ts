import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'vitest';
import { isResolverSpec } from '../../common/schema.js';
import { TRANSPORT_IDS } from '../../common/transports.js';
import { defaultResolvers, parseResolvConf, PUBLIC_RESOLVERS, systemResolver } from './defaults.js';

const fixture = (name: string): string => new URL(`./fixtures/${name}`, import.meta.url).pathname;

test('resolv.conf parsing keeps nameserver IPs in order, once, without comments or zone ids', () => {
  assert.deepEqual(parseResolvConf(readFileSync(fixture('resolv-systemd.conf'), 'utf8')), ['127.0.0.53']);
  assert.deepEqual(parseResolvConf(readFileSync(fixture('resolv-multi.conf'), 'utf8')), ['10.0.0.2', 'fe80::1', '2001:db8::53']);
  assert.deepEqual(parseResolvConf(''), []);
});

test('the system resolver is Do53 over UDP and TCP to each nameserver; none when unreadable or empty', () => {
  const sys = systemResolver(fixture('resolv-multi.conf'))!;
  assert.equal(sys.id, 'system');
  assert.deepEqual(
    sys.endpoints.map((e) => `${e.transport} ${e.address}:${e.port}`),
    ['udp 10.0.0.2:53', 'tcp 10.0.0.2:53', 'udp fe80::1:53', 'tcp fe80::1:53', 'udp 2001:db8::53:53', 'tcp 2001:db8::53:53'],
  );
  assert.equal(systemResolver('/nonexistent/resolv.conf'), null);
  assert.equal(systemResolver('x', () => '# nothing\n'), null);
});

test('public defaults are valid resolver specs with every TCP-based transport and a TLS name', () => {
  assert.deepEqual(PUBLIC_RESOLVERS.map((r) => r.id), ['cloudflare', 'google', 'quad9']);
  for (const r of PUBLIC_RESOLVERS) {
    assert.equal(isResolverSpec(r), true, r.id);
    // No DoQ/DoH3 defaults: none of the three offers DoQ, and DoH3 is not measured live here before it is listed.
    assert.deepEqual(r.endpoints.map((e) => e.transport), TRANSPORT_IDS.filter((t) => t !== 'doq' && t !== 'doh3'));
    for (const e of r.endpoints) if (e.transport !== 'udp' && e.transport !== 'tcp') assert.ok(e.serverName, `${r.id} ${e.transport}`);
  }
  const all = defaultResolvers(systemResolver(fixture('resolv-systemd.conf')));
  assert.deepEqual(all.map((r) => r.id), ['system', 'cloudflare', 'google', 'quad9']);
  assert.deepEqual(defaultResolvers(null).map((r) => r.id), ['cloudflare', 'google', 'quad9']);
});
