// The host's check of the name-privacy rule with a fake current DNS: what is kept back and why, and that the current
// DNS is asked only for names bound for a global resolver.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import type { CurrentDns, MeasureRequest } from '../../common/schema.js';
import { currentDnsLookup, withholdPrivateNames } from './private-names.js';
import { NAMES_PER_DOMAIN } from '../../common/name-caps.js';

const dns: CurrentDns = { source: 'test', servers: [{ address: '10.0.0.53', port: 53 }], search: ['corp.example.com'], stub: null, encrypted: null, description: 'the office DNS' };
const resolver = (address: string) => ({ id: address, name: address, endpoints: [{ transport: 'udp' as const, address, port: 53 }] });
const request = (hosts: MeasureRequest['hosts'], ...addresses: string[]): MeasureRequest => ({ id: 'r', type: 'measure', hosts, resolvers: addresses.map(resolver) });

test('names bound for a global resolver: the current DNS is asked first; private answers, no answer, search domains stay home', async () => {
  const asked: string[] = [];
  const answers: Record<string, string[] | null> = { 'jira.example.com': ['10.0.0.5'], 'www.example.com': ['93.184.216.34'], 'gone.example.com': [], 'slow.example.com': null, 'v6.example.com': ['fd00::5'] };
  const lookup = async (n: string) => {
    asked.push(n);
    return n in answers ? answers[n]! : [];
  };
  const hosts = ['www.example.com', 'jira.example.com', 'gone.example.com', 'slow.example.com', 'v6.example.com', 'wiki.corp.example.com', 'a.test', { name: 'nas.example.net', reached: ['192.168.1.20'] }];
  const { request: kept, withheld } = await withholdPrivateNames(request(hosts, '1.1.1.1'), dns, lookup);
  assert.deepEqual(kept.hosts, ['www.example.com', 'gone.example.com']);
  assert.deepEqual(Object.fromEntries(withheld.map((w) => [w.name, w.reason])), {
    'jira.example.com': 'split-horizon', 'slow.example.com': 'split-horizon', 'v6.example.com': 'split-horizon',
    'wiki.corp.example.com': 'search-domain', 'a.test': 'special-use', 'nas.example.net': 'reached-non-global',
  });
  assert.deepEqual(asked.sort(), ['gone.example.com', 'jira.example.com', 'slow.example.com', 'v6.example.com', 'www.example.com'], 'only names not already kept back are asked');
});

test('resolvers on the person\'s network: private names go, the current DNS is not asked; special-use names only with the lab setting', async () => {
  let asked = 0;
  const lookup = async () => {
    asked++;
    return ['10.0.0.5'];
  };
  const hosts = ['jira.example.com', 'wiki.corp.example.com', 'fileserver', 'a.test', 'x.onion'];
  const office = await withholdPrivateNames(request(hosts, '10.0.0.53', '127.0.0.1'), dns, lookup);
  assert.deepEqual(office.request.hosts, ['jira.example.com', 'wiki.corp.example.com', 'fileserver']);
  assert.equal(asked, 0);
  const lab = await withholdPrivateNames({ ...request(hosts, '127.0.0.1'), lab: true }, dns, lookup);
  assert.deepEqual(lab.request.hosts, ['jira.example.com', 'wiki.corp.example.com', 'fileserver', 'a.test']);
  assert.deepEqual(lab.withheld, [{ name: 'x.onion', reason: 'onion' }]);
  // One global resolver among them keeps every private name from the whole request; no current DNS: nothing leaves.
  const mixed = await withholdPrivateNames(request(['www.example.com', 'fileserver'], '127.0.0.1', '9.9.9.9'), null, null);
  assert.deepEqual(mixed.request.hosts, []);
  assert.deepEqual(mixed.withheld.map((w) => w.reason).sort(), ['single-label', 'split-horizon']);
});

test('a page cannot decide how much the host asks: the caps apply before the split-horizon check and the resolvers, even if the plan sent more', async () => {
  const asked: string[] = [];
  const lookup = async (n: string) => {
    asked.push(n);
    return ['93.184.216.34'];
  };
  const flood = Array.from({ length: 500 }, (_, i) => ({ name: `r${i}.victim.com`, firstNeededMs: 500 - i }));
  const { request: kept, withheld } = await withholdPrivateNames(request([{ name: 'www.site.com', firstNeededMs: 0 }, ...flood], '1.1.1.1'), dns, lookup);
  const names = kept.hosts.map((h) => (typeof h === 'string' ? h : h.name));
  // The first needed are kept: the flood's last names (needed earliest), and the page's own name.
  assert.deepEqual(names.sort(), ['www.site.com', ...Array.from({ length: NAMES_PER_DOMAIN }, (_, i) => `r${499 - i}.victim.com`)].sort());
  assert.equal(withheld.filter((w) => w.reason === 'domain-cap').length, 500 - NAMES_PER_DOMAIN);
  assert.equal(asked.length, 1 + NAMES_PER_DOMAIN, 'the current DNS is asked only the names within the caps');
});

test('split horizon fails closed: a lost A beside a NODATA AAAA is no answer (the name stays home), not "no private address"', { timeout: 10_000 }, async (t) => {
  // A current DNS that answers AAAA with NODATA and never answers A.
  const dgram = await import('node:dgram');
  const dnsPacket = (await import('dns-packet')).default;
  const server = dgram.createSocket('udp4');
  t.onTestFinished(() => void server.close());
  server.on('message', (msg, rinfo) => {
    const q = dnsPacket.decode(msg);
    if (q.questions?.[0]?.type !== 'AAAA') return;
    server.send(dnsPacket.encode({ type: 'response', id: q.id, flags: dnsPacket.RECURSION_AVAILABLE, questions: q.questions, answers: [] }), rinfo.port, rinfo.address);
  });
  await new Promise<void>((r) => server.bind(0, '127.0.0.1', r));
  const lossy: CurrentDns = { ...dns, servers: [{ address: '127.0.0.1', port: server.address().port }] };
  assert.equal(await currentDnsLookup(lossy)('jira.example.com'), null);
  const { withheld } = await withholdPrivateNames(request(['jira.example.com'], '1.1.1.1'), lossy, currentDnsLookup(lossy));
  assert.deepEqual(withheld, [{ name: 'jira.example.com', reason: 'split-horizon' }]);
});
