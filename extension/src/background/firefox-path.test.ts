import assert from 'node:assert/strict';
import { test } from 'vitest';
import { firefoxRecords, FIREFOX_NOW, replayThroughFirefox, type DnsResolve } from './firefox-path.js';

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
  const f = fakeFirefox({ 'a.example': { ms: 30, trr: true }, 'b.example': { ms: 12 }, 'c.example': { ms: 5, fail: 'NS_ERROR_UNKNOWN_HOST' }, 'd.example': { ms: 1, none: true } });
  const run = await replayThroughFirefox([{ name: 'a.example', firstNeededMs: 0 }, { name: 'b.example', firstNeededMs: 200 }, { name: 'c.example', firstNeededMs: 0 }, { name: 'd.example', firstNeededMs: 0 }], { resolve: f.resolve, now: f.now, sleep: f.sleep, timeoutMs: 5000 });
  assert.equal(run.began, 1000);
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
    assert.equal(r.resolver, FIREFOX_NOW.id);
    // The lookup's own time: from when it was asked to its answer.
    assert.equal(r.timings.total, r.replay!.endedAt - f.calls.find((c) => c.host === r.host)!.at);
  }
});

test('a lookup Firefox does not answer within the bound is a timeout', async () => {
  const never: DnsResolve = () => new Promise(() => undefined);
  const run = await replayThroughFirefox([{ name: 'slow.example', firstNeededMs: 0 }], { resolve: never, now: () => performance.now(), sleep: async () => undefined, timeoutMs: 20 });
  assert.deepEqual([run.lookups[0]!.ok, run.lookups[0]!.error], [false, 'timeout']);
});
