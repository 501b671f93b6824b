// The options page's pure parts: a custom endpoint's fields checked with one message per field, resolver list
// edits (defaults on/off in order, custom ones grouped by name), exclusions from typed text, the consent wording.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import { PUBLIC_RESOLVERS } from '../../../common/default-resolvers.js';
import { addCustomEndpoint, checkEndpointFields, consentDestinations, customResolverId, exclusionFromInput, toggleDefault, type EndpointFields } from './resolver-form.js';
import { testI18n } from '../i18n-fixtures.js';

const en = testI18n('en');

const base: EndpointFields = { name: 'Lab', transport: 'dot', address: '127.0.0.1', port: '8853', serverName: 'dns.test', path: '', method: 'POST' };

test('a valid DoT endpoint; defaults for port and DoH path', () => {
  assert.deepEqual(checkEndpointFields(base, en), { ok: true, name: 'Lab', endpoint: { transport: 'dot', address: '127.0.0.1', port: 8853, serverName: 'dns.test' } });
  const doh = checkEndpointFields({ ...base, transport: 'doh', port: '', address: '[2001:db8::53]', method: 'GET' }, en);
  assert.deepEqual(doh, { ok: true, name: 'Lab', endpoint: { transport: 'doh', address: '2001:db8::53', port: 443, serverName: 'dns.test', path: '/dns-query', method: 'GET' } });
  const udp = checkEndpointFields({ ...base, transport: 'udp', port: '', serverName: 'ignored' }, en);
  assert.deepEqual(udp, { ok: true, name: 'Lab', endpoint: { transport: 'udp', address: '127.0.0.1', port: 53 } });
  const doq = checkEndpointFields({ ...base, transport: 'doq', port: '' }, en);
  assert.deepEqual(doq, { ok: true, name: 'Lab', endpoint: { transport: 'doq', address: '127.0.0.1', port: 853, serverName: 'dns.test' } });
  const doh3 = checkEndpointFields({ ...base, transport: 'doh3', port: '', path: '/q' }, en);
  assert.deepEqual(doh3, { ok: true, name: 'Lab', endpoint: { transport: 'doh3', address: '127.0.0.1', port: 443, serverName: 'dns.test', path: '/q', method: 'POST' } });
});

test('each wrong field gets its own message', () => {
  const cases: Array<[Partial<EndpointFields>, keyof EndpointFields, RegExp]> = [
    [{ name: ' ' }, 'name', /name/],
    [{ address: 'dns.example' }, 'address', /not an IP address/],
    [{ address: '' }, 'address', /IP address/],
    [{ port: '70000' }, 'port', /1 to 65535/],
    [{ port: '8.5' }, 'port', /whole number/],
    [{ serverName: '' }, 'serverName', /certificate/],
    [{ serverName: 'bad name' }, 'serverName', /not a valid hostname/],
    [{ transport: 'doh', path: 'dns-query' }, 'path', /starts with/],
    [{ transport: 'dnscrypt' }, 'transport', /transport/],
  ];
  for (const [change, field, message] of cases) {
    const r = checkEndpointFields({ ...base, ...change }, en);
    assert.equal(r.ok, false, JSON.stringify(change));
    if (!r.ok) assert.match(r.errors[field] ?? '', message, JSON.stringify(change));
  }
});

test('resolver list edits', () => {
  const ep = { transport: 'udp' as const, address: '192.0.2.1', port: 53 };
  let list = addCustomEndpoint(PUBLIC_RESOLVERS, 'Office DNS', ep);
  assert.equal(list.at(-1)!.id, 'custom-office-dns');
  list = addCustomEndpoint(list, 'Office DNS', { ...ep, transport: 'tcp' });
  assert.equal(list.length, 4);
  assert.equal(list.at(-1)!.endpoints.length, 2, 'same name: one resolver, two endpoints');
  assert.equal(customResolverId('Office DNS', list), 'custom-office-dns-2');
  const noGoogle = toggleDefault(list, 'google', false);
  assert.deepEqual(noGoogle.map((r) => r.id), ['cloudflare', 'quad9', 'custom-office-dns']);
  assert.deepEqual(toggleDefault(noGoogle, 'google', true).map((r) => r.id), ['cloudflare', 'google', 'quad9', 'custom-office-dns']);
});

test('exclusions from hostnames or URLs; junk refused', () => {
  assert.deepEqual(exclusionFromInput(' Bank.Example. ', en), { ok: true, hostname: 'bank.example' });
  assert.deepEqual(exclusionFromInput('https://www.bank.example/login?x=1', en), { ok: true, hostname: 'www.bank.example' });
  for (const bad of ['', '<script>', '10.0.0.1', 'a b']) assert.equal(exclusionFromInput(bad, en).ok, false, bad);
});

test('consent wording names each resolver, its transports and whether anything goes in clear text', () => {
  const d = consentDestinations(PUBLIC_RESOLVERS, en);
  assert.deepEqual(d.map((x) => x.resolver), ['Cloudflare', 'Google Public DNS', 'Quad9']);
  assert.match(d[0]!.how, /plain DNS over UDP to 1\.1\.1\.1 port 53/);
  assert.match(d[0]!.how, /DNS over TLS to 1\.1\.1\.1 port 853 \(certificate name one\.one\.one\.one\)/);
  assert.equal(d[0]!.clearText, true);
  const dotOnly = consentDestinations([{ id: 'x', name: 'X', endpoints: [{ transport: 'dot', address: '192.0.2.1', port: 853, serverName: 'x.test' }] }], en);
  assert.equal(dotOnly[0]!.clearText, false);
});
