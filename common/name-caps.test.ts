import assert from 'node:assert/strict';
import { test } from 'vitest';
import { capDomain, capNames, looksGenerated, NAMES_PER_DOMAIN, NAMES_PER_PAGE } from './name-caps.js';

const random = (i: number) => `${(i * 2654435761 >>> 0).toString(36)}.victim.com`;

test('a page of 2,000 random subdomains of one domain: at most NAMES_PER_DOMAIN of them, the first needed; the other names stay', () => {
  const page = [{ name: 'www.news.example.org' }, ...Array.from({ length: 2000 }, (_, i) => ({ name: random(i) })), { name: 'cdn.news.example.org' }];
  const { kept, dropped } = capNames(page);
  assert.deepEqual(kept.map((h) => h.name), ['www.news.example.org', ...Array.from({ length: NAMES_PER_DOMAIN }, (_, i) => random(i)), 'cdn.news.example.org']);
  assert.equal(dropped.length, 2000 - NAMES_PER_DOMAIN);
  assert.ok(dropped.every((d) => d.reason === 'domain-cap'));
});

test('registrable domains from the Public Suffix List, private suffixes included: each cloudfront customer is its own domain', () => {
  assert.equal(capDomain('a.b.victim.co.uk'), 'victim.co.uk');
  assert.equal(capDomain('d2wy8f7a9ursnm.cloudfront.net'), 'd2wy8f7a9ursnm.cloudfront.net');
  const many = Array.from({ length: 30 }, (_, i) => ({ name: `d${i}.cloudfront.net` }));
  assert.equal(capNames(many).kept.length, 30, 'thirty customers of one CDN are thirty domains');
  assert.equal(capNames(Array.from({ length: 30 }, (_, i) => ({ name: `x${i}.victim.co.uk` }))).kept.length, NAMES_PER_DOMAIN);
});

test('at most NAMES_PER_PAGE names in all; under the lab setting special-use names are not counted (they never reach a public resolver)', () => {
  const spread = Array.from({ length: 400 }, (_, i) => ({ name: `www.site${i}.com` }));
  const { kept, dropped } = capNames(spread);
  assert.equal(kept.length, NAMES_PER_PAGE);
  assert.deepEqual(dropped[0], { name: `www.site${NAMES_PER_PAGE}.com`, reason: 'page-cap' });
  const lab = Array.from({ length: 300 }, (_, i) => ({ name: `p300-h${i}.val.example` }));
  assert.equal(capNames(lab, { lab: true }).kept.length, 300);
  assert.equal(capNames(lab).kept.length, NAMES_PER_DOMAIN, 'without the lab setting they count like any other');
});

test("names that look generated for one visit (beacons, random subdomains) are sampled once per domain: the first needed stands for them all", () => {
  for (const l of ['u7f3a9c2e', 'x8k2p0qz1', 'a1b2c3d4e5', '3f2a9c1e-77b0-4c1d-9e2a-0c5b1d9e8f71', 'deadbeef00112233']) assert.equal(looksGenerated(l), true, l);
  // Real hosts' labels: short, words, few digits.
  for (const l of ['cdn', 'static2', 'img-s', 'fonts', 'a1146', 'www', 'tpc', 'securepubads', 'pagead2', 'd2wy8f7a9ursnm', 'cdn3-images', 'ajax']) {
    assert.equal(looksGenerated(l), l === 'd2wy8f7a9ursnm', l);
  }
  const page = [
    { name: 'www.shop.example' },
    { name: 'u7f3a9c2e.track.example' },
    { name: 'cdn.track.example' },
    { name: 'v9a8b7c6d.track.example' },
    { name: 'w1x2y3z4q.track.example' },
    { name: 'k5m6n7p8r.other.example' },
  ];
  const { kept, dropped } = capNames(page);
  assert.deepEqual(kept.map((h) => h.name), ['www.shop.example', 'u7f3a9c2e.track.example', 'cdn.track.example', 'k5m6n7p8r.other.example']);
  assert.deepEqual(dropped, [{ name: 'v9a8b7c6d.track.example', reason: 'generated' }, { name: 'w1x2y3z4q.track.example', reason: 'generated' }]);
  // A CDN customer's own label is its registrable domain, not a label below it: never sampled away.
  assert.equal(capNames([{ name: 'd2wy8f7a9ursnm.cloudfront.net' }, { name: 'd3k4f8a1b2c3d4.cloudfront.net' }]).kept.length, 2);
});
