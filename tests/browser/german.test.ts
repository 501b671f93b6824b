// The German build, in a German browser (Chromium and Firefox with their UI in German): every page of the extension —
// the popup, the welcome page, the options, the dashboard drawn from 600 synthetic pages (lab/synthetic-history.ts),
// the how-to and the privacy policy — is read as a person sees it (text, titles, placeholders, labels), and no English
// is left: no fragment of an English message of extension/_locales/en (where the German differs), and no common
// English word. What the host, the browser or the background reports is quoted as <span lang="en"> (a detail such as
// the browser's own "native host not found") and is not dnscost's own text: it is left out. `<html lang>` is German.
// The text of each page is written to tests/.run/german-BROWSER-PAGE.txt.
//
// Needs the browsers' German (scripts/setup: chromium-l10n, firefox-esr-l10n-de). Same structure as
// tests/browser/dashboard.test.ts: re-runs itself under `unshare --net` (root) with DNSCOST_GERMAN_INNER naming the browser.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'puppeteer-core';
import { catalogue } from '../../extension/src/i18n-fixtures.js';
import { launchWithExtension, poll, welcomePage, type BrowserName } from '../../lab/browsers.js';
import { requireBuiltExtension } from '../../lab/extension-build.js';
import { ROOT } from '../../lab/paths.js';
import { syntheticHistory, writeHistory } from '../../lab/synthetic-history.js';
import { outerBrowserTests } from '../support/namespace.js';

const INNER = process.env.DNSCOST_GERMAN_INNER as BrowserName | undefined;
const RUN_DIR = join(ROOT, 'tests/.run');
const BUDGET_MS: Record<BrowserName, number> = { chromium: 60_000, firefox: 75_000 };

/** Common English words that are no German word: one in dnscost's own text means English was left. */
const ENGLISH_WORDS = /\b(the|and|your|would|with|this|not|been|from|which|when|there|have|has|page|pages|measured|about|over|only|never|here|some|more|than|into|each|every|after|before|could|should)\b/;

/**
 * The English catalogue's fixed fragments (the text between placeholders and link markers) of two words or more, for
 * every message whose German differs, that the German catalogue does not use too: none may appear in a German page.
 */
function englishFragments(): string[] {
  const en = catalogue('en');
  const de = catalogue('de');
  const out = new Set<string>();
  for (const [key, { message }] of Object.entries(en)) {
    if (de[key]?.message === message) continue;
    for (const part of message.split(/\$[A-Za-z0-9_@]+\$|<\/?\d>/)) {
      const f = part.trim();
      if (/[A-Za-z]{3,}[\s’']+[A-Za-z]{3,}/.test(f)) out.add(f);
    }
  }
  // Commands and names the German text keeps as they are (systemctl restart systemd-resolved) are no English left.
  const german = Object.values(de).map((m) => m.message);
  return [...out].filter((f) => !german.some((m) => m.includes(f)));
}

interface Seen {
  lang: string;
  ui: string;
  texts: string[];
}

/** What a person reads on `page`: text nodes, titles, placeholders and labels, outside quoted English details. */
function read(page: Page): Promise<Seen> {
  return page.evaluate(() => {
    const texts: string[] = [document.title];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const p = n.parentElement;
      if (!p || p.closest('script, style, [lang="en"]')) continue;
      const t = (n.textContent ?? '').trim();
      if (t) texts.push(t);
    }
    for (const e of document.querySelectorAll('[title], [placeholder], [aria-label]')) {
      if (e.closest('[lang="en"]')) continue;
      for (const a of ['title', 'placeholder', 'aria-label']) {
        const v = e.getAttribute(a);
        if (v) texts.push(v);
      }
    }
    const g = globalThis as unknown as { browser?: { i18n: { getUILanguage(): string } }; chrome?: { i18n: { getUILanguage(): string } } };
    return { lang: document.documentElement.lang, ui: (g.browser ?? g.chrome)!.i18n.getUILanguage(), texts };
  });
}

/** The English left in what was read: catalogue fragments and English words, each with the text it was found in. */
function english(seen: Seen, fragments: readonly string[]): string[] {
  const out: string[] = [];
  for (const t of seen.texts) {
    const f = fragments.find((x) => t.includes(x));
    if (f) out.push(`${JSON.stringify(f)} in ${JSON.stringify(t.slice(0, 160))}`);
    else if (ENGLISH_WORDS.test(t)) out.push(`${JSON.stringify(ENGLISH_WORDS.exec(t)![0])} in ${JSON.stringify(t.slice(0, 160))}`);
  }
  return out;
}

function innerTests(name: BrowserName): void {
  test(`${name}: every page in German, no English left`, { timeout: BUDGET_MS[name] - 5_000 }, async (t) => {
    const extensionDir = requireBuiltExtension(name);
    const work = mkdtempSync(join(tmpdir(), `dnscost-german-${name}-`));
    t.onTestFinished(() => rmSync(work, { recursive: true, force: true }));
    mkdirSync(RUN_DIR, { recursive: true });
    const fragments = englishFragments();
    assert.ok(fragments.length > 200, `${fragments.length} English fragments`);
    // No native host: its missing state is part of what a person reads first.
    const b = await launchWithExtension(name, { extensionDir, workDir: work, registerHost: false, locale: 'de', keepWelcome: true });
    const found: string[] = [];
    const check = async (label: string, page: Page, settled: () => boolean): Promise<void> => {
      await poll(`the ${label} settles`, 20_000, async () => ((await page.evaluate(settled)) ? true : undefined));
      const seen = await read(page);
      writeFileSync(join(RUN_DIR, `german-${name}-${label}.txt`), `${seen.texts.join('\n')}\n`);
      assert.match(seen.ui, /^de\b/, `${name} did not switch its UI to German (${seen.ui}): scripts/setup installs chromium-l10n and firefox-esr-l10n-de`);
      assert.match(seen.lang, /^de\b/, `${label}: <html lang="${seen.lang}">`);
      found.push(...english(seen, fragments).map((e) => `${label}: ${e}`));
    };
    // Each `settled` runs in the page (no closure): the host's state has left loading and connecting, the page drawn.
    try {
      await check('welcome', await welcomePage(b.browser, 15_000), () => document.body.dataset.settings === 'ready' && document.getElementById('first')?.dataset.state !== 'loading' &&
        !['loading', 'host-connecting'].includes(document.getElementById('host-status')?.dataset.state ?? 'loading') && document.getElementById('host-steps')?.dataset.os !== 'unknown');
      await check('popup', await b.openExtensionPage('popup/popup.html'), () => document.getElementById('cost')?.dataset.state !== 'loading' &&
        !['loading', 'host-connecting'].includes(document.getElementById('host-status')?.dataset.state ?? 'loading'));
      await check('options', await b.openExtensionPage('options/options.html'), () => document.body.dataset.settings === 'ready' && document.getElementById('upload')?.dataset.state !== 'loading' &&
        !['loading', 'host-connecting'].includes(document.getElementById('host-status')?.dataset.state ?? 'loading'));
      const empty = await b.openExtensionPage('dashboard/dashboard.html');
      await check('dashboard-empty', empty, () => document.body.dataset.state === 'empty');
      await writeHistory(empty, syntheticHistory(600, Date.now()));
      const dashboard = await b.openExtensionPage('dashboard/dashboard.html');
      await check('dashboard', dashboard, () => document.body.dataset.state === 'ready');
      await check('howto', await b.openExtensionPage('howto/howto.html'), () => document.documentElement.lang !== 'en');
      await check('privacy', await b.openExtensionPage('privacy/privacy.html'), () => document.documentElement.lang !== 'en');
    } finally {
      await b.close();
    }
    assert.deepEqual(found, [], 'English left in the German build');
  });
}

if (INNER) {
  innerTests(INNER);
} else {
  outerBrowserTests(fileURLToPath(import.meta.url), 'DNSCOST_GERMAN_INNER', (name) => `${name}: the German build has no English left (loopback-only network namespace)`, BUDGET_MS);
}
