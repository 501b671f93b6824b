// "On another network": the cost panel's estimate of the measured page on a named network or on the person's own with
// a longer round trip (common/what-if-network.ts: every time of the page and its replay scaled by the ratio of round
// trips, priced by the cost model), beside the change estimated on the person's network. Labelled a model estimate:
// bench/validate/what-if.ts checks it against rows the validation measured on each network
// (bench/results/validation/what-if.md).
import { PROFILES } from '../../../common/network-profiles.js';
import type { CellCost } from '../../../common/cost-model.js';
import type { StoredRecord } from '../../../common/stored-record.js';
import { measuredRttMs, WHAT_IF_NETWORKS, whatIfCost, type WhatIfTarget } from '../../../common/what-if-network.js';
import { TRANSPORTS } from '../../../common/transports.js';
import type { MeasurementMeta } from '../messages/measure.js';
import type { I18n } from '../i18n.js';
import { el } from '../ui/dom.js';

/** After the named networks (WHAT_IF_NETWORKS), the person's own with a longer round trip. */
export const WHAT_IF_FACTORS = [2, 3] as const;

/** The choice's value → its target. */
function targetOf(value: string): WhatIfTarget | null {
  const m = /^x(\d+(?:\.\d+)?)$/.exec(value);
  if (m) return { factor: Number(m[1]) };
  const p = Object.hasOwn(PROFILES, value) ? PROFILES[value] : undefined;
  return p ? { rttMs: p.rttMs } : null;
}

/** The section: a choice of network and, per cell measured here, the onLoad change estimated there. */
export function renderWhatIfNetwork(meta: Pick<MeasurementMeta, 'page' | 'plan'>, records: readonly StoredRecord[], cells: readonly CellCost[], resolverNames: Map<string, string>, i18n: I18n): HTMLElement {
  const { t } = i18n;
  const box = el('section', undefined, 'whatif-network');
  box.append(el('h2', t('whatif_net_title')));
  const own = measuredRttMs(records);
  if (own === null || cells.length === 0) {
    box.append(el('p', t('whatif_net_unknown'), 'detail'));
    return box;
  }
  const choice = el('select');
  choice.id = 'whatif-network';
  choice.setAttribute('aria-label', t('whatif_net_choice'));
  for (const name of WHAT_IF_NETWORKS) choice.append(new Option(t('whatif_net_profile', name, i18n.ms(PROFILES[name]!.rttMs)), name));
  for (const f of WHAT_IF_FACTORS) choice.append(new Option(t('whatif_net_times', i18n.num(f)), `x${f}`));
  choice.value = '4g';
  const how = el('p', undefined, 'detail');
  const holder = el('div');
  const draw = () => {
    const target = targetOf(choice.value);
    const there = target && whatIfCost(meta.page, records, target, meta.plan.currentDns?.retryMs);
    holder.replaceChildren();
    if (!there) return;
    how.textContent = t('whatif_net_how', i18n.ms(own), i18n.num(there.k, 1));
    const byKey = new Map(there.cells.map((c) => [`${c.resolver} ${c.transport} ${c.mode}`, c]));
    const table = el('table');
    const head = table.createTHead().insertRow();
    for (const k of ['col_resolver', 'col_transport', 'col_connection', 'col_onload_here', 'col_onload_there']) head.append(el('th', t(k)));
    const body = table.createTBody();
    for (const c of cells) {
      const est = byKey.get(`${c.resolver} ${c.transport} ${c.mode}`)?.onLoad.delta ?? null;
      const row = body.insertRow();
      for (const text of [resolverNames.get(c.resolver) ?? c.resolver, TRANSPORTS[c.transport].short, t(`mode_${c.mode}`), i18n.signedMs(c.onLoad.delta), i18n.signedMs(est)]) row.insertCell().textContent = text;
      Object.assign(row.dataset, { resolver: c.resolver, transport: c.transport, mode: c.mode, estimate: est === null ? '' : String(est) });
    }
    holder.append(table);
  };
  choice.addEventListener('change', draw);
  box.append(choice, how, holder);
  draw();
  return box;
}
