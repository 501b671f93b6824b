// One page's cost, computed two ways from the same host output, is the same: the validation's way (the host's full
// records, stored as the validation's replay stores them, through bench/validate's predict) and the product's way
// (the same records sent by a host over a native port, validated by the background's HostConnection, stored by its
// scheduler in storage, read back and drawn by the popup's computeResults and the history). The connection-wait credit
// (replay.waitedForConnection) is part of both: dropping it changes the answer, so a store that lost it would fail here.
import assert from 'node:assert/strict';
import { test } from 'vitest';
import { predict, visitPrediction } from '../bench/validate/analysis.js';
import { storedRecord, type StoredRecord } from '../common/stored-record.js';
import { measuredPageCost } from '../common/page-cost.js';
import type { ExchangeRecord } from '../common/record.js';
import { PROTOCOL_VERSION } from '../common/schema.js';
import { HostConnection } from '../extension/src/background/host-connection.js';
import { MeasurementScheduler } from '../extension/src/background/measurements.js';
import { FakeArea, FakeNativePort, host, LOOPBACK_LAB, pageRecord, POPUP_SENDER } from '../extension/src/background/test-fixtures.js';
import { historyEntry, type HistoryCell } from '../extension/src/history.js';
import type { MeasureStatus } from '../extension/src/messages/measure.js';
import { computeResults } from '../extension/src/popup/cost-view.js';
import { testI18n } from '../extension/src/i18n-fixtures.js';
import { defaultSettings } from '../extension/src/settings.js';

const LAB = LOOPBACK_LAB;
const EXT = POPUP_SENDER;

/**
 * A host's replay of a 4-host page as the engine writes it: over cold DoT and DoH the document's lookup opens the
 * connection (`paidSetup`, 3 RTT of 20 ms) and the hosts needed while it opens wait for it (`waitedForConnection`).
 */
function hostRecords(): ExchangeRecord[] {
  const hosts = [['www.example.org', 0], ['cdn.example.net', 15], ['img.example.net', 30], ['late.example.com', 500]] as const;
  const out: ExchangeRecord[] = [];
  let connection = 0;
  for (const transport of ['udp', 'dot', 'doh'] as const) {
    for (let repeat = 1; repeat <= 3; repeat++) {
      const pageStartedAt = 1000 * repeat + (transport === 'udp' ? 0 : transport === 'dot' ? 300 : 600);
      const open = transport === 'udp' ? 0 : 60 + repeat; // the cold connection's set-up
      connection++;
      for (const [name, at] of hosts) {
        for (const qtype of ['A', 'AAAA'] as const) {
          const waited = transport !== 'udp' && at > 0 && at < open ? open - at : null;
          const lookup = 20 + (qtype === 'AAAA' ? 0.4 : 0) + (waited ?? 0) + (transport !== 'udp' && at === 0 ? open : 0) + repeat / 7;
          out.push({
            host: name, qtype, transport, endpoint: `${transport}://127.0.0.1`, resolver: 'lab', mode: 'cold', repeat, ok: true, rcode: 'NOERROR', error: null,
            answers: [{ name, type: qtype, ttl: 300, data: qtype === 'A' ? '192.0.2.1' : '2001:db8::1' }],
            timings: { connect: at === 0 && transport !== 'udp' ? 20.123456 : null, tls: at === 0 && transport !== 'udp' ? 40.654321 : null, query: 20.000017, total: lookup },
            startedAt: pageStartedAt + at, bytes: { sent: 80, received: 120 }, packets: { sent: 2, received: 2 },
            layers: { dns: { sent: 40, received: 80 }, http: null, tls: null, headers: { sent: 40, received: 40 } },
            provenance: { bytes: 'counted', packets: 'counted' }, reused: at > 0 && transport !== 'udp', connection: transport === 'udp' ? null : connection,
            tls: null, events: [],
            replay: { pageStartedAt, firstNeededMs: at, endedAt: pageStartedAt + at + lookup, waitedForConnection: waited, paidSetup: at === 0 && transport !== 'udp', sharedWith: transport === 'udp' ? 1 : 8 },
          });
        }
      }
    }
  }
  return out;
}


test("the popup's and the history's numbers for a page equal the validation's prediction from the host's full records", async () => {
  const page = pageRecord('p1', [host('www.example.org', 0), host('cdn.example.net', 15), host('img.example.net', 30), host('late.example.com', 500)]);
  page.onLoadMs = 400;
  const full = hostRecords();

  // The validation's way: the replay's records as bench/validate stores them, and its predict().
  const validated = predict({ page: 4, transport: 'do53', round: 1, onLoad: 400, error: null, pageRecord: page, records: full.map(storedRecord) });
  assert.ok(validated.dot && validated.doh, JSON.stringify(validated));

  // The product's way: a host answers the background's request over a port; the scheduler stores what arrives.
  const port = new FakeNativePort();
  const conn = new HostConnection({ connect: () => port, lastError: () => undefined, setTimer: () => 0, clearTimer: () => undefined, now: () => 1 });
  conn.start();
  port.reply({ id: (port.sent[0] as { id: string }).id, type: 'hello', version: '0.1.0', protocol: PROTOCOL_VERSION, transports: ['udp', 'dot', 'doh'] });
  const area = new FakeArea();
  const scheduler = new MeasurementScheduler({
    area, host: conn,
    loadSettings: async () => ({ ...defaultSettings([LAB]), consent: { given: true, at: 1, for: null } }),
    pageReport: async () => ({ ok: true, record: page }),
    isIncognitoTab: async () => false,
    now: () => 5_000, newId: () => 'req-1', log: () => undefined, selfSender: EXT,
  });
  assert.equal((await scheduler.start(7, EXT)).ok, true);
  const request = port.sent.find((m) => m.type === 'measure')!;
  for (let i = 0; i < full.length; i += 7) port.reply({ id: request.id, type: 'records', records: full.slice(i, i + 7) });
  port.reply({ id: request.id, type: 'done', seed: 1, primed: true, warmedUp: true, order: [], exchanges: full.length, cancelled: false, summary: [] });
  const status = (await scheduler.status(7, EXT, true)) as MeasureStatus;
  assert.equal(status.measurement?.state, 'done');
  const stored = status.records as StoredRecord[];
  assert.equal(stored.length, full.length);

  // What the popup draws, what the history keeps and what the validation predicted: one model, one answer.
  const popup = computeResults(status.measurement!, stored, testI18n('en')).cells;
  assert.deepEqual(popup, measuredPageCost(page, full.map(storedRecord)), 'every cell, host by host, as from the full records');
  for (const transport of ['dot', 'doh'] as const) {
    const cell = popup.find((c) => c.transport === transport && c.mode === 'cold')!;
    assert.deepEqual({ delta: cell.onLoad.delta, lower: cell.onLoad.lower, upper: cell.onLoad.upper }, validated[transport], transport);
    const kept: HistoryCell = historyEntry(status.measurement!, stored).cells.find((c) => c.transport === transport && c.mode === 'cold')!;
    assert.equal(kept.onLoad?.delta, Math.round(cell.onLoad.delta! * 10) / 10, `${transport}: the history keeps the same estimate`);
  }

  // The credit for waiting on the connection the document's lookup opened is part of the answer: without it (what
  // the extension stored before), the estimate is another one, so this test fails if a store drops it.
  const withoutWait = stored.map((r) => ({ ...r, replay: r.replay && { ...r.replay, waitedForConnection: null } }));
  const lost = measuredPageCost(page, withoutWait).find((c) => c.transport === 'dot' && c.mode === 'cold')!;
  assert.notEqual(lost.onLoad.delta, validated.dot.delta);
});

test("the validation's first-byte prediction is the serial hosts' change: the document's lookup, plus a redirect's earlier legs", () => {
  const records = hostRecords().map(storedRecord);
  const hosts = [host('www.example.org', 0), host('cdn.example.net', 15), host('img.example.net', 30), host('late.example.com', 500)];
  const plain = pageRecord('p1', hosts);
  const cellHosts = (page: typeof plain, t: 'dot' | 'doh') => measuredPageCost(page, records).find((c) => c.transport === t && c.mode === 'cold')!.hosts;
  for (const t of ['dot', 'doh'] as const) {
    const p = visitPrediction({ pageRecord: plain, records }, t, 'cold')!;
    const doc = cellHosts(plain, t).find((h) => h.reason === 'document')!.delta as number;
    assert.equal(p.document, doc);
    assert.equal(p.serial, doc, `${t}: no redirect, the document alone`);
    // The same page reached through a redirect: the main frame first asked www.example.org, then img.example.net.
    const redirected = { ...plain, host: 'img.example.net', hosts: hosts.map((h, i) => (i === 0 ? { ...h, types: { main_frame: 1 } } : h)) };
    const serial = cellHosts(redirected, t).filter((h) => h.reason === 'document' || h.reason === 'redirect');
    assert.deepEqual(serial.map((h) => [h.name, h.reason]).sort(), [['img.example.net', 'document'], ['www.example.org', 'redirect']]);
    const q = visitPrediction({ pageRecord: redirected, records }, t, 'cold')!;
    assert.equal(q.serial, serial.reduce((a, h) => a + (h.delta as number), 0));
    assert.ok(q.serial! > q.document!, `${t}: the first leg's cold connection is paid before the first byte (${q.serial} > ${q.document})`);
  }
});
