// Options page entry: the extension's version and the native host's status (resolver settings come with measuring).
import { browser } from '../browser.js';
import { mountHostStatus } from '../ui/host-status-panel.js';

document.getElementById('version')!.textContent = `Extension version ${browser.runtime.getManifest().version}.`;
void mountHostStatus(document.getElementById('host-status')!, document.getElementById('check-again') as HTMLButtonElement);
