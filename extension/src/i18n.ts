// The extension's words and numbers in the person's language, without the browser: a message lookup with
// browser.i18n.getMessage's contract (extension/_locales/<lang>/messages.json), plural forms by Intl.PluralRules and
// numbers, durations, sizes and dates by Intl in the UI language. The pages and the background take one built from
// browser.i18n (locale.ts); unit tests build one from a catalogue file, so the verdict and the tables can be rendered
// in English and German under Node.
import { TRANSPORTS, type TransportId } from '../../common/transports.js';

/** browser.i18n.getMessage's shape: the message `key` with `$1`…`$9` filled from `substitutions`; '' when unknown. */
export type Lookup = (key: string, substitutions?: string | string[]) => string;

/** One messages.json: per key the message, its placeholders (name → `$n` content) and a note for translators. */
export type Catalogue = Record<string, { message: string; description?: string; placeholders?: Record<string, { content: string; example?: string }> }>;

/** Words and numbers in one language; every page and the background's badge speak through one of these. */
export interface I18n {
  /** The BCP 47 tag numbers and dates are formatted in (browser.i18n.getUILanguage()). */
  readonly locale: string;
  /**
   * The language the words are in, for `<html lang>`: the UI language when there is a catalogue for it (de-AT), else
   * the catalogue's own (`en` for a French browser, whose pages are English text with French numbers).
   */
  readonly lang: string;
  /** The message `key`, its placeholders filled in order (numbers formatted in the locale); the key itself when missing. */
  t(key: string, ...subs: Array<string | number>): string;
  /** The plural form of `key` for `n` (`key_one`, `key_other`…, falling back to `key_other`), `n` as first substitution. */
  plural(key: string, n: number, ...subs: Array<string | number>): string;
  /** A number in the locale, with at most `digits` fraction digits. */
  num(x: number, digits?: number): string;
  /** A number in the locale with exactly `digits` fraction digits. */
  fixed(x: number, digits: number): string;
  /** A duration in ms: "4.2 ms" under 10 ms, whole ms above; a minus as "−"; '–' for null. */
  ms(x: number | null): string;
  /** A duration with its sign (+ when positive). */
  signedMs(x: number | null): string;
  /** A size in bytes: "1,234 B" ('–' for null). */
  bytes(x: number | null): string;
  /** A share from 0 to 1 as a whole percentage. */
  percent(x: number, digits?: number): string;
  /** A date and time (ms since epoch) in the locale's medium style. */
  dateTime(at: number): string;
  /** "a, b and c" in the words' language. */
  list(items: readonly string[]): string;
  /** A transport's name in sentences ("DNS over TLS"); its short name (DoT, DoH) is the same in every language. */
  transport(id: TransportId): string;
}

/** A lookup over one catalogue with getMessage's rules: named placeholders, then `$1`…`$9`, `$$` for a dollar. */
export function catalogueLookup(catalogue: Catalogue): Lookup {
  const byKey = new Map(Object.entries(catalogue).map(([k, v]) => [k.toLowerCase(), v]));
  return (key, substitutions) => {
    const entry = byKey.get(key.toLowerCase());
    if (!entry) return '';
    const subs = substitutions === undefined ? [] : Array.isArray(substitutions) ? substitutions : [substitutions];
    const placeholders = new Map(Object.entries(entry.placeholders ?? {}).map(([k, v]) => [k.toLowerCase(), v.content]));
    const named = entry.message.replace(/\$([a-zA-Z0-9_@]+)\$/g, (whole, name: string) => placeholders.get(name.toLowerCase()) ?? whole);
    return named.replace(/\$(\$|[1-9])/g, (_, d: string) => (d === '$' ? '$' : (subs[Number(d) - 1] ?? '')));
  };
}

/** Words and numbers from `lookup` (messages) and `locale` (Intl). */
export function makeI18n(lookup: Lookup, locale: string): I18n {
  const words = lookup('lang') || 'en';
  // Plural forms follow the words' language (a French browser reads English messages: "0 hosts", not "0 host").
  const plurals = new Intl.PluralRules(words);
  const formats = new Map<number, Intl.NumberFormat>();
  const num = (x: number, digits = 0): string => {
    let f = formats.get(digits);
    if (!f) formats.set(digits, (f = new Intl.NumberFormat(locale, { maximumFractionDigits: digits })));
    return f.format(x);
  };
  const fixed = (x: number, digits: number): string => new Intl.NumberFormat(locale, { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(x);
  const text = (v: string | number): string => (typeof v === 'number' ? num(v, Number.isInteger(v) ? 0 : 1) : v);
  const t = (key: string, ...subs: Array<string | number>): string => lookup(key, subs.map(text)) || key;
  const ms = (x: number | null): string => {
    if (x === null) return '–';
    const a = Math.abs(x);
    return t('unit_ms', `${x < 0 ? '−' : ''}${a < 10 ? fixed(a, 1) : num(Math.round(a))}`);
  };
  const dates = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' });
  // "a, b and c" joins words of the messages' language.
  const lists = new Intl.ListFormat(words, { style: 'long', type: 'conjunction' });
  return {
    locale,
    lang: locale.toLowerCase().split('-')[0] === words ? locale : words,
    t,
    plural(key, n, ...subs) {
      const form = lookup(`${key}_${plurals.select(n)}`) ? `${key}_${plurals.select(n)}` : `${key}_other`;
      return t(form, n, ...subs);
    },
    num,
    fixed,
    ms,
    signedMs: (x) => (x !== null && x > 0 ? `+${ms(x)}` : ms(x)),
    bytes: (x) => (x === null ? '–' : t('unit_bytes', num(Math.round(x)))),
    percent: (x, digits = 0) => t('unit_percent', num(100 * x, digits)),
    dateTime: (at) => dates.format(new Date(at)),
    list: (items) => lists.format(items),
    transport: (id) => lookup(`transport_${id}`) || (TRANSPORTS[id]?.name ?? id),
  };
}
