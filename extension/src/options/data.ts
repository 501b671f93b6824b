// The options page's data sections: clearing the recorded pages and results (after a confirmation), and exporting
// the person's settings to a JSON file or importing them from one (never consent; the policy's fields stay).
import { $, download, el } from '../ui/dom.js';
import { send } from '../ui/messages.js';
import { policyFields, say, sayFailure } from './feedback.js';
import type { SettingsPage } from './settings-page.js';
import { browserI18n } from '../locale.js';

const i18n = browserI18n();
const { t } = i18n;

/** Wires "Clear recorded data…" and its confirmation. */
export function wireDataClear(): void {
  const confirmBox = $('data-clear-confirm');
  $('data-clear').addEventListener('click', () => {
    confirmBox.hidden = false;
    $('data-clear-no').focus();
  });
  $('data-clear-no').addEventListener('click', () => {
    confirmBox.hidden = true;
    $('data-clear').focus();
  });
  $('data-clear-yes').addEventListener('click', async () => {
    confirmBox.hidden = true;
    const r = await send({ type: 'data-clear' });
    if (!r.ok) return sayFailure(r);
    say(r.removed.length ? i18n.plural('data_cleared', r.removed.length) : t('data_nothing_to_clear'));
  });
}

/** Wires export (a download through the page's `export-link`) and import (the imported view shown through `page`). */
export function wireSettingsFiles(page: SettingsPage): void {
  $('export').addEventListener('click', async () => {
    const r = await send({ type: 'settings-export' });
    if (!r.ok) return sayFailure(r);
    download(r.filename, 'application/json', r.json, $<HTMLAnchorElement>('export-link'));
    say(t('data_exported', r.filename));
  });

  $('import-file').addEventListener('change', async () => {
    const input = $<HTMLInputElement>('import-file');
    const status = $('import-status');
    const file = input.files?.[0];
    if (!file) return;
    const r = await send({ type: 'settings-import', json: await file.text() });
    input.value = '';
    if (!r.ok) {
      sayFailure(r, status);
      status.prepend(el('p', t('data_import_failed', file.name), 'bad'));
      return;
    }
    page.show(r);
    status.dataset.state = 'imported';
    status.replaceChildren(el('p', t('data_imported', file.name), 'good'));
    if (r.consentKept) status.append(el('p', t('data_consent_kept'), 'detail'));
    if (r.policyOverrides.length > 0) status.append(el('p', t('data_policy_still_sets', policyFields(r.policyOverrides)), 'detail'));
  });
}
