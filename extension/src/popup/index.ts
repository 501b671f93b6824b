// Popup entry: the native host's status (the per-site cost panel comes with the measuring issue).
import { mountHostStatus } from '../ui/host-status-panel.js';

void mountHostStatus(document.getElementById('host-status')!, document.getElementById('check-again') as HTMLButtonElement);
