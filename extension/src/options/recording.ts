// The options page's recording section: whether dnscost sees every request a page makes (the optional webRequest
// permission, which the background's recorder follows as it is granted or removed) or what webNavigation and each
// frame's Resource Timing show. The checkbox shows the permission as the browser holds it (Chromium only: Firefox's
// build requires it).
import { browser } from '../browser.js';
import { browserI18n } from '../locale.js';
import { $ } from '../ui/dom.js';

const { t } = browserI18n();
const WEB_REQUEST = { permissions: ['webRequest' as const] };

/** Wires the checkbox to the permission (asked for on the person's click, as browsers require). */
export function wireRecording(): void {
  // Firefox's build requires the permission (it alone says a page went through a proxy): nothing to choose there.
  if (!browser.runtime.getManifest().optional_permissions?.includes('webRequest')) {
    $('recording-title').closest('section')!.hidden = true;
    return;
  }
  const box = $<HTMLInputElement>('record-requests');
  const status = $('recording-status');
  const show = async (): Promise<void> => {
    box.checked = await browser.permissions.contains(WEB_REQUEST);
  };
  box.addEventListener('change', () => {
    const want = box.checked;
    // The request must start inside the click's handler (Firefox refuses one after an await).
    const asked = want ? browser.permissions.request(WEB_REQUEST) : browser.permissions.remove(WEB_REQUEST);
    void asked
      .then((done) => (status.textContent = t(!done ? 'recording_refused' : want ? 'recording_on' : 'recording_off')))
      .catch(() => (status.textContent = t('recording_refused')))
      .finally(() => void show());
  });
  browser.permissions.onAdded.addListener(() => void show());
  browser.permissions.onRemoved.addListener(() => void show());
  void show();
}
