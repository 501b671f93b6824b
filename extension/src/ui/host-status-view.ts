// Shows the native host's state in plain language (popup and options page share it).
import { TRANSPORTS } from '../../../common/transports.js';
import { type HostStatus } from '../messages/host.js';
import { CODES } from '../../../common/errors.js';
import { el } from './dom.js';

/** The command that installs the native host's manifest for this machine's browsers. */
export const INSTALL_COMMAND = 'npx dnscost-host install';

function installCommand(): HTMLElement {
  const pre = el('pre');
  pre.append(el('code', INSTALL_COMMAND));
  return pre;
}

/** Seconds from now until `at` (ms since epoch), for "next attempt in N s". */
function secondsUntil(at: number, now: number): number {
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/** Replaces `root`'s content with `status` in words; sets `root.dataset.state` to `connected` or the failure code. */
export function renderHostStatus(root: HTMLElement, status: HostStatus, now = Date.now()): void {
  root.replaceChildren();
  root.dataset.state = status.ok ? 'connected' : status.code;
  if (status.ok) {
    root.append(el('p', `Connected to the dnscost native host, version ${status.version}.`, 'good'));
    const names = status.transports.map((t) => TRANSPORTS[t]?.name ?? t);
    root.append(el('p', names.length ? `It can measure ${names.join(', ')}.` : 'It reports no transport it can measure.'));
    return;
  }
  switch (status.code) {
    case 'host-connecting':
      root.append(el('p', 'Connecting to the dnscost native host…'));
      return;
    case CODES.HOST_MISSING: {
      root.append(el('p', 'The dnscost native host is not installed for this browser. dnscost needs it to measure DNS.', 'bad'));
      root.append(el('p', 'Install it from a terminal, then press “Check again”:'));
      root.append(installCommand());
      break;
    }
    case 'host-incompatible':
      root.append(el('p', `The installed dnscost native host does not match this extension: ${status.message}.`, 'bad'));
      root.append(el('p', 'Update it from a terminal, then press “Check again”:'));
      root.append(installCommand());
      break;
    case 'host-disconnected':
      root.append(el('p', 'The dnscost native host stopped or did not answer.', 'bad'));
      break;
  }
  root.append(el('p', `Details: ${status.message}`, 'detail'));
  if (status.retryAt !== null) root.append(el('p', `Next automatic attempt in ${secondsUntil(status.retryAt, now)} s.`, 'detail'));
}
