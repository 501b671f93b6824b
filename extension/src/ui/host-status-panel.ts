// The host-status panel of the popup and the options page: asks the background, renders, and offers "Check again".
import { renderHostStatus } from './host-status-view.js';
import { send } from './messages.js';
import { type HostStatus } from '../messages/host.js';
import { browserI18n } from '../locale.js';
import { compose, reported } from './localize.js';

function show(root: HTMLElement, reply: HostStatus | { ok: false; code: string; message: string }): void {
  if ('connected' in reply) {
    renderHostStatus(root, reply, browserI18n());
    return;
  }
  root.dataset.state = reply.code;
  root.replaceChildren(...compose(browserI18n(), 'error_no_background', reply.code, reported(reply.message)));
}

/** Fills `root` with the host's status; `button` retries at once. While connecting, asks again every second. */
export async function mountHostStatus(root: HTMLElement, button: HTMLButtonElement): Promise<void> {
  let polls = 0;
  const refresh = async (): Promise<void> => {
    const reply = await send({ type: 'host-status' });
    show(root, reply);
    // Firefox takes 3–4 s to start the host the first time; stop polling after the hello timeout's worth.
    if (!reply.ok && reply.code === 'host-connecting' && ++polls < 20) setTimeout(() => void refresh(), 1000);
  };
  button.addEventListener('click', async () => {
    button.disabled = true;
    root.dataset.state = 'host-connecting';
    show(root, await send({ type: 'host-reconnect' }));
    button.disabled = false;
  });
  await refresh();
}
