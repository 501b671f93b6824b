// Firefox's MOZ_LOG read as the validation reads it: real lines of Firefox 153 (TRR mode 3 over the lab's DoH, and the
// system resolver through getaddrinfo), trimmed to the lines that matter and one name each: asked, out of the queue,
// each DoH request by type, resolved; an http document's HTTPS question before its addresses as one lookup; a failed
// lookup; a lookup joined or answered from the cache is none; a cut line.
import assert from 'node:assert/strict';
import { test } from 'vitest';
import { mozLogLookups } from '../bench/validate/mozlog.js';

/** ms since the epoch of a time of day on the log's date (HH:MM:SS.ffffff); doubles keep it to a fraction of a µs. */
const at = (t: string) => Date.parse(`2026-11-26T${t.slice(0, 8)}Z`) + Number(t.slice(8)) * 1000;
const near = (a: number, b: number) => Math.abs(a - b) < 1e-3;
const line = (t: string, thread: string, msg: string, level = 'D', pid = 15076) =>
  `2026-11-26 ${t} UTC - [Parent ${pid}: ${thread}]: ${level}/nsHostResolver ${msg}`;

const TRR = [
  line('14:31:26.220819', 'Socket Thread', 'Resolving host [p10-h3.val.example]<^userContextId=6&partitionKey=%28http%2Cval.example%29> type 0. [this=7f99dbb0cae0]'),
  line('14:31:26.220821', 'Socket Thread', '  No usable record in cache for host [p10-h3.val.example] type 0.'),
  line('14:31:26.220824', 'Socket Thread', 'TrrLookup host:p10-h3.val.example af:0'),
  line('14:31:26.220937', 'Socket Thread', 'TRR::SendHTTPRequest resolve p10-h3.val.example type 28'),
  line('14:31:26.220946', 'Socket Thread', 'TRR::SendHTTPRequest resolve p10-h3.val.example type 1'),
  line('14:31:26.241393', 'Socket Thread', 'TRR:OnStopRequest 7f99c1e0b2c0 p10-h3.val.example 28 failed=0 code=0'),
  line('14:31:26.241402', 'Socket Thread', 'TRRQuery::CompleteLookup > host: p10-h3.val.example'),
  line('14:31:26.241515', 'Socket Thread', 'TRR:OnStopRequest 7f99c1e0be20 p10-h3.val.example 1 failed=0 code=0'),
  line('14:31:26.241533', 'Socket Thread', 'nsHostResolver::CompleteLookup p10-h3.val.example 7f99c1aa7380 0 resolver=1 stillResolving=0'),
  line('14:31:26.241536', 'Socket Thread', 'CompleteLookup: p10-h3.val.example has 192.0.2.2'),
];

const NATIVE = [
  line('14:29:35.801242', 'Socket Thread', '  No usable record in cache for host [p10-h1.val.example] type 0.', 'D', 12816),
  line('14:29:35.801249', 'Socket Thread', 'NativeLookup host:p10-h1.val.example af:0', 'D', 12816),
  line('14:29:35.801301', 'DNS Resolver #1', 'DNS resolve task - Calling getaddrinfo for host [p10-h1.val.example].', 'E', 12816),
  line('14:29:35.817218', 'DNS Resolver #1', 'nsHostResolver::CompleteLookup p10-h1.val.example 7f70de679200 0 resolver=0 stillResolving=0', 'D', 12816),
];

test('a lookup over TRR: asked when the cache had nothing, out of the queue at its first DoH request, each type, resolved', () => {
  const [l, ...rest] = mozLogLookups(TRR.join('\n'));
  assert.equal(rest.length, 0);
  assert.deepEqual(l, {
    name: 'p10-h3.val.example', askedAt: at('14:31:26.220821'), startedAt: at('14:31:26.220937'), endedAt: at('14:31:26.241533'), secure: true, error: null,
    transactions: [
      { qtype: 'AAAA', startedAt: at('14:31:26.220937'), endedAt: at('14:31:26.241393') },
      { qtype: 'A', startedAt: at('14:31:26.220946'), endedAt: at('14:31:26.241515') },
    ],
  });
  assert.ok(near(l!.endedAt! - l!.askedAt, 20.712), `${l!.endedAt! - l!.askedAt} ms`);
});

test('a lookup through the system resolver: out of the queue at getaddrinfo on the DNS thread, no DoH request, not secure', () => {
  const [l] = mozLogLookups(NATIVE.join('\n'));
  assert.equal(l?.secure, null);
  assert.deepEqual(l?.transactions, []);
  assert.equal(l?.startedAt, at('14:29:35.801301'));
  assert.ok(near(l!.endedAt! - l!.askedAt, 15.976), `${l!.endedAt! - l!.askedAt} ms`);
});

test('a failed lookup keeps its status; a name joined or answered from the cache starts none; processes are kept apart', () => {
  const text = [
    line('14:00:00.000100', 'Socket Thread', '  No usable record in cache for host [gone.val.example] type 0.'),
    line('14:00:00.000200', 'Socket Thread', '  Host [gone.val.example] is being resolved. Appending callback [7f00].'),
    line('14:00:00.000300', 'Socket Thread', '  Using cached record for host [p10-h3.val.example].'),
    // Another process resolving the same name: not this lookup's end.
    line('14:00:00.010000', 'Socket Thread', 'nsHostResolver::CompleteLookup gone.val.example 0 0 resolver=1 stillResolving=0', 'D', 999),
    line('14:00:00.020000', 'Socket Thread', 'nsHostResolver::CompleteLookup gone.val.example 0 804B001E resolver=1 stillResolving=0'),
  ].join('\n');
  const all = mozLogLookups(text);
  assert.deepEqual(all.map((l) => [l.name, l.error]), [['gone.val.example', 0x804b001e]]);
  assert.ok(near(all[0]!.endedAt! - all[0]!.askedAt, 19.9));
});

test("an http document over TRR: its HTTPS question, then its addresses once that answered, are one lookup", () => {
  const text = [
    line('14:42:25.740274', 'Main Thread', '  No usable record in cache for host [p10-h0.val.example] type 65.', 'D', 2012),
    line('14:42:25.740357', 'Socket Thread', 'TRR::SendHTTPRequest resolve p10-h0.val.example type 65', 'D', 2012),
    line('14:42:25.796718', 'Socket Thread', 'TRR:OnStopRequest 7f9384303c60 p10-h0.val.example 65 failed=0 code=0', 'D', 2012),
    line('14:42:25.796789', 'Socket Thread', 'nsHostResolver::CompleteLookupByType record 7f939e3d4700 [p10-h0.val.example] status 804b001e', 'D', 2012),
    line('14:42:25.801192', 'Socket Thread', '  No usable record in cache for host [p10-h0.val.example] type 0.', 'D', 2012),
    line('14:42:25.801238', 'Socket Thread', 'TRR::SendHTTPRequest resolve p10-h0.val.example type 28', 'D', 2012),
    line('14:42:25.801279', 'Socket Thread', 'TRR::SendHTTPRequest resolve p10-h0.val.example type 1', 'D', 2012),
    line('14:42:25.818156', 'Socket Thread', 'TRR:OnStopRequest 7f938406bc60 p10-h0.val.example 28 failed=0 code=0', 'D', 2012),
    line('14:42:25.818315', 'Socket Thread', 'TRR:OnStopRequest 7f938406be20 p10-h0.val.example 1 failed=0 code=0', 'D', 2012),
    line('14:42:25.818380', 'Socket Thread', 'nsHostResolver::CompleteLookup p10-h0.val.example 7f9383eea390 0 resolver=1 stillResolving=0', 'D', 2012),
  ].join('\n');
  const [l, ...rest] = mozLogLookups(text);
  assert.equal(rest.length, 0);
  assert.deepEqual(l?.transactions.map((t) => t.qtype), ['HTTPS', 'AAAA', 'A']);
  assert.equal(l?.askedAt, at('14:42:25.740274'));
  assert.equal(l?.error, null, 'the HTTPS question found no record (NS_ERROR_UNKNOWN_HOST); the lookup is the addresses\'');
  assert.ok(near(l!.endedAt! - l!.askedAt, 78.106), `${l!.endedAt! - l!.askedAt} ms`);
  // Its HTTPS question alone, the log ending before the addresses: one lookup, unfinished.
  const [alone] = mozLogLookups(text.split('\n').slice(0, 4).join('\n'));
  assert.equal(alone?.endedAt, null);
});

test('a cut last line is skipped, and a lookup it would have ended stays unfinished', () => {
  const text = `${TRR.slice(0, 8).join('\n')}\n${TRR[8]!.slice(0, 60)}`;
  const [l] = mozLogLookups(text);
  assert.equal(l?.endedAt, null);
  assert.equal(l?.transactions.every((t) => t.endedAt !== null), true);
});
