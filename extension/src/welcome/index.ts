// The welcome page, opened once when dnscost is installed (background/index.ts): what dnscost does, what it sends
// where with the consent buttons (the options page's own section), what it sees of a page (in Chromium, whether to
// grant webRequest: the options page's own section again), a live check of the native host with the steps for this
// computer's system when it is missing, and whether a first page has been measured yet (it says so as soon as one
// is: the history is in storage.local, so a change there asks again).
import type { SettingsView } from '../messages/settings.js';
import { browser } from '../browser.js';
import { renderConsent, wireConsent } from '../options/consent.js';
import { renderPolicy } from '../options/feedback.js';
import { wireRecording } from '../options/recording.js';
import { SettingsPage } from '../options/settings-page.js';
import { el } from '../ui/dom.js';
import { mountHostStatus } from '../ui/host-status-panel.js';
import { INSTALL_COMMAND } from '../ui/host-status-view.js';
import { send } from '../ui/messages.js';
import { browserI18n } from '../locale.js';
import { compose, fillMarked, localizePage, reported } from '../ui/localize.js';

const i18n = browserI18n();
const { t } = i18n;

/** How to get the native host onto this system today (from a checkout of dnscost's source; README "Registering"). */
const STEPS: Record<string, string[]> = {
  linux: [t('welcome_step_linux'), t('welcome_step_then_yourself', INSTALL_COMMAND)],
  mac: [t('welcome_step_mac'), t('welcome_step_then', INSTALL_COMMAND)],
  win: [t('welcome_step_win'), t('welcome_step_then_win', INSTALL_COMMAND)],
};

async function showSteps(): Promise<void> {
  const root = document.getElementById('host-steps')!;
  const { os } = await browser.runtime.getPlatformInfo();
  root.dataset.os = os;
  const steps = STEPS[os] ?? STEPS.linux!;
  const list = el('ol');
  for (const s of steps) list.append(el('li', s));
  root.replaceChildren(el('p', t('welcome_if_missing')), list, el('p', t('welcome_then_check'), 'detail'));
}

/** Says whether a page has been measured yet, from the history's count. */
async function showFirst(): Promise<void> {
  const root = document.getElementById('first')!;
  const reply = await send({ type: 'history-get' });
  const state = document.getElementById('first-state')!;
  if (!reply.ok) {
    root.dataset.state = reply.code;
    state.replaceChildren(...compose(i18n, 'welcome_history_unreadable', reported(reply.message)));
    return;
  }
  root.dataset.state = reply.total > 0 ? 'measured' : 'waiting';
  if (reply.total === 0) {
    state.textContent = t('welcome_none_measured');
    return;
  }
  const link = el('a');
  link.href = '../dashboard/dashboard.html';
  state.append(link);
  fillMarked(state, i18n.plural('welcome_measured', reply.total));
}

localizePage(i18n);
const page = new SettingsPage((v: SettingsView) => {
  renderPolicy(v);
  renderConsent(v);
});
wireConsent(page);
wireRecording();
void page.refresh();
void mountHostStatus(document.getElementById('host-status')!, document.getElementById('check-again') as HTMLButtonElement);
void showSteps();
void showFirst();
browser.storage.onChanged.addListener((_changes, area) => {
  // Until the first page is measured (then there is nothing more to say).
  if (area === 'local' && document.getElementById('first')!.dataset.state !== 'measured') void showFirst();
  if (area === 'managed') void page.refresh();
});
