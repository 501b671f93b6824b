// The scheduler's limits toward the host: a request the host would refuse by ending itself (a frame over 1 MiB) is
// never sent, and the stall watchdog's limit can be set (a test host with a shorter heartbeat).
import { test } from 'vitest';
import assert from 'node:assert/strict';
import type { MessageSender } from '../messages/index.js';
import type { HostStatus } from '../messages/host.js';
import { MAX_FRAME_BYTES, PROTOCOL_VERSION, type ResolverSpec } from '../../../common/schema.js';
import { defaultSettings, type Settings } from '../settings.js';
import type { RoutedReply } from './host-connection.js';
import { MeasurementScheduler, type MeasureHost } from './measurements.js';
import { FakeArea, host, pageRecord } from './test-fixtures.js';

const EXT: MessageSender = { id: 'ext', url: 'chrome-extension://x/popup/popup.html' };

class Host implements MeasureHost {
  sent: Array<{ id: string | number; type: string }> = [];
  listeners: Array<(r: RoutedReply) => void> = [];
  restarts: string[] = [];
  status(): HostStatus {
    return { ok: true, connected: true, version: '0.1.0', protocol: PROTOCOL_VERSION, transports: ['udp', 'dot'], currentDns: null, ipv6: false, browserDoh: null };
  }
  request(req: { id: string | number; type: string }, listener: (r: RoutedReply) => void): boolean {
    this.sent.push(req);
    this.listeners.push(listener);
    return true;
  }
  release(): void {}
  restart(message: string): void {
    this.restarts.push(message);
  }
}

/** A resolver with a 64 KiB extra CA, as the settings allow (16 of them make a request over 1 MiB). */
function bigResolver(i: number): ResolverSpec {
  return { id: `r${i}`, name: `R${i}`, ca: `-----BEGIN CERTIFICATE-----\n${'A'.repeat(64 * 1024 - 60)}\n-----END CERTIFICATE-----`, endpoints: [{ transport: 'dot', address: '127.0.0.1', port: 853 + i, serverName: 'dns.test' }] };
}

function scheduler(resolvers: ResolverSpec[], extra: { stallMs?: number; timers?: Array<{ fn: () => void; ms: number }> } = {}) {
  const h = new Host();
  const settings: Settings = { ...defaultSettings(resolvers), lab: true, currentDns: false, consent: { given: true, at: 1, for: null } };
  const page = pageRecord('p1', [host('a.site.localhost', 0), host('b.site.localhost', 30)]);
  const s = new MeasurementScheduler({
    area: new FakeArea(), host: h, loadSettings: async () => settings, pageReport: async () => ({ ok: true, record: page }), isIncognitoTab: async () => false,
    now: () => 1_000, newId: () => 'x', log: () => undefined, selfSender: EXT,
    ...(extra.timers ? { setTimer: (fn: () => void, ms: number) => extra.timers!.push({ fn, ms }), clearTimer: () => undefined } : {}),
    ...(extra.stallMs ? { stallMs: extra.stallMs } : {}),
  });
  return { s, h };
}

test('a measure request over the host\'s 1 MiB frame limit is refused with frame-too-large and never sent (the host would end itself)', async () => {
  const { s, h } = scheduler(Array.from({ length: 16 }, (_, i) => bigResolver(i)));
  const r = await s.start(7, EXT);
  assert.equal(r.ok, false);
  assert.equal(!r.ok && r.code, 'frame-too-large');
  assert.match(!r.ok ? r.message : '', new RegExp(`over the native host's ${MAX_FRAME_BYTES}-byte limit`));
  assert.equal(h.sent.length, 0, 'nothing reached the host');
  const st = await s.status(7, EXT, false);
  assert.equal(st.ok && st.measurement, null, 'no measurement was recorded');

  // Under the limit (15 of the same resolvers) it goes.
  const fits = scheduler(Array.from({ length: 15 }, (_, i) => bigResolver(i)));
  assert.equal((await fits.s.start(7, EXT)).ok, true);
  assert.equal(fits.h.sent.length, 1);
});

test('the stall watchdog uses the limit it is given', async () => {
  const timers: Array<{ fn: () => void; ms: number }> = [];
  const { s, h } = scheduler([bigResolver(1)], { stallMs: 1234, timers });
  assert.equal((await s.start(7, EXT)).ok, true);
  const watchdog = timers.find((t) => t.ms === 1234);
  assert.ok(watchdog, JSON.stringify(timers.map((t) => t.ms)));
  watchdog.fn();
  const st = await s.status(7, EXT, false);
  assert.equal(st.ok && st.measurement?.state, 'failed');
  assert.equal(st.ok && st.measurement?.error?.code, 'host-stalled');
  assert.deepEqual(h.restarts, ['the native host sent nothing for 1.234 s; it was restarted']);
});
