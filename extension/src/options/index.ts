// Options page entry: wires the sections of the person's settings (consent, resolvers, budget, exclusions, what is
// recorded of a page, the opt-in upload with its byte-exact preview, clearing data, export and import) and the native
// host's status. Every change goes to the background as a settings message and the page re-renders from its reply
// (settings-page.ts); nothing here writes storage. Text from settings, files or the policy only ever reaches the page
// through textContent.
import type { SettingsView } from '../messages/settings.js';
import { browser } from '../browser.js';
import { mountHostStatus } from '../ui/host-status-panel.js';
import { localizePage } from '../ui/localize.js';
import { renderBudget, wireBudget } from './budget.js';
import { renderConsent, wireConsent } from './consent.js';
import { wireDataClear, wireSettingsFiles } from './data.js';
import { renderExclusions, wireExclusions } from './exclusions.js';
import { renderPolicy } from './feedback.js';
import { wireProbe } from './probe.js';
import { wireRecording } from './recording.js';
import { renderResolvers, wireResolvers } from './resolvers.js';
import { SettingsPage } from './settings-page.js';
import { renderUpload, wireUpload } from './upload.js';
import { browserI18n } from '../locale.js';

const i18n = browserI18n();
const { t } = i18n;

const page: SettingsPage = new SettingsPage((v: SettingsView) => {
  renderPolicy(v);
  renderConsent(v);
  renderResolvers(v, page);
  renderBudget(v);
  renderExclusions(v, page);
  renderUpload(v);
});

localizePage(i18n);
document.getElementById('version')!.textContent = t('options_version', browser.runtime.getManifest().version);
wireConsent(page);
wireResolvers(page);
wireProbe();
wireBudget(page);
wireExclusions(page);
wireRecording();
wireDataClear();
wireSettingsFiles(page);
wireUpload(page);
void page.refresh();
// An administrator's policy can arrive or change while the page is open (Chromium loads extension policy shortly
// after start-up).
browser.storage.onChanged.addListener((_changes, area) => {
  if (area === 'managed') void page.refresh();
});
void mountHostStatus(document.getElementById('host-status')!, document.getElementById('check-again') as HTMLButtonElement);
