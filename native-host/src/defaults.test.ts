import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'vitest';
import { CURRENT_DNS_ID, LOCAL_STUB_ID } from '../../common/default-resolvers.js';
import { isResolverSpec } from '../../common/schema.js';
import { TRANSPORT_IDS } from '../../common/transports.js';
import { discoverCurrentDns, type DiscoverDeps } from './current-dns/discover.js';
import { defaultResolvers, PUBLIC_RESOLVERS } from './defaults.js';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

/** A Linux machine whose only file is this resolv.conf. */
const withResolvConf = (text: string | null): DiscoverDeps => ({
  platform: 'linux',
  read: (p) => (p === '/etc/resolv.conf' ? text : null),
  list: () => [],
  run: async () => null,
  processes: () => [],
  nodeServers: () => [],
});

test('resolv.conf nameservers: in order, once, without comments; an IPv6 link-local one keeps its zone (it is unreachable without it)', async () => {
  assert.deepEqual((await discoverCurrentDns(withResolvConf(fixture('resolv-systemd.conf')))).servers.map((s) => s.address), ['127.0.0.53']);
  assert.deepEqual((await discoverCurrentDns(withResolvConf(fixture('resolv-multi.conf')))).servers.map((s) => s.address), ['10.0.0.2', 'fe80::1%eth0', '2001:db8::53']);
  assert.deepEqual((await discoverCurrentDns(withResolvConf(''))).servers, []);
});

test('the current DNS is Do53 over UDP and TCP to each nameserver, valid as a request; none when unreadable or empty', async () => {
  const current = await discoverCurrentDns(withResolvConf(fixture('resolv-multi.conf')));
  const [sys] = defaultResolvers(current);
  assert.equal(sys!.id, CURRENT_DNS_ID);
  assert.equal(isResolverSpec(sys), true);
  assert.deepEqual(
    sys!.endpoints.map((e) => `${e.transport} ${e.address}:${e.port}`),
    ['udp 10.0.0.2:53', 'tcp 10.0.0.2:53', 'udp fe80::1%eth0:53', 'tcp fe80::1%eth0:53', 'udp 2001:db8::53:53', 'tcp 2001:db8::53:53'],
  );
  assert.deepEqual(defaultResolvers(await discoverCurrentDns(withResolvConf(null))).map((r) => r.id), ['cloudflare', 'google', 'quad9']);
  assert.deepEqual(defaultResolvers(await discoverCurrentDns(withResolvConf('# nothing\n'))).map((r) => r.id), ['cloudflare', 'google', 'quad9']);
});

test('public defaults are valid resolver specs, each with the transports it offers (common/default-resolvers.test.ts) and a TLS name', async () => {
  assert.deepEqual(PUBLIC_RESOLVERS.map((r) => r.id), ['cloudflare', 'google', 'quad9']);
  for (const r of PUBLIC_RESOLVERS) {
    assert.equal(isResolverSpec(r), true, r.id);
    // Every transport but DoQ and DoH3 from the ones that offer them only, and Quad9's ended DoH over HTTP/1.1.
    const offered: string[] = { cloudflare: ['doh3'], google: [], quad9: ['doq', 'doh3'] }[r.id as 'cloudflare' | 'google' | 'quad9'];
    assert.deepEqual(r.endpoints.map((e) => e.transport), TRANSPORT_IDS.filter((t) => (t !== 'doq' && t !== 'doh3' && !(r.id === 'quad9' && t === 'doh1')) || offered.includes(t)));
    for (const e of r.endpoints) if (e.transport !== 'udp' && e.transport !== 'tcp') assert.ok(e.serverName, `${r.id} ${e.transport}`);
  }
  // Behind systemd-resolved whose upstreams cannot be read, the stub is the current DNS and is also listed as the stub.
  const all = defaultResolvers(await discoverCurrentDns(withResolvConf(fixture('resolv-systemd.conf'))));
  assert.deepEqual(all.map((r) => r.id), [CURRENT_DNS_ID, LOCAL_STUB_ID, 'cloudflare', 'google', 'quad9']);
  assert.deepEqual(defaultResolvers(null).map((r) => r.id), ['cloudflare', 'google', 'quad9']);
});
