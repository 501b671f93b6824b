import assert from 'node:assert/strict';
import { test } from 'vitest';
import { FIREFOX_NOW_ID } from '../../../common/default-resolvers.js';
import { firefoxOwnPath, firefoxRecords, replayThroughFirefox, type DnsResolve } from './firefox-path.js';

/** A fake clock: sleeps advance it; each name answers after its delay (ms), over TRR or not, or fails. */
function fakeFirefox(answers: Record<string, { ms: number; trr?: boolean; fail?: string; none?: boolean }>) {
  let clock = 1000;
  const calls: Array<{ host: string; at: number; flags: string[] }> = [];
  const resolve: DnsResolve = async (host, flags) => {
    calls.push({ host, at: clock, flags });
    const a = answers[host]!;
    await new Promise((r) => setTimeout(r, 0));
    clock += a.ms;
    if (a.fail) throw new Error(a.fail);
    return { addresses: a.none ? [] : ['192.0.2.1'], isTRR: a.trr ?? false };
  };
  return { resolve, calls, now: () => clock, sleep: async (ms: number) => void (clock += ms) };
}

test('each host through Firefox\'s resolver at its offset, bypassing the cache; TRR lookups are DoH records, the others the system\'s', async () => {
  const f = fakeFirefox({ localhost: { ms: 2 }, 'a.example': { ms: 30, trr: true }, 'b.example': { ms: 12 }, 'c.example': { ms: 5, fail: 'NS_ERROR_UNKNOWN_HOST' }, 'd.example': { ms: 1, none: true } });
  const run = await replayThroughFirefox([{ name: 'a.example', firstNeededMs: 0 }, { name: 'b.example', firstNeededMs: 200 }, { name: 'c.example', firstNeededMs: 0 }, { name: 'd.example', firstNeededMs: 0 }], { resolve: f.resolve, now: f.now, sleep: f.sleep, timeoutMs: 5000 });
  // First what asking Firefox costs by itself: localhost, which it answers without the network.
  assert.deepEqual(f.calls.slice(0, 5).map((c) => c.host), Array(5).fill('localhost'));
  assert.deepEqual([run.askingMs, run.began], [2, 1010]);
  assert.ok(f.calls.every((c) => c.flags.includes('bypass_cache')));
  const records = firefoxRecords(run);
  const by = new Map(records.map((r) => [r.host, r]));
  assert.equal(by.get('a.example')!.transport, 'doh');
  assert.equal(by.get('b.example')!.transport, 'udp');
  assert.equal(by.get('b.example')!.replay!.firstNeededMs, 200);
  assert.ok(f.calls.find((c) => c.host === 'b.example')!.at >= 1200, 'b.example asked no sooner than its offset');
  assert.deepEqual([by.get('c.example')!.ok, by.get('c.example')!.error], [false, 'nxdomain']);
  assert.deepEqual([by.get('d.example')!.ok, by.get('d.example')!.error], [false, 'no-addresses']);
  for (const r of records) {
    assert.equal(r.resolver, FIREFOX_NOW_ID);
    // The lookup's own time: from when it was asked to its answer, less the cost of asking; it ends that long after
    // its offset (the extension's timer firing late is not Firefox's).
    const l = run.lookups.find((x) => x.host === r.host)!;
    assert.equal(l.startedAt, f.calls.find((c) => c.host === r.host)!.at);
    assert.equal(r.timings.total, Math.max(0, l.endedAt - l.startedAt - 2));
    assert.equal(r.replay!.endedAt, run.began + r.replay!.firstNeededMs + r.timings.total);
  }
  assert.ok(by.get('a.example')!.timings.total >= 28, 'a 30 ms lookup less 2 ms of asking');
});

test('a lookup Firefox does not answer within the bound is a timeout', async () => {
  const never: DnsResolve = () => new Promise(() => undefined);
  const run = await replayThroughFirefox([{ name: 'slow.example', firstNeededMs: 0 }], { resolve: never, now: () => performance.now(), sleep: async () => undefined, timeoutMs: 20 });
  assert.deepEqual([run.lookups[0]!.ok, run.lookups[0]!.error], [false, 'timeout']);
});

test('the scheduler\'s own path: only where browser.dns resolves; it asks each host once, bypassing the cache, and returns its records', async () => {
  assert.equal(firefoxOwnPath(undefined), undefined, 'Chromium: no browser.dns');
  assert.equal(firefoxOwnPath({} as never), undefined, 'no resolve in it');
  const asked: Array<[string, string[]]> = [];
  const own = firefoxOwnPath({ resolve: async (host, flags) => (asked.push([host, flags]), { addresses: ['192.0.2.7'], isTRR: 'true' }) })!;
  const records = await own([{ name: 'a.example', firstNeededMs: 0 }, { name: 'b.example', firstNeededMs: 5 }]);
  assert.deepEqual(asked.filter(([h]) => h !== 'localhost'), [['a.example', ['bypass_cache']], ['b.example', ['bypass_cache']]]);
  assert.equal(asked.filter(([h]) => h === 'localhost').length, 5, 'the cost of asking, calibrated first');
  assert.deepEqual(records.map((r) => [r.host, r.resolver, r.transport, r.ok]), [['a.example', FIREFOX_NOW_ID, 'doh', true], ['b.example', FIREFOX_NOW_ID, 'doh', true]], 'isTRR as Firefox reports it, a string');
});
