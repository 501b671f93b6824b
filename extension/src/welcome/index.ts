// The welcome page, opened once when dnscost is installed (background/index.ts): what dnscost does, what it sends
// where with the consent buttons (the options page's own section), a live check of the native host with the steps for
// this computer's system when it is missing, and whether a first page has been measured yet (it says so as soon as
// one is: the history is in storage.local, so a change there asks again).
import type { SettingsView } from '../messages/settings.js';
import { browser } from '../browser.js';
import { renderConsent, wireConsent } from '../options/consent.js';
import { renderPolicy } from '../options/feedback.js';
import { SettingsPage } from '../options/settings-page.js';
import { el } from '../ui/dom.js';
import { mountHostStatus } from '../ui/host-status-panel.js';
import { INSTALL_COMMAND } from '../ui/host-status-view.js';
import { send } from '../ui/messages.js';

/** How to get the native host onto this system today (from a checkout of dnscost's source; README "Registering"). */
const STEPS: Record<string, string[]> = {
  linux: ['In a checkout of dnscost’s source, as root on Debian 12: scripts/setup (it installs Node.js packages, Go programs and the build).', `Then, as yourself: ${INSTALL_COMMAND}`],
  mac: ['In a checkout of dnscost’s source, with Node.js 20 and Go 1.26: npm ci, then npx tsc -p tsconfig.json.', `Then: ${INSTALL_COMMAND}`],
  win: ['In a checkout of dnscost’s source, with Node.js 20 and Go 1.26 (PowerShell): npm ci, then npx tsc -p tsconfig.json.', `Then: ${INSTALL_COMMAND} (it registers the host for your user, no administrator needed)`],
};

async function showSteps(): Promise<void> {
  const root = document.getElementById('host-steps')!;
  const { os } = await browser.runtime.getPlatformInfo();
  root.dataset.os = os;
  const steps = STEPS[os] ?? STEPS.linux!;
  const list = el('ol');
  for (const s of steps) list.append(el('li', s));
  root.replaceChildren(el('p', 'If it is missing, install it:'), list, el('p', 'then press “Check again”.', 'detail'));
}

/** Says whether a page has been measured yet, from the history's count. */
async function showFirst(): Promise<void> {
  const root = document.getElementById('first')!;
  const reply = await send({ type: 'history-get' });
  const state = document.getElementById('first-state')!;
  if (!reply.ok) {
    root.dataset.state = reply.code;
    state.textContent = `Could not read your history: ${reply.message}`;
    return;
  }
  root.dataset.state = reply.total > 0 ? 'measured' : 'waiting';
  if (reply.total === 0) {
    state.textContent = 'No page measured yet.';
    return;
  }
  const link = el('a', 'Open your dashboard');
  link.href = '../dashboard/dashboard.html';
  state.replaceChildren(`${reply.total === 1 ? 'Your first page is measured' : `${reply.total} pages measured`}. `, link, ' to see what encrypted DNS would cost you.');
}

const page = new SettingsPage((v: SettingsView) => {
  renderPolicy(v);
  renderConsent(v);
});
wireConsent(page);
void page.refresh();
void mountHostStatus(document.getElementById('host-status')!, document.getElementById('check-again') as HTMLButtonElement);
void showSteps();
void showFirst();
browser.storage.onChanged.addListener((_changes, area) => {
  // Until the first page is measured (then there is nothing more to say).
  if (area === 'local' && document.getElementById('first')!.dataset.state !== 'measured') void showFirst();
  if (area === 'managed') void page.refresh();
});
