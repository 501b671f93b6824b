// The cost-model validation's smallest case (bench/validate/, scripts/validate): fiber × the 1-host synthetic page
// and calibreapp's sign-in page rebuilt from its HAR × Chromium and Firefox × cold and warm × DoT (unbound) and DoH,
// 3 loads per side. It checks the plumbing, not the accuracy: every load finished; every name of every load reached
// the lab resolver over each side's own scheme (dns for Do53, tls for DoT through the stub, https for the browser's
// DoH) and nothing else; cold loads found their side's connection closed and warm ones open; every Do53 visit's
// replay asked, per name, exactly the types the lab resolver's log shows its browser asked, and gave a finite
// prediction; the browser's own log (Chromium's NetLog, Firefox's MOZ_LOG) has a finished lookup of every name and
// every row a per-lookup layer; the rows are well formed.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'vitest';
import { analyse, missingFor, predict, runValidation, SCHEME_OF } from '../../bench/validate/main.js';
import { rowsJson } from '../../bench/validate/report.js';
import { pageHostQtypes } from '../../common/browser-queries.js';
import { parseProfile } from '../../lab/profiles.js';
import { harPage } from '../../lab/paths.js';

const HAR = harPage('www.calibreapp.com.signin.har');
const LOADS = 3;

test('cost-model validation, smallest case: fiber × 1-host page and a HAR page × Chromium and Firefox × cold and warm × DoT and DoH', { timeout: 600_000 }, async (t) => {
  if (process.getuid?.() !== 0) return t.skip('needs root: network and mount namespaces');
  if (!existsSync(HAR)) return t.skip(`no HAR at ${HAR}`);
  const options = {
    browsers: ['chromium', 'firefox'] as const, profiles: [parseProfile('fiber')], pages: [1], hars: [HAR], scenarios: ['cold', 'warm'] as const,
    transports: ['dot', 'doh'] as const, loads: LOADS, repeat: 1, seed: 7, dotStub: 'unbound' as const, stubNoDelay: true,
  };
  const missing = missingFor({ ...options, browsers: [...options.browsers], transports: [...options.transports] });
  if (missing.length) assert.fail(missing.join('; '));
  const started = Date.now();
  const run = await runValidation({ ...options, browsers: [...options.browsers], scenarios: [...options.scenarios], transports: [...options.transports], log: () => {} });
  console.log(`validation smallest case: ${Math.round((Date.now() - started) / 1000)} s`);
  const [p] = run.profiles;
  assert.ok(p);
  assert.deepEqual(p.pages.map((x) => x.id), ['1', 'www.calibreapp.com.signin']);
  // Every side of every row gets exactly its loads.
  assert.equal(p.visits.length, 2 * 2 * 2 * 3 * LOADS, 'browsers × pages × scenarios × sides × loads');
  for (const v of p.visits) {
    const what = `${v.browser} ${v.transport} ${v.scenario} ${v.page} #${v.round}`;
    assert.equal(v.error, null, `${what}: ${v.error}`);
    assert.ok(Number.isFinite(v.onLoad) && v.onLoad! > 0, `${what}: onLoad ${v.onLoad}`);
    assert.equal(v.pageRecord?.browser, v.browser, `${what}: the page record names its browser`);
    // The query log: every name the page needed went over this side's scheme, and over no other.
    const names = [...new Set([v.pageRecord!.host, ...v.pageRecord!.hosts.filter((h) => h.kind === 'name').map((h) => h.name)])];
    const own = v.asked?.[SCHEME_OF[v.transport]] ?? {};
    for (const n of names) assert.ok(own[n]?.A, `${what}: ${n} was not asked for A over ${SCHEME_OF[v.transport]}: ${JSON.stringify(v.asked)}`);
    for (const [scheme, per] of Object.entries(v.asked ?? {})) {
      if (scheme !== SCHEME_OF[v.transport]) assert.ok(!names.some((n) => per[n]), `${what}: page names asked over ${scheme} too`);
    }
    // The connection state each scenario sets up (DoT: the stub's TLS connection; DoH: the browser's).
    if (v.transport === 'dot' || v.transport === 'doh') {
      assert.equal(v.openBefore! > 0, v.scenario === 'warm', `${what}: ${v.openBefore} connection(s) open before the load`);
      if (v.scenario === 'warm') assert.ok(v.warmScheme?.includes(SCHEME_OF[v.transport]), `${what}: the warm-up lookup went over ${v.warmScheme}`);
    }
    // The browser's own account of the load (NetLog, MOZ_LOG): a finished lookup of every name the page needed.
    for (const n of names) {
      assert.ok(v.lookups?.some((l) => l.name === n && l.ms !== null && l.ms >= 0), `${what}: no lookup of ${n} in the browser's log: ${JSON.stringify(v.lookups?.map((l) => l.name))}`);
    }
    if (v.transport !== 'do53') continue;
    // The replay asked per host what this browser asks (no IPv6 in the lab), and predicts finitely in the scenario's mode.
    assert.ok(v.records?.length, `${what}: no replay (${v.replayError})`);
    for (const r of v.records!.filter((x) => x.transport === 'udp')) {
      assert.ok(pageHostQtypes(v.browser, v.pageRecord!, r.host, { ipv6: false, httpsFirst: false }).includes(r.qtype), `${what}: the replay asked ${r.qtype} for ${r.host}`);
      assert.equal(r.mode, v.scenario, `${what}: replay mode`);
    }
    // The lab resolver's log: per name, the types the browser asked over Do53 in this load are the types the replay asked.
    const replayed = new Map<string, Set<string>>();
    for (const r of v.records!.filter((x) => x.transport === 'udp')) (replayed.get(r.host) ?? replayed.set(r.host, new Set()).get(r.host)!).add(r.qtype);
    for (const n of names) {
      assert.deepEqual(Object.keys(own[n] ?? {}).sort(), [...(replayed.get(n) ?? [])].sort(), `${what}: ${n}: the browser asked ${JSON.stringify(own[n])}, the replay ${[...(replayed.get(n) ?? [])]}`);
    }
    const est = predict(v, v.scenario === 'warm' ? 'warm' : 'cold');
    for (const tr of ['dot', 'doh'] as const) {
      const e = est[tr];
      assert.ok(e && [e.delta, e.lower, e.upper].every(Number.isFinite) && e.lower <= e.delta && e.delta <= e.upper, `${what} ${tr}: ${JSON.stringify(e)}`);
    }
  }
  const rows = analyse(run);
  assert.equal(rows.length, 2 * 2 * 2 * 2, 'browsers × pages × scenarios × candidates');
  for (const r of rows) {
    assert.deepEqual(r.loads, { do53: LOADS, candidate: LOADS, failed: 0 }, JSON.stringify(r));
    assert.ok(Number.isFinite(r.measured) && Number.isFinite(r.predicted?.delta) && Number.isFinite(r.tolerance), JSON.stringify(r));
    assert.equal(r.tolerance, Math.max(10, 0.1 * Math.abs(r.measured!)));
    // 3 loads a side cannot give a 95 % interval (the widest covers 90 %): no interval, so the row never counts as resolved.
    assert.equal(r.interval, null, JSON.stringify(r));
    assert.equal(r.halfWidth, null);
    assert.equal(r.resolved, false);
    assert.equal(r.within, Math.abs(r.predicted!.delta - r.measured!) <= r.tolerance!);
    assert.equal(r.queries.candidate?.complete, LOADS, `${r.browser} ${r.transport} ${r.scenario} ${r.page}: queries`);
    // The per-lookup layer: every row compares each name of the page, as the browser looked it up, with the replay's.
    assert.ok(r.lookups && r.lookups.n >= (r.page === '1' ? 1 : 2) && r.lookups.within <= r.lookups.n, `${r.browser} ${r.transport} ${r.scenario} ${r.page}: ${JSON.stringify(r.lookups)}`);
  }
  const json = JSON.parse(rowsJson(run, 'test')) as { rows: unknown[]; summary: { rows: number } };
  assert.equal(json.rows.length, rows.length);
  assert.equal(json.summary.rows, rows.length);
});
