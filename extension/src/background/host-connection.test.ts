// The background's native-host connection with a fake port and fake timers: hello, protocol check, reconnection
// with backoff, and the stable codes the popup words.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import { BACKOFF_MAX_MS, HELLO_TIMEOUT_MS, HostConnection, backoffDelay, checkHello, classifyDisconnect, type NativePort } from './host-connection.js';
import { dispatchExtensionMessage, type ExtensionHandlers } from '../messages/index.js';
import { PROTOCOL_VERSION, type BrowserDoh } from '../../../common/schema.js';
import { exchange, fakeClock } from './test-fixtures.js';

class FakePort implements NativePort {
  sent: unknown[] = [];
  disconnected = false;
  error: { message?: string } | null = null;
  private messageListeners: Array<(m: unknown) => void> = [];
  private disconnectListeners: Array<(p: NativePort) => void> = [];
  onMessage = { addListener: (l: (m: unknown) => void) => void this.messageListeners.push(l) };
  onDisconnect = { addListener: (l: (p: NativePort) => void) => void this.disconnectListeners.push(l) };
  postMessage(m: unknown): void {
    this.sent.push(m);
  }
  disconnect(): void {
    this.disconnected = true;
  }
  /** The host sends `m`. */
  reply(m: unknown): void {
    for (const l of this.messageListeners) l(m);
  }
  /** The browser closes the port (Firefox style: the reason on port.error). */
  close(reason?: string): void {
    this.error = reason === undefined ? null : { message: reason };
    for (const l of this.disconnectListeners) l(this);
  }
}

function harness() {
  const clock = fakeClock(1_000_000);
  const ports: FakePort[] = [];
  const conn = new HostConnection({
    connect: () => {
      const p = new FakePort();
      ports.push(p);
      return p;
    },
    lastError: () => undefined,
    setTimer: clock.setTimer,
    clearTimer: clock.clearTimer,
    now: clock.now,
  });
  const last = () => ports[ports.length - 1]!;
  const hello = (protocol = PROTOCOL_VERSION) => {
    const req = last().sent[0] as { id: string; type: string };
    assert.equal(req.type, 'hello');
    last().reply({ id: req.id, type: 'hello', version: '9.9.9', protocol, transports: ['udp', 'dot', 'doq-later'] });
  };
  return { conn, ports, advance: clock.advance, last, hello, timers: clock.timers, now: clock.now };
}

test('hello with the right protocol connects; transports are the known ids', () => {
  const h = harness();
  h.conn.start();
  assert.equal(h.conn.status().ok, false);
  assert.deepEqual(h.conn.status(), { ok: false, connected: false, code: 'host-connecting', message: 'connecting to the native host', retryAt: null });
  h.hello();
  assert.deepEqual(h.conn.status(), { ok: true, connected: true, version: '9.9.9', protocol: PROTOCOL_VERSION, transports: ['udp', 'dot'], currentDns: null, ipv6: null, browserDoh: null });
  assert.equal(h.timers.size, 0, 'no hello timeout or retry left pending');
});

test("the hello's browser DoH is passed on; absent (an older host) or malformed, it is null and the hello still counts", () => {
  const base = { id: 1, type: 'hello', version: '9.9.9', protocol: PROTOCOL_VERSION, transports: ['udp'] };
  const doh: BrowserDoh = {
    browser: 'chromium', product: 'Chromium', mode: 'automatic', active: true, templates: ['https://dns.google/dns-query{?dns}'],
    source: 'default', setBy: 'default', fallback: true, upgradedFrom: '8.8.8.8',
  };
  const hello = (extra: Record<string, unknown>) => {
    const r = checkHello({ ...base, ...extra });
    assert.ok(r.ok, JSON.stringify(r));
    return r.hello.browserDoh;
  };
  assert.deepEqual(hello({ browserDoh: doh }), doh);
  assert.equal(hello({}), null);
  assert.equal(hello({ browserDoh: null }), null);
  assert.equal(hello({ browserDoh: { ...doh, mode: 'sometimes' } }), null);
  assert.equal(hello({ browserDoh: { ...doh, upgradedFrom: 'dns.google' } }), null);
});

test('a missing host is retried with doubling backoff, capped, and a good hello resets it', () => {
  const h = harness();
  h.conn.start();
  const delays: number[] = [];
  for (let i = 0; i < 9; i++) {
    h.last().close('No such native application org.dnscost.host');
    const s = h.conn.status();
    assert.ok(!s.ok && s.code === 'host-missing' && s.retryAt !== null, JSON.stringify(s));
    delays.push(s.retryAt - h.now());
    assert.equal(h.ports.length, i + 1, 'no new port before the delay');
    h.advance(s.retryAt - h.now());
    assert.equal(h.ports.length, i + 2, 'a new port when the delay is over');
  }
  assert.deepEqual(delays, [1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000]);
  h.hello();
  assert.equal(h.conn.status().ok, true);
  h.last().close('Native host has exited.');
  const s = h.conn.status();
  assert.ok(!s.ok && s.code === 'host-disconnected');
  assert.equal(s.retryAt! - h.now(), 1000, 'after a good hello the next retry is quick again');
  assert.equal(backoffDelay(100), BACKOFF_MAX_MS);
});

test('another protocol version is host-incompatible and closes the port', () => {
  const h = harness();
  h.conn.start();
  h.hello(PROTOCOL_VERSION + 1);
  const s = h.conn.status();
  assert.ok(!s.ok && s.code === 'host-incompatible', JSON.stringify(s));
  assert.match(s.message, new RegExp(`protocol ${PROTOCOL_VERSION + 1}.*protocol ${PROTOCOL_VERSION}`));
  assert.equal(h.last().disconnected, true);
});

test('no hello in time is host-disconnected; a late reply on the old port is ignored', () => {
  const h = harness();
  h.conn.start();
  const first = h.last();
  h.advance(HELLO_TIMEOUT_MS);
  const s = h.conn.status();
  assert.ok(!s.ok && s.code === 'host-disconnected');
  assert.equal(first.disconnected, true);
  first.reply({ id: 'hello-1', type: 'hello', version: '1', protocol: PROTOCOL_VERSION, transports: [] });
  assert.equal(h.conn.status().ok, false);
});

test('reconnectNow retries at once and resolves when the attempt settles', async () => {
  const h = harness();
  h.conn.start();
  h.last().close('Specified native messaging host not found.');
  assert.equal(h.ports.length, 1);
  const pending = h.conn.reconnectNow();
  assert.equal(h.ports.length, 2, 'a new port without waiting for the backoff');
  h.hello();
  assert.equal((await pending).ok, true);
});

test('classifyDisconnect: Chromium and Firefox wordings', () => {
  assert.equal(classifyDisconnect('Specified native messaging host not found.').code, 'host-missing');
  assert.equal(classifyDisconnect('Access to the specified native messaging host is forbidden.').code, 'host-missing');
  assert.equal(classifyDisconnect('No such native application org.dnscost.host').code, 'host-missing');
  assert.equal(classifyDisconnect('Native host has exited.').code, 'host-disconnected');
  assert.equal(classifyDisconnect(undefined).code, 'host-disconnected');
});

test('dispatch validates on entry: unknown or malformed messages are bad-request, throws are internal', async () => {
  // Only the two types this test sends; the table grows with every message type (the background's is complete).
  const handlers = {
    'host-status': () => ({ ok: false, connected: false, code: 'host-connecting', message: 'x', retryAt: null }),
    'host-reconnect': () => {
      throw new Error('boom');
    },
  } as Partial<ExtensionHandlers<null>> as ExtensionHandlers<null>;
  for (const bad of [null, 'host-status', 42, {}, { type: 'nope' }, { type: 'host-status', extra: 1 }, [{ type: 'host-status' }]]) {
    const r = await dispatchExtensionMessage(handlers, bad, null);
    assert.equal(r.ok, false);
    assert.equal((r as { code: string }).code, 'bad-request', JSON.stringify(bad));
  }
  assert.equal(((await dispatchExtensionMessage(handlers, { type: 'host-status' }, null)) as { code: string }).code, 'host-connecting');
  assert.deepEqual(await dispatchExtensionMessage(handlers, { type: 'host-reconnect' }, null), { ok: false, code: 'internal', message: 'boom' });
});

test('replies are validated on entry: a well-formed one reaches its request whole, a malformed one fails it with bad-reply', () => {
  const h = harness();
  h.conn.start();
  h.hello();
  const got: Array<{ type: string; code?: string; message?: string }> = [];
  assert.equal(h.conn.request({ id: 5, type: 'cancel', target: 4 }, (r) => got.push(r as { type: string })), true);
  const good = exchange('a.example', 'dot', 'cold', 1, 'A', 12);
  h.last().reply({ id: 5, type: 'records', records: [good] });
  assert.equal(got.length, 1);
  assert.deepEqual(got[0], { id: 5, type: 'records', records: [good] }, 'a valid reply passes unchanged');
  const broken: unknown[] = [
    { ...good, timings: { ...good.timings, total: 'fast' } },
    { ...good, transport: 'carrier-pigeon' },
    { ...good, bytes: { sent: -1, received: 2 } },
    { ...good, replay: { ...good.replay, endedAt: Number.NaN } },
    { ...good, error: { code: 'made-up', message: 'x' } },
  ];
  for (const record of broken) h.last().reply({ id: 5, type: 'records', records: [good, record] });
  h.last().reply({ id: 5, type: 'done' });
  h.last().reply({ id: 5, type: 'progress', done: 1.5, total: 2 });
  assert.equal(got.length, 1 + broken.length + 2);
  for (const r of got.slice(1)) {
    assert.equal(r.type, 'error');
    assert.equal(r.code, 'bad-reply');
    assert.match(r.message ?? '', /malformed reply/);
  }
  // A reply for no open request is dropped, whatever it holds.
  h.last().reply({ id: 99, type: 'records', records: 'nonsense' });
  assert.equal(got.length, 1 + broken.length + 2);
});

test('restart gives up on a stalled host: its port closes, open requests hear closed, a new host starts after the wait', () => {
  const h = harness();
  h.conn.start();
  h.hello();
  const heard: unknown[] = [];
  assert.equal(h.conn.request({ id: 'm', type: 'measure', hosts: ['a.example'], resolvers: [] } as never, (r) => heard.push(r)), true);
  h.conn.restart('silent for a minute');
  assert.equal(h.ports[0]!.disconnected, true);
  assert.deepEqual(heard, [{ id: 'm', type: 'closed', message: 'silent for a minute' }]);
  assert.equal(h.conn.status().ok, false);
  h.advance(backoffDelay(1));
  assert.equal(h.ports.length, 2, 'a new host');
  h.conn.restart('not connected yet: nothing to do');
  assert.equal(h.ports[1]!.disconnected, false);
});
