// The extension's two languages, checked: the catalogues have the same keys and the same placeholders, German is
// German (a message identical to its English one only when allowlisted here with its reason), every key the sources
// and pages name exists, and no user-visible English is left outside the catalogues — no text in the pages' HTML, no
// sentence or label as a string literal in the UI's TypeScript. The last two checks are shown to fail on a page or a
// module written the old way (English in place), so a page left untranslated cannot pass.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { test } from 'vitest';
import { catalogueLookup, makeI18n } from './i18n.js';
import { catalogue, LANGUAGES, testI18n } from './i18n-fixtures.js';

const SRC = new URL('.', import.meta.url).pathname;
const en = catalogue('en');
const de = catalogue('de');

/** German messages that may equal the English ones, and why. */
const SAME_IN_GERMAN: Record<string, string> = {
  ext_name: 'the product name',
  unit_ms: 'a unit symbol (SI)',
  unit_bytes: 'a unit symbol',
  unit_percent: 'a unit symbol; German also writes a space before %',
  unit_s: 'a unit symbol (SI)',
  mode_warm: '"warm" is the German word as well',
  col_host: '"Host" is the German word for a named computer as well (the panel says Hosts throughout)',
  col_resolver: '"Resolver" is the German technical term',
  col_transport: '"Transport" is the German word as well',
  dash_cache_served: 'placeholders and brackets only',
  probe_item_tls_1_0: 'a protocol name',
  probe_item_tls_1_1: 'a protocol name',
  probe_item_tls_1_2: 'a protocol name',
  probe_item_tls_1_3: 'a protocol name',
};

/** The $NAME$ placeholders a message uses, lower-cased and sorted. */
const used = (message: string): string[] => [...message.matchAll(/\$([A-Za-z0-9_@]+)\$/g)].map((m) => m[1]!.toLowerCase()).sort();

test('English and German have the same keys, the same placeholders, and valid messages.json entries', () => {
  assert.deepEqual(Object.keys(de).sort(), Object.keys(en).sort(), 'keys differ');
  for (const lang of LANGUAGES) {
    for (const [key, entry] of Object.entries(catalogue(lang))) {
      assert.match(key, /^[A-Za-z0-9_@]+$/, `${lang} ${key}: a key browser.i18n accepts`);
      assert.ok(entry.message.trim() !== '', `${lang} ${key}: empty`);
      for (const name of used(entry.message)) assert.ok(Object.keys(entry.placeholders ?? {}).some((p) => p.toLowerCase() === name), `${lang} ${key}: $${name}$ is not declared`);
    }
  }
  for (const key of Object.keys(en)) {
    assert.deepEqual(used(de[key]!.message), used(en[key]!.message), `${key}: the German message uses other placeholders`);
    assert.deepEqual(de[key]!.placeholders ?? {}, en[key]!.placeholders ?? {}, `${key}: placeholders declared differently`);
    const markers = (m: string) => [...m.matchAll(/<(\d)>/g)].map((x) => x[1]).sort();
    assert.deepEqual(markers(de[key]!.message), markers(en[key]!.message), `${key}: <n> markers differ`);
  }
});

test('every German message is German: identical to the English only where allowlisted with a reason', () => {
  const same = Object.keys(en).filter((k) => de[k]?.message === en[k]!.message);
  assert.deepEqual(same.filter((k) => !(k in SAME_IN_GERMAN)), [], 'German messages identical to the English ones');
  for (const k of Object.keys(SAME_IN_GERMAN)) assert.ok(same.includes(k), `${k} is allowlisted but differs now: drop it from the list`);
});

test('no German message carries English: no common English word, no sentence fragment of an English message', () => {
  const words = /\b(the|and|your|would|with|this|not|been|from|which|when|there|have|has|page|pages|measured|about|over|only|never|here|some|more|than|into|each|every|after|before|could|should)\b/;
  const fragments = Object.entries(en).filter(([k, { message }]) => de[k]?.message !== message)
    .flatMap(([, { message }]) => message.split(/\$[A-Za-z0-9_@]+\$|<\/?\d>/).map((f) => f.trim()))
    .filter((f) => /[A-Za-z]{3,}[\s’']+[A-Za-z]{3,}/.test(f));
  const english = Object.entries(de).flatMap(([k, { message }]) => {
    // Marked spans hold commands and paths (<5>systemctl restart systemd-resolved</5>), the same in every language.
    const prose = message.replace(/<(\d)>.*?<\/\1>/g, ' ');
    const fragment = fragments.find((f) => prose.includes(f));
    return words.test(message) ? [`${k}: ${words.exec(message)![0]}`] : fragment ? [`${k}: ${fragment}`] : [];
  });
  assert.deepEqual(english, []);
});

test('the lookup follows getMessage: named placeholders, $1…$9, $$; plural forms; numbers in the locale', () => {
  const lookup = catalogueLookup({ a: { message: 'x $WHO$ costs $$$N$', placeholders: { who: { content: '$1' }, n: { content: '$2' } } } });
  assert.equal(lookup('A', ['Quad9', '5']), 'x Quad9 costs $5');
  assert.equal(lookup('missing'), '');
  const [e, d] = [testI18n('en'), testI18n('de')];
  assert.equal(e.plural('popup_lookups', 1), '1 lookup');
  assert.equal(d.plural('popup_lookups', 1_234), '1.234 Abfragen');
  assert.equal(e.ms(4.25), '4.3 ms');
  assert.equal(d.ms(-4.25), '−4,3 ms');
  assert.equal(d.signedMs(1_500), '+1.500 ms');
  assert.equal(d.bytes(12_345), '12.345 B');
  assert.equal(d.list(['A', 'B', 'C']), 'A, B und C');
  assert.equal(d.transport('dot'), 'DNS über TLS');
  assert.match(d.dateTime(Date.UTC(2026, 10, 25, 9, 30)), /^25\.11\.2026, \d\d:30$/);
  // <html lang> names the words' language: the UI language when there is a catalogue for it, else the catalogue's.
  assert.equal(testI18n('de', 'de-AT').lang, 'de-AT');
  assert.equal(testI18n('en', 'fr-FR').lang, 'en');
  // A key the catalogue lacks shows as itself, so a missing translation is visible, never blank.
  assert.equal(makeI18n(() => '', 'de').t('no_such_key'), 'no_such_key');
});

/** Every file under `dir` whose name matches `pattern`. */
function walk(dir: string, pattern: RegExp): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name), pattern) : pattern.test(e.name) ? [join(dir, e.name)] : []));
}

const PAGES = walk(SRC, /\.html$/);
/** The UI's TypeScript: the pages' modules, the popup's verdict and the background's badge. */
const UI_SOURCES = [
  ...['popup', 'options', 'welcome', 'dashboard', 'ui'].flatMap((d) => walk(join(SRC, d), /\.ts$/)),
  join(SRC, 'verdict.ts'),
  join(SRC, 'background', 'measure-wiring.ts'),
].filter((f) => !f.endsWith('.test.ts'));

test('every key the sources and pages name is in the catalogues', () => {
  const missing: string[] = [];
  for (const f of [...PAGES, ...walk(SRC, /\.ts$/).filter((x) => !x.endsWith('.test.ts'))]) {
    // Comments name keys as examples (data-i18n="key"); only code and markup count.
    const text = readFileSync(f, 'utf8').split('\n').filter((l) => !/^\s*(\/\/|\*|\/\*)/.test(l)).join('\n');
    for (const m of text.matchAll(/data-i18n(?:-[a-z-]+)?="([^"]+)"/g)) if (!(m[1]! in en)) missing.push(`${relative(SRC, f)}: ${m[1]}`);
    for (const m of text.matchAll(/\bt\(\s*'([a-z0-9_]+)'/g)) if (!(m[1]! in en)) missing.push(`${relative(SRC, f)}: ${m[1]}`);
    for (const m of text.matchAll(/\bplural\(\s*'([a-z0-9_]+)'/g)) if (!(`${m[1]}_other` in en)) missing.push(`${relative(SRC, f)}: ${m[1]}_other`);
  }
  assert.deepEqual(missing, []);
  // Keys built at run time, one per member of a closed set.
  for (const k of ['mode_cold', 'mode_warm', 'mode_expected', 'cost_verdict_slower', 'cost_verdict_faster', 'cost_doh_set_policy', 'cost_doh_set_rollout', 'cost_doh_set_default',
    ...['running', 'done', 'cancelled', 'interrupted', 'failed'].map((s) => `measure_state_${s}`),
    ...['chromium_doh', 'firefox_trr', 'unbound', 'stubby', 'systemd_resolved', 'dnsproxy'].map((h) => `holder_${h}`),
    ...['udp', 'tcp', 'dot', 'doh', 'doh1', 'doq', 'doh3'].map((id) => `transport_${id}`),
    'rec_connections_cold', 'rec_connections_warm', 'field_resolvers', 'field_currentDns', 'field_consent', 'policy_unavailable', 'policy_invalid', 'policy_applied',
    ...['best', 'worst'].flatMap((w) => ['same', 'later', 'later_slight', 'sooner', 'sooner_slight'].map((c) => `verdict_${w}_${c}`))]) {
    assert.ok(k in en, k);
  }
});

/** Attributes a person reads or hears. */
const READ_ATTRIBUTES = ['title', 'placeholder', 'aria-label', 'alt', 'value'];
/** Text that reads as words: two words, or one capitalised word ("Cancel", "Resolver:"). */
const WORDY = /[A-Za-z]{2,}['’]?[a-z]*[\s\u00a0]+[A-Za-z]{2,}|^\s*[A-Z][a-z]{2,}[\s.…:!?]*$/;

/** The English left in one page's HTML: any text outside script and style, and wordy readable attributes. */
function htmlEnglish(html: string): string[] {
  const body = html.replace(/<!--[\s\S]*?-->/g, '').replace(/<(script|style)\b[\s\S]*?<\/\1>/g, '');
  const out: string[] = [];
  for (const m of body.matchAll(/>([^<]+)</g)) if (/[A-Za-z]/.test(m[1]!)) out.push(m[1]!.trim());
  for (const m of body.matchAll(/\s([a-z-]+)="([^"]*)"/g)) if (READ_ATTRIBUTES.includes(m[1]!) && WORDY.test(m[2]!)) out.push(`${m[1]}="${m[2]}"`);
  return out;
}

/** Calls whose text argument is shown: el(tag, TEXT), new Option(TEXT), setAttribute(readable, TEXT), say(TEXT). */
function shownArgument(node: ts.Node): boolean {
  const call = node.parent;
  if (!call || !(ts.isCallExpression(call) || ts.isNewExpression(call))) return false;
  const callee = call.expression.getText();
  const i = call.arguments?.indexOf(node as ts.Expression) ?? -1;
  if (callee === 'el') return i === 1;
  if (callee === 'Option' || callee === 'say' || callee === 'announce') return i === 0;
  if (callee.endsWith('setAttribute')) return i === 1 && READ_ATTRIBUTES.includes((call.arguments![0] as ts.StringLiteral).text ?? '');
  return false;
}

/** Assignments and properties that show their value: x.textContent = TEXT, x.title = TEXT, { label: TEXT }. */
function shownProperty(node: ts.Node): boolean {
  const p = node.parent;
  if (p && ts.isBinaryExpression(p) && p.right === node && ts.isPropertyAccessExpression(p.left)) return ['textContent', 'title', 'placeholder', 'innerText', 'alt'].includes(p.left.name.text);
  if (p && ts.isPropertyAssignment(p) && p.initializer === node) return ['label', 'title', 'sentence'].includes(p.name.getText());
  return false;
}

/** The English literals of one UI module: wordy strings and template text, and any letters where the text is shown. */
function sourceEnglish(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const lines = text.split('\n');
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    // Module names, literal types and the developer's console are not the UI.
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node) || ts.isLiteralTypeNode(node)) return;
    if (ts.isCallExpression(node) && /^console\./.test(node.expression.getText())) return;
    let literal: string | null = null;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) literal = node.text;
    else if (ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) literal = node.text;
    if (literal !== null) {
      const line = sf.getLineAndCharacterOfPosition(node.getStart()).line;
      const target = ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node) ? node.parent.parent ?? node : node;
      const shown = /[A-Za-z]{2,}/.test(literal) && (shownArgument(target) || shownProperty(target));
      if ((WORDY.test(literal) || shown) && !lines[line]!.includes('i18n-exempt:')) out.push(`${relative(SRC, file)}:${line + 1}: ${JSON.stringify(literal)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

test('no English left in the pages: their HTML has no text of its own, only data-i18n keys', () => {
  assert.ok(PAGES.length >= 6, PAGES.join(', '));
  assert.deepEqual(PAGES.flatMap((f) => htmlEnglish(readFileSync(f, 'utf8')).map((s) => `${relative(SRC, f)}: ${s}`)), []);
  for (const f of PAGES) assert.match(readFileSync(f, 'utf8'), /<script src="[^"]+\.js"><\/script>/, `${relative(SRC, f)} loads a script that fills it`);
});

test("a message's <n> markers name exactly the child elements its page element holds (a link, a <code>)", () => {
  const wrong: string[] = [];
  for (const f of PAGES) {
    const html = readFileSync(f, 'utf8');
    for (const m of html.matchAll(/<([a-z0-9]+)\b[^>]*\sdata-i18n="([^"]+)"[^>]*>/g)) {
      const [open, tag, key] = m;
      const inner = html.slice(m.index! + open.length, html.indexOf(`</${tag}>`, m.index! + open.length));
      const children = (inner.match(/<[a-z]/g) ?? []).length;
      for (const lang of LANGUAGES) {
        const markers = [...new Set([...(catalogue(lang)[key!]?.message ?? '').matchAll(/<(\d)>/g)].map((x) => Number(x[1])))].sort();
        if (markers.join() !== [...Array(children).keys()].join()) wrong.push(`${relative(SRC, f)} ${key} (${lang}): markers ${markers.join(',') || 'none'}, ${children} child elements`);
      }
    }
  }
  assert.deepEqual(wrong, []);
});

test('no English left in the UI sources: no sentence, label or heading as a string literal', () => {
  assert.ok(UI_SOURCES.length >= 25, `${UI_SOURCES.length} UI modules`);
  assert.deepEqual(UI_SOURCES.flatMap((f) => sourceEnglish(f, readFileSync(f, 'utf8'))), []);
});

test('the checks catch a page and a module written the old way', () => {
  // A page with its words in place, as every page was before its text moved to the catalogues.
  const page = '<html lang="en"><head><title>Turning encrypted DNS on</title><style>p { color: red }</style></head><body>' +
    '<h2 data-i18n="x"></h2><p>Browsers do not speak DoT themselves.</p><button type="button">Cancel</button>' +
    '<input placeholder="bank.example"><input placeholder="Your site here"><script src="a.js"></script></body></html>';
  assert.deepEqual(htmlEnglish(page), ['Turning encrypted DNS on', 'Browsers do not speak DoT themselves.', 'Cancel', 'placeholder="Your site here"']);
  // A module with its words in place.
  const module = [
    "root.append(el('p', 'There is no tab to show.'));",
    "const b = el('button', 'Cancel');",
    "head.append(el('th', 'Resolver'));",
    'status.textContent = `${n} pages measured`;',
    "bar.title = 'failed';",
    "const s = { label: 'share' };",
    "el('p', t('popup_no_tab'));",
    "document.getElementById('measure-start');",
    "download(name, 'application/json', text);",
    "const fine = 'network not recorded'; // i18n-exempt: a test of the marker",
    "console.warn(`dnscost: badge of tab ${id}`);",
    "function f(which: 'best' | 'worst first'): void {}",
  ].join('\n');
  assert.deepEqual(sourceEnglish(join(SRC, 'probe.ts'), module).map((s) => s.replace(/^probe\.ts:\d+: /, '')),
    ['"There is no tab to show."', '"Cancel"', '"Resolver"', '" pages measured"', '"failed"', '"share"']);
});
