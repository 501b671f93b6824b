import assert from 'node:assert/strict';
import { test } from 'vitest';
import type { RoutedReply } from './host-connection.js';
import { defaultSettings } from '../settings.js';
import { LOOPBACK_LAB, FakeArea } from './test-fixtures.js';
import { ResolverProber } from './resolver-probe.js';

/** A prober over a fake host that answers each probe request with `reply` (or is not connected). */
function prober(reply: ((id: string) => RoutedReply) | null) {
  const sent: unknown[] = [];
  const p = new ResolverProber({
    host: {
      status: () => (reply ? { ok: true, connected: true, version: '1', protocol: 2, transports: [], currentDns: null, ipv6: null, browserDoh: null } : { ok: false, connected: false, code: 'host-missing', message: 'not installed', retryAt: null }),
      request: (req, listener) => {
        if (!reply) return false;
        sent.push(req);
        setTimeout(() => listener(reply(String(req.id))), 0);
        return true;
      },
      release: () => undefined,
    },
    settings: { loadSettings: async () => defaultSettings([LOOPBACK_LAB]) },
    local: new FakeArea(),
    now: () => 1234,
    setTimer: (fn, ms) => setTimeout(fn, ms),
    clearTimer: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
  });
  return { p, sent };
}

test('a probe of the resolvers in force is kept and read back; clearing forgets it', async () => {
  const rows = [{ item: 'answers' as const, endpoint: 'udp://127.0.0.1:53', result: 'yes' as const, detail: 'NOERROR' }];
  const { p, sent } = prober((id) => ({ id, type: 'probe-result', resolvers: [{ id: LOOPBACK_LAB.id, rows }], plainLeftOut: false }));
  assert.deepEqual(await p.last(), { ok: true, probe: null });
  const r = await p.run();
  assert.ok(r.ok);
  assert.deepEqual((sent[0] as { resolvers: unknown }).resolvers, [LOOPBACK_LAB]);
  assert.deepEqual(await p.last(), { ok: true, probe: { at: 1234, plainLeftOut: false, resolvers: [{ id: LOOPBACK_LAB.id, rows }], names: { [LOOPBACK_LAB.id]: LOOPBACK_LAB.name } } });
  await p.clear();
  assert.deepEqual(await p.last(), { ok: true, probe: null });
});

test('a host that is not connected, or refuses, is a failure with its code; nothing is kept', async () => {
  const down = prober(null);
  assert.equal(((await down.p.run()) as { code: string }).code, 'host-not-connected');
  const busy = prober((id) => ({ id, type: 'error', ok: false, code: 'busy', message: 'a probe is already running' }));
  const r = (await busy.p.run()) as { ok: boolean; code: string; message: string };
  assert.deepEqual([r.ok, r.code, r.message], [false, 'probe-failed', 'busy: a probe is already running']);
  assert.deepEqual(await busy.p.last(), { ok: true, probe: null });
});
