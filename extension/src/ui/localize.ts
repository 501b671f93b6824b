// Fills a page's static text from the messages, at load: the HTML carries no words of its own, only keys.
//   data-i18n="key"            the element's text; `<0>…</0>`, `<1>…</1>` in the message are its child elements in
//                              order (a link, a <code>), which keep their attributes and get the marked text
//   data-i18n-title, -placeholder, -aria-label="key"   that attribute
// `<html lang>` is set to the language of the words (the UI language when dnscost has it, else English). Text only ever goes in as textContent, never as markup.
import type { I18n } from '../i18n.js';

/** The attributes a `data-i18n-<name>` fills. */
const ATTRIBUTES = ['title', 'placeholder', 'aria-label'] as const;

/** Sets `element`'s text to `message`, `<n>…</n>` spans going to its n-th child element. */
export function fillMarked(element: Element, message: string): void {
  const children = [...element.children];
  const parts: Node[] = [];
  const marked = /<(\d)>(.*?)<\/\1>/gs;
  let at = 0;
  for (let m = marked.exec(message); m; m = marked.exec(message)) {
    if (m.index > at) parts.push(document.createTextNode(message.slice(at, m.index)));
    const child = children[Number(m[1])];
    if (child) {
      child.textContent = m[2]!;
      parts.push(child);
    }
    at = m.index + m[0].length;
  }
  if (at < message.length) parts.push(document.createTextNode(message.slice(at)));
  element.replaceChildren(...parts);
}

/** Fills every `data-i18n*` element under `root` from `i18n`, and the document's language. */
export function localizePage(i18n: I18n, root: ParentNode = document): void {
  document.documentElement.lang = i18n.lang;
  for (const e of root.querySelectorAll<HTMLElement>('[data-i18n]')) fillMarked(e, i18n.t(e.dataset.i18n!));
  for (const name of ATTRIBUTES) {
    for (const e of root.querySelectorAll<HTMLElement>(`[data-i18n-${name}]`)) e.setAttribute(name, i18n.t(e.getAttribute(`data-i18n-${name}`)!));
  }
}

/**
 * Text the host, the browser or the background reports (an error's message, a policy problem) is English whatever
 * the page's language: marked `<span lang="en">` so a screen reader reads it as English and the German check knows it
 * is a quoted detail, not an untranslated word of dnscost's own.
 */
export function reported(text: string): HTMLSpanElement {
  const span = document.createElement('span');
  span.lang = 'en';
  span.textContent = text;
  return span;
}

/** `key`'s message as nodes, substitutions that are nodes (e.g. `reported(…)`) placed where the message puts them. */
export function compose(i18n: I18n, key: string, ...subs: Array<string | number | Node>): Node[] {
  const nodes = new Map<string, Node>();
  // Private-use characters cannot occur in a message or a substitution's text.
  const text = i18n.t(key, ...subs.map((s, i) => (typeof s === 'object' ? (nodes.set(`\u{E000}${i}\u{E001}`, s), `\u{E000}${i}\u{E001}`) : s)));
  return text.split(/(\u{E000}\d+\u{E001})/u).filter((part) => part !== '').map((part) => nodes.get(part) ?? document.createTextNode(part));
}
