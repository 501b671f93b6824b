// The dashboard's "On another network": per resolver × transport, the median estimated onLoad change of the pages
// shown, on the person's network and on a named one (the history cells' what-if: common/what-if-network.ts, the
// model over each page scaled to that network's round trip). A model estimate, labelled so.
import { PROFILES } from '../../../common/network-profiles.js';
import { WHAT_IF_NETWORKS, type WhatIfNetwork } from '../../../common/what-if-network.js';
import { TRANSPORTS } from '../../../common/transports.js';
import type { HistoryEntry } from '../history.js';
import type { I18n } from '../i18n.js';
import { $, el } from '../ui/dom.js';
import { whatIfMedians, type Combo, type View } from './analysis.js';

/** Fills the network choice once (4g first chosen). */
export function fillWhatIfNetworks(i18n: I18n): void {
  const choice = $<HTMLSelectElement>('whatif-network');
  for (const name of WHAT_IF_NETWORKS) choice.append(new Option(i18n.t('whatif_net_profile', name, i18n.ms(PROFILES[name]!.rttMs)), name));
  choice.value = '4g';
}

/** The table for the pages shown in `view`, on the chosen network. */
export function renderWhatIfTable(shown: readonly HistoryEntry[], view: View, order: readonly Combo[], resolverName: (id: string) => string, i18n: I18n): void {
  const { t } = i18n;
  const network = $<HTMLSelectElement>('whatif-network').value as WhatIfNetwork;
  const table = $<HTMLTableElement>('whatif');
  table.replaceChildren();
  const medians = whatIfMedians(shown, view, order, network);
  const rows = order.map((c, i) => ({ c, m: medians[i]! })).filter((r) => r.m.pages > 0);
  $('whatif-state').textContent = rows.length ? '' : t('dash_whatif_none');
  if (!rows.length) return;
  const head = el('tr');
  for (const key of ['col_resolver', 'col_transport', 'dash_col_pages', 'col_onload_here', 'col_onload_there']) {
    const th = el('th', t(key));
    th.scope = 'col';
    head.append(th);
  }
  table.append(el('thead'), el('tbody'));
  table.tHead!.append(head);
  for (const { c, m } of rows) {
    const tr = el('tr');
    Object.assign(tr.dataset, { resolver: c.resolver, transport: c.transport, there: m.there === null ? '' : String(m.there) });
    const name = el('th', resolverName(c.resolver));
    name.scope = 'row';
    tr.append(name, el('td', TRANSPORTS[c.transport].short), el('td', i18n.num(m.pages)), el('td', i18n.signedMs(m.here)), el('td', i18n.signedMs(m.there)));
    table.tBodies[0]!.append(tr);
  }
}
