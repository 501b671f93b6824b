// The Firefox build passes Mozilla's linter (web-ext lint, offline) with no errors and no warnings, nothing waived;
// each browser's manifest is derived from the top-level one as build.mjs says; the zip and the xpi carry exactly
// their unpacked build's files less source maps.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { requireBuiltExtension } from '../../lab/extension-build.js';
import { ROOT } from '../../lab/paths.js';
import { zipFiles } from '../../lab/zip.js';

interface LintMessage {
  code: string;
  message: string;
  file?: string;
}

/** Every file under `base`, as paths relative to it. */
function files(base: string, dir = base): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(base, path) : [relative(base, path)];
  });
}

test('web-ext lint: 0 errors, 0 warnings, 0 notices on the Firefox build', { timeout: 60_000 }, async () => {
  const dir = requireBuiltExtension('firefox');
  const bin = join(ROOT, 'node_modules/web-ext/bin/web-ext.js');
  const out = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, [bin, 'lint', '--source-dir', dir, '--output', 'json', '--no-config-discovery'],
      { env: { ...process.env, NO_UPDATE_NOTIFIER: '1' }, timeout: 50_000, maxBuffer: 16 * 1024 * 1024 },
      // web-ext exits non-zero when there are errors; the JSON says which.
      (err, stdout, stderr) => (stdout ? resolve(stdout) : reject(new Error(`web-ext lint: ${err?.message}\n${stderr}`))));
  });
  const report = JSON.parse(out) as { errors: LintMessage[]; warnings: LintMessage[]; notices: LintMessage[] };
  const show = (m: LintMessage) => `${m.code} ${m.file ?? ''}: ${m.message}`;
  assert.deepEqual([...report.errors, ...report.warnings, ...report.notices].map(show), [], 'nothing to report');
  console.log('web-ext lint: 0 errors, 0 warnings, 0 notices');
});

interface Manifest {
  version: string;
  key?: string;
  browser_specific_settings?: { gecko: { id: string; data_collection_permissions: { required: string[] } } };
  background: { service_worker?: string; scripts?: string[] };
  icons: Record<string, string>;
  action: { default_popup: string };
  options_ui: { page: string };
  permissions: string[];
  optional_permissions?: string[];
}

test('each browser\'s manifest is the top-level one with its own background and id, and names files in its build', () => {
  const shared = JSON.parse(readFileSync(join(ROOT, 'manifest.json'), 'utf8')) as Manifest;
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.equal(shared.version, pkg.version);
  for (const browser of ['chromium', 'firefox'] as const) {
    const dir = requireBuiltExtension(browser);
    const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;
    const { key, browser_specific_settings: gecko, background, permissions, optional_permissions: optional, ...rest } = m;
    const { key: _k, browser_specific_settings: _g, background: _b, permissions: sharedPermissions, optional_permissions: sharedOptional, ...sharedRest } = shared;
    assert.deepEqual(rest, sharedRest, `${browser}: everything else as in manifest.json`);
    // Firefox alone resolves for extensions (browser.dns: "Firefox as configured now"), and needs webRequest to know a
    // page went through a proxy; in Chromium webRequest stays optional.
    assert.deepEqual(sharedOptional, ['webRequest']);
    assert.deepEqual(permissions, browser === 'firefox' ? [...sharedPermissions, 'webRequest', 'dns'] : sharedPermissions);
    assert.deepEqual(optional, browser === 'firefox' ? undefined : ['webRequest']);
    if (browser === 'chromium') {
      assert.deepEqual([key, gecko, background], [shared.key, undefined, { service_worker: shared.background.service_worker }]);
    } else {
      // No Chromium key in the Firefox build; the Gecko id and the data-collection declaration are there.
      assert.deepEqual([key, gecko, background], [undefined, shared.browser_specific_settings, { scripts: shared.background.scripts }]);
      assert.ok(m.browser_specific_settings!.gecko.data_collection_permissions.required.includes('browsingActivity'));
    }
    const present = new Set(files(dir));
    for (const f of [...(background.scripts ?? []), ...(background.service_worker ? [background.service_worker] : []), m.action.default_popup, m.options_ui.page, 'LICENSE', 'privacy/privacy.html', 'howto/howto.html', 'welcome/welcome.html', 'welcome/welcome.js', ...Object.values(m.icons)]) {
      assert.ok(present.has(f), `${browser}: ${f} is in the build`);
    }
    // Each icon is a PNG of the size its key names (PNG IHDR: width and height at bytes 16 and 20).
    for (const [size, file] of Object.entries(m.icons)) {
      const png = readFileSync(join(dir, file));
      assert.deepEqual([png.subarray(1, 4).toString(), png.readUInt32BE(16), png.readUInt32BE(20)], ['PNG', Number(size), Number(size)], file);
    }
    // The privacy policy is linked from the options page (and from the store listing, extension/store/listing.md).
    assert.match(readFileSync(join(dir, m.options_ui.page), 'utf8'), /<a id="privacy-link" href="\.\.\/privacy\/privacy\.html">/);
  }
});

test('the Chromium zip and the Firefox xpi hold their builds without source maps; neither manifest has a key (the Chrome Web Store refuses one)', () => {
  for (const [browser, name] of [['chromium', 'dnscost-chromium.zip'], ['firefox', 'dnscost-firefox.xpi']] as const) {
    const dir = requireBuiltExtension(browser);
    const expected = files(dir).filter((f) => !f.endsWith('.map')).sort();
    const zipped = zipFiles(readFileSync(join(ROOT, 'build', name)));
    assert.deepEqual([...zipped.keys()].sort(), expected, name);
    for (const f of expected.filter((x) => x !== 'manifest.json')) assert.ok(zipped.get(f)!.equals(readFileSync(join(dir, f))), `${name}: ${f}`);
    const { key, ...rest } = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Record<string, unknown>;
    assert.deepEqual(JSON.parse(zipped.get('manifest.json')!.toString('utf8')), rest, `${name}: the unpacked build's manifest less its key`);
    // The unpacked Chromium build keeps the key: it fixes the id the host allows for development and the lab.
    assert.equal(key !== undefined, browser === 'chromium');
  }
});
