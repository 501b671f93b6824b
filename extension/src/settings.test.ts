import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'vitest';
import type { ResolverSpec } from '../../common/schema.js';
import { TRANSPORT_IDS } from '../../common/transports.js';
import { applyPolicy, defaultSettings, isExcluded, managedPolicySchema, parseSettings } from './settings.js';

const lab: ResolverSpec = { id: 'lab', name: 'Lab', endpoints: [{ transport: 'udp', address: '127.0.0.1', port: 53 }] };
const other: ResolverSpec = { id: 'corp', name: 'Corp', endpoints: [{ transport: 'dot', address: '10.0.0.1', port: 853, serverName: 'dns.corp' }] };

test('defaults are valid, conservative and without consent', () => {
  const s = defaultSettings([lab]);
  const parsed = parseSettings(JSON.parse(JSON.stringify(s)));
  assert.equal(parsed.ok, true);
  assert.equal(s.consent.given, false);
  assert.ok(s.budget.pagesPerHour <= 10);
});

test('imports are validated: bad shapes, versions, endpoints and exclusions are refused with a path', () => {
  const s = defaultSettings([lab]);
  const cases: Array<[unknown, RegExp]> = [
    [{ ...s, version: 2 }, /version/],
    [{ ...s, resolvers: [] }, /resolvers/],
    [{ ...s, resolvers: [{ ...lab, endpoints: [{ transport: 'udp', address: 'evil.example', port: 53 }] }] }, /resolvers\.0\.endpoints\.0\.address/],
    [{ ...s, budget: { pagesPerHour: -1, remeasureAfterHours: 24 } }, /budget\.pagesPerHour/],
    [{ ...s, exclusions: ['<script>'] }, /exclusions/],
    [{ ...s, extra: 1 }, /extra/],
    ['nonsense', /settings/],
  ];
  for (const [value, problem] of cases) {
    const r = parseSettings(value);
    assert.equal(r.ok, false, JSON.stringify(value).slice(0, 80));
    if (!r.ok) assert.match(r.problems.join('; '), problem);
  }
  const ok = parseSettings({ ...s, exclusions: ['Bank.Example.', 'bank.example'] });
  assert.ok(ok.ok && ok.settings.exclusions.length === 1 && ok.settings.exclusions[0] === 'bank.example');
});

test('policy fields replace the person\'s; an invalid policy changes nothing and is reported', () => {
  const s = defaultSettings([lab]);
  assert.deepEqual(applyPolicy(s, undefined), { settings: s, policyProblems: [] });
  const forced = applyPolicy(s, { resolvers: [other], consent: true });
  assert.deepEqual(forced.settings.resolvers, [other]);
  assert.equal(forced.settings.consent.given, true);
  const bad = applyPolicy(s, { resolvers: 'x' });
  assert.equal(bad.settings, s);
  assert.equal(bad.policyProblems.length > 0, true);
});

test('exclusions cover the site and its subdomains only', () => {
  const s = { exclusions: ['bank.example'] };
  for (const h of ['bank.example', 'www.bank.example', 'BANK.EXAMPLE.']) assert.equal(isExcluded(s, h), true, h);
  for (const h of ['notbank.example', 'bank.example.com', 'example']) assert.equal(isExcluded(s, h), false, h);
});

test("the managed-storage schema Chromium reads names every transport and every field the policy may fix", () => {
  const schema = JSON.parse(readFileSync(new URL('./managed-schema.json', import.meta.url), 'utf8')) as {
    properties: Record<string, unknown> & { resolvers: { items: { properties: { endpoints: { items: { properties: { transport: { enum: string[] } } } } } } } };
  };
  assert.deepEqual(schema.properties.resolvers.items.properties.endpoints.items.properties.transport.enum, [...TRANSPORT_IDS]);
  assert.deepEqual(Object.keys(schema.properties).sort(), Object.keys(managedPolicySchema.entries).sort());
});
