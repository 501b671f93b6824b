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
