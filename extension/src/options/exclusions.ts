// The options page's excluded-sites section: the list with a remove button each, and the form that adds a site
// (a hostname or a URL, read by resolver-form.ts exclusionFromInput).
import type { SettingsView } from '../messages/settings.js';
import { $, el } from '../ui/dom.js';
import { setFieldError } from './feedback.js';
import { exclusionFromInput } from './resolver-form.js';
import type { SettingsPage } from './settings-page.js';
import { browserI18n } from '../locale.js';

const i18n = browserI18n();
const { t } = i18n;

/** Fills the exclusions list from `v`; its remove buttons change the settings through `page`. */
export function renderExclusions(v: SettingsView, page: SettingsPage): void {
  const list = $('exclusions');
  list.replaceChildren();
  if (v.settings.exclusions.length === 0) list.append(el('li', t('exclusions_none'), 'detail'));
  for (const host of v.settings.exclusions) {
    const li = el('li', host);
    li.dataset.exclusion = host;
    const remove = el('button', t('exclusions_remove', host));
    remove.type = 'button';
    remove.addEventListener('click', () => void page.change({ exclusions: page.current.own.exclusions.filter((e) => e !== host) }, t('exclusions_removed', host)));
    li.append(remove);
    list.append(li);
  }
}

/** Wires the add-a-site form: the site is read, checked against the list, then added through `page`. */
export function wireExclusions(page: SettingsPage): void {
  $('exclusion-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const input = $<HTMLInputElement>('exclusion-input');
    const r = exclusionFromInput(input.value, i18n);
    setFieldError('exclusion-error', r.ok ? undefined : r.message, input);
    if (!r.ok) return;
    if (page.current.own.exclusions.includes(r.hostname)) {
      setFieldError('exclusion-error', t('exclusions_already', r.hostname), input);
      return;
    }
    if (await page.change({ exclusions: [...page.current.own.exclusions, r.hostname] }, t('exclusions_added', r.hostname))) input.value = '';
  });
}
