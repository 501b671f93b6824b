// The built extension passes Mozilla's linter (web-ext lint, offline) with no errors, and the zip and xpi carry
// exactly the unpacked build's files less source maps.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { requireBuiltExtension } from '../../lab/extension-build.js';
import { ROOT } from '../../lab/paths.js';

/** Warnings the build is known to draw, with why they stay. */
const EXPECTED_WARNINGS: Record<string, string> = {
  // One MV3 manifest for both browsers: Chromium needs service_worker, Firefox uses scripts (LAB.md).
  BACKGROUND_SERVICE_WORKER_IGNORED: 'background.service_worker is for Chromium',
  // Firefox's data-collection consent declaration (gecko.data_collection_permissions) needs Firefox >= 140 and a
  // decision about what the measuring and opt-in upload features declare; left open until they exist.
  MISSING_DATA_COLLECTION_PERMISSIONS: 'data collection declaration not decided yet',
};

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

test('web-ext lint reports no errors on build/extension', { timeout: 60_000 }, async () => {
  const dir = requireBuiltExtension();
  const bin = join(ROOT, 'node_modules/web-ext/bin/web-ext.js');
  const out = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, [bin, 'lint', '--source-dir', dir, '--output', 'json', '--no-config-discovery'],
      { env: { ...process.env, NO_UPDATE_NOTIFIER: '1' }, timeout: 50_000, maxBuffer: 16 * 1024 * 1024 },
      // web-ext exits non-zero when there are errors; the JSON says which.
      (err, stdout, stderr) => (stdout ? resolve(stdout) : reject(new Error(`web-ext lint: ${err?.message}\n${stderr}`))));
  });
  const report = JSON.parse(out) as { errors: LintMessage[]; warnings: LintMessage[]; notices: LintMessage[] };
  const show = (m: LintMessage) => `${m.code} ${m.file ?? ''}: ${m.message}`;
  assert.deepEqual(report.errors.map(show), [], 'no lint errors');
  const unexpected = report.warnings.filter((w) => !(w.code in EXPECTED_WARNINGS));
  assert.deepEqual(unexpected.map(show), [], 'no warnings beyond the known ones');
  console.log(`web-ext lint: 0 errors, ${report.warnings.length} known warnings (${report.warnings.map((w) => w.code).join(', ')}), ${report.notices.length} notices`);
});

test('the manifest is the top-level one, with pages and scripts that exist in the build', () => {
  const dir = requireBuiltExtension();
  const built = readFileSync(join(dir, 'manifest.json'), 'utf8');
  assert.equal(built, readFileSync(join(ROOT, 'manifest.json'), 'utf8'));
  const m = JSON.parse(built) as {
    version: string;
    background: { service_worker: string; scripts: string[] };
    action: { default_popup: string };
    options_ui: { page: string };
  };
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.equal(m.version, pkg.version);
  const present = new Set(files(dir));
  for (const f of [m.background.service_worker, ...m.background.scripts, m.action.default_popup, m.options_ui.page]) {
    assert.ok(present.has(f), `${f} is in the build`);
  }
});

/** File names in a zip archive, from its central directory (APPNOTE 4.3.12, 4.3.16); directories left out. */
function zipNames(zip: Buffer): string[] {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  assert.ok(eocd >= 0, 'a zip end-of-central-directory record');
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    assert.equal(zip.readUInt32LE(at), 0x02014b50, 'a central directory header');
    const nameLength = zip.readUInt16LE(at + 28);
    const name = zip.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    if (!name.endsWith('/')) names.push(name);
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return names.sort();
}

test('the Chromium zip and the Firefox xpi hold the build without source maps', () => {
  const dir = requireBuiltExtension();
  const expected = files(dir).filter((f) => !f.endsWith('.map')).sort();
  for (const name of ['dnscost-chromium.zip', 'dnscost-firefox.xpi']) {
    assert.deepEqual(zipNames(readFileSync(join(ROOT, 'build', name))), expected, name);
  }
});
