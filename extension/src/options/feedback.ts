// The options page's notices: the status line at the top (what the last action did, or why it failed), the message
// beside a form field, and the administrator's policy note. Text from replies only ever goes in as textContent.
import type { PolicyField, SettingsFailure, SettingsView } from '../messages/settings.js';
import { $, el } from '../ui/dom.js';
import { CODES, type Failure } from '../../../common/errors.js';
import { browserI18n } from '../locale.js';
import { compose, reported } from '../ui/localize.js';

/** Shows `text` in the status line, as good news or bad. */
export function say(text: string, good = true): void {
  const s = $('status');
  s.textContent = text;
  s.className = good ? 'good' : 'bad';
}

/** Shows a failed reply: the message, and each `path: message` problem. */
export function sayFailure(reply: Failure | SettingsFailure, into: HTMLElement = $('status')): void {
  const message = el('p', undefined, 'bad');
  message.append(...failureWords(reply));
  into.replaceChildren(message);
  into.dataset.state = reply.code;
  const problems = 'problems' in reply ? reply.problems : [];
  if (problems.length > 0) {
    const ul = el('ul', undefined, 'bad');
    for (const p of problems) {
      const li = el('li');
      li.append(reported(p));
      ul.append(li);
    }
    into.append(ul);
  }
}

/** A settings failure in the page's words by its code; any other failure as the background reported it. */
function failureWords(reply: Failure | SettingsFailure): Node[] {
  const i18n = browserI18n();
  if (reply.code === CODES.INVALID_SETTINGS) return [document.createTextNode(i18n.t('failure_invalid_settings'))];
  if (reply.code === CODES.BAD_JSON) return [document.createTextNode(i18n.t('failure_bad_json'))];
  if (reply.code === CODES.POLICY_FIXED && 'fields' in reply && reply.fields?.length) return [document.createTextNode(i18n.t('failure_policy_fixed', policyFields(reply.fields)))];
  return [reported(reply.message)];
}

/** The settings an administrator's policy sets, in words ("the resolvers and consent"). */
export function policyFields(fields: readonly PolicyField[]): string {
  return browserI18n().list(fields.map((f) => browserI18n().t(`field_${f}`)));
}

/** Shows `message` in the error element `id` beside a field (clears it when undefined) and marks `input` invalid. */
export function setFieldError(id: string, message: string | undefined, input?: HTMLElement): void {
  $(id).textContent = message ?? '';
  if (input) input.setAttribute('aria-invalid', message ? 'true' : 'false');
}

/** The policy note: what an administrator's policy does, and whether the saved settings could be read. */
export function renderPolicy(v: SettingsView): void {
  const p = $('policy');
  p.dataset.state = v.policy.state;
  // The background's message is English; the state says the same in the page's language (problems stay as found).
  p.textContent = v.policy.state === 'none' ? '' : browserI18n().t(`policy_${v.policy.state}`);
  if (v.policy.problems.length > 0) p.append(' (', reported(v.policy.problems.join('; ')), ')');
  if (v.storedProblems.length > 0) p.append(' ', ...compose(browserI18n(), 'policy_stored_unreadable', reported(v.storedProblems.join('; '))));
}
