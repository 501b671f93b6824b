// The options page's resolvers section: the public defaults as checkboxes, the person's own resolvers with a remove
// button each (or the policy's, fixed), and the form that adds an endpoint, showing only the fields its transport
// needs and a message beside each wrong one. The checks and list edits are pure (resolver-form.ts).
import { PUBLIC_RESOLVERS, isPublicResolverId } from '../../../common/default-resolvers.js';
import type { SettingsView } from '../messages/settings.js';
import { $, el } from '../ui/dom.js';
import { say, setFieldError } from './feedback.js';
import { addCustomEndpoint, checkEndpointFields, describeEndpoint, toggleDefault, type EndpointField } from './resolver-form.js';
import type { SettingsPage } from './settings-page.js';
import { browserI18n } from '../locale.js';
import { isTransportId, TRANSPORTS } from '../../../common/transports.js';

const i18n = browserI18n();
const { t } = i18n;

/** Fills the resolvers section from `v`; its checkboxes and remove buttons change the settings through `page`. */
export function renderResolvers(v: SettingsView, page: SettingsPage): void {
  const fixed = v.fixed.includes('resolvers');
  const note = $('resolvers-fixed');
  note.hidden = !fixed;
  note.className = fixed ? 'fixed' : 'detail';
  note.textContent = fixed ? t('resolvers_fixed') : '';
  const resolvers = v.settings.resolvers;

  const lab = $('lab-mode') as HTMLInputElement;
  lab.checked = v.settings.lab;
  lab.onchange = () => void page.change({ lab: lab.checked }, t(lab.checked ? 'lab_on' : 'lab_off'));

  const defaults = $('default-resolvers');
  defaults.replaceChildren(el('legend', t('resolvers_defaults_legend')));
  for (const d of PUBLIC_RESOLVERS) {
    const box = el('input');
    box.type = 'checkbox';
    box.id = `default-${d.id}`;
    box.dataset.defaultResolver = d.id;
    box.checked = resolvers.some((r) => r.id === d.id);
    box.disabled = fixed;
    box.addEventListener('change', async () => {
      const next = toggleDefault(page.current.own.resolvers, d.id, box.checked);
      if (next.length === 0) {
        box.checked = true;
        say(t('resolvers_keep_one_default'), false);
        return;
      }
      await page.change({ resolvers: next }, t(box.checked ? 'resolvers_will_measure' : 'resolvers_will_not_measure', d.name));
    });
    const label = el('label');
    label.htmlFor = box.id;
    label.append(box, document.createTextNode(` ${d.name}`));
    const div = el('div', undefined, 'field');
    div.append(label, el('span', d.endpoints.map((e) => describeEndpoint(e, i18n)).join('; '), 'detail'));
    defaults.append(div);
  }

  const list = $('custom-resolvers');
  list.replaceChildren();
  const custom = resolvers.filter((r) => fixed || !isPublicResolverId(r.id));
  if (custom.length === 0) list.append(el('li', t('resolvers_none_yet'), 'detail'));
  for (const r of custom) {
    const li = el('li');
    li.dataset.resolverId = r.id;
    li.append(el('strong', r.name));
    const eps = el('ul');
    for (const e of r.endpoints) eps.append(el('li', describeEndpoint(e, i18n)));
    li.append(eps);
    if (!fixed) {
      const remove = el('button', t('resolvers_remove', r.name));
      remove.type = 'button';
      remove.dataset.remove = r.id;
      remove.addEventListener('click', async () => {
        const next = page.current.own.resolvers.filter((x) => x.id !== r.id);
        if (next.length === 0) {
          say(t('resolvers_keep_one_custom'), false);
          return;
        }
        await page.change({ resolvers: next }, t('resolvers_removed', r.name));
      });
      li.append(remove);
    }
    list.append(li);
  }
  ($('custom-fieldset') as HTMLFieldSetElement).disabled = fixed;
}

/** Shows which fields are needed for the chosen transport (TLS name for DoT/DoH/DoQ/DoH3, path for DoH) and its port. */
function syncTransportFields(): void {
  const t = ($('custom-transport') as HTMLSelectElement).value;
  const form = isTransportId(t) ? TRANSPORTS[t].url : null;
  for (const div of document.querySelectorAll<HTMLElement>('[data-for="tls"]')) div.hidden = !form?.named;
  for (const div of document.querySelectorAll<HTMLElement>('[data-for="doh"]')) div.hidden = !form?.path;
  ($('custom-port') as HTMLInputElement).placeholder = form ? String(form.defaultPort) : '';
  ($('custom-path') as HTMLInputElement).placeholder = form?.path ?? '';
}

/** Wires the add-an-endpoint form: fields follow the transport; a valid endpoint is added through `page`. */
export function wireResolvers(page: SettingsPage): void {
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
    const checked = checkEndpointFields(Object.fromEntries(Object.entries(inputs).map(([k, i]) => [k, i.value])) as Record<EndpointField, string>, i18n);
    for (const k of Object.keys(inputs) as EndpointField[]) {
      if (k !== 'method') setFieldError(`custom-${k}-error`, checked.ok ? undefined : checked.errors[k], inputs[k]);
    }
    if (!checked.ok) {
      const first = (Object.keys(inputs) as EndpointField[]).find((k) => !checked.ok && checked.errors[k]);
      if (first) inputs[first].focus();
      return;
    }
    if (await page.change({ resolvers: addCustomEndpoint(page.current.own.resolvers, checked.name, checked.endpoint) }, t('resolvers_added', checked.name, describeEndpoint(checked.endpoint, i18n)))) {
      for (const k of ['address', 'port', 'serverName', 'path'] as const) inputs[k].value = '';
    }
  });
}
