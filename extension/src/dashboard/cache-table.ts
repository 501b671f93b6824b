// The dashboard's "What a cache would save": per resolver, of the times the person's pages needed a host again, how
// many a cache honouring that resolver's TTL would have answered (cache-savings message, extension/src/cache-savings.ts).
// Over every host kept, not the filters above: the revisits keep no pages, only each host's gaps between needs.
import { $, el } from '../ui/dom.js';
import { send } from '../ui/messages.js';
import { browserI18n } from '../locale.js';

const i18n = browserI18n();
const { t } = i18n;

/** Reads the savings and fills the table (or says why it is empty). */
export async function mountCacheSavings(): Promise<void> {
  const r = await send({ type: 'cache-savings' });
  const table = $<HTMLTableElement>('cache');
  const state = $('cache-state');
  table.replaceChildren();
  if (!r.ok) {
    state.textContent = t('dash_cache_failed', r.code);
    return;
  }
  const rows = r.savings.filter((s) => s.needs > 0);
  state.textContent = rows.length ? i18n.plural('dash_cache_hosts', r.hosts) : t('dash_cache_none');
  if (!rows.length) return;
  const head = el('tr');
  for (const key of ['col_resolver', 'dash_cache_col_hosts', 'dash_cache_col_needs', 'dash_cache_col_served', 'dash_cache_col_saved', 'dash_cache_col_ttl']) {
    const th = el('th', t(key));
    th.scope = 'col';
    head.append(th);
  }
  table.append(el('thead'), el('tbody'));
  table.tHead!.append(head);
  for (const s of rows) {
    const share = (n: number) => i18n.percent(n / s.needs);
    const served = s.servedAtLeast === s.servedAtMost
      ? t('dash_cache_served', i18n.num(s.servedAtLeast), share(s.servedAtLeast))
      : t('dash_cache_served_range', i18n.num(s.servedAtLeast), i18n.num(s.servedAtMost), share(s.servedAtLeast), share(s.servedAtMost));
    const tr = el('tr');
    tr.dataset.resolver = s.resolver;
    const name = el('th', s.name);
    name.scope = 'row';
    // Hosts noted before lookup times were kept save nothing known: '–' when none has one.
    const duration = (ms: number) => (ms < 1000 ? i18n.ms(Math.round(ms)) : t('unit_s', i18n.num(ms / 1000, 1)));
    const saved = s.timedHosts === 0 ? '–' : s.savedMsAtLeast === s.savedMsAtMost ? duration(s.savedMsAtLeast) : t('dash_cache_saved_range', duration(s.savedMsAtLeast), duration(s.savedMsAtMost));
    tr.append(name, el('td', i18n.num(s.hosts)), el('td', i18n.num(s.needs)), el('td', served), el('td', saved), el('td', s.medianTtlS === null ? '–' : t('unit_s', i18n.num(s.medianTtlS))));
    table.tBodies[0]!.append(tr);
  }
}
