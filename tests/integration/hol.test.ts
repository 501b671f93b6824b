// `dnscost-host hol` against real servers: the lab's fault server answers delay-400.* after 400 ms over TCP, DoT, DoH
// and DoH over HTTP/1.1, and AdGuard dnsproxy in front of it carries the same names over DoQ and DoH3. Over every
// transport that multiplexes, the fast answers arrive while the slow one is pending; over HTTP/1.1 (one request at a
// time on the connection) every one of them is held behind it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { makeCerts, type LabCerts } from '../../lab/certs.js';
import { dnsproxyBinary, startDnsproxy, type LabDnsproxy } from '../../lab/dnsproxy.js';
import { startFaultServer, type FaultServer } from '../../lab/fault-server/index.js';
import { HOST_BIN } from '../../lab/paths.js';
import { parseEndpoint } from '../../native-host/src/endpoints.js';
import { hol, parseHolArgs, type HolResult } from '../../native-host/src/hol.js';
import { companionPath } from '../../native-host/src/transports/quic-companion.js';

const SLOW = 'delay-400.fault.test';
const FAST = Array.from({ length: 10 }, (_, i) => `f${i}.fault.test`);
const ROUNDS = 3;
const quic = existsSync(dnsproxyBinary()) && existsSync(companionPath());

let dir: string;
let certs: LabCerts;
let faults: FaultServer;
let proxy: LabDnsproxy | null = null;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dnscost-hol-'));
  certs = await makeCerts(dir);
  faults = await startFaultServer({ certPem: certs.certPem, keyPem: certs.keyPem });
  if (quic) proxy = await startDnsproxy({ address: faults.address, certs, endpoints: { udp: faults.endpoints.udp } });
});

afterAll(async () => {
  await proxy?.stop();
  await faults?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('hol', () => {
  test('fast answers arrive while the slow one is pending over TCP, DoT, DoH/2, DoQ and DoH3; over HTTP/1.1 all are held', async () => {
    const direct = new Map([['dns.test', faults.address]]);
    const endpoints = [
      parseEndpoint(faults.endpoints.tcp), parseEndpoint(faults.endpoints.dot, { connect: direct }),
      parseEndpoint(faults.endpoints.doh, { connect: direct }), parseEndpoint(faults.endpoints.doh1, { connect: direct, http1: true }),
    ];
    if (proxy) {
      const via = new Map([['dns.test', proxy.address]]);
      endpoints.push(parseEndpoint(proxy.endpoints.doq, { connect: via }), parseEndpoint(proxy.endpoints.doh3, { connect: via }));
    }
    const results = await hol({ endpoints, ca: certs.caPem, slow: SLOW, fast: FAST, rounds: ROUNDS, gapMs: 5, timeoutMs: 3000, json: false });
    const by = new Map<string, HolResult>(results.map((r) => [r.transport, r]));
    assert.deepEqual([...by.keys()], quic ? ['tcp', 'dot', 'doh', 'doh1', 'doq', 'doh3'] : ['tcp', 'dot', 'doh', 'doh1']);
    for (const r of results) {
      assert.equal(r.error, null, `${r.endpoint}: ${r.error}`);
      assert.equal(r.rounds.length, ROUNDS, r.endpoint);
      assert.deepEqual(r.rounds.flatMap((x) => x.errors), [], r.endpoint);
      assert.equal(r.fast, ROUNDS * FAST.length, r.endpoint);
      assert.ok(r.slowMedianMs! >= 400, `${r.endpoint}: the slow answer took ${r.slowMedianMs} ms`);
    }
    for (const t of ['tcp', 'dot', 'doh', 'doq', 'doh3']) {
      const r = by.get(t);
      if (!r) continue;
      assert.equal(r.held, 0, `${t}: ${r.held} fast answers held behind the slow one`);
      assert.ok(r.fastMaxMs! < r.slowMedianMs!, `${t}: a fast answer took ${r.fastMaxMs} ms, the slow one ${r.slowMedianMs}`);
    }
    const h1 = by.get('doh1')!;
    assert.equal(h1.held, h1.fast, 'HTTP/1.1: every fast answer waits for the slow one');
    assert.ok(h1.fastMedianMs! >= 300, `HTTP/1.1: the fast answers took ${h1.fastMedianMs} ms, not the slow one's wait`);
  });

  test('the command: a table and exit 0; bad usage exits 2 with the reason and no stack', async () => {
    const run = (args: string[]) => promisify(execFile)(process.execPath, [HOST_BIN, 'hol', ...args], { timeout: 60_000 })
      .then((r) => ({ code: 0, ...r }), (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }));
    const caFile = join(dir, 'ca.pem');
    const ok = await run(['--endpoint', faults.endpoints.dot, '--connect', `dns.test=${faults.address}`, '--ca', caFile, '--slow', SLOW, '--rounds', '1', ...FAST.slice(0, 4)]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^transport +endpoint +slow ms +fast median ms +fast max ms +held behind the slow answer$/m);
    assert.match(ok.stdout, /^dot +tls:\/\/dns\.test:\d+ +\d+\.\d +\d+\.\d +\d+\.\d +0 of 4$/m);
    for (const [args, reason] of [
      [['--endpoint', faults.endpoints.udp, '--slow', SLOW, 'a.test'], /udp has no connection to block on/],
      [['--endpoint', faults.endpoints.tcp, 'a.test'], /needs --slow NAME/],
      [['--endpoint', faults.endpoints.tcp, '--slow', SLOW], /at least one fast name/],
      [['--endpoint', faults.endpoints.tcp, '--slow', SLOW, '--rounds', '0', 'a.test'], /--rounds takes a whole number from 1 to 50/],
      [['--endpoint', faults.endpoints.tcp, '--slow', 'not a name', 'a.test'], /is not a hostname/],
      [['--bogus'], /Unknown option '--bogus'/],
    ] as const) {
      const r = await run([...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, reason);
      assert.match(r.stderr, /^dnscost-host: bad-request: /);
      assert.doesNotMatch(r.stderr, /\n +at /, 'no stack trace');
    }
    assert.throws(() => parseHolArgs(['--endpoint', faults.endpoints.tcp, '--slow', SLOW, ...Array.from({ length: 101 }, (_, i) => `h${i}.test`)]), /at most 100 fast names/);
  });
});
