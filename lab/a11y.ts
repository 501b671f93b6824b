// Accessibility checks the browser tests run on the extension's pages: axe-core's WCAG 2.1 A and AA rules in the light
// and the dark scheme, a keyboard-only pass that must reach every control with Tab, and one that operates each control
// with its key (the activation reaches the control; nothing it would do is done). axe runs through the
// protocol's own evaluate (not a script tag), so the pages' Content-Security-Policy stays as it is.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { KeyInput, Page } from 'puppeteer-core';

let axeSource: string | null = null;

/**
 * Sets `prefers-color-scheme` on `page`; false where the browser's protocol cannot (puppeteer emulates media features
 * over CDP only: Chromium yes, Firefox's WebDriver BiDi no).
 */
export async function emulateScheme(page: Page, value: 'light' | 'dark'): Promise<boolean> {
  try {
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value }]);
    return true;
  } catch {
    return false;
  }
}

/**
 * Violations of WCAG 2.1 A/AA on `page`, light then dark where the scheme can be emulated (see emulateScheme), else
 * in the scheme the browser was launched with (LaunchOptions.colorScheme): `scheme rule: n × target (help)`; [] when
 * none.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  const out: string[] = [];
  const emulated = await emulateScheme(page, 'light');
  for (const scheme of emulated ? (['light', 'dark'] as const) : (['as launched'] as const)) {
    if (emulated) await emulateScheme(page, scheme as 'light' | 'dark');
    axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    await page.evaluate(axeSource);
    const found = await page.evaluate(async () => {
      const axe = (globalThis as unknown as { axe: { run(ctx: Document, opts: object): Promise<{ violations: Array<{ id: string; help: string; nodes: Array<{ target: unknown[] }> }> }> } }).axe;
      const r = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] });
      return r.violations.map((v) => `${v.id}: ${v.nodes.length} × ${JSON.stringify(v.nodes[0]?.target ?? [])} (${v.help})`);
    });
    out.push(...found.map((f) => `${scheme} ${f}`));
  }
  if (emulated) await emulateScheme(page, 'light');
  return out;
}

/** What a keyboard user can reach and operate: links, buttons, fields, summaries and anything else in the tab order. */
const CONTROLS = 'a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])';

/**
 * Presses Tab from the top of `page` until focus comes back round (or twice the number of controls); returns the
 * controls never reached (`tag#id` or `tag.text`): every visible, enabled link, button, field and summary must be.
 */
export async function unreachableByKeyboard(page: Page): Promise<string[]> {
  const total = await page.evaluate((selector: string) => {
    const controls = [...document.querySelectorAll<HTMLElement>(selector)]
      .filter((e) => e.getClientRects().length > 0 && !(e as HTMLButtonElement).disabled && !e.closest('[hidden], details:not([open]) > :not(summary)'));
    controls.forEach((e, i) => (e.dataset.kbd = String(i)));
    (document.activeElement as HTMLElement | null)?.blur();
    return controls.length;
  }, CONTROLS);
  const seen = new Set<string>();
  for (let i = 0; i < total * 2 + 2; i++) {
    await page.keyboard.press('Tab');
    const at = await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.kbd ?? '');
    if (at) seen.add(at);
    if (seen.size === total) break;
  }
  return page.evaluate((reached: string[]) => [...document.querySelectorAll<HTMLElement>('[data-kbd]')]
    .filter((e) => !reached.includes(e.dataset.kbd!))
    .map((e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : `.${(e.textContent ?? '').trim().slice(0, 30)}`}`), [...seen]);
}

/**
 * Operates every visible, enabled control of `page` from the keyboard: focuses it and presses its key (Enter on a
 * link, button or summary; Space on a checkbox or radio; an arrow key on a select or range; a character typed into a
 * text field) and watches whether the control received the activation (click, input or change). Those events are
 * stopped at the window before any handler of the page runs and their default actions prevented, and typed text is
 * taken back, so nothing the control would do is done. Returns the controls the keyboard could not operate.
 */
export async function inoperableByKeyboard(page: Page): Promise<string[]> {
  const keys = await page.evaluate((selector: string) => {
    const controls = [...document.querySelectorAll<HTMLElement>(selector)]
      .filter((e) => e.getClientRects().length > 0 && !(e as HTMLButtonElement).disabled && !e.closest('[hidden], details:not([open]) > :not(summary)'));
    const w = window as unknown as { kbdOperated: Set<string>; kbdStop: (ev: Event) => void };
    w.kbdOperated = new Set();
    w.kbdStop = (ev: Event) => {
      const at = (ev.target as Element | null)?.closest?.<HTMLElement>('[data-op]');
      if (at) w.kbdOperated.add(at.dataset.op!);
      ev.preventDefault();
      ev.stopImmediatePropagation();
    };
    for (const type of ['click', 'input', 'change']) window.addEventListener(type, w.kbdStop, true);
    return controls.map((e, i) => {
      e.dataset.op = String(i);
      const type = e instanceof HTMLInputElement ? e.type : '';
      if (e instanceof HTMLSelectElement) return e.selectedIndex < e.options.length - 1 ? 'ArrowDown' : 'ArrowUp';
      if (type === 'checkbox' || type === 'radio') return ' ';
      if (type === 'range') return 'ArrowRight';
      if (e instanceof HTMLTextAreaElement || (e instanceof HTMLInputElement && !['button', 'submit', 'reset', 'image', 'color', 'file'].includes(type))) return 'type';
      return 'Enter';
    });
  }, CONTROLS);
  for (const [i, key] of keys.entries()) {
    const before = await page.evaluate((at: number) => {
      const e = document.querySelector<HTMLElement>(`[data-op="${at}"]`)!;
      e.focus();
      return e instanceof HTMLInputElement || e instanceof HTMLTextAreaElement || e instanceof HTMLSelectElement ? e.value : null;
    }, i);
    if (key === 'type') await page.keyboard.type('7');
    else await page.keyboard.press(key as KeyInput);
    await page.evaluate((at: number, value: string | null) => {
      const e = document.querySelector<HTMLInputElement>(`[data-op="${at}"]`)!;
      if (value !== null) e.value = value;
    }, i, before);
  }
  return page.evaluate(() => {
    const w = window as unknown as { kbdOperated: Set<string>; kbdStop: (ev: Event) => void };
    for (const type of ['click', 'input', 'change']) window.removeEventListener(type, w.kbdStop, true);
    return [...document.querySelectorAll<HTMLElement>('[data-op]')]
      .filter((e) => !w.kbdOperated.has(e.dataset.op!))
      .map((e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : `.${(e.textContent ?? '').trim().slice(0, 30)}`}`);
  });
}
