// The options page's "What your resolvers can do": the last probe of the resolvers in force as one table per
// resolver (capability, endpoint, result, what was seen), and the button that probes them now through the host.
// Everything the host sent reaches the page through textContent only.
import { probeItemKey, type ProbeResult } from '../../../common/probe.js';
import type { StoredResolverProbe } from '../messages/host.js';
import { $, el } from '../ui/dom.js';
import { send } from '../ui/messages.js';
import { browserI18n } from '../locale.js';

const i18n = browserI18n();
const { t } = i18n;

const RESULT_KEYS: Record<ProbeResult, string> = { yes: 'probe_yes', no: 'probe_no', 'n/a': 'probe_na', error: 'probe_error' };

function renderProbe(probe: StoredResolverProbe | null): void {
  const box = $('probe-results');
  box.replaceChildren();
  if (!probe) {
    $('probe-state').textContent = t('probe_none');
    return;
  }
  $('probe-state').textContent = [t('probe_at', i18n.dateTime(probe.at)), probe.plainLeftOut ? t('probe_plain_left_out') : ''].filter(Boolean).join(' ');
  for (const r of probe.resolvers) {
    const table = el('table', undefined, 'probe');
    table.dataset.resolverId = r.id;
    table.append(el('caption', probe.names[r.id] ?? r.id));
    const head = el('tr');
    for (const key of ['probe_col_item', 'probe_col_endpoint', 'probe_col_result', 'probe_col_detail']) {
      const th = el('th', t(key));
      th.scope = 'col';
      head.append(th);
    }
    table.append(el('thead'), el('tbody'));
    table.tHead!.append(head);
    for (const row of r.rows) {
      const tr = el('tr');
      tr.dataset.item = row.item;
      tr.dataset.result = row.result;
      const name = el('th', t(probeItemKey(row.item)));
      name.scope = 'row';
      tr.append(name, el('td', row.endpoint ?? '—'), el('td', t(RESULT_KEYS[row.result]), `result-${row.result === 'n/a' ? 'na' : row.result}`), el('td', row.detail, 'detail'));
      table.tBodies[0]!.append(tr);
    }
    box.append(table);
  }
}

/** Shows the last probe and wires the button that runs one now. */
export function wireProbe(): void {
  const button = $('probe-run') as HTMLButtonElement;
  void send({ type: 'resolver-probe' }).then((r) => {
    if (r.ok) renderProbe(r.probe);
  });
  button.addEventListener('click', async () => {
    button.disabled = true;
    $('probe-state').textContent = t('probe_running');
    try {
      const r = await send({ type: 'resolver-probe', run: true });
      if (r.ok) renderProbe(r.probe);
      else $('probe-state').textContent = t('probe_failed', `${r.code}: ${r.message}`);
    } finally {
      button.disabled = false;
    }
  });
}
