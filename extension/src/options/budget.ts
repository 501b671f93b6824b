// The options page's measurement budget section: the defaults in words, the person's two limits (pages measured
// automatically per hour, hours before a host is measured again) and their form, checked field by field.
import type { SettingsView } from '../messages/settings.js';
import { defaultSettings } from '../settings.js';
import { $ } from '../ui/dom.js';
import { setFieldError } from './feedback.js';
import type { SettingsPage } from './settings-page.js';
import { browserI18n } from '../locale.js';

const i18n = browserI18n();
const { t } = i18n;

/** Fills the budget section from `v`. */
export function renderBudget(v: SettingsView): void {
  const d = defaultSettings([]).budget;
  $('budget-defaults').textContent = t('budget_defaults', d.pagesPerHour, d.remeasureAfterHours);
  ($('budget-pages') as HTMLInputElement).value = String(v.settings.budget.pagesPerHour);
  ($('budget-hours') as HTMLInputElement).value = String(v.settings.budget.remeasureAfterHours);
}

/** Wires the budget form: both limits checked, then saved through `page`. */
export function wireBudget(page: SettingsPage): void {
  $('budget-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const pages = $<HTMLInputElement>('budget-pages');
    const hours = $<HTMLInputElement>('budget-hours');
    const p = Number(pages.value);
    const h = Number(hours.value);
    const pErr = pages.value.trim() === '' || !Number.isInteger(p) || p < 0 || p > 120 ? t('budget_pages_invalid') : undefined;
    const hErr = hours.value.trim() === '' || !Number.isFinite(h) || h < 1 || h > 720 ? t('budget_hours_invalid') : undefined;
    setFieldError('budget-pages-error', pErr, pages);
    setFieldError('budget-hours-error', hErr, hours);
    if (pErr || hErr) return;
    await page.change({ budget: { pagesPerHour: p, remeasureAfterHours: h } }, t('budget_saved'));
  });
}
