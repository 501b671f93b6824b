// The options page's recording section: whether dnscost sees every request a page makes (the optional webRequest
// permission, which the background's recorder follows as it is granted or removed) or what webNavigation and each
// frame's Resource Timing show. The checkbox shows the permission as the browser holds it (Chromium only: Firefox's
// build requires it).
import { browser } from '../browser.js';
import { browserI18n } from '../locale.js';
import { $, el } from '../ui/dom.js';

const { t } = browserI18n();
const WEB_REQUEST = { permissions: ['webRequest' as const] };

/**
 * Fills the page's `#recording` section (the options and welcome pages) and wires its checkbox to the permission,
 * asked for on the person's click, as browsers require.
 */
export function wireRecording(): void {
  const section = $('recording');
  // Firefox's build requires the permission (it alone says a page went through a proxy): nothing to choose there.
  if (!browser.runtime.getManifest().optional_permissions?.includes('webRequest')) {
    section.hidden = true;
    return;
  }
  const title = el('h2', t('recording_title'));
  title.id = 'recording-title';
  const box = el('input');
  box.type = 'checkbox';
  box.id = 'record-requests';
  const label = el('label');
  label.htmlFor = box.id;
  label.append(box, ` ${t('recording_requests')}`);
  const status = el('p', '', 'detail');
  status.setAttribute('role', 'status');
  const choice = el('p');
  choice.append(label);
  section.replaceChildren(title, el('p', t('recording_detail'), 'detail'), choice, status);
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
