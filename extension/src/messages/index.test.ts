// The message boundary: every message validated, and every privileged one answered only to the extension's own pages
// (a web page's renderer can send whatever our content script can).
import assert from 'node:assert/strict';
import { test } from 'vitest';
import * as v from 'valibot';
import { dispatchExtensionMessage, extensionMessage, WEB_PAGE_MESSAGES, type ExtensionHandlers, type MessageSender } from './index.js';

const OWN = 'chrome-extension://abcdefghijklmnop/';

/** A handler table that answers every type with ok and records what ran. */
function recording(): { handlers: ExtensionHandlers<null>; ran: string[] } {
  const ran: string[] = [];
  const handlers = new Proxy({}, { get: (_t, type: string) => () => (ran.push(type), { ok: true }) }) as ExtensionHandlers<null>;
  return { handlers, ran };
}

// One valid example of every privileged message (every message but page-timing); the first test checks none is missing.
const PRIVILEGED: Array<{ type: string } & Record<string, unknown>> = [
  { type: 'settings-set', changes: { currentDns: false } }, { type: 'settings-import', json: '{}' }, { type: 'settings-export' }, { type: 'settings-get' },
  { type: 'consent-give' }, { type: 'consent-withdraw' }, { type: 'data-clear' }, { type: 'host-status' }, { type: 'host-reconnect' }, { type: 'resolver-probe', run: true },
  { type: 'measure-start', tabId: 1 }, { type: 'measure-status', tabId: 1 }, { type: 'measure-cancel', tabId: 1 },
  { type: 'page-report', tabId: 1 }, { type: 'history-get' }, { type: 'cache-savings' }, { type: 'upload-status' }, { type: 'upload-preview' }, { type: 'upload-flush' }, { type: 'upload-delete' },
];

test('every message but a page\'s timing is privileged, and each has its test below', () => {
  const all = extensionMessage.options.map((o) => o.entries.type.literal as string).sort();
  const covered = PRIVILEGED.filter((m) => v.safeParse(extensionMessage, m).success).map((m) => m.type);
  assert.deepEqual([...new Set([...covered, ...WEB_PAGE_MESSAGES])].sort(), all, 'a message type without a valid example here');
});

for (const m of PRIVILEGED) {
  test(`${m.type} from a web page (our content script's sender) is refused with bad-sender before its handler runs; the extension's pages are answered`, async () => {
    const web: MessageSender = { url: 'https://evil.example/', tabId: 3, frameId: 0 };
    const { handlers, ran } = recording();
    const reply = (await dispatchExtensionMessage(handlers, m, null, web, OWN)) as { ok: boolean; code?: string };
    assert.deepEqual([reply.ok, reply.code], [false, 'bad-sender'], m.type);
    assert.deepEqual(ran, [], `${m.type}: no handler ran`);
    for (const sender of [{}, { url: `${OWN.slice(0, -1)}x/` }, { url: `https://x/${OWN}` }]) {
      assert.equal(((await dispatchExtensionMessage(handlers, m, null, sender, OWN)) as { code?: string }).code, 'bad-sender', `${m.type} from ${JSON.stringify(sender)}`);
    }
    const own = (await dispatchExtensionMessage(handlers, m, null, { url: `${OWN}options/options.html` }, OWN)) as { ok: boolean };
    assert.equal(own.ok, true, m.type);
    assert.deepEqual(ran, [m.type]);
  });
}

test('a page\'s timing is the one message a web page may send; bad input is still bad-request first', async () => {
  assert.deepEqual([...WEB_PAGE_MESSAGES], ['page-timing']);
  const { handlers, ran } = recording();
  const timing = { type: 'page-timing', url: 'https://site.example/', timeOrigin: 1, navigation: {}, onLoadMs: null, entries: 0, resources: [] };
  const reply = (await dispatchExtensionMessage(handlers, timing, null, { url: 'https://site.example/', tabId: 1, frameId: 0 }, OWN)) as { ok: boolean; code?: string; message?: string };
  assert.equal(reply.ok, true, reply.message);
  assert.deepEqual(ran, ['page-timing'], 'its handler checks the tab and frame itself');
  // A host with when it was first asked for and its last response (what a recorder without webRequest reads).
  const host = { host: 'cdn.example', lookupStart: null, lookupEnd: null, nextHopProtocol: 'h2', origin: 'https://cdn.example', startTime: 12.5, responseEnd: 40, initiator: 'img' };
  const frame = { url: 'https://frame.example/', tabId: 1, frameId: 3 };
  assert.equal(((await dispatchExtensionMessage(handlers, { ...timing, resources: [host] }, null, frame, OWN)) as { ok: boolean }).ok, true);
  for (const bad of [{ startTime: -1 }, { responseEnd: -5 }, { origin: `https://${'a'.repeat(1200)}` }, { initiator: 'x'.repeat(40) }, { extra: 1 }]) {
    const r = (await dispatchExtensionMessage(handlers, { ...timing, resources: [{ ...host, ...bad }] }, null, frame, OWN)) as { code: string };
    assert.equal(r.code, 'bad-request', JSON.stringify(bad).slice(0, 60));
  }
  assert.equal(((await dispatchExtensionMessage(handlers, { type: 'settings-set' }, null, { url: 'https://evil.example/' }, OWN)) as { code: string }).code, 'bad-request');
  assert.equal(((await dispatchExtensionMessage(handlers, { type: 'nope' }, null, {}, OWN)) as { code: string }).code, 'bad-request');
  assert.deepEqual(ran, ['page-timing', 'page-timing'], 'only the two valid reports reached the handler');
});
