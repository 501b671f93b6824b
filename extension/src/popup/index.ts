// Popup entry: the native host's status and the per-site cost panel of the current tab (or of `?tab=ID` when the
// popup is opened as a page).
import { mountHostStatus } from '../ui/host-status-panel.js';
import { mountCostPanel, targetTab } from './cost-panel.js';
import { browserI18n } from '../locale.js';
import { localizePage } from '../ui/localize.js';

localizePage(browserI18n());
void mountHostStatus(document.getElementById('host-status')!, document.getElementById('check-again') as HTMLButtonElement);
void targetTab(location.search).then((tabId) => mountCostPanel(document.getElementById('cost')!, tabId));
