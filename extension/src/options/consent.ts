// The options page's consent section: what dnscost sends and where (per resolver, by the transports in force), the
// person's answer or the policy's, and the buttons that give or withdraw consent.
import type { SettingsView } from '../messages/settings.js';
import { $, el } from '../ui/dom.js';
import { send } from '../ui/messages.js';
import { consentDestinations } from './resolver-form.js';
import type { SettingsPage } from './settings-page.js';

/** Fills the consent section from `v`. */
export function renderConsent(v: SettingsView): void {
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
    el('li', 'Names private to your network — single-label names, special-use names such as .local, .internal, .home.arpa, .localhost and .onion, names under your search domains, names your browser reached at a private address and names your current DNS answers with one — are never sent to public resolvers; IP addresses are never sent at all.'),
    el('li', 'Sites you exclude below are never recorded or measured.'),
    el('li', 'Nothing is uploaded anywhere. Nothing is measured until you agree, and you can withdraw at any time.'),
  );
  text.append(facts);
  const at = v.settings.consent.at;
  $('consent-state').textContent = fixed
    ? `Your administrator’s policy decides this: measuring is ${v.settings.consent.given ? 'allowed' : 'not allowed'}.`
    : v.settings.consent.given
      ? `You agreed${at ? ` on ${new Date(at).toLocaleString()}` : ''}. dnscost may measure.`
      : 'You have not agreed to these resolvers yet (a change to the resolvers asks again): dnscost measures nothing.';
  ($('consent-give') as HTMLButtonElement).hidden = fixed || v.settings.consent.given;
  ($('consent-withdraw') as HTMLButtonElement).hidden = fixed || !v.settings.consent.given;
}

/** Wires the give and withdraw buttons. */
export function wireConsent(page: SettingsPage): void {
  $('consent-give').addEventListener('click', async () => page.take(await send({ type: 'consent-give' }), 'Thank you: dnscost may now measure.'));
  $('consent-withdraw').addEventListener('click', async () => page.take(await send({ type: 'consent-withdraw' }), 'Consent withdrawn: dnscost measures nothing.'));
}
