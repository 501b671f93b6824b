// The options page's consent section: what dnscost sends and where (per resolver, by the transports in force), the
// person's answer or the policy's, and the buttons that give or withdraw consent.
import type { SettingsView } from '../messages/settings.js';
import { $, el } from '../ui/dom.js';
import { send } from '../ui/messages.js';
import { currentPresets } from '../../../common/default-resolvers.js';
import { consentDestinations } from './resolver-form.js';
import type { SettingsPage } from './settings-page.js';
import { browserI18n } from '../locale.js';

const i18n = browserI18n();
const { t } = i18n;

/** Fills the consent section from `v`. */
export function renderConsent(v: SettingsView): void {
  const root = $('consent');
  const fixed = v.fixed.includes('consent');
  root.dataset.state = fixed ? 'fixed' : v.settings.consent.given ? 'given' : 'not-given';
  const text = $('consent-text');
  text.replaceChildren(
    el('p', t('consent_intro')),
  );
  const list = el('ul');
  // The public resolvers as measurements reach them (this version's presets; measure-gate.ts), at their IPv4 addresses.
  const destinations = consentDestinations(currentPresets(v.settings.resolvers, false), i18n);
  for (const d of destinations) {
    const li = el('li');
    li.append(el('strong', d.resolver), document.createTextNode(`: ${d.how}.`));
    list.append(li);
  }
  // The current DNS is a destination too (asked over Do53: in clear text), named with the others.
  if (v.settings.currentDns) {
    const li = el('li');
    li.append(el('strong', t('consent_current_dns_name')), document.createTextNode(`: ${t('consent_current_dns_how')}.`));
    list.append(li);
  }
  text.append(list);
  const facts = el('ul');
  if (v.settings.currentDns || destinations.some((d) => d.clearText)) {
    facts.append(el('li', t('consent_clear_text'), 'bad'));
  }
  // Never weaker than the browser: while it encrypts, nothing goes out in clear text (measure-gate.ts, the host too).
  facts.append(el('li', t('consent_browser_doh')));
  facts.append(
    ...['consent_operator', 'consent_connections', 'consent_private_windows', 'consent_private_names', 'consent_exclusions', 'consent_nothing_uploaded'].map((k) => el('li', t(k))),
  );
  text.append(facts);
  const at = v.settings.consent.at;
  $('consent-state').textContent = fixed
    ? t(v.settings.consent.given ? 'consent_policy_allowed' : 'consent_policy_not_allowed')
    : v.settings.consent.given
      ? (at ? t('consent_given_at', i18n.dateTime(at)) : t('consent_given'))
      : t('consent_not_given');
  ($('consent-give') as HTMLButtonElement).hidden = fixed || v.settings.consent.given;
  ($('consent-withdraw') as HTMLButtonElement).hidden = fixed || !v.settings.consent.given;
}

/** Wires the give and withdraw buttons. */
export function wireConsent(page: SettingsPage): void {
  $('consent-give').addEventListener('click', async () => page.take(await send({ type: 'consent-give' }), t('consent_thanks')));
  $('consent-withdraw').addEventListener('click', async () => page.take(await send({ type: 'consent-withdraw' }), t('consent_withdrawn')));
}
