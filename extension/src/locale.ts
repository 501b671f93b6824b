// The extension's language, from the browser: messages from _locales by browser.i18n (the browser picks the catalogue
// for its UI language, English when it has none), numbers and dates by Intl in browser.i18n.getUILanguage().
import { browser } from './browser.js';
import { makeI18n, type I18n } from './i18n.js';

let current: I18n | null = null;

/** The I18n of this browser's UI language (made once per page or background). */
export function browserI18n(): I18n {
  current ??= makeI18n((key, subs) => browser.i18n.getMessage(key, subs), browser.i18n.getUILanguage());
  return current;
}
