// The options page's upload section (off unless the person turns it on): the upload settings and their form, the
// uploader's state in words (asked with upload-status after every draw and action), the byte-exact preview of the
// next upload, sending now, and deleting everything uploaded.
import type { SettingsView } from '../messages/settings.js';
import type { UploadStatus } from '../messages/upload.js';
import { $ } from '../ui/dom.js';
import { send } from '../ui/messages.js';
import { say, sayFailure } from './feedback.js';
import type { SettingsPage } from './settings-page.js';
import { browserI18n } from '../locale.js';
import { reported } from '../ui/localize.js';

const i18n = browserI18n();
const { t } = i18n;

/** Fills the upload form from the person's own settings in `v`, then asks for the uploader's state. */
export function renderUpload(v: SettingsView): void {
  const u = v.own.upload;
  ($('upload-enabled') as HTMLInputElement).checked = u.enabled;
  ($('upload-paused') as HTMLInputElement).checked = u.paused;
  ($('upload-collector') as HTMLInputElement).value = u.collector;
  ($('upload-network-type') as HTMLSelectElement).value = u.network.type;
  void renderUploadState();
}

async function renderUploadState(): Promise<void> {
  const r = await send({ type: 'upload-status' });
  const box = $('upload');
  if (!r.ok) return sayFailure(r, $('upload-state'));
  const s: UploadStatus = r;
  box.dataset.state = !s.enabled ? 'off' : s.paused ? 'paused' : 'on';
  const waiting = s.queued.reduce((n, b) => n + b.pages, 0) + s.pendingPages;
  const last = s.queued[0]?.lastError;
  $('upload-state').textContent = [
    !s.enabled ? t('upload_off') : s.paused ? t('upload_paused') : t('upload_on', s.collector),
    t('upload_counts', i18n.plural('upload_waiting', waiting), i18n.plural('upload_sent', s.sent.reduce((n, b) => n + b.pages, 0)), i18n.plural('upload_batches', s.sent.length)),
    s.enabled ? t('upload_today', String(s.today.kept), String(s.today.measured), String(s.today.cap)) : '',
    last ? t('upload_last_failed', last.code) : '',
    s.refused.length ? i18n.plural('upload_refused', s.refused.length, s.refused.at(-1)!.code) : '',
  ].filter(Boolean).join(' ');
}

/** Wires the upload form (saved through `page`) and the preview, send and delete buttons. */
export function wireUpload(page: SettingsPage): void {
  $('upload-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const reply = await send({
      type: 'settings-set',
      changes: {
        upload: {
          enabled: ($('upload-enabled') as HTMLInputElement).checked,
          paused: ($('upload-paused') as HTMLInputElement).checked,
          collector: ($('upload-collector') as HTMLInputElement).value.trim(),
          network: { type: ($('upload-network-type') as HTMLSelectElement).value },
        },
      },
    });
    if (reply.ok) $('upload-error').textContent = '';
    else $('upload-error').replaceChildren(reported(('problems' in reply && reply.problems.length ? reply.problems : [reply.message]).join('; ')));
    page.take(reply, t('upload_saved'));
  });
  $('upload-preview').addEventListener('click', async () => {
    const r = await send({ type: 'upload-preview' });
    const pre = $('upload-preview-bytes');
    pre.hidden = false;
    if (!r.ok) pre.replaceChildren(reported(r.message));
    else pre.textContent = r.batch ? r.batch.body : t('upload_nothing_waiting');
    pre.dataset.key = r.ok && r.batch ? r.batch.key : '';
    void renderUploadState();
  });
  $('upload-send').addEventListener('click', async () => {
    await send({ type: 'upload-flush' });
    void renderUploadState();
  });
  $('upload-delete').addEventListener('click', async () => {
    const r = await send({ type: 'upload-delete' });
    if (r.ok) say(r.failed.length ? t('upload_deleted_partly', i18n.plural('upload_deleted', r.deleted), r.failed.length) : t('upload_deleted_all', i18n.plural('upload_deleted', r.deleted)), r.failed.length === 0);
    else sayFailure(r);
    void renderUploadState();
  });
}
