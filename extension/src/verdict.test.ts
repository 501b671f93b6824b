import { test } from 'vitest';
import assert from 'node:assert/strict';
import { pageVerdict, type VerdictCell } from './verdict.js';
import { testI18n } from './i18n-fixtures.js';

const en = testI18n('en');
const de = testI18n('de');

const names: Record<string, string> = { cloudflare: 'Cloudflare', quad9: 'Quad9', 'current-dns': 'your current DNS' };
const name = (id: string) => names[id] ?? id;
const cell = (resolver: string, transport: VerdictCell['transport'], delta: number | null, verdict: VerdictCell['verdict'], expected = true, mode: VerdictCell['mode'] = 'cold'): VerdictCell =>
  ({ resolver, transport, mode, onLoad: delta === null ? null : { delta }, verdict, expected });

test('best and worst encrypted choice in the expected state, rounded, with how noticeable', () => {
  const v = pageVerdict([
    cell('current-dns', 'udp', 0, 'indistinguishable'),
    cell('cloudflare', 'doh', 42, 'slower'),
    cell('quad9', 'dot', 187, 'slower'),
    // Not the expected state: does not count, however good.
    cell('cloudflare', 'doh', -300, 'faster', false, 'warm'),
  ], name, en);
  assert.equal(v.kind, 'slower');
  assert.equal(v.badge, '+40');
  assert.deepEqual(v.best, { resolver: 'cloudflare', transport: 'doh' });
  assert.equal(v.sentence, 'With Cloudflare over DoH this page would finish about 40 ms later — hardly noticeable. The worst choice, Quad9 over DoT: about 190 ms later.');
});

test('no difference one would notice: "=" and a single sentence', () => {
  const v = pageVerdict([cell('cloudflare', 'doh', 3, 'indistinguishable'), cell('quad9', 'dot', 6, 'indistinguishable')], name, en);
  assert.deepEqual([v.kind, v.badge], ['same', '=']);
  assert.match(v.sentence, /^With Cloudflare over DoH this page would finish at about the same time as now \(within \d+ ms\) — you wouldn't notice\.$/);
});

test('failures come first; a page whose every encrypted choice fails is "fails"', () => {
  const some = pageVerdict([cell('quad9', 'dot', null, 'fails'), cell('cloudflare', 'doh', 150, 'slower')], name, en);
  assert.equal(some.kind, 'slower');
  assert.match(some.sentence, /^With Quad9 over DoT some of this page's hostnames never resolved: it would not load completely\. With Cloudflare over DoH this page would finish about 150 ms later\.$/);
  const all = pageVerdict([cell('quad9', 'dot', null, 'fails'), cell('cloudflare', 'doh', null, 'fails')], name, en);
  assert.deepEqual([all.kind, all.badge, all.best], ['fails', '!', null]);
});

test('faster, and nothing to compare', () => {
  const v = pageVerdict([cell('cloudflare', 'doq', -130, 'faster')], name, en);
  assert.deepEqual([v.kind, v.badge], ['faster', '−130']);
  assert.match(v.sentence, /about 130 ms sooner\.$/);
  const none = pageVerdict([cell('current-dns', 'udp', 0, 'indistinguishable'), cell('cloudflare', 'doh', null, 'unknown')], name, en);
  assert.deepEqual([none.kind, none.badge], ['unknown', '']);
});

test('the same verdict in German, numbers in the German locale', () => {
  const v = pageVerdict([cell('quad9', 'dot', null, 'fails'), cell('cloudflare', 'doh', 42, 'slower'), cell('quad9', 'doq', 1_234, 'slower')], name, de);
  assert.equal(v.sentence, 'Mit Quad9 über DoT wurden einige Hostnamen dieser Seite nie aufgelöst: Die Seite würde nicht vollständig laden. ' +
    'Mit Cloudflare über DoH wäre diese Seite etwa 40 ms später fertig – kaum spürbar. Die schlechteste Wahl, Quad9 über DoQ: etwa 1.230 ms später.');
  const two = pageVerdict([cell('quad9', 'dot', null, 'fails'), cell('cloudflare', 'dot', null, 'fails')], name, de);
  assert.match(two.sentence, /^Mit Quad9 über DoT und Cloudflare über DoT wurden/);
});
