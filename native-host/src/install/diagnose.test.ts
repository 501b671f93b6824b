// The doctor's verdicts, case by case, from observations built by hand.
import assert from 'node:assert/strict';
import { test } from 'vitest';
import { targetFor, type BrowserTarget } from './browsers.js';
import { diagnose, type Observation } from './diagnose.js';
import type { PathState } from './fs.js';
import type { HelloResult } from './hello-probe.js';
import { launcherScript } from './launcher.js';
import { CHROMIUM_ORIGIN, manifestFor } from './manifest.js';
import { placeFor } from './platform.js';
import { PROTOCOL_VERSION } from '../../../common/schema.js';

const FIX = { install: 'FIX-INSTALL', build: 'FIX-BUILD' };
const ok: PathState = { exists: true, isFile: true, executable: true };
const gone: PathState = { exists: false, isFile: false, executable: false };
const LAUNCHER = '/h/.local/share/dnscost/dnscost-host';
const fxTarget = targetFor('firefox', placeFor('linux', '/h', {}, true));
const crTarget = targetFor('chrome', placeFor('linux', '/h', {}, true));
const healthy = (target: BrowserTarget): Observation => ({
  target,
  platform: 'linux',
  manifestText: JSON.stringify(manifestFor(target.browser, LAUNCHER)),
  hostPath: ok,
  launcherText: launcherScript('linux', '/usr/bin/node', '/r/native-host/bin/dnscost-host.js'),
  node: ok,
  script: ok,
  built: ok,
  hello: { ok: true, ms: 42, reply: { type: 'hello', version: '0.1.0', protocol: PROTOCOL_VERSION } },
});

test('doctor verdicts: a healthy registration passes every check', () => {
  for (const t of [fxTarget, crTarget]) {
    const checks = diagnose(healthy(t), FIX);
    assert.ok(checks.every((c) => c.ok), JSON.stringify(checks));
    assert.deepEqual(checks.map((c) => c.check), ['manifest', 'name', t.browser === 'firefox' ? 'allowed_extensions' : 'allowed_origins', 'path', 'node', 'script', 'hello']);
  }
});

test('doctor says which extensions may start the host: dnscost\'s own, and those added with install --extension-id', () => {
  const store = 'b'.repeat(32);
  const detail = (t: BrowserTarget, extra: string[]) =>
    diagnose({ ...healthy(t), manifestText: JSON.stringify(manifestFor(t.browser, LAUNCHER, extra)) }, FIX).find((c) => /^allowed_/.test(c.check))!.detail;
  assert.equal(detail(crTarget, []), `${CHROMIUM_ORIGIN} (dnscost)`);
  assert.equal(detail(crTarget, [store]), `${CHROMIUM_ORIGIN} (dnscost) and chrome-extension://${store}/ (added with install --extension-id)`);
  assert.equal(detail(fxTarget, [store, 'beta@example.org']), 'dnscost@dnscost.org (dnscost) and beta@example.org (added with install --extension-id)');
});

test('doctor verdicts: each problem names itself and its fix', () => {
  const helloFail: HelloResult = { ok: false, ms: 10000, error: 'no answer within 10000 ms', stderr: 'boom\n' };
  const cases: [string, Observation, string, RegExp, string][] = [
    ['missing', { ...healthy(fxTarget), manifestText: null }, 'manifest', /missing/, FIX.install],
    ['bad JSON', { ...healthy(fxTarget), manifestText: '{"name":' }, 'manifest', /not valid JSON/, FIX.install],
    ['array', { ...healthy(fxTarget), manifestText: '[]' }, 'manifest', /not a JSON object/, FIX.install],
    ['name', { ...healthy(fxTarget), manifestText: JSON.stringify({ ...manifestFor('firefox', LAUNCHER), name: 'org.other' }) }, 'name', /org\.other/, FIX.install],
    ['type', { ...healthy(fxTarget), manifestText: JSON.stringify({ ...manifestFor('firefox', LAUNCHER), type: 'socket' }) }, 'type', /stdio/, FIX.install],
    ['gecko id', { ...healthy(fxTarget), manifestText: JSON.stringify({ ...manifestFor('firefox', LAUNCHER), allowed_extensions: ['x@y'] }) }, 'allowed_extensions', /lacks "dnscost@dnscost\.org"/, FIX.install],
    ['firefox manifest given to chrome', { ...healthy(crTarget), manifestText: JSON.stringify(manifestFor('firefox', LAUNCHER)) }, 'allowed_origins', /lacks/, FIX.install],
    [
      'no trailing slash',
      { ...healthy(crTarget), manifestText: JSON.stringify({ ...manifestFor('chrome', LAUNCHER), allowed_origins: [CHROMIUM_ORIGIN.slice(0, -1)] }) },
      'allowed_origins',
      /without the trailing slash/,
      FIX.install,
    ],
    ['relative path', { ...healthy(fxTarget), manifestText: JSON.stringify(manifestFor('firefox', 'dnscost-host')) }, 'path', /not an absolute path/, FIX.install],
    ['path gone', { ...healthy(fxTarget), hostPath: gone }, 'path', /does not exist/, FIX.install],
    ['path not executable', { ...healthy(fxTarget), hostPath: { ...ok, executable: false } }, 'path', /not executable/, FIX.install],
    ['node gone', { ...healthy(crTarget), node: gone }, 'node', /\/usr\/bin\/node, which is gone/, FIX.install],
    ['script gone', { ...healthy(crTarget), script: gone }, 'script', /is gone/, FIX.install],
    ['not built', { ...healthy(crTarget), built: gone }, 'build', /not compiled/, FIX.build],
    ['no hello', { ...healthy(crTarget), hello: helloFail }, 'hello', /no answer within 10000 ms; stderr: boom/, `${FIX.build} && ${FIX.install}`],
    ['other protocol', { ...healthy(crTarget), hello: { ok: true, ms: 5, reply: { type: 'hello', version: '9', protocol: 9 } } }, 'hello', /protocol 9/, FIX.install],
    ['not a hello', { ...healthy(crTarget), hello: { ok: true, ms: 5, reply: { type: 'error' } } }, 'hello', /instead of a hello/, FIX.install],
  ];
  for (const [why, obs, check, detail, fix] of cases) {
    const checks = diagnose(obs, FIX);
    const last = checks.at(-1)!;
    assert.equal(checks.filter((c) => !c.ok).length, 1, why);
    assert.equal(last.ok, false, why);
    assert.equal(last.check, check, why);
    assert.match(last.detail, detail, why);
    assert.equal(last.fix, fix, why);
  }
  // A foreign executable is started as is (no launcher checks).
  const foreign = diagnose({ ...healthy(fxTarget), launcherText: '#!/bin/sh\nexec something\n' }, FIX);
  assert.ok(foreign.every((c) => c.ok));
  assert.ok(foreign.some((c) => c.check === 'launcher'));
});

test('doctor verdicts on Windows: the registry key must name the manifest', () => {
  const t = targetFor('edge', placeFor('win32', 'C:\\Users\\u', {}, true));
  const base: Observation = { ...healthy(t), platform: 'win32', launcherText: null, manifestText: JSON.stringify(manifestFor('edge', 'C:\\Users\\u\\AppData\\Local\\dnscost\\dnscost-host.bat')) };
  const missing = diagnose({ ...base, registryValue: null }, FIX);
  assert.deepEqual(missing.map((c) => [c.check, c.ok, c.fix]), [['registry', false, FIX.install]]);
  const fine = diagnose({ ...base, registryValue: t.manifestPath }, FIX);
  assert.ok(fine.every((c) => c.ok), JSON.stringify(fine));
  assert.equal(fine[0]!.check, 'registry');
});
