// Options page entry: the person's settings (consent, resolvers, budget, exclusions, the opt-in upload with its
// byte-exact preview, clearing data, export and import) and the native host's status. Every change goes to the background as a settings message and the page
// re-renders from its reply; nothing here writes storage. Text from settings, files or the policy only ever
// reaches the page through textContent.
import { PUBLIC_RESOLVERS, isPublicResolverId } from '../../../common/default-resolvers.js';
import type { ExtensionMessage } from '../messages/index.js';
import type { UploadStatus } from '../messages/upload.js';
import type { SettingsFailure, SettingsView } from '../messages/settings.js';
import { defaultSettings } from '../settings.js';
import { browser } from '../browser.js';
import { mountHostStatus } from '../ui/host-status-panel.js';
import { send } from '../ui/messages.js';
import { DEFAULT_PORTS, addCustomEndpoint, checkEndpointFields, consentDestinations, describeEndpoint, exclusionFromInput, toggleDefault, type EndpointField } from './resolver-form.js';
import { type Failure } from '../../../common/errors.js';

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
let current: SettingsView | null = null;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, className?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (className) e.className = className;
  return e;
}

function say(text: string, good = true): void {
  const s = $('status');
  s.textContent = text;
  s.className = good ? 'good' : 'bad';
}

/** Shows a failed reply: the message, and each `path: message` problem. */
function sayFailure(reply: Failure | SettingsFailure, into: HTMLElement = $('status')): void {
  into.replaceChildren(el('p', reply.message, 'bad'));
  into.dataset.state = reply.code;
  const problems = 'problems' in reply ? reply.problems : [];
  if (problems.length > 0) {
    const ul = el('ul', undefined, 'bad');
    for (const p of problems) ul.append(el('li', p));
    into.append(ul);
  }
}

function setFieldError(id: string, message: string | undefined, input?: HTMLElement): void {
  $(id).textContent = message ?? '';
  if (input) input.setAttribute('aria-invalid', message ? 'true' : 'false');
}

/** Applies a reply that carries a SettingsView (or shows its failure); true when it was a view. */
function take(reply: SettingsView | Failure | SettingsFailure, done?: string): reply is SettingsView {
  if (!reply.ok) {
    sayFailure(reply);
    return false;
  }
  render(reply);
  if (done) say(done);
  return true;
}

async function change(changes: Extract<ExtensionMessage, { type: 'settings-set' }>['changes'], done: string): Promise<boolean> {
  return take(await send({ type: 'settings-set', changes }), done);
}

function renderPolicy(v: SettingsView): void {
  const p = $('policy');
  p.dataset.state = v.policy.state;
  p.textContent = v.policy.state === 'none' ? '' : v.policy.message;
  if (v.policy.problems.length > 0) p.textContent += ` (${v.policy.problems.join('; ')})`;
  if (v.storedProblems.length > 0) p.textContent += ` Your saved settings could not be read and the defaults are in use (${v.storedProblems.join('; ')}).`;
}

function renderConsent(v: SettingsView): void {
  const root = $('consent');
  const fixed = v.fixed.includes('consent');
  root.dataset.state = fixed ? 'fixed' : v.settings.consent.given ? 'given' : 'not-given';
  const text = $('consent-text');
  text.replaceChildren(
    el('p', 'To measure, dnscost takes the hostnames each page you visit needed (for example www.example.com and cdn.example.net — never the full address of a page) and looks each one up again, over each transport, at each of these resolvers:'),
  );
  const list = el('ul');
  const destinations = consentDestinations(v.settings.resolvers);
  for (const d of destinations) {
    const li = el('li');
    li.append(el('strong', d.resolver), document.createTextNode(`: ${d.how}.`));
    list.append(li);
  }
  text.append(list);
  const facts = el('ul');
  if (destinations.some((d) => d.clearText)) {
    facts.append(el('li', 'Plain DNS (Do53, over UDP or TCP) is not encrypted: those hostnames cross your network in clear text, and anyone on the way (your Wi‑Fi, your internet provider) can read them.', 'bad'));
  }
  facts.append(
    el('li', 'Each resolver’s operator sees the hostnames sent to it and your IP address, as with any DNS lookup.'),
    el('li', 'Private windows are never recorded or measured.'),
    el('li', 'Internal names — single-label names, .local, .internal, .home.arpa, .localhost and private-range IP addresses — are never sent to public resolvers.'),
    el('li', 'Sites you exclude below are never recorded or measured.'),
    el('li', 'Nothing is uploaded anywhere. Nothing is measured until you agree, and you can withdraw at any time.'),
  );
  text.append(facts);
  const at = v.settings.consent.at;
  $('consent-state').textContent = fixed
    ? `Your administrator’s policy decides this: measuring is ${v.settings.consent.given ? 'allowed' : 'not allowed'}.`
    : v.settings.consent.given
      ? `You agreed${at ? ` on ${new Date(at).toLocaleString()}` : ''}. dnscost may measure.`
      : 'You have not agreed yet: dnscost measures nothing.';
  ($('consent-give') as HTMLButtonElement).hidden = fixed || v.settings.consent.given;
  ($('consent-withdraw') as HTMLButtonElement).hidden = fixed || !v.settings.consent.given;
}

function renderResolvers(v: SettingsView): void {
  const fixed = v.fixed.includes('resolvers');
  const note = $('resolvers-fixed');
  note.hidden = !fixed;
  note.className = fixed ? 'fixed' : 'detail';
  note.textContent = fixed ? 'Your administrator’s policy sets the resolvers; they cannot be changed here.' : '';
  const resolvers = v.settings.resolvers;

  const defaults = $('default-resolvers');
  defaults.replaceChildren(el('legend', 'Public resolvers (defaults)'));
  for (const d of PUBLIC_RESOLVERS) {
    const box = el('input');
    box.type = 'checkbox';
    box.id = `default-${d.id}`;
    box.dataset.defaultResolver = d.id;
    box.checked = resolvers.some((r) => r.id === d.id);
    box.disabled = fixed;
    box.addEventListener('change', async () => {
      const next = toggleDefault(current!.own.resolvers, d.id, box.checked);
      if (next.length === 0) {
        box.checked = true;
        say('Keep at least one resolver: add your own before turning off the last default.', false);
        return;
      }
      await change({ resolvers: next }, `${d.name} ${box.checked ? 'will' : 'will not'} be measured.`);
    });
    const label = el('label');
    label.htmlFor = box.id;
    label.append(box, document.createTextNode(` ${d.name}`));
    const div = el('div', undefined, 'field');
    div.append(label, el('span', d.endpoints.map(describeEndpoint).join('; '), 'detail'));
    defaults.append(div);
  }

  const list = $('custom-resolvers');
  list.replaceChildren();
  const custom = resolvers.filter((r) => fixed || !isPublicResolverId(r.id));
  if (custom.length === 0) list.append(el('li', 'None yet.', 'detail'));
  for (const r of custom) {
    const li = el('li');
    li.dataset.resolverId = r.id;
    li.append(el('strong', r.name));
    const eps = el('ul');
    for (const e of r.endpoints) eps.append(el('li', describeEndpoint(e)));
    li.append(eps);
    if (!fixed) {
      const remove = el('button', `Remove ${r.name}`);
      remove.type = 'button';
      remove.dataset.remove = r.id;
      remove.addEventListener('click', async () => {
        const next = current!.own.resolvers.filter((x) => x.id !== r.id);
        if (next.length === 0) {
          say('Keep at least one resolver: turn on a default before removing the last one.', false);
          return;
        }
        await change({ resolvers: next }, `Removed ${r.name}.`);
      });
      li.append(remove);
    }
    list.append(li);
  }
  ($('custom-fieldset') as HTMLFieldSetElement).disabled = fixed;
}

function renderBudget(v: SettingsView): void {
  const d = defaultSettings([]).budget;
  $('budget-defaults').textContent = `Defaults: ${d.pagesPerHour} pages per hour, and no host measured again within ${d.remeasureAfterHours} hours. They are deliberately conservative: each measurement sends a page's hostnames to every resolver above over every transport.`;
  ($('budget-pages') as HTMLInputElement).value = String(v.settings.budget.pagesPerHour);
  ($('budget-hours') as HTMLInputElement).value = String(v.settings.budget.remeasureAfterHours);
}

function renderExclusions(v: SettingsView): void {
  const list = $('exclusions');
  list.replaceChildren();
  if (v.settings.exclusions.length === 0) list.append(el('li', 'None.', 'detail'));
  for (const host of v.settings.exclusions) {
    const li = el('li', host);
    li.dataset.exclusion = host;
    const remove = el('button', `Remove ${host}`);
    remove.type = 'button';
    remove.addEventListener('click', () => void change({ exclusions: current!.own.exclusions.filter((e) => e !== host) }, `${host} will be measured again.`));
    li.append(remove);
    list.append(li);
  }
}

function render(v: SettingsView): void {
  current = v;
  renderPolicy(v);
  renderConsent(v);
  renderResolvers(v);
  renderBudget(v);
  renderExclusions(v);
  renderUpload(v);
  document.body.dataset.settings = 'ready';
}

function renderUpload(v: SettingsView): void {
  const u = v.own.upload;
  ($('upload-enabled') as HTMLInputElement).checked = u.enabled;
  ($('upload-paused') as HTMLInputElement).checked = u.paused;
  ($('upload-collector') as HTMLInputElement).value = u.collector;
  ($('upload-network-type') as HTMLSelectElement).value = u.network.type;
  ($('upload-network-label') as HTMLInputElement).value = u.network.label ?? '';
  void renderUploadState();
}

async function renderUploadState(): Promise<void> {
  const r = await send({ type: 'upload-status' });
  const box = $('upload');
  if (!r.ok) return sayFailure(r, $('upload-state'));
  const s: UploadStatus = r;
  box.dataset.state = !s.enabled ? 'off' : s.paused ? 'paused' : 'on';
  const waiting = s.queued.reduce((n, b) => n + b.pages, 0) + s.pendingPages;
  const last = s.queued[0]?.lastError;
  $('upload-state').textContent = [
    !s.enabled ? 'Uploads are off.' : s.paused ? 'Uploads are paused.' : `Uploads are on, to ${s.collector}.`,
    `${waiting} page summaries waiting, ${s.sent.reduce((n, b) => n + b.pages, 0)} uploaded in ${s.sent.length} batches.`,
    last ? `The last try failed (${last.code}): it will be tried again.` : '',
    s.refused.length ? `${s.refused.length} batches were refused by the collector (${s.refused.at(-1)!.code}).` : '',
  ].filter(Boolean).join(' ');
}

function wireUpload(): void {
  $('upload-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const label = ($('upload-network-label') as HTMLInputElement).value.trim();
    const reply = await send({
      type: 'settings-set',
      changes: {
        upload: {
          enabled: ($('upload-enabled') as HTMLInputElement).checked,
          paused: ($('upload-paused') as HTMLInputElement).checked,
          collector: ($('upload-collector') as HTMLInputElement).value.trim(),
          network: { type: ($('upload-network-type') as HTMLSelectElement).value, ...(label ? { label } : {}) },
        },
      },
    });
    if (reply.ok) $('upload-error').textContent = '';
    else $('upload-error').textContent = ('problems' in reply && reply.problems.length ? reply.problems : [reply.message]).join('; ');
    take(reply, 'Upload settings saved.');
  });
  $('upload-preview').addEventListener('click', async () => {
    const r = await send({ type: 'upload-preview' });
    const pre = $('upload-preview-bytes');
    pre.hidden = false;
    if (!r.ok) pre.textContent = r.message;
    else pre.textContent = r.batch ? r.batch.body : 'Nothing is waiting to be uploaded.';
    pre.dataset.key = r.ok && r.batch ? r.batch.key : '';
    void renderUploadState();
  });
  $('upload-send').addEventListener('click', async () => {
    await send({ type: 'upload-flush' });
    void renderUploadState();
  });
  $('upload-delete').addEventListener('click', async () => {
    const r = await send({ type: 'upload-delete' });
    if (r.ok) say(r.failed.length ? `${r.deleted} uploads deleted; ${r.failed.length} could not be reached and stay listed.` : `${r.deleted} uploads deleted from the collector.`, r.failed.length === 0);
    else sayFailure(r);
    void renderUploadState();
  });
}

/** Shows which fields are needed for the chosen transport (TLS name for DoT/DoH/DoQ/DoH3, path for DoH) and its port. */
function syncTransportFields(): void {
  const t = ($('custom-transport') as HTMLSelectElement).value as keyof typeof DEFAULT_PORTS;
  for (const div of document.querySelectorAll<HTMLElement>('[data-for="tls"]')) div.hidden = t === 'udp' || t === 'tcp';
  for (const div of document.querySelectorAll<HTMLElement>('[data-for="doh"]')) div.hidden = t !== 'doh' && t !== 'doh1' && t !== 'doh3';
  ($('custom-port') as HTMLInputElement).placeholder = String(DEFAULT_PORTS[t] ?? '');
}

function wire(): void {
  $('consent-give').addEventListener('click', async () => take(await send({ type: 'consent-give' }), 'Thank you: dnscost may now measure.'));
  $('consent-withdraw').addEventListener('click', async () => take(await send({ type: 'consent-withdraw' }), 'Consent withdrawn: dnscost measures nothing.'));

  $('custom-transport').addEventListener('change', syncTransportFields);
  syncTransportFields();
  $('custom-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const inputs: Record<EndpointField, HTMLInputElement | HTMLSelectElement> = {
      name: $('custom-name'),
      transport: $('custom-transport'),
      address: $('custom-address'),
      port: $('custom-port'),
      serverName: $('custom-server-name'),
      path: $('custom-path'),
      method: $('custom-method'),
    };
    const checked = checkEndpointFields(Object.fromEntries(Object.entries(inputs).map(([k, i]) => [k, i.value])) as Record<EndpointField, string>);
    for (const k of Object.keys(inputs) as EndpointField[]) {
      if (k !== 'method') setFieldError(`custom-${k}-error`, checked.ok ? undefined : checked.errors[k], inputs[k]);
    }
    if (!checked.ok) {
      const first = (Object.keys(inputs) as EndpointField[]).find((k) => !checked.ok && checked.errors[k]);
      if (first) inputs[first].focus();
      return;
    }
    if (await change({ resolvers: addCustomEndpoint(current!.own.resolvers, checked.name, checked.endpoint) }, `Added ${checked.name}: ${describeEndpoint(checked.endpoint)}.`)) {
      for (const k of ['address', 'port', 'serverName', 'path'] as const) inputs[k].value = '';
    }
  });

  $('budget-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const pages = $<HTMLInputElement>('budget-pages');
    const hours = $<HTMLInputElement>('budget-hours');
    const p = Number(pages.value);
    const h = Number(hours.value);
    const pErr = pages.value.trim() === '' || !Number.isInteger(p) || p < 0 || p > 120 ? 'A whole number from 0 to 120.' : undefined;
    const hErr = hours.value.trim() === '' || !Number.isFinite(h) || h < 1 || h > 720 ? 'A number of hours from 1 to 720 (30 days).' : undefined;
    setFieldError('budget-pages-error', pErr, pages);
    setFieldError('budget-hours-error', hErr, hours);
    if (pErr || hErr) return;
    await change({ budget: { pagesPerHour: p, remeasureAfterHours: h } }, 'Budget saved.');
  });

  $('exclusion-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const input = $<HTMLInputElement>('exclusion-input');
    const r = exclusionFromInput(input.value);
    setFieldError('exclusion-error', r.ok ? undefined : r.message, input);
    if (!r.ok) return;
    if (current!.own.exclusions.includes(r.hostname)) {
      setFieldError('exclusion-error', `${r.hostname} is already excluded.`, input);
      return;
    }
    if (await change({ exclusions: [...current!.own.exclusions, r.hostname] }, `${r.hostname} will not be recorded or measured.`)) input.value = '';
  });

  const confirmBox = $('data-clear-confirm');
  $('data-clear').addEventListener('click', () => {
    confirmBox.hidden = false;
    $('data-clear-no').focus();
  });
  $('data-clear-no').addEventListener('click', () => {
    confirmBox.hidden = true;
    $('data-clear').focus();
  });
  $('data-clear-yes').addEventListener('click', async () => {
    confirmBox.hidden = true;
    const r = await send({ type: 'data-clear' });
    if (!r.ok) return sayFailure(r);
    say(r.removed.length ? `Cleared recorded data (${r.removed.length} stored item${r.removed.length === 1 ? '' : 's'}).` : 'There was no recorded data to clear.');
  });

  let exportUrl: string | null = null;
  $('export').addEventListener('click', async () => {
    const r = await send({ type: 'settings-export' });
    if (!r.ok) return sayFailure(r);
    if (exportUrl) URL.revokeObjectURL(exportUrl);
    exportUrl = URL.createObjectURL(new Blob([r.json], { type: 'application/json' }));
    const a = $<HTMLAnchorElement>('export-link');
    a.href = exportUrl;
    a.download = r.filename;
    a.click();
    say(`Settings exported as ${r.filename}.`);
  });

  $('import-file').addEventListener('change', async () => {
    const input = $<HTMLInputElement>('import-file');
    const status = $('import-status');
    const file = input.files?.[0];
    if (!file) return;
    const r = await send({ type: 'settings-import', json: await file.text() });
    input.value = '';
    if (!r.ok) {
      sayFailure(r, status);
      status.prepend(el('p', `Nothing was changed: ${file.name} was not imported.`, 'bad'));
      return;
    }
    render(r);
    status.dataset.state = 'imported';
    status.replaceChildren(el('p', `Imported settings from ${file.name}.`, 'good'));
    if (r.consentKept) status.append(el('p', 'Consent is never imported from a file: yours is unchanged.', 'detail'));
    if (r.policyOverrides.length > 0) status.append(el('p', `Your administrator’s policy still sets ${r.policyOverrides.join(' and ')}.`, 'detail'));
  });
}

document.getElementById('version')!.textContent = `Extension version ${browser.runtime.getManifest().version}.`;
wire();
wireUpload();
async function refresh(): Promise<void> {
  const r = await send({ type: 'settings-get' });
  if (r.ok) render(r);
  else sayFailure(r);
}
void refresh();
// An administrator's policy can arrive or change while the page is open (Chromium loads extension policy shortly
// after start-up).
browser.storage.onChanged.addListener((_changes, area) => {
  if (area === 'managed') void refresh();
});
void mountHostStatus(document.getElementById('host-status')!, document.getElementById('check-again') as HTMLButtonElement);
