// The settings messages between extension pages (the options page, tests, scripts) and the background: their
// schemas, joined into the one union of extension/src/messages/index.ts, and their typed replies. Shapes are checked on
// entry here; the contents of a change or an import are checked by parseSettings (extension/src/settings.ts), which names
// the path of each problem.
import * as v from 'valibot';
import type { Settings } from '../settings.js';
import { CODES, type Failure } from '../../../common/errors.js';

/** Largest settings file an import accepts (characters of JSON). */
export const MAX_SETTINGS_JSON = 1024 * 1024;

const settingsGet = v.strictObject({ type: v.literal('settings-get') });
const settingsSet = v.strictObject({
  type: v.literal('settings-set'),
  /** Only the fields to change; consent has its own messages. Contents are validated by parseSettings. */
  changes: v.strictObject({
    resolvers: v.optional(v.array(v.unknown())),
    currentDns: v.optional(v.boolean()),
    lab: v.optional(v.boolean()),
    budget: v.optional(v.strictObject({ pagesPerHour: v.optional(v.number()), remeasureAfterHours: v.optional(v.number()) })),
    exclusions: v.optional(v.array(v.unknown())),
    upload: v.optional(v.strictObject({ enabled: v.optional(v.boolean()), paused: v.optional(v.boolean()), collector: v.optional(v.string()), network: v.optional(v.unknown()) })),
  }),
});
const settingsExport = v.strictObject({ type: v.literal('settings-export') });
const settingsImport = v.strictObject({ type: v.literal('settings-import'), json: v.pipe(v.string(), v.maxLength(MAX_SETTINGS_JSON)) });
const consentGive = v.strictObject({ type: v.literal('consent-give') });
const consentWithdraw = v.strictObject({ type: v.literal('consent-withdraw') });
const dataClear = v.strictObject({ type: v.literal('data-clear') });

/** The settings message schemas, for the union in extension/src/messages/index.ts. */
export const SETTINGS_MESSAGES = [settingsGet, settingsSet, settingsExport, settingsImport, consentGive, consentWithdraw, dataClear] as const;

/** The settings fields an administrator's policy (storage.managed) can fix. */
export type PolicyField = 'resolvers' | 'currentDns' | 'consent';

/**
 * What the browser's managed storage said: `none` (no policy), `applied` (its fields are in force), `invalid`
 * (ignored as a whole, see `problems`), `unavailable` (this browser or context cannot read managed storage).
 */
export interface PolicyStatus {
  state: 'none' | 'applied' | 'invalid' | 'unavailable';
  problems: string[];
  /** One sentence for people. */
  message: string;
}

/** The settings as the options page shows them. */
export interface SettingsView {
  ok: true;
  /** The settings in force: the person's own with the policy's fields on top. */
  settings: Settings;
  /** The person's own settings (what export writes and import replaces). */
  own: Settings;
  /** Fields the policy fixes: the person cannot change them. */
  fixed: PolicyField[];
  policy: PolicyStatus;
  /** Problems of the stored settings when they could not be read (defaults are used instead); usually empty. */
  storedProblems: string[];
}


/** A refused settings change: the code, and for invalid settings the `path: message` problems. */
export type SettingsFailure = Failure<(typeof CODES)['POLICY_FIXED' | 'INVALID_SETTINGS' | 'BAD_JSON']> & { problems: string[]; fields?: PolicyField[] };

/** The replies of the settings messages. */
export interface SettingsReplies {
  'settings-get': SettingsView;
  'settings-set': SettingsView | SettingsFailure;
  /** The person's own settings as pretty JSON, and a file name for the download. */
  'settings-export': { ok: true; json: string; filename: string };
  /** `consentKept`: an import never gives or withdraws consent; true when the file's consent differed and was kept. */
  'settings-import': (SettingsView & { consentKept: boolean; policyOverrides: PolicyField[] }) | SettingsFailure;
  'consent-give': SettingsView | SettingsFailure;
  'consent-withdraw': SettingsView | SettingsFailure;
  /** The storage keys removed (everything but the settings). */
  'data-clear': { ok: true; removed: string[] };
}
