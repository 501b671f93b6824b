// The popup's per-site cost panel for one tab: asks the background for the tab's measurement (measure-status), shows
// a plain-language state (host not installed, no consent, private window, excluded site, nothing yet, measuring with
// a progress bar, results), starts and cancels measurements, and exports the results as JSON.
//
// Lifecycle: mount → one measure-status; while a measurement runs it polls every POLL_MS (cheap: no records), and
// once it finished asks once more with the records and draws the results. `root.dataset.state` names the state
// shown (tests and scripts read it); `root.dataset.drawMs` how long the last results took to draw.
import { type MeasureStatus } from '../messages/measure.js';
import type { StoredResolverProbe } from '../messages/host.js';
import { browser } from '../browser.js';
import { pageVerdict } from '../verdict.js';
import { outsideValidated } from '../../../common/validated-range.js';
import { INSTALL_COMMAND } from '../ui/host-status-view.js';
import { send } from '../ui/messages.js';
import { download, el } from '../ui/dom.js';
import { computeResults, renderBytes, renderEdges, renderSummary, renderWaterfall, resolverName } from './cost-view.js';
import { browserI18n } from '../locale.js';
import { compose, reported } from '../ui/localize.js';
import { CODES } from '../../../common/errors.js';
import { TRANSPORTS } from '../../../common/transports.js';
import { probeHighlights, probeItemKey } from '../../../common/probe.js';
import { whatIfHar } from '../../../common/what-if-har.js';
import { renderWhatIfNetwork } from './what-if-view.js';
import { type StoredRecord } from '../../../common/stored-record.js';

/** Progress is asked for this often while measuring. */
export const POLL_MS = 500;

const i18n = browserI18n();
const { t } = i18n;

/** The tab to show: `?tab=ID` when the popup is opened as a page, else the active tab of the current window. */
export async function targetTab(search: string): Promise<number | null> {
  const param = new URLSearchParams(search).get('tab');
  if (param !== null && /^\d+$/.test(param)) return Number(param);
  const [tab] = await browser.tabs.query({ active: true, currentWindow: true });
  return tab?.id ?? null;
}

/**
 * Says `text` in the popup's live region (#announce, role=status). The panel itself is not live: while measuring it
 * is redrawn every POLL_MS, and a screen reader would read it again each time. Only a measurement's start and its
 * end are announced.
 */
function announce(text: string): void {
  const region = document.getElementById('announce');
  if (region) region.textContent = text;
}

function show(root: HTMLElement, state: string, ...children: Array<Node | string>): void {
  const before = root.dataset.state;
  root.dataset.state = state;
  root.replaceChildren(...children);
  if (state === before) return;
  if (state === 'measuring') announce(t('popup_announce_measuring'));
  else if (before === 'measuring') announce(t(state === 'results' ? 'popup_announce_finished' : 'popup_announce_stopped'));
}

/** Folds a section under its heading: the verdict answers, the tables and the waterfall are there for who asks. */
function fold(section: HTMLElement): HTMLDetailsElement {
  const details = el('details', undefined, 'fold');
  const heading = section.querySelector('h2');
  details.append(el('summary', heading?.textContent ?? ''), section);
  heading?.remove();
  return details;
}

/** A paragraph of `nodes` (text and reported details). */
function para(nodes: Node[], className?: string): HTMLParagraphElement {
  const p = el('p', undefined, className);
  p.append(...nodes);
  return p;
}

function button(text: string, onClick: () => void, id?: string): HTMLButtonElement {
  const b = el('button', text);
  b.type = 'button';
  if (id) b.id = id;
  b.addEventListener('click', onClick);
  return b;
}

/** Fills `root` with the cost panel of `tabId` and keeps it current. */
export async function mountCostPanel(root: HTMLElement, tabId: number | null): Promise<void> {
  if (tabId === null) {
    show(root, 'no-tab', el('p', t('popup_no_tab')));
    return;
  }
  let timer: ReturnType<typeof setTimeout> | null = null;
  const refresh = async (withRecords = false): Promise<void> => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    const reply = await send({ type: 'measure-status', tabId, records: withRecords });
    if (!reply.ok) {
      show(root, reply.code, para(compose(i18n, 'error_no_background', reply.code, reported(reply.message)), 'bad'));
      return;
    }
    const status = reply as MeasureStatus;
    const m = status.measurement;
    if (m?.state === 'running') {
      renderMeasuring(status);
      timer = setTimeout(() => void refresh(), POLL_MS);
      return;
    }
    if (m && !withRecords && m.records > 0) return refresh(true);
    // What each resolver can do, from the last probe the person ran in the options (none: nothing said).
    const probed = m ? await send({ type: 'resolver-probe' }) : null;
    render(status, status.records ?? [], probed?.ok ? probed.probe : null);
  };

  const start = async (): Promise<void> => {
    show(root, 'starting', el('p', t('popup_starting')));
    const reply = await send({ type: 'measure-start', tabId });
    if (!reply.ok) {
      show(root, reply.code, para(compose(i18n, 'popup_start_failed', reported(reply.message)), 'bad'), button(t('popup_try_again'), () => void refresh()));
      return;
    }
    await refresh();
  };

  const renderMeasuring = (status: MeasureStatus): void => {
    const m = status.measurement!;
    const bar = el('progress');
    bar.max = Math.max(1, m.total);
    bar.value = m.done;
    bar.id = 'measure-progress';
    const hosts = m.plan.hosts.length;
    const transports = m.plan.resolvers.reduce((s, r) => s + r.transports.length, 0);
    show(root, 'measuring',
      el('p', t('popup_measuring', i18n.plural('popup_hosts', hosts), i18n.plural('popup_transports', transports), i18n.plural('popup_times', m.plan.repeat))),
      bar,
      el('p', m.total ? t('popup_progress', m.done, m.total) : t('popup_priming'), 'detail'),
      button(t('popup_cancel'), () => void send({ type: 'measure-cancel', tabId }).then(() => refresh()), 'measure-cancel'));
  };

  const blockedView = (b: NonNullable<MeasureStatus['blocked']>): Array<Node | string> => {
    switch (b.code) {
      case CODES.NO_CONSENT: {
        const link = el('a', t('popup_open_options'));
        link.href = browser.runtime.getURL('options/options.html');
        link.target = '_blank';
        return [el('p', t('popup_no_consent')), el('p', undefined), link];
      }
      case CODES.HOST_NOT_CONNECTED: {
        const pre = el('pre');
        pre.append(el('code', INSTALL_COMMAND));
        return [el('p', t('popup_no_host')), pre, para([reported(b.message)], 'detail')];
      }
      case CODES.PRIVATE_WINDOW:
        return [el('p', t('popup_private_window'))];
      case CODES.EXCLUDED:
        return [el('p', t('popup_excluded'))];
      case CODES.NO_PAGE:
        return [el('p', t('popup_no_page'))];
      case CODES.NO_MEASURABLE_HOSTS: {
        // Why of each name: the reasons with their counts and an example, so the person can tell a page of internal
        // names from a setting (the lab setting, a resolver outside their network) that withholds them.
        const list = el('ul', undefined, 'detail');
        list.id = 'withheld';
        for (const g of b.withheld ?? []) {
          const item = el('li', t('popup_withheld_item', t(`withheld_${g.reason.replaceAll('-', '_')}`), g.count, g.example));
          item.dataset.reason = g.reason;
          list.append(item);
        }
        return [el('p', t('popup_no_measurable_hosts')), list];
      }
      case CODES.BUSY:
        return [el('p', t('popup_busy'))];
      default:
        return [para([reported(b.message)])];
    }
  };

  const render = (status: MeasureStatus, records: StoredRecord[], probe: StoredResolverProbe | null): void => {
    const m = status.measurement;
    const blocked = status.blocked;
    if (!m || records.length === 0) {
      if (blocked) {
        show(root, blocked.code, ...blockedView(blocked));
        return;
      }
      const note = m?.state === 'interrupted' || m?.state === 'failed' ? para(compose(i18n, 'popup_last_stopped', m.error ? reported(m.error.message) : t(`measure_state_${m.state}`)), 'bad') : '';
      show(root, 'nothing-yet', note, el('p', t('popup_not_measured')), button(t('popup_measure'), () => void start(), 'measure-start'));
      return;
    }
    const started = performance.now();
    const results = computeResults(m, records, i18n);
    const names = new Map(m.plan.resolvers.map((r) => [r.id, resolverName(m, r.id, i18n)]));
    const verdict = pageVerdict(results.cells.map((c) => ({ ...c, onLoad: c.onLoad.delta === null ? null : { delta: c.onLoad.delta }, expected: results.expected[c.transport] === c.mode })),
      (id) => names.get(id) ?? id, i18n);
    const answer = el('p', verdict.sentence, 'verdict');
    answer.id = 'verdict';
    answer.dataset.kind = verdict.kind;
    if (verdict.best) {
      // How to switch to the best choice, in the browser that recorded the page (or for the whole computer).
      const section = TRANSPORTS[verdict.best.transport].doh ? `doh-${m.page.browser === 'firefox' ? 'firefox' : 'chromium'}` : verdict.best.transport;
      const how = el('a', t('popup_howto_link'));
      how.href = `../howto/howto.html#${section}`;
      how.target = '_blank';
      how.id = 'howto-link';
      answer.append(' ', how);
    }
    // Outside the pages and networks the model was checked on: said beside the number, not hidden in a detail.
    const outside = outsideValidated(m.plan.hosts.length, m.page.browser, records);
    let qualifier: HTMLElement | null = null;
    if (outside.length) {
      const what = outside.map((o) => (o.kind === 'names' ? t('popup_outside_names', i18n.num(o.names), i18n.num(o.max))
        : o.kind === 'rtt' ? t('popup_outside_rtt', t('unit_ms', i18n.num(Math.round(o.rttMs))), t('unit_ms', i18n.num(o.min)), t('unit_ms', i18n.num(o.max)))
          : t('popup_outside_browser')));
      qualifier = el('p', t('popup_outside', i18n.list(what)), 'detail');
      qualifier.id = 'outside-validated';
    }
    const head = el('p', undefined, 'page');
    head.append(el('strong', m.host), ` · ${i18n.plural('popup_hosts_measured', m.plan.hosts.length)} · ${i18n.plural('popup_lookups', records.length)} · ${i18n.dateTime(m.finishedAt ?? m.updatedAt)}`);
    const parts: Array<Node | string> = [answer, ...(qualifier ? [qualifier] : []), head];
    if (m.state !== 'done') parts.push(para(m.error ? compose(i18n, 'popup_partial_error', t(`measure_state_${m.state}`), reported(m.error.message)) : compose(i18n, 'popup_partial', t(`measure_state_${m.state}`)), 'bad'));
    if (m.plan.internalAllowed) parts.push(el('p', t('popup_lab_names'), 'detail'));
    // What the hosts' HTTPS records advertise (by any resolver's answer): HTTP/3, and ECH, whose names only DNS still shows.
    const adv = m.advertised;
    if (adv && (adv.h3.length || adv.ech.length)) {
      const total = i18n.num(m.plan.hosts.length);
      const line = el('p', [adv.h3.length ? t('popup_advertised_h3', i18n.num(adv.h3.length), total) : '', adv.ech.length ? t('popup_advertised_ech', i18n.num(adv.ech.length), total) : ''].filter(Boolean).join(' '), 'detail');
      line.id = 'advertised';
      parts.push(line);
    }
    if (probe) {
      const said = probe.resolvers.filter((r) => names.has(r.id)).map((r) => {
        const items = probeHighlights(r).map((item) => t(probeItemKey(item)));
        return `${names.get(r.id)}: ${items.length ? i18n.list(items) : t('popup_probe_none')}`;
      });
      if (said.length) {
        const line = el('p', t('popup_probe', said.join('; ')), 'detail');
        line.id = 'probe-highlights';
        parts.push(line);
      }
    }
    parts.push(fold(renderSummary(results, names, i18n)));
    const cdn = renderEdges(m.edges ?? [], names, i18n);
    if (cdn) parts.push(cdn);
    parts.push(fold(renderWhatIfNetwork(m, records, results.cells, names, i18n)));
    const wf = el('section', undefined, 'waterfall-box');
    wf.append(el('h2', t('popup_wf_title')));
    const resolvers = [...new Set(results.cells.map((c) => c.resolver))];
    const holder = el('div');
    holder.append(renderWaterfall(records, m, resolvers[0] ?? '', i18n));
    if (resolvers.length > 1) {
      const pick = el('select');
      pick.setAttribute('aria-label', t('popup_wf_resolver'));
      for (const r of resolvers) pick.append(new Option(names.get(r) ?? r, r));
      pick.addEventListener('change', () => holder.replaceChildren(renderWaterfall(records, m, pick.value, i18n)));
      wf.append(pick);
    }
    wf.append(el('p', t('popup_wf_detail'), 'detail'), holder);
    parts.push(fold(wf), fold(renderBytes(results, names, i18n)));
    const actions = el('p', undefined, 'actions');
    const stamp = new Date(m.startedAt).toISOString().replace(/[:.]/g, '-');
    actions.append(button(t('popup_export_json'), () => {
      download(`dnscost-${m.host || 'page'}-${stamp}.json`, 'application/json', `${JSON.stringify({ measurement: m, cells: results.cells, records }, null, 1)}\n`);
    }, 'export-json'));
    // The page as recorded with one choice's DNS times and its estimated onLoad (common/what-if-har.ts).
    if (results.cells.length) {
      const choice = el('select');
      choice.id = 'whatif-choice';
      choice.setAttribute('aria-label', t('popup_whatif_choice'));
      results.cells.forEach((c, i) => choice.append(new Option(`${names.get(c.resolver) ?? c.resolver} · ${TRANSPORTS[c.transport].short} · ${t(`mode_${c.mode}`)}`, String(i))));
      actions.append(' ', choice, ' ', button(t('popup_export_whatif'), () => {
        const c = results.cells[Number(choice.value)]!;
        const w = { resolver: c.resolver, resolverName: names.get(c.resolver) ?? c.resolver, transport: c.transport, transportName: TRANSPORTS[c.transport].short, mode: c.mode, onLoadDeltaMs: c.onLoad.delta };
        const har = whatIfHar(m, records, w, { name: 'dnscost', version: browser.runtime.getManifest().version });
        download(`dnscost-${m.host || 'page'}-${c.transport}-${c.mode}-${stamp}.har`, 'application/json', `${JSON.stringify(har, null, 1)}\n`);
      }, 'export-whatif'));
    }
    if (!blocked) actions.append(' ', button(t('popup_measure_again'), () => void start(), 'measure-start'));
    else {
      // Why it cannot measure again, in the words of the blocked view's first line.
      const first = blockedView(blocked)[0];
      actions.append(' ', el('span', typeof first === 'string' ? first : first?.textContent ?? '', 'detail'));
    }
    parts.push(actions);
    show(root, 'results', ...parts);
    root.dataset.measurement = m.state;
    root.dataset.drawMs = (performance.now() - started).toFixed(1);
  };

  await refresh();
}
