// Shows the native host's state in plain language (popup and options page share it).
import { TRANSPORTS } from '../../../common/transports.js';
import { type HostStatus } from '../messages/host.js';
import { CODES } from '../../../common/errors.js';
import { el } from './dom.js';
import type { I18n } from '../i18n.js';
import { compose, reported } from './localize.js';

/** The command that installs the native host's manifest for this machine's browsers. */
export const INSTALL_COMMAND = 'npx dnscost-host install'; // i18n-exempt: a command, typed as is in every language

function installCommand(): HTMLElement {
  const pre = el('pre');
  pre.append(el('code', INSTALL_COMMAND));
  return pre;
}

/** A paragraph of `nodes`. */
function para(nodes: Node[], className: string): HTMLElement {
  const p = el('p', undefined, className);
  p.append(...nodes);
  return p;
}

/** Seconds from now until `at` (ms since epoch), for "next attempt in N s". */
function secondsUntil(at: number, now: number): number {
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/** Replaces `root`'s content with `status` in words; sets `root.dataset.state` to `connected` or the failure code. */
export function renderHostStatus(root: HTMLElement, status: HostStatus, i18n: I18n, now = Date.now()): void {
  const { t } = i18n;
  root.replaceChildren();
  root.dataset.state = status.ok ? 'connected' : status.code;
  if (status.ok) {
    root.append(el('p', t('host_connected', status.version), 'good'));
    const names = status.transports.map((id) => (id in TRANSPORTS ? i18n.transport(id) : id));
    root.append(el('p', names.length ? t('host_can_measure', i18n.list(names)) : t('host_no_transport')));
    return;
  }
  switch (status.code) {
    case 'host-connecting':
      root.append(el('p', t('host_connecting')));
      return;
    case CODES.HOST_MISSING: {
      root.append(el('p', t('host_missing'), 'bad'));
      root.append(el('p', t('host_install_then_check')));
      root.append(installCommand());
      break;
    }
    case 'host-incompatible':
      root.append(para(compose(i18n, 'host_incompatible', reported(status.message)), 'bad'));
      root.append(el('p', t('host_update_then_check')));
      root.append(installCommand());
      break;
    case 'host-disconnected':
      root.append(el('p', t('host_disconnected'), 'bad'));
      break;
  }
  root.append(para(compose(i18n, 'host_details', reported(status.message)), 'detail'));
  if (status.retryAt !== null) root.append(el('p', t('host_next_attempt', t('unit_s', i18n.num(secondsUntil(status.retryAt, now)))), 'detail'));
}
