// The cost-model validation experiment's smallest case (bench/validate/): one profile (fiber), the
// 1-host and 10-host pages, 3 loads per transport in headless Chromium. It checks the plumbing, not the accuracy:
// the browser really resolved every name of both pages over each transport (the lab resolver's query log per scheme:
// dns for Do53, tls for DoT through unbound (with TCP_NODELAY, as the committed run), https for DoH), every load finished, and every Do53 visit gave a finite
// prediction for DoT and DoH.
import assert from 'node:assert/strict';
import { test } from 'vitest';
import { analyse, BROWSER_TRANSPORTS, predict, runValidation, SCHEME_OF } from '../../bench/validate/main.js';
import { findBrowser } from '../../lab/browsers.js';
import { pagePlan } from '../../lab/site/validation-site.js';

const PAGES = [1, 10];
const LOADS = 3;

test('cost-model validation, smallest case: fiber × pages 1 and 10 × 3 loads in Chromium over Do53, DoT (unbound), DoH', { timeout: 150_000 }, async (t) => {
  if (process.getuid?.() !== 0) return t.skip('needs root: network and mount namespaces');
  if (!findBrowser('chromium')) assert.fail('chromium is not installed: scripts/setup installs it');
  const started = Date.now();
  const run = await runValidation({ profiles: ['fiber'], pages: PAGES, loads: LOADS, browser: 'chromium', repeat: 1, seed: 7, dotStub: 'unbound', stubNoDelay: true, log: () => {} });
  console.log(`validation smallest case: ${Date.now() - started} ms`);
  const [p] = run.profiles;
  assert.ok(p);
  assert.equal(p.visits.length, PAGES.length * BROWSER_TRANSPORTS.length * LOADS);
  for (const v of p.visits) {
    assert.equal(v.error, null, `${v.transport} page ${v.page} round ${v.round}: ${v.error}`);
    assert.ok(Number.isFinite(v.onLoad) && v.onLoad! > 0, `${v.transport} page ${v.page}: onLoad ${v.onLoad}`);
  }
  // Each transport really reached the lab resolver for every name of every page: Chromium over UDP, unbound over TLS,
  // Chromium's DoH over HTTPS. (With DoH, resolv.conf points at a dead stub, so a fallback would have failed the load.)
  for (const transport of BROWSER_TRANSPORTS) {
    const seen = p.queries[SCHEME_OF[transport]] ?? {};
    for (const n of PAGES) {
      for (const h of pagePlan(n)) assert.ok((seen[h.name] ?? 0) >= LOADS, `${transport}: ${h.name} asked ${seen[h.name] ?? 0} times over ${SCHEME_OF[transport]}`);
    }
  }
  // Every Do53 visit carries its page record and replay, and gives a finite prediction for DoT and DoH.
  const do53 = p.visits.filter((v) => v.transport === 'do53');
  for (const v of do53) {
    assert.equal(v.pageRecord?.hosts.length, v.page, `page ${v.page}: hosts in the record`);
    const est = predict(v);
    for (const tr of ['dot', 'doh'] as const) {
      const e = est[tr];
      assert.ok(e && [e.delta, e.lower, e.upper].every(Number.isFinite) && e.lower <= e.delta && e.delta <= e.upper, `page ${v.page} ${tr}: ${JSON.stringify(e)}`);
    }
  }
  const rows = analyse(run);
  assert.equal(rows.length, PAGES.length * 2);
  for (const r of rows) assert.ok(Number.isFinite(r.measured) && Number.isFinite(r.predicted?.delta) && Number.isFinite(r.medianAbsError), JSON.stringify(r));
});
