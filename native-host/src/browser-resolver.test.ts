import assert from 'node:assert/strict';
import { test } from 'vitest';
import type { BrowserDoh } from '../../common/schema.js';
import { CODES, DnscostError } from '../../common/errors.js';
import { browserDohEndpoint, browserEncrypts, caFor, refuseCleartext, withEndpoint, type Bootstrap } from './browser-resolver.js';

const firefox: BrowserDoh = { browser: 'firefox', product: 'Firefox', mode: 'secure', active: true, templates: ['https://doh.example/dns-query'], source: 'prefs.js', setBy: 'settings', fallback: false, upgradedFrom: null };
const asked: string[] = [];
const bootstrap: Bootstrap = async (host) => {
  asked.push(host);
  return host === 'doh.example' ? '192.0.2.80' : null;
};

test("the browser's DoH server as an endpoint: its address from the URL, Chromium's upgrade table, a public resolver's or the system's bootstrap", async () => {
  asked.length = 0;
  assert.deepEqual(await browserDohEndpoint(firefox, bootstrap), { transport: 'doh', address: '192.0.2.80', port: 443, serverName: 'doh.example', path: '/dns-query', method: 'POST' });
  assert.deepEqual(asked, ['doh.example'], 'a name no table knows: the system resolver, as the browser bootstraps');
  // Chromium: GET where the template has {?dns}; a port and a path of its own; an IP literal needs no lookup.
  const literal = await browserDohEndpoint({ ...firefox, browser: 'chromium', templates: ['https://[2001:db8::53]:8443/q{?dns}'] }, bootstrap);
  assert.deepEqual(literal, { transport: 'doh', address: '2001:db8::53', port: 8443, serverName: '2001:db8::53', path: '/q', method: 'GET' });
  // An automatic upgrade from a provider's plain address: that address.
  const upgraded = await browserDohEndpoint({ ...firefox, browser: 'chromium', mode: 'automatic', templates: ['https://chrome.cloudflare-dns.com/dns-query'], upgradedFrom: '1.0.0.1' }, bootstrap);
  assert.equal(upgraded?.address, '1.0.0.1');
  assert.equal(upgraded?.method, 'POST', 'no {?dns}: POST');
  // A public resolver dnscost knows by its server name.
  assert.equal((await browserDohEndpoint({ ...firefox, templates: ['https://dns.google/dns-query{?dns}'] }, bootstrap))?.address, '8.8.8.8');
  assert.equal(asked.length, 1, 'no lookup for a literal, an upgrade or a known server');
  // Not known: no template (the browser's own default is not guessed), not https, a template variable left, no address.
  for (const templates of [[], ['http://doh.example/dns-query'], ['https://doh.example/{path}'], ['https://nowhere.example/dns-query'], ['not a url']]) {
    assert.equal(await browserDohEndpoint({ ...firefox, templates }, bootstrap), null, JSON.stringify(templates));
  }
});

test('only an active DoH encrypts; the endpoint is found for it alone, and a failing discovery is no DoH', async () => {
  assert.equal(browserEncrypts(firefox), true);
  assert.equal(browserEncrypts({ ...firefox, mode: 'automatic', active: false }), false);
  assert.equal(browserEncrypts(null), false);
  assert.equal((await withEndpoint(Promise.resolve(firefox), bootstrap))?.endpoint?.address, '192.0.2.80');
  assert.equal((await withEndpoint(Promise.resolve({ ...firefox, active: false }), bootstrap))?.endpoint, undefined);
  assert.equal(await withEndpoint(Promise.reject(new Error('unreadable')), bootstrap), null);
});

test('plain DNS is refused while the browser encrypts, whoever the endpoint belongs to; the CA follows the endpoint', () => {
  const doh = { transport: 'doh' as const, address: '192.0.2.80', port: 443 };
  assert.doesNotThrow(() => refuseCleartext({ resolvers: [{ id: 'b', name: 'b', endpoints: [doh, { transport: 'dot', address: '192.0.2.9', port: 853 }] }] }));
  for (const transport of ['udp', 'tcp'] as const) {
    assert.throws(
      () => refuseCleartext({ resolvers: [{ id: 'b', name: 'b', endpoints: [doh] }, { id: 'system', name: 's', endpoints: [{ transport, address: '192.168.1.1', port: 53 }] }] }),
      (e: unknown) => e instanceof DnscostError && e.code === 'cleartext-refused' && e.message.includes(`system ${transport} 192.168.1.1`),
    );
  }
  assert.equal(caFor({ resolvers: [{ id: 'x', name: 'x', endpoints: [doh], ca: 'PEM' }] }, doh), 'PEM');
  assert.equal(caFor({ resolvers: [{ id: 'x', name: 'x', endpoints: [{ ...doh, port: 8443 }], ca: 'PEM' }] }, doh), undefined);
});

test('a browser behind a proxy: a plain endpoint is refused, naming where the proxy was found', () => {
  const chromium: BrowserDoh = { browser: 'chromium', product: 'Chromium', mode: 'automatic', active: false, templates: [], source: 'default', setBy: 'default', fallback: true, upgradedFrom: null, proxy: '/etc/chromium/policies/managed/p.json (ProxyMode fixed_servers)' };
  assert.throws(
    () => refuseCleartext({ resolvers: [{ id: 'system', name: 's', endpoints: [{ transport: 'udp', address: '192.168.1.1', port: 53 }] }] }, chromium),
    (e: DnscostError) => e.code === CODES.CLEARTEXT_REFUSED && /through a proxy \(\/etc\/chromium\/policies\/managed\/p\.json/.test(e.message),
  );
});
