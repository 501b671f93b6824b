// The background's settings store with fake storage areas: defaults, partial changes validated with paths, the
// administrator's policy on top (fixed fields refused with policy-fixed), export/import (consent never imported),
// consent, data-clear keeping only the settings, and the policy states of each browser's managed storage.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import { PUBLIC_RESOLVERS } from '../../../common/default-resolvers.js';
import { dispatchExtensionMessage } from '../messages/index.js';
import type { ResolverSpec } from '../../../common/schema.js';
import { defaultSettings } from '../settings.js';
import { handlers, type BackgroundContext } from './handlers.js';
import { SETTINGS_KEY, SettingsStore, applyChanges, isNoManagedManifestError, policyStatus } from './settings-store.js';
import { FakeArea } from './test-fixtures.js';

const lab: ResolverSpec = { id: 'lab', name: 'Lab', endpoints: [{ transport: 'dot', address: '127.0.0.1', port: 8853, serverName: 'dns.test' }] };

function store(managed: (() => Promise<Record<string, unknown>>) | null = async () => ({})) {
  const local = new FakeArea();
  let now = 1000;
  const s = new SettingsStore({ local, readManaged: managed, defaultResolvers: [...PUBLIC_RESOLVERS], now: () => now++ });
  return { s, local };
}

test('defaults when nothing is stored; corrupt stored settings fall back to defaults and say why', async () => {
  const { s, local } = store();
  const v = await s.view();
  assert.deepEqual(v.settings, defaultSettings([...PUBLIC_RESOLVERS]));
  assert.deepEqual(v.fixed, []);
  assert.equal(v.policy.state, 'none');
  local.data.set(SETTINGS_KEY, { version: 1, resolvers: 'x' });
  const broken = await s.view();
  assert.deepEqual(broken.own, defaultSettings([...PUBLIC_RESOLVERS]));
  assert.match(broken.storedProblems.join(';'), /resolvers/);
});

test('settings-set: partial changes are validated with paths and notify listeners', async () => {
  const { s } = store();
  const seen: number[] = [];
  s.onChange((v) => seen.push(v.settings.budget.pagesPerHour));
  const r = await s.set({ budget: { pagesPerHour: 10 }, exclusions: ['Bank.Example'], resolvers: [lab] });
  assert.equal(r.ok, true);
  assert.deepEqual((await s.loadSettings()).budget, { pagesPerHour: 10, remeasureAfterHours: 24 });
  assert.deepEqual((await s.loadSettings()).exclusions, ['bank.example']);
  assert.deepEqual(seen, [10]);
  for (const [changes, path] of [
    [{ budget: { pagesPerHour: -1 } }, /budget\.pagesPerHour/],
    [{ resolvers: [{ ...lab, endpoints: [{ transport: 'dot', address: 'dns.test', port: 853 }] }] }, /resolvers\.0\.endpoints\.0\.address/],
    [{ resolvers: [] }, /resolvers/],
    [{ exclusions: ['not a host'] }, /exclusions/],
  ] as const) {
    const bad = await s.set(changes as never);
    assert.equal(bad.ok, false);
    assert.equal((bad as { code: string }).code, 'invalid-settings');
    assert.match((bad as { problems: string[] }).problems.join(';'), path);
  }
  assert.deepEqual((await s.loadSettings()).resolvers, [lab], 'refused changes change nothing');
});

test('concurrent changes do not lose each other', async () => {
  const { s } = store();
  await Promise.all([s.set({ budget: { pagesPerHour: 7 } }), s.set({ exclusions: ['a.example'] }), s.setConsent(true)]);
  const now = await s.loadSettings();
  assert.equal(now.budget.pagesPerHour, 7);
  assert.deepEqual(now.exclusions, ['a.example']);
  assert.equal(now.consent.given, true);
});

test('policy: its fields are in force and fixed; changing them is refused with policy-fixed; the rest stays the person\'s', async () => {
  const { s } = store(async () => ({ resolvers: [lab], consent: true }));
  const v = await s.view();
  assert.deepEqual(v.settings.resolvers, [lab]);
  assert.equal(v.settings.consent.given, true);
  assert.deepEqual(v.own.resolvers, [...PUBLIC_RESOLVERS]);
  assert.deepEqual(v.fixed, ['resolvers', 'consent']);
  assert.equal(v.policy.state, 'applied');
  const r = await s.set({ resolvers: [PUBLIC_RESOLVERS[0]] });
  assert.deepEqual([r.ok, (r as { code: string }).code, (r as { fields: string[] }).fields], [false, 'policy-fixed', ['resolvers']]);
  assert.equal((await s.set({ resolvers: [lab] })).ok, true, 'the value in force is not a change');
  assert.equal(((await s.setConsent(false)) as { code: string }).code, 'policy-fixed');
  assert.equal((await s.set({ budget: { remeasureAfterHours: 48 } })).ok, true);
});

test('policy states: none, invalid (ignored), unavailable, Firefox without a managed manifest', async () => {
  assert.equal((await store(async () => ({ resolvers: 'x' })).s.view()).policy.state, 'invalid');
  assert.deepEqual((await store(async () => ({ resolvers: 'x' })).s.view()).fixed, []);
  assert.equal((await store(null).s.view()).policy.state, 'unavailable');
  const ff = await store(async () => {
    throw new Error('Managed storage manifest not found');
  }).s.view();
  assert.equal(ff.policy.state, 'none');
  const broken = await store(async () => {
    throw new Error('storage is on fire');
  }).s.view();
  assert.equal(broken.policy.state, 'unavailable');
  assert.match(broken.policy.message, /on fire/);
  assert.equal(isNoManagedManifestError(new Error('Managed storage manifest not found')), true);
  assert.equal(policyStatus({ value: {} }).status.state, 'none');
});

test('export then import round-trips; bad files change nothing; consent is never imported', async () => {
  const { s } = store();
  await s.set({ resolvers: [lab], budget: { pagesPerHour: 2 } });
  await s.setConsent(true);
  const exported = await s.exportJson();
  const own = (await s.view()).own;
  assert.deepEqual(JSON.parse(exported.json), own);
  const modified = { ...own, budget: { pagesPerHour: 9, remeasureAfterHours: 12 }, consent: { given: false, at: null } };
  const r = await s.import(JSON.stringify(modified));
  assert.equal(r.ok, true);
  assert.equal((r as { consentKept: boolean }).consentKept, true);
  const after = await s.loadSettings();
  assert.deepEqual(after.budget, { pagesPerHour: 9, remeasureAfterHours: 12 });
  assert.equal(after.consent.given, true, 'consent kept');
  for (const [json, code, problem] of [
    ['{not json', 'bad-json', /^$/],
    [JSON.stringify({ ...own, version: 2 }), 'invalid-settings', /version/],
    [JSON.stringify({ ...own, resolvers: [{ ...lab, endpoints: [{ transport: 'doh', address: '127.0.0.1', port: 70000 }] }] }), 'invalid-settings', /resolvers\.0\.endpoints\.0\.port/],
  ] as const) {
    const bad = await s.import(json);
    assert.equal(bad.ok, false);
    assert.equal((bad as { code: string }).code, code);
    assert.match((bad as { problems: string[] }).problems.join(';'), problem);
  }
  assert.deepEqual(await s.loadSettings(), after, 'bad imports changed nothing');
});

test('consent holds for the resolvers and current DNS it was given for; a change to either asks again', async () => {
  const { s, local } = store();
  await s.setConsent(true);
  assert.equal((await s.loadSettings()).consent.given, true);
  await s.set({ budget: { pagesPerHour: 2 }, exclusions: ['a.example'] });
  assert.equal((await s.loadSettings()).consent.given, true, 'the budget and exclusions are not what consent covers');
  await s.set({ resolvers: [lab] });
  assert.equal((await s.loadSettings()).consent.given, false, 'other resolvers');
  assert.equal((await s.view()).own.consent.given, false, 'stored so: changing back does not bring it back');
  await s.set({ resolvers: [...PUBLIC_RESOLVERS] });
  assert.equal((await s.loadSettings()).consent.given, false);
  await s.setConsent(true);
  await s.set({ currentDns: false });
  assert.equal((await s.loadSettings()).consent.given, false, 'the current DNS no longer measured');
  // An endpoint moved to another address is another resolver, whatever its id.
  await s.setConsent(true);
  await s.set({ resolvers: [{ ...PUBLIC_RESOLVERS[0]!, endpoints: PUBLIC_RESOLVERS[0]!.endpoints.map((e) => ({ ...e, address: '192.0.2.53' })) }] });
  assert.equal((await s.loadSettings()).consent.given, false);
  // The CA a resolver is trusted with decides who may answer for it: another CA is another resolver.
  const caPem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';
  await s.set({ resolvers: [{ ...lab, ca: caPem }] });
  await s.setConsent(true);
  await s.set({ resolvers: [{ ...lab, ca: caPem.replace('MIIB', 'MIIC') }] });
  assert.equal((await s.loadSettings()).consent.given, false, 'another CA');
  // Consent stored before it was bound (no `for`) is asked again.
  await s.setConsent(true);
  const stored = local.data.get(SETTINGS_KEY) as { consent: Record<string, unknown> };
  local.data.set(SETTINGS_KEY, { ...stored, consent: { given: true, at: 5 } });
  assert.equal((await s.loadSettings()).consent.given, false);
});

test('uploads are bound to the collector they were turned on for, and to the consent', async () => {
  const { s } = store();
  await s.setConsent(true);
  assert.equal((await s.set({ upload: { enabled: true, collector: 'https://a.example/' } } as never)).ok, true);
  assert.equal((await s.loadSettings()).upload.enabled, true, 'turned on with its collector in one change');
  await s.set({ upload: { collector: 'https://b.example/' } } as never);
  assert.equal((await s.loadSettings()).upload.enabled, false, 'another collector, not agreed: off');
  await s.set({ upload: { enabled: true, collector: 'https://b.example/' } } as never);
  assert.equal((await s.loadSettings()).upload.enabled, true);
  await s.set({ resolvers: [lab] });
  const after = await s.loadSettings();
  assert.deepEqual([after.consent.given, after.upload.enabled], [false, false], 'consent asked again: uploads off with it');
});

test('the options form sends the box as it stands: a new collector with the box still ticked is not agreed to', async () => {
  const { s } = store();
  await s.setConsent(true);
  await s.set({ upload: { enabled: true, paused: false, collector: 'https://a.example/', network: { type: 'unknown' } } } as never);
  assert.equal((await s.loadSettings()).upload.enabled, true);
  // The form's next save: only the collector edited, the box left ticked.
  await s.set({ upload: { enabled: true, paused: false, collector: 'https://b.example/', network: { type: 'unknown' } } } as never);
  const after = await s.loadSettings();
  assert.deepEqual([after.upload.collector, after.upload.enabled], ['https://b.example/', false]);
  // Ticking it again (from off) for that collector is agreeing.
  await s.set({ upload: { enabled: true, paused: false, collector: 'https://b.example/', network: { type: 'unknown' } } } as never);
  assert.equal((await s.loadSettings()).upload.enabled, true);
});

test('withdrawing consent turns uploads off; giving it again does not turn them back on', async () => {
  const { s } = store();
  await s.setConsent(true);
  await s.set({ upload: { enabled: true, collector: 'https://a.example/' } } as never);
  await s.setConsent(false);
  const off = await s.loadSettings();
  assert.deepEqual([off.consent.given, off.upload.enabled], [false, false]);
  await s.setConsent(true);
  assert.equal((await s.loadSettings()).upload.enabled, false);
});

test('an import that changes the resolvers or the collector clears consent or uploads; one that does not keeps them', async () => {
  const { s } = store();
  await s.setConsent(true);
  await s.set({ upload: { enabled: true, collector: 'https://a.example/' } } as never);
  const own = (await s.view()).own;
  assert.equal((await s.import(JSON.stringify({ ...own, budget: { pagesPerHour: 1, remeasureAfterHours: 1 } }))).ok, true);
  assert.deepEqual([(await s.loadSettings()).consent.given, (await s.loadSettings()).upload.enabled], [true, true]);
  assert.equal((await s.import(JSON.stringify({ ...own, upload: { ...own.upload, collector: 'https://elsewhere.example/' } }))).ok, true);
  assert.deepEqual([(await s.loadSettings()).consent.given, (await s.loadSettings()).upload.enabled], [true, false], 'another collector: uploads off');
  assert.equal((await s.import(JSON.stringify({ ...own, resolvers: [lab] }))).ok, true);
  assert.equal((await s.loadSettings()).consent.given, false, 'other resolvers: consent asked again');
});

test('data-clear removes every key but the settings and tells its listeners', async () => {
  const { s, local } = store();
  await s.set({ exclusions: ['a.example'] });
  local.data.set('pages', [1]);
  local.data.set('result:1', {});
  let cleared = 0;
  s.onDataCleared(() => {
    cleared++;
  });
  assert.deepEqual(await s.clearData(), { ok: true, removed: ['pages', 'result:1'] });
  assert.deepEqual([...local.data.keys()], [SETTINGS_KEY]);
  assert.equal(cleared, 1);
});

test('applyChanges merges a partial budget', () => {
  const own = defaultSettings([lab]);
  const r = applyChanges(own, { budget: { remeasureAfterHours: 2 } });
  assert.ok(r.ok && r.settings.budget.pagesPerHour === own.budget.pagesPerHour && r.settings.budget.remeasureAfterHours === 2);
});

test('the background dispatches settings messages through the validator', async () => {
  const { s } = store();
  const ctx = { settings: s } as unknown as BackgroundContext;
  assert.equal(((await dispatchExtensionMessage(handlers, { type: 'settings-get' }, ctx)) as { ok: boolean }).ok, true);
  for (const bad of [{ type: 'settings-set' }, { type: 'settings-set', changes: { consent: { given: true, at: 1 } } }, { type: 'settings-import', json: 5 }, { type: 'data-clear', all: true }]) {
    assert.equal(((await dispatchExtensionMessage(handlers, bad, ctx)) as { code: string }).code, 'bad-request', JSON.stringify(bad));
  }
  const given = (await dispatchExtensionMessage(handlers, { type: 'consent-give' }, ctx)) as { settings: { consent: { given: boolean } } };
  assert.equal(given.settings.consent.given, true);
});
