// Checks the fault server's answers on every transport: ok, DoH methods and keep-alive, delays and pipelining, TC,
// rcodes, malformed and wrong answers, HTTP statuses and content types, big answers (truncated over UDP) and a
// hostile flood of records (many-<n>, whole over UDP too).
import { test } from 'vitest';
import assert from 'node:assert/strict';
import https from 'node:https';
import dnsPacket from 'dns-packet';
import { ALL, ask, assertOk, decode, doh1Ask, dohAsk, query, rcodeOf, srv, STREAMS, streamAsk, useFaultServer, WAIT, type T } from './fault-server-clients.js';

useFaultServer();

test('ok: NOERROR, A 192.0.2.53 TTL 60, id and question echoed, on every transport', async () => {
  for (const t of ALL) assertOk(await ask(t, `ok-${t}.fault.test`), `ok-${t}.fault.test`);
  for (const t of ['udp', 'doh'] as T[]) {
    const p = decode(await ask(t, 'ok.fault.test', { qtype: 'AAAA' }));
    assert.equal(p.answers?.[0]?.type, 'AAAA');
    assert.equal(p.answers?.[0]?.data, '2001:db8::53');
  }
  const txt = decode(await ask('tcp', 'ok.fault.test', { qtype: 'TXT' }));
  assert.equal(rcodeOf(txt), 'NOERROR');
  assert.equal(txt.answers?.length, 0);
  for (const t of ALL) assert.ok(srv.seen.some((x) => x.transport === t && x.name === `ok-${t}.fault.test` && x.qtype === 'A' && x.at > 0), `seen ${t}`);
});

test('DoH: POST as well as GET; DoH1 keeps the connection alive', async () => {
  const post = await dohAsk(srv, query('post.fault.test'), { waitMs: WAIT, method: 'POST' });
  assert.equal(post.status, 200);
  assert.equal(post.headers?.['content-type'], 'application/dns-message');
  assertOk({ ...post, id: 0 }, 'post.fault.test');
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const a = await doh1Ask(srv, query('ka1.fault.test'), { waitMs: WAIT, agent });
    const b = await doh1Ask(srv, query('ka2.fault.test'), { waitMs: WAIT, agent, method: 'POST' });
    assertOk({ ...a, id: 0 }, 'ka1.fault.test');
    assertOk({ ...b, id: 0 }, 'ka2.fault.test');
    assert.equal(a.headers?.['connection'], 'keep-alive');
    assert.ok(a.localPort && a.localPort === b.localPort, 'second request reused the connection');
  } finally {
    agent.destroy();
  }
});

test('delay-<ms>: answers after the delay', async () => {
  await Promise.all(
    ALL.map(async (t) => {
      const t0 = Date.now();
      const r = await ask(t, 'delay-250.fault.test');
      assertOk(r, 'delay-250.fault.test');
      assert.ok(Date.now() - t0 >= 240, `${t} answered too early`);
    }),
  );
});

test('TCP and DoT: several queries per connection, answered out of order', async () => {
  for (const t of ['tcp', 'dot'] as const) {
    const slow = query('delay-300.fault.test', { id: 1 });
    const fast = query('ok.fault.test', { id: 2 });
    const fast2 = query('servfail.fault.test', { id: 3 });
    const r = await streamAsk(srv, t, [slow, fast, fast2], 3, WAIT);
    assert.equal(r.frames.length, 3, t);
    const ids = r.frames.map((f) => dnsPacket.decode(f).id);
    assert.equal(ids[2], 1, `${t}: the delayed answer comes last`);
    assert.deepEqual(ids.slice(0, 2).sort(), [2, 3]);
  }
});

test('tc: NOERROR with TC=1 and no answers, on every transport', async () => {
  for (const t of ALL) {
    const p = decode(await ask(t, 'tc.fault.test'));
    assert.equal(p.flag_tc, true, t);
    assert.equal(rcodeOf(p), 'NOERROR');
    assert.equal(p.answers?.length, 0);
  }
});

test('servfail, refused, nxdomain, formerr: that rcode', async () => {
  const want = { servfail: 'SERVFAIL', refused: 'REFUSED', nxdomain: 'NXDOMAIN', formerr: 'FORMERR' } as const;
  for (const t of ALL) {
    for (const [label, rcode] of Object.entries(want)) {
      const r = await ask(t, `${label}.fault.test`);
      const p = decode(r);
      assert.equal(rcodeOf(p), rcode, `${t} ${label}`);
      assert.equal(p.id, r.id);
      assert.equal(p.answers?.length, 0);
    }
  }
});

test('malformed and short: non-DNS bytes, correctly framed', async () => {
  for (const t of ALL) {
    const m = await ask(t, 'malformed.fault.test');
    assert.deepEqual(m.bytes, Buffer.alloc(40, 0xff), t);
    assert.throws(() => dnsPacket.decode(m.bytes!));
    const s = await ask(t, 'short.fault.test');
    assert.equal(s.bytes?.length, 7, t);
    if (t === 'doh' || t === 'doh1') assert.equal(s.headers?.['content-type'], 'application/dns-message');
  }
});

test('wrong-id: id+1, and 0x1234 for DoH id 0', async () => {
  for (const t of ALL) {
    const r = await ask(t, 'wrong-id.fault.test');
    const p = decode(r);
    assert.equal(p.id, r.id === 0 ? 0x1234 : (r.id + 1) & 0xffff, t);
    assert.equal(p.answers?.length, 1);
  }
});

test('wrong-question: answer about other.fault.test', async () => {
  for (const t of ALL) {
    const r = await ask(t, 'wrong-question.fault.test');
    const p = decode(r);
    assert.equal(p.id, r.id);
    assert.equal(p.questions?.[0]?.name, 'other.fault.test', t);
    assert.equal(p.answers?.[0]?.name, 'other.fault.test');
  }
});

test('http-<status> and bad-ctype over DoH and DoH1; plain answers elsewhere', async () => {
  for (const t of ['doh', 'doh1'] as T[]) {
    for (const status of [404, 500, 503]) {
      const r = await ask(t, `http-${status}.fault.test`);
      assert.equal(r.status, status, t);
      assert.match(String(r.headers?.['content-type']), /^text\/plain/);
      assert.equal(String(r.bytes ?? r.partial), `http-${status}\n`);
    }
    const b = await ask(t, 'bad-ctype.fault.test');
    assert.equal(b.status, 200);
    assert.equal(b.headers?.['content-type'], 'text/html');
    assertOk(b, 'bad-ctype.fault.test');
  }
  assertOk(await ask('udp', 'http-503.fault.test'), 'http-503.fault.test');
  assertOk(await ask('tcp', 'bad-ctype.fault.test'), 'bad-ctype.fault.test');
});

test('big: ~3000 bytes on streams; truncated with TC=1 to the EDNS size (or 512) on UDP', async () => {
  for (const t of STREAMS) {
    const r = await ask(t, 'big.fault.test');
    const p = decode(r);
    assert.ok(r.bytes!.length >= 2900 && r.bytes!.length <= 3200, `${t}: ${r.bytes!.length} bytes`);
    assert.equal(p.flag_tc, false);
    assert.ok((p.answers?.length ?? 0) > 50);
  }
  for (const [edns, limit] of [[0, 512], [1232, 1232], [600, 600], [100, 512]] as const) {
    const r = await ask('udp', 'big.fault.test', edns ? { edns } : {});
    const p = decode(r);
    assert.equal(p.flag_tc, true, `edns ${edns}`);
    assert.ok(r.bytes!.length <= limit && r.bytes!.length > limit - 40, `edns ${edns}: ${r.bytes!.length} bytes`);
    assert.equal(p.additionals?.some((a) => a.type === 'OPT'), edns > 0, 'OPT echoed only to EDNS queries');
  }
  const full = decode(await ask('udp', 'big.fault.test', { edns: 4096 }));
  assert.equal(full.flag_tc, false);
  assert.ok((full.answers?.length ?? 0) > 50);
});

test('many-<n>: n records whole on every transport, over UDP too whatever EDNS size was asked (4,000 A, or the AAAA that fit 64 KB)', async () => {
  for (const t of ALL) {
    const p = decode(await ask(t, 'many-4000.fault.test', { edns: 1232 }));
    assert.equal(rcodeOf(p), 'NOERROR', t);
    assert.equal(p.answers?.length, 4000, t);
    assert.equal(new Set(p.answers!.map((a) => (a as { data?: unknown }).data)).size, 4000, `${t}: distinct addresses`);
    assert.ok(p.answers!.every((a) => a.name === 'many-4000.fault.test' && a.type === 'A'), t);
  }
  const six = decode(await ask('udp', 'many-4000.fault.test', { qtype: 'AAAA' }));
  assert.ok(six.answers!.length > 2000 && six.answers!.length < 4000 && six.answers!.every((a) => a.type === 'AAAA'));
  assert.equal(decode(await ask('tcp', 'many-3.fault.test')).answers?.length, 3);
});
