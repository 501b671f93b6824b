// The store's build in Chromium: build/dnscost-chromium.zip carries no `key` (the Chrome Web Store refuses one and
// assigns the extension an id of its own), so loaded as is it runs under an id other than dnscost's development id.
// Such an extension is refused by the host manifest `install` writes, and reaches the host once
// `install --extension-id ID` has allowed it; doctor then names that id. Real Chromium, real host, real install, inside
// a loopback-only network namespace (the file re-runs itself under `unshare --net`, as tests/browser/host.test.ts).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'vitest';
import { CHROMIUM_ID, HOST_NAME } from '../../common/extension-ids.js';
import { PROTOCOL_VERSION } from '../../common/schema.js';
import { launchWithExtension, type BrowserName } from '../../lab/browsers.js';
import { HOST_BIN, ROOT } from '../../lab/paths.js';
import { zipFiles } from '../../lab/zip.js';
import { outerBrowserTests } from '../support/namespace.js';

const INNER = process.env.DNSCOST_STORE_INNER as BrowserName | undefined;

/** Runs `dnscost-host ARGS`; resolves with its exit code and output. */
function host(args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => execFile(process.execPath, [HOST_BIN, ...args], { timeout: 30_000 }, (err, stdout, stderr) =>
    resolve({ code: err ? Number((err as { code?: number }).code ?? -1) : 0, out: stdout + stderr })));
}

if (INNER) {
  test('the store zip, loaded as is, runs under an id of its own and reaches the host after install --extension-id', { timeout: 80_000 }, async (t) => {
    const work = mkdtempSync(join(tmpdir(), 'dnscost-store-'));
    t.onTestFinished(() => rmSync(work, { recursive: true, force: true }));
    // Unpacked from the zip, file by file.
    const dir = join(work, 'store-extension');
    const files = zipFiles(readFileSync(join(ROOT, 'build', 'dnscost-chromium.zip')));
    for (const [name, data] of files) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), data);
    }
    assert.equal(JSON.parse(files.get('manifest.json')!.toString()).key, undefined, 'the store zip has no key');
    const b = await launchWithExtension('chromium', { extensionDir: dir, workDir: work, registerHost: false });
    t.onTestFinished(() => b.close());
    const worker = await b.browser.waitForTarget((x) => x.type() === 'service_worker' && x.url().startsWith('chrome-extension://'), { timeout: 20_000 });
    const id = new URL(worker.url()).host;
    assert.match(id, /^[a-p]{32}$/);
    assert.notEqual(id, CHROMIUM_ID, 'without the key Chromium gives the extension another id');
    const page = await b.browser.newPage();
    await page.goto(`chrome-extension://${id}/options/options.html`);
    const hello = () => page.evaluate((name) => new Promise<unknown>((resolve) => {
      const c = (globalThis as unknown as { chrome: { runtime: { sendNativeMessage(n: string, m: object, cb: (r: unknown) => void): void; lastError?: { message: string } } } }).chrome;
      c.runtime.sendNativeMessage(name, { id: 'store', type: 'hello' }, (reply) => resolve(reply ?? { error: c.runtime.lastError?.message }));
    }), HOST_NAME) as Promise<Record<string, unknown>>;
    // Installed for dnscost's own id only (the profile is the one Chromium was started with): refused.
    const profile = join(work, 'chromium-profile');
    const base = ['install', '--chromium-user-data-dir', profile, '--home', join(work, 'home')];
    assert.equal((await host(base)).code, 0);
    assert.match(String((await hello()).error), /forbidden/i, 'the store build is not allowed by a plain install');
    const added = await host([...base, '--extension-id', id]);
    assert.equal(added.code, 0, added.out);
    const reply = await hello();
    assert.equal(reply.type, 'hello', JSON.stringify(reply));
    assert.equal(reply.protocol, PROTOCOL_VERSION);
    // Installing again without the flag keeps it; doctor names both ids.
    assert.equal((await host(base)).code, 0);
    assert.equal((await hello()).type, 'hello');
    const doctor = await host(['doctor', '--chromium-user-data-dir', profile, '--home', join(work, 'home')]);
    assert.equal(doctor.code, 0, doctor.out);
    assert.match(doctor.out, new RegExp(`chrome-extension://${CHROMIUM_ID}/ \\(dnscost\\) and chrome-extension://${id}/ \\(added with install --extension-id\\)`));
  });
} else {
  outerBrowserTests(fileURLToPath(import.meta.url), 'DNSCOST_STORE_INNER', () => 'chromium with the store zip (no key) reaches the host after install --extension-id', { chromium: 100_000, firefox: 0 }, ['chromium']);
}
