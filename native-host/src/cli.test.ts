import assert from 'node:assert/strict';
import { test } from 'vitest';
import { DnscostError } from '../../common/errors.js';
import { PUBLIC_RESOLVERS } from './defaults.js';
import { parseMeasureArgs, runMeasure } from './cli.js';
import { endpointUrl, parseEndpoint } from './endpoints.js';

const known = () => [...PUBLIC_RESOLVERS];

test('endpoint URLs parse to specs and print back the same', () => {
  const connect = new Map([['dns.test', '127.0.0.1']]);
  const cases: Array<[string, object, string]> = [
    ['udp://127.0.0.1:5300', { transport: 'udp', address: '127.0.0.1', port: 5300 }, 'udp://127.0.0.1:5300'],
    ['tcp://[::1]:53', { transport: 'tcp', address: '::1', port: 53 }, 'tcp://[::1]:53'],
    ['tls://dns.test', { transport: 'dot', address: '127.0.0.1', port: 853, serverName: 'dns.test' }, 'tls://dns.test:853'],
    ['https://dns.test:8443/q', { transport: 'doh', address: '127.0.0.1', port: 8443, serverName: 'dns.test', path: '/q', method: 'POST' }, 'https://dns.test:8443/q'],
    ['https://dns.test', { transport: 'doh', address: '127.0.0.1', port: 443, serverName: 'dns.test', path: '/dns-query', method: 'POST' }, 'https://dns.test:443/dns-query'],
    ['quic://dns.test', { transport: 'doq', address: '127.0.0.1', port: 853, serverName: 'dns.test' }, 'quic://dns.test:853'],
    ['quic://[::1]:8853', { transport: 'doq', address: '::1', port: 8853, serverName: '::1' }, 'quic://[::1]:8853'],
    ['h3://dns.test:8443/q', { transport: 'doh3', address: '127.0.0.1', port: 8443, serverName: 'dns.test', path: '/q', method: 'POST' }, 'h3://dns.test:8443/q'],
    ['h3://dns.test', { transport: 'doh3', address: '127.0.0.1', port: 443, serverName: 'dns.test', path: '/dns-query', method: 'POST' }, 'h3://dns.test:443/dns-query'],
  ];
  for (const [url, spec, back] of cases) {
    const parsed = parseEndpoint(url, { connect });
    assert.deepEqual(parsed, spec, url);
    assert.equal(endpointUrl(parsed), back);
  }
  assert.equal(parseEndpoint('https://dns.test/dns-query', { connect, http1: true }).transport, 'doh1');
  assert.equal(parseEndpoint('https://dns.test/dns-query', { connect, method: 'GET' }).method, 'GET');
});

test('bad endpoints are refused with bad-endpoint and a hint', () => {
  for (const url of ['nonsense', 'ftp://1.2.3.4', 'tls://dns.test:853', 'udp://dns.example:53']) {
    assert.throws(() => parseEndpoint(url), (e: unknown) => e instanceof DnscostError && e.code === 'bad-endpoint', url);
  }
  assert.throws(() => parseEndpoint('tls://dns.test:853'), /--connect dns.test=IP/);
});

test('measure arguments become a validated request', async () => {
  const { req, output } = await parseMeasureArgs(
    ['--endpoint', 'udp://127.0.0.1:53', '--endpoint', 'tls://dns.test:853', '--connect', 'dns.test=127.0.0.1', '--mode', 'cold,warm', '--repeat', '20', '--qtype', 'a,aaaa,https', '--seed', '9', '--prime', '--json', 'h1.test', 'h2.test'],
    known,
  );
  assert.equal(output, 'jsonl');
  assert.deepEqual(req.hosts, ['h1.test', 'h2.test']);
  assert.deepEqual(req.modes, ['cold', 'warm']);
  assert.deepEqual(req.qtypes, ['A', 'AAAA', 'HTTPS']);
  assert.equal(req.repeat, 20);
  assert.equal(req.seed, 9);
  assert.equal(req.prime, true);
  assert.equal(req.resolvers[0]!.endpoints.length, 2);
  const replay = (await parseMeasureArgs(['--endpoint', 'udp://127.0.0.1:53', '--schedule', 'replay', 'a.test@0', 'b.test@12.5', 'c.test'], known)).req;
  assert.equal(replay.schedule, 'replay');
  assert.deepEqual(replay.hosts, [{ name: 'a.test', firstNeededMs: 0 }, { name: 'b.test', firstNeededMs: 12.5 }, 'c.test']);
  await assert.rejects(parseMeasureArgs(['--endpoint', 'udp://127.0.0.1:53', '--schedule', 'later', 'a.test'], known), /schedule/);
  const r = (await parseMeasureArgs(['--resolver', 'quad9', '--transport', 'dot,doh', 'example.com'], known)).req;
  assert.equal(r.resolvers[0]!.id, 'quad9');
  assert.deepEqual(r.transports, ['dot', 'doh']);
  // --ipv6: the public resolvers at their IPv6 addresses (the default list, not a test's).
  const v6 = (await parseMeasureArgs(['--resolver', 'quad9', '--ipv6', 'example.com'])).req.resolvers[0]!;
  assert.deepEqual([...new Set(v6.endpoints.map((e) => e.address))], ['2620:fe::fe']);
  assert.ok(v6.endpoints.some((e) => e.transport === 'doq'));
});

test('bad measure arguments are refused with a clear message', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['h1.test'], /--endpoint URL or --resolver ID/],
    [['--endpoint', 'udp://127.0.0.1:53'], /at least one HOST/],
    [['--endpoint', 'udp://127.0.0.1:53', '--mode', 'hot', 'h'], /cold or warm/],
    [['--endpoint', 'udp://127.0.0.1:53', '--repeat', 'x', 'h'], /whole number/],
    [['--endpoint', 'udp://127.0.0.1:53', '--repeat', '0', 'h'], /repeat/],
    [['--endpoint', 'udp://127.0.0.1:53', '--qtype', 'BOGUS', 'h'], /unknown --qtype BOGUS/],
    [['--resolver', 'nope', 'h'], /unknown resolver "nope"/],
    [['--endpoint', 'udp://127.0.0.1:53', '--connect', 'x', 'h'], /NAME=IP/],
    [['--endpoint', 'udp://127.0.0.1:53', '--ca', '/nonexistent.pem', 'h'], /cannot read --ca/],
  ];
  for (const [argv, message] of cases) await assert.rejects(parseMeasureArgs(argv, known), message, argv.join(' '));
  // A flag the command does not know, or one missing its value, is the caller's mistake: bad-request, not internal.
  const badRequest = (re: RegExp) => (e: unknown) => e instanceof DnscostError && e.code === 'bad-request' && re.test(e.message);
  await assert.rejects(parseMeasureArgs(['--bogus'], known), badRequest(/Unknown option '--bogus'/));
  await assert.rejects(parseMeasureArgs(['--endpoint', 'udp://127.0.0.1:53', 'h', '--repeat'], known), badRequest(/--repeat <value>' argument missing/));
});

test('the name rule on the command line: resolvers on your own network take special-use names; a public one gets none, unless --allow-private-names', async () => {
  const own = await parseMeasureArgs(['--endpoint', 'udp://127.0.0.1:53', '--endpoint', 'udp://192.168.1.1:53', 'h1.test'], known);
  assert.equal(own.req.lab, true, 'every endpoint on the person\'s own network: as the lab setting');
  assert.equal(own.allowPrivateNames, false);
  const pub = await parseMeasureArgs(['--endpoint', 'udp://127.0.0.1:53', '--endpoint', 'udp://9.9.9.9:53', 'h1.test'], known);
  assert.equal(pub.req.lab, undefined, 'a public endpoint among them: no');
  assert.equal((await parseMeasureArgs(['--resolver', 'quad9', '--allow-private-names', 'printer.local'], known)).allowPrivateNames, true);
  // Every name kept back: refused before anything is sent (special-use, .onion and single-label names need no check).
  const err: string[] = [];
  const stderr = { write: (s: string) => err.push(s), isTTY: false } as unknown as typeof process.stderr;
  await assert.rejects(runMeasure(['--endpoint', 'udp://9.9.9.9:53', 'printer.local', 'x.onion', 'fileserver'], process.stdout, stderr), (e: unknown) => e instanceof DnscostError && e.code === 'no-measurable-hosts');
  assert.deepEqual(err.join('').split('\n').filter(Boolean).map((l) => l.replace(/ \(.*/, '')), ['withheld: printer.local', 'withheld: x.onion', 'withheld: fileserver']);
});
