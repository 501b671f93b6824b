// The catalogues under Node, for unit tests: an I18n of extension/_locales/<lang>/messages.json with a fixed locale,
// so tests that compare English text use the English catalogue, and the same code can be rendered in German.
import { readFileSync } from 'node:fs';
import { catalogueLookup, makeI18n, type Catalogue, type I18n } from './i18n.js';

/** The languages the extension ships. */
export const LANGUAGES = ['en', 'de'] as const;

/** The path of `lang`'s messages.json. */
export const cataloguePath = (lang: string): string => new URL(`../_locales/${lang}/messages.json`, import.meta.url).pathname;

/** `lang`'s catalogue, parsed. */
export function catalogue(lang: string): Catalogue {
  return JSON.parse(readFileSync(cataloguePath(lang), 'utf8')) as Catalogue;
}

/** An I18n of `lang`'s catalogue, numbers and dates in `locale` (en-US, de-DE unless given). */
export function testI18n(lang: (typeof LANGUAGES)[number], locale = lang === 'en' ? 'en-US' : 'de-DE'): I18n {
  return makeI18n(catalogueLookup(catalogue(lang)), locale);
}
