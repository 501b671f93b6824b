// The options page of the built extension in real Chromium and Firefox, driven as a person would (personScenario),
// then in a fresh profile with an administrator's policy in managed storage (policyScenario).
import { test } from 'vitest';
import { linesOf, runInNamespace, vitestCommand } from '../support/namespace.js';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { PUBLIC_RESOLVERS } from '../../common/default-resolvers.js';
import { CHROMIUM_ID, GECKO_ID } from '../../common/extension-ids.js';
import type { ResolverSpec } from '../../common/schema.js';
import { DEFAULT_UPLOAD, type Settings } from '../../extension/src/settings.js';
import { findBrowser, launchWithExtension, poll, type BrowserName } from '../../lab/browsers.js';
import { requireBuiltExtension } from '../../lab/extension-build.js';
import { ROOT } from '../../lab/paths.js';

const INNER = process.env.DNSCOST_BROWSER_INNER as BrowserName | undefined;
const RUN_DIR = join(ROOT, 'tests/.run');
/** Inner-run budgets (two browser launches each). */
const BUDGET_MS: Record<BrowserName, number> = { chromium: 60_000, firefox: 75_000 };
/** Where the Chromium run's namespace mounts its private copy of /etc/chromium, and the marker proving it. */
const CHROMIUM_POLICY_DIR = '/etc/chromium/policies/managed';
const PRIVATE_ETC_MARKER = '/etc/chromium/.dnscost-test-private-copy';

/** The resolver an administrator's policy fixes in the policy scenario. */
const POLICY_RESOLVER: ResolverSpec = {
  id: 'corp',
  name: 'Corporate DoT',
  endpoints: [{ transport: 'dot', address: '127.0.0.1', port: 9853, serverName: 'dns.corp.test' }],
};

interface View {
  ok: boolean;
  code?: string;
  settings: Settings;
  own: Settings;
  fixed: string[];
  policy: { state: string; message: string; problems: string[] };
}

/**
 * Sends `message` to the background from an extension page; the reply. It crosses back as JSON text: WebDriver BiDi
 * (Firefox) hands objects over in a form deepStrictEqual does not equate with plain ones.
 */
async function sendFromPage<T = unknown>(page: Page, message: unknown): Promise<T> {
  const json = await page.evaluate(async (m) => {
    const g = globalThis as unknown as { browser?: { runtime: { sendMessage(m: unknown): Promise<unknown> } }; chrome?: { runtime: { sendMessage(m: unknown): Promise<unknown> } } };
    return JSON.stringify(await (g.browser ?? g.chrome)!.runtime.sendMessage(m));
  }, message);
  return JSON.parse(json) as T;
}

/** Sets form fields by id (value, then an input event), as typing would. */
function fill(page: Page, values: Record<string, string>): Promise<void> {
  return page.evaluate((vals) => {
    for (const [id, value] of Object.entries(vals)) {
      const e = document.getElementById(id) as HTMLInputElement | HTMLSelectElement;
      e.value = value;
      e.dispatchEvent(new Event(e.tagName === 'SELECT' ? 'change' : 'input', { bubbles: true }));
    }
  }, values);
}

/** Picks a file for #import-file, as the file dialog would. */
function chooseImportFile(page: Page, name: string, text: string): Promise<void> {
  return page.evaluate((n, t) => {
    const input = document.getElementById('import-file') as HTMLInputElement;
    const dt = new DataTransfer();
    dt.items.add(new File([t], n, { type: 'application/json' }));
    input.files = dt.files;
    input.dispatchEvent(new Event('change', { bubbles: true }));
  }, name, text);
}

const text = (page: Page, id: string) => page.evaluate((i) => document.getElementById(i)?.textContent ?? '', id);
const state = (page: Page, id: string) => page.evaluate((i) => document.getElementById(i)?.dataset.state ?? '', id);

/** Waits until `check` (run in the page) is true. */
function until(page: Page, what: string, check: () => boolean, timeoutMs = 10_000): Promise<true> {
  return poll(what, timeoutMs, async () => ((await page.evaluate(check)) ? true : undefined));
}

async function openOptions(b: Awaited<ReturnType<typeof launchWithExtension>>): Promise<Page> {
  const page = await b.openExtensionPage('options/options.html');
  await until(page, 'the options page renders the settings', () => document.body.dataset.settings === 'ready');
  return page;
}

/**
 * Driven as a person would: give consent, add a custom DoT resolver (after an inline error for a bad address), set
 * the budget, turn a default off, exclude a site, export the settings (the file equals what was set), import a
 * modified file (applied), import broken files (clear error with the path, nothing changed), clear data behind a
 * confirmation.
 */
async function personScenario(name: BrowserName, work: string, timings: string[]): Promise<void> {
  const extensionDir = requireBuiltExtension(name);
  let started = Date.now();
  const b = await launchWithExtension(name, { extensionDir, workDir: join(work, 'person') });
  try {
    const page = await openOptions(b);
    timings.push(`launch to options ready ${Date.now() - started} ms`);
    started = Date.now();
    const first = await sendFromPage<View>(page, { type: 'settings-get' });
    assert.deepEqual(first.settings.resolvers.map((r) => r.id), PUBLIC_RESOLVERS.map((r) => r.id));
    assert.equal(first.settings.consent.given, false);
    assert.equal(first.policy.state, 'none', `no policy: ${first.policy.message}`);
    // What dnscost sees of a page: in Chromium a choice (webRequest optional, not granted on install); Firefox's build
    // requires the permission, so the section is not shown there.
    const recording = await page.evaluate(() => {
      const box = document.getElementById('record-requests') as HTMLInputElement | null;
      return { hidden: document.getElementById('recording')!.hidden, box: box ? box.checked : null, label: box?.parentElement?.textContent ?? '' };
    });
    if (name === 'chromium') {
      assert.equal(recording.hidden, false);
      assert.equal(recording.box, false, 'webRequest is not granted on install');
      assert.match(recording.label, /webRequest/);
    } else assert.deepEqual([recording.hidden, recording.box], [true, null]);

    // First-run consent: says which names go to which resolver, Do53 in clear text, private windows, internal names.
    assert.equal(await state(page, 'consent'), 'not-given');
    const consentText = await text(page, 'consent');
    for (const r of PUBLIC_RESOLVERS) assert.match(consentText, new RegExp(r.name));
    assert.match(consentText, /plain DNS over UDP to 1\.1\.1\.1 port 53/);
    assert.match(consentText, /clear text/);
    assert.match(consentText, /Your current DNS: the resolver this computer is set to use now/, 'the current DNS is named among the destinations');
    assert.match(consentText, /Private windows are never recorded or measured/);
    assert.match(consentText, /never sent to public resolvers/);
    await page.click('#consent-give');
    await until(page, 'consent shows as given', () => document.getElementById('consent')?.dataset.state === 'given');

    // A custom DoT resolver: a bad address first (inline error, nothing added), then a good one.
    await fill(page, { 'custom-name': 'Lab DoT', 'custom-transport': 'dot', 'custom-address': 'dns.test', 'custom-port': '8853', 'custom-server-name': 'dns.test' });
    await page.click('#custom-add');
    await until(page, 'the inline address error', () => /not an IP address/.test(document.getElementById('custom-address-error')?.textContent ?? ''));
    assert.equal(await page.evaluate(() => document.getElementById('custom-address')!.getAttribute('aria-invalid')), 'true');
    assert.equal((await sendFromPage<View>(page, { type: 'settings-get' })).settings.resolvers.length, 3, 'nothing added');
    await fill(page, { 'custom-address': '127.0.0.1' });
    await page.click('#custom-add');
    await until(page, 'the custom resolver is listed', () => !!document.querySelector('#custom-resolvers [data-resolver-id="custom-lab-dot"]'));
    assert.match(await text(page, 'custom-resolvers'), /DNS over TLS to 127\.0\.0\.1 port 8853 \(certificate name dns\.test\)/);

    // A default off, the budget, an exclusion.
    await page.click('#default-quad9');
    await until(page, 'Quad9 is off', () => /will not be measured/.test(document.getElementById('status')?.textContent ?? ''));
    await fill(page, { 'budget-pages': '2', 'budget-hours': '12' });
    await page.click('#budget-save');
    await until(page, 'the budget is saved', () => document.getElementById('status')?.textContent === 'Budget saved.');
    await fill(page, { 'exclusion-input': 'https://Bank.Example/login' });
    await page.click('#exclusion-add');
    await until(page, 'the exclusion is listed', () => !!document.querySelector('#exclusions [data-exclusion="bank.example"]'));

    // The resolvers changed (one added, one off): the consent given for the old ones no longer holds; agree again.
    await until(page, 'consent is asked again', () => document.getElementById('consent')?.dataset.state === 'not-given');
    assert.match(await text(page, 'consent'), /Lab DoT/);
    assert.doesNotMatch(await text(page, 'consent'), /Quad9/);
    await page.click('#consent-give');
    await until(page, 'consent shows as given again', () => document.getElementById('consent')?.dataset.state === 'given');

    const expected = {
      resolvers: [PUBLIC_RESOLVERS[0], PUBLIC_RESOLVERS[1], { id: 'custom-lab-dot', name: 'Lab DoT', endpoints: [{ transport: 'dot', address: '127.0.0.1', port: 8853, serverName: 'dns.test' }] }],
      budget: { pagesPerHour: 2, remeasureAfterHours: 12 },
      exclusions: ['bank.example'],
    };
    const set = await sendFromPage<View>(page, { type: 'settings-get' });
    assert.deepEqual({ resolvers: set.settings.resolvers, budget: set.settings.budget, exclusions: set.settings.exclusions }, expected);
    assert.equal(set.settings.consent.given, true);
    assert.equal(typeof set.settings.consent.at, 'number');

    // Export: the downloaded file's JSON equals what was set.
    await page.click('#export');
    await until(page, 'the export link', () => (document.getElementById('export-link') as HTMLAnchorElement).href.startsWith('blob:'));
    const exportedText = await page.evaluate(async () => (await fetch((document.getElementById('export-link') as HTMLAnchorElement).href)).text());
    const exported = JSON.parse(exportedText) as Settings;
    assert.deepEqual(exported, set.own);
    assert.deepEqual(exported, { version: 1, ...expected, currentDns: true, lab: false, consent: set.settings.consent, upload: DEFAULT_UPLOAD });

    // Import a modified file: applied (consent stays the person's).
    const modified = { ...exported, budget: { pagesPerHour: 6, remeasureAfterHours: 48 }, exclusions: ['bank.example', 'other.example'] };
    await chooseImportFile(page, 'modified.json', JSON.stringify(modified));
    await until(page, 'the import is applied', () => document.getElementById('import-status')?.dataset.state === 'imported');
    const imported = await sendFromPage<View>(page, { type: 'settings-get' });
    assert.deepEqual(imported.own, modified);
    assert.equal(await page.evaluate(() => (document.getElementById('budget-pages') as HTMLInputElement).value), '6');
    assert.match(await text(page, 'exclusions'), /other\.example/);

    // Import broken files: a clear error naming the path, nothing changed.
    const bad = { ...modified, resolvers: [{ ...modified.resolvers[0], endpoints: [{ transport: 'udp', address: 'not-an-ip', port: 53 }] }] };
    await chooseImportFile(page, 'bad.json', JSON.stringify(bad));
    await until(page, 'the import is refused', () => document.getElementById('import-status')?.dataset.state === 'invalid-settings');
    const refusal = await text(page, 'import-status');
    assert.match(refusal, /Nothing was changed: bad\.json was not imported/);
    assert.match(refusal, /resolvers\.0\.endpoints\.0\.address/);
    await chooseImportFile(page, 'junk.json', '{"version": 1,');
    await until(page, 'non-JSON is refused', () => document.getElementById('import-status')?.dataset.state === 'bad-json');
    assert.deepEqual((await sendFromPage<View>(page, { type: 'settings-get' })).own, modified, 'refused imports changed nothing');

    // Clearing data asks first; settings survive it.
    await page.click('#data-clear');
    assert.equal(await page.evaluate(() => document.getElementById('data-clear-confirm')!.hidden), false);
    await page.click('#data-clear-yes');
    await until(page, 'data cleared', () => /clear/i.test(document.getElementById('status')?.textContent ?? '') && document.getElementById('data-clear-confirm')!.hidden);
    assert.deepEqual((await sendFromPage<View>(page, { type: 'settings-get' })).own, modified);
    // Bad messages are refused on entry.
    assert.equal((await sendFromPage<View>(page, { type: 'settings-set', changes: { consent: { given: true, at: 1 } } })).code, 'bad-request');
    await page.screenshot({ path: join(RUN_DIR, `options-${name}.png`), fullPage: true });
    timings.push(`person scenario ${Date.now() - started} ms`);
  } finally {
    await b.close();
  }
}

/**
 * Writes the administrator's policy where `name` reads it; returns a function that removes it. Managed storage comes
 * from where each browser reads enterprise policy: Firefox from $HOME/.mozilla/managed-storage/dnscost@dnscost.org.json
 * under the harness's private HOME; Chromium from /etc/chromium/policies/managed/*.json (3rdparty.extensions.ID).
 */
function writePolicy(name: BrowserName, work: string, policy: Record<string, unknown>): () => void {
  if (name === 'firefox') {
    // The harness's private HOME for Firefox is <workDir>/home (lab/browsers.ts).
    const dir = join(work, 'policy', 'home', '.mozilla', 'managed-storage');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${GECKO_ID}.json`);
    writeFileSync(file, JSON.stringify({ name: GECKO_ID, description: 'dnscost test policy', type: 'storage', data: policy }));
    return () => rmSync(file, { force: true });
  }
  // Only into the namespace's private copy of /etc/chromium: refuse if the marker says it is the real one.
  if (!existsSync(PRIVATE_ETC_MARKER)) throw new Error('/etc/chromium is not the private copy: refusing to write a policy into the real /etc');
  mkdirSync(CHROMIUM_POLICY_DIR, { recursive: true });
  const file = join(CHROMIUM_POLICY_DIR, 'dnscost-test.json');
  writeFileSync(file, JSON.stringify({ '3rdparty': { extensions: { [CHROMIUM_ID]: policy } } }));
  return () => rmSync(file, { force: true });
}

/**
 * In a fresh profile with an administrator's policy in managed storage, the policy's resolvers and consent are in
 * force, shown as fixed, and a change is refused with policy-fixed.
 */
async function policyScenario(name: BrowserName, work: string, timings: string[]): Promise<void> {
  const started = Date.now();
  const removePolicy = writePolicy(name, work, { resolvers: [POLICY_RESOLVER], consent: true });
  const b = await launchWithExtension(name, { extensionDir: requireBuiltExtension(name), workDir: join(work, 'policy') });
  try {
    const page = await openOptions(b);
    // Chromium delivers extension policy shortly after the extension starts: ask until it is there.
    const view = await poll('the policy is in force', 15_000, async () => {
      const v = await sendFromPage<View>(page, { type: 'settings-get' });
      return v.policy.state === 'applied' ? v : undefined;
    }).catch(async (err) => {
      const v = await sendFromPage<View>(page, { type: 'settings-get' });
      throw new Error(`${(err as Error).message}; policy: ${JSON.stringify(v.policy)}`);
    });
    assert.deepEqual(view.settings.resolvers, [POLICY_RESOLVER]);
    assert.equal(view.settings.consent.given, true);
    assert.deepEqual(view.fixed, ['resolvers', 'consent']);
    assert.deepEqual(view.own.resolvers.map((r) => r.id), PUBLIC_RESOLVERS.map((r) => r.id), 'the person\'s own settings are untouched');
    // A reload from inside the page: puppeteer's reload() never resolves for moz-extension:// pages (LAB.md).
    await page.evaluate(() => {
      document.body.dataset.settings = 'reloading';
      location.reload();
    });
    await until(page, 'the page shows the policy', () => document.body.dataset.settings === 'ready' && document.getElementById('policy')?.dataset.state === 'applied');
    assert.equal(await page.evaluate(() => document.getElementById('resolvers-fixed')!.hidden), false);
    assert.match(await text(page, 'resolvers-fixed'), /administrator/);
    assert.match(await text(page, 'custom-resolvers'), /Corporate DoT/);
    assert.equal(await page.evaluate(() => (document.getElementById('custom-fieldset') as HTMLFieldSetElement).disabled), true);
    assert.equal(await page.evaluate(() => [...document.querySelectorAll<HTMLInputElement>('[data-default-resolver]')].every((b) => b.disabled && !b.checked)), true);
    assert.equal(await state(page, 'consent'), 'fixed');
    assert.match(await text(page, 'consent'), /Corporate DoT: DNS over TLS to 127\.0\.0\.1 port 9853/);
    const refused = await sendFromPage<View & { fields: string[] }>(page, { type: 'settings-set', changes: { resolvers: [PUBLIC_RESOLVERS[0]] } });
    assert.deepEqual([refused.ok, refused.code, refused.fields], [false, 'policy-fixed', ['resolvers']]);
    assert.equal((await sendFromPage<View>(page, { type: 'consent-withdraw' })).code, 'policy-fixed');
    assert.equal((await sendFromPage<View>(page, { type: 'settings-set', changes: { budget: { pagesPerHour: 1 } } })).ok, true, 'what the policy leaves free stays the person\'s');
    await page.screenshot({ path: join(RUN_DIR, `options-${name}-policy.png`), fullPage: true });
    timings.push(`policy scenario ${Date.now() - started} ms`);
  } finally {
    await b.close();
    removePolicy();
  }
}

function innerTests(name: BrowserName): void {
  test(`${name}: options page — consent, resolvers, budget, exclusions, export/import, clear; managed policy`, { timeout: BUDGET_MS[name] - 5_000 }, async (t) => {
    const work = mkdtempSync(join(tmpdir(), `dnscost-options-${name}-`));
    t.onTestFinished(() => rmSync(work, { recursive: true, force: true }));
    mkdirSync(RUN_DIR, { recursive: true });
    const timings: string[] = [];
    await personScenario(name, work, timings);
    await policyScenario(name, work, timings);
    console.log(`${name}: ${timings.join('; ')}`);
  });
}

// Like tests/browser/host.test.ts this file re-runs itself under `unshare --net` (root only), one browser at a time.
if (INNER) {
  innerTests(INNER);
} else {
  for (const name of ['chromium', 'firefox'] as const) {
    test(`${name}: options page in a loopback-only network namespace`, { timeout: BUDGET_MS[name] + 10_000 }, async (t) => {
      if (process.getuid?.() !== 0) return t.skip('needs root: browsers run in a loopback-only network namespace (unshare --net)');
      if (!findBrowser(name)) assert.fail(`${name} is not installed: scripts/setup installs it`);
      requireBuiltExtension(name);
      const inner = vitestCommand(import.meta.url);
      let script = `ip link set lo up && ${inner}`;
      let privateEtc: string | null = null;
      if (name === 'chromium') {
        // Chromium reads policy only from /etc/chromium/policies: give this namespace its own /etc/chromium. The real
        // /etc is never written: the Chromium run happens in its own mount namespace (unshare --mount, private
        // propagation) where a temporary copy of /etc/chromium is bind-mounted over it; the copy is removed afterwards
        // and the mount dies with the namespace.
        if (!existsSync('/etc/chromium')) assert.fail('/etc/chromium is missing (Debian\'s chromium package ships it)');
        privateEtc = mkdtempSync(join(tmpdir(), 'dnscost-etc-chromium-'));
        t.onTestFinished(() => rmSync(privateEtc!, { recursive: true, force: true }));
        script = `ip link set lo up && cp -a /etc/chromium/. "${privateEtc}/" && touch "${privateEtc}/.dnscost-test-private-copy" && mount --bind "${privateEtc}" /etc/chromium && ${inner}`;
      }
      const started = Date.now();
      const out = await runInNamespace(script, { DNSCOST_BROWSER_INNER: name }, BUDGET_MS[name], name === 'chromium' ? ['--net', '--mount', '--propagation', 'private'] : ['--net']);
      console.log(`${linesOf(out, `${name}: `).join('\n')}\n${name}: whole options run in the namespace ${Date.now() - started} ms`);
      assert.equal(out.code, 0, out.text.slice(-8000));
    });
  }
}
