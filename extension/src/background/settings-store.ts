// The person's settings in storage.local, with an administrator's policy (storage.managed) on top.
//
// Lifecycle: nothing is cached. Every load reads storage.local (key SETTINGS_KEY; defaults when absent or
// unreadable) and managed storage afresh, so a killed service worker or a policy pushed while the browser runs is
// seen at the next read. Writes go through one queue (read, change, validate with parseSettings, write), so two
// pages saving at once cannot lose each other's change. After each write, and when the background sees managed
// storage change (index.ts wires storage.onChanged), listeners get the new view. data-clear removes every other
// storage.local key (the recorded pages and results) and awaits its listeners (page-records.ts clears storage.session).
//
// This module touches no browser global: storage areas and the clock are passed in, so it runs under Node with
// fakes (extension/src/background/settings-store.test.ts).
import type { ExtensionMessageOf } from '../messages/index.js';
import { type PolicyField, type PolicyStatus, type SettingsFailure, type SettingsView } from '../messages/settings.js';
import { applyPolicy, boundConsent, consentScope, defaultSettings, parseSettings, type Settings } from '../settings.js';
import type { ResolverSpec } from '../../../common/schema.js';
import { CODES } from '../../../common/errors.js';
import { QueuedArea, type StorageArea } from './storage.js';

/** The storage.local key holding the person's own settings; data-clear keeps it and removes every other key. */
export const SETTINGS_KEY = 'settings';

/** What the store needs from its surroundings. */
export interface SettingsStoreDeps {
  local: StorageArea;
  /** Reads managed storage (storage.managed.get()); null where the browser or context has none. */
  readManaged: (() => Promise<Record<string, unknown>>) | null;
  /** The default resolvers (common/default-resolvers.ts in the extension). */
  defaultResolvers: ResolverSpec[];
  now(): number;
}

/** A change of the person's own settings, as settings-set carries it (contents not yet validated). */
export type SettingsChanges = ExtensionMessageOf<'settings-set'>['changes'];

/**
 * Firefox rejects storage.managed.get() with "Managed storage manifest not found" when no administrator wrote one
 * (no ~/.mozilla/managed-storage/ID.json, no policies.json entry): that is "no policy", not a failure.
 */
export function isNoManagedManifestError(err: unknown): boolean {
  return /managed storage manifest not found/i.test(err instanceof Error ? err.message : String(err));
}

/** The policy's state from what managed storage returned (or threw). Pure. */
export function policyStatus(read: { value: unknown } | { error: unknown } | null): { policy: unknown; status: PolicyStatus } {
  if (read === null) {
    return { policy: undefined, status: { state: 'unavailable', problems: [], message: 'This browser offers no managed storage here, so no administrator policy can apply.' } };
  }
  if ('error' in read) {
    if (isNoManagedManifestError(read.error)) return { policy: undefined, status: { state: 'none', problems: [], message: 'No administrator policy.' } };
    const why = read.error instanceof Error ? read.error.message : String(read.error);
    return { policy: undefined, status: { state: 'unavailable', problems: [why], message: `Managed storage could not be read, so no administrator policy applies: ${why}` } };
  }
  const value = read.value;
  if (value === undefined || value === null || (typeof value === 'object' && Object.keys(value).length === 0)) {
    return { policy: undefined, status: { state: 'none', problems: [], message: 'No administrator policy.' } };
  }
  return { policy: value, status: { state: 'applied', problems: [], message: '' } };
}

/** The fields a valid policy fixes. Pure. */
export function fixedFields(policy: unknown, problems: string[]): PolicyField[] {
  if (problems.length > 0 || typeof policy !== 'object' || policy === null) return [];
  return (['resolvers', 'currentDns', 'consent'] as const).filter((f) => (policy as Record<string, unknown>)[f] !== undefined);
}

/** `own` with `changes` applied and validated: the new settings, or the problems (each with its path). Pure. */
export function applyChanges(own: Settings, changes: SettingsChanges): { ok: true; settings: Settings } | { ok: false; problems: string[] } {
  const next: unknown = {
    ...own,
    ...(changes.resolvers !== undefined ? { resolvers: changes.resolvers } : {}),
    ...(changes.currentDns !== undefined ? { currentDns: changes.currentDns } : {}),
    ...(changes.lab !== undefined ? { lab: changes.lab } : {}),
    ...(changes.budget !== undefined ? { budget: { ...own.budget, ...changes.budget } } : {}),
    ...(changes.exclusions !== undefined ? { exclusions: changes.exclusions } : {}),
    ...(changes.upload !== undefined ? { upload: { ...own.upload, ...changes.upload } } : {}),
  };
  return parseSettings(next);
}

/** Keys data-clear keeps. */
const KEPT_ON_CLEAR = new Set([SETTINGS_KEY, 'upload:sent']);

/** Structural equality of JSON values (settings are plain JSON). */
function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function failure(code: SettingsFailure['code'], message: string, problems: string[] = [], fields?: PolicyField[]): SettingsFailure {
  return { ok: false, code, message, problems, ...(fields ? { fields } : {}) };
}

/** The settings store of the background (see the lifecycle note at the top). */
export class SettingsStore {
  private readonly writes: QueuedArea;
  private readonly changeListeners = new Set<(view: SettingsView) => void>();
  private readonly clearListeners = new Set<() => void | Promise<void>>();

  constructor(private readonly deps: SettingsStoreDeps) {
    this.writes = new QueuedArea(deps.local);
  }

  /** The settings in force (the person's, policy on top): what measuring must obey. */
  async loadSettings(): Promise<Settings> {
    return (await this.view()).settings;
  }

  /** Everything the options page shows: settings in force, the person's own, fixed fields, policy state. */
  async view(): Promise<SettingsView> {
    const { own, storedProblems } = await this.readOwn();
    const { policy, status } = policyStatus(await this.readManaged());
    const applied = applyPolicy(own, policy);
    const fixed = fixedFields(policy, applied.policyProblems);
    applied.settings = boundConsent(applied.settings, fixed.includes('consent'));
    const policyState: PolicyStatus =
      applied.policyProblems.length > 0
        ? { state: 'invalid', problems: applied.policyProblems, message: 'The administrator policy is invalid and was ignored.' }
        : status.state === 'applied'
          ? { ...status, message: 'An administrator policy is in force.' }
          : status;
    return { ok: true, settings: applied.settings, own, fixed, policy: policyState, storedProblems };
  }

  /** Validates and stores `settings` as the person's own (the whole object); the new view, or the problems. */
  saveSettings(settings: unknown): Promise<SettingsView | SettingsFailure> {
    return this.writes.run(async () => {
      const parsed = parseSettings(settings);
      if (!parsed.ok) return failure(CODES.INVALID_SETTINGS, 'The settings are not valid.', parsed.problems);
      return this.write(parsed.settings);
    });
  }

  /** settings-set: a partial change; refuses to change what the policy fixes. */
  set(changes: SettingsChanges): Promise<SettingsView | SettingsFailure> {
    return this.writes.run(async () => {
      const current = await this.view();
      const blocked = current.fixed.filter(
        (f) => (f === 'resolvers' && changes.resolvers !== undefined && !sameJson(changes.resolvers, current.settings.resolvers)) || (f === 'currentDns' && changes.currentDns !== undefined && changes.currentDns !== current.settings.currentDns),
      );
      if (blocked.length > 0) {
        return failure(CODES.POLICY_FIXED, `Your administrator's policy sets ${blocked.join(' and ')}; they cannot be changed here.`, [], blocked);
      }
      const next = applyChanges(current.own, changes);
      if (!next.ok) return failure(CODES.INVALID_SETTINGS, 'The settings are not valid.', next.problems);
      // Turning uploads on is agreeing to send them to that collector: a change of collector that does not turn them
      // on in the same change (from off: the options form sends the box as it stands) turns them off.
      const agreed = changes.upload?.enabled === true && !current.own.upload.enabled;
      if (next.settings.upload.collector !== current.own.upload.collector && !agreed) next.settings.upload.enabled = false;
      return this.write(next.settings);
    });
  }

  /** settings-export: the person's own settings as pretty JSON (not the policy's fields, which are not theirs). */
  async exportJson(): Promise<{ ok: true; json: string; filename: string }> {
    const { own } = await this.readOwn();
    return { ok: true, json: `${JSON.stringify(own, null, 2)}\n`, filename: 'dnscost-settings.json' };
  }

  /**
   * settings-import: replaces the person's own settings with a file's, validated by parseSettings. Consent and
   * whether uploads are on are never imported (a file must not agree on the person's behalf): the current ones are kept. Fields the policy fixes
   * are stored as the person's own but stay overridden while the policy is in force.
   */
  import(json: string): Promise<(SettingsView & { consentKept: boolean; policyOverrides: PolicyField[] }) | SettingsFailure> {
    return this.writes.run(async () => {
      let value: unknown;
      try {
        value = JSON.parse(json);
      } catch (err) {
        return failure(CODES.BAD_JSON, `The file is not JSON: ${(err as Error).message}`);
      }
      const parsed = parseSettings(value);
      if (!parsed.ok) return failure(CODES.INVALID_SETTINGS, 'The file does not hold valid dnscost settings; nothing was changed.', parsed.problems);
      const current = await this.view();
      const consentKept = parsed.settings.consent.given !== current.own.consent.given;
      // Uploads stay on only towards the collector they were turned on for (a file naming another turns them off).
      const collector = parsed.settings.upload.collector || current.own.upload.collector;
      const upload = { ...parsed.settings.upload, collector, enabled: current.own.upload.enabled && collector === current.own.upload.collector };
      const written = await this.write({ ...parsed.settings, consent: current.own.consent, upload });
      return { ...written, consentKept, policyOverrides: written.fixed };
    });
  }

  /** consent-give / consent-withdraw: records the person's decision and when; refused when the policy fixes it. */
  setConsent(given: boolean): Promise<SettingsView | SettingsFailure> {
    return this.writes.run(async () => {
      const current = await this.view();
      if (current.fixed.includes('consent')) {
        return failure(CODES.POLICY_FIXED, "Your administrator's policy decides consent; it cannot be changed here.", [], ['consent']);
      }
      // Given for what is in force now (the policy's resolvers where it sets them): a later change asks again.
      // Withdrawn, nothing is agreed to upload either: uploads go off with it.
      const upload = given ? current.own.upload : { ...current.own.upload, enabled: false };
      return this.write({ ...current.own, upload, consent: { given, at: this.deps.now(), for: given ? consentScope(current.settings) : null } });
    });
  }

  /**
   * data-clear: removes every storage.local key but the settings and the list of uploaded batches (its deletion
   * tokens are what lets the person delete those uploads later); the keys removed.
   */
  clearData(): Promise<{ ok: true; removed: string[] }> {
    return this.writes.run(async () => {
      const all = await this.deps.local.get(null);
      const removed = Object.keys(all).filter((k) => !KEPT_ON_CLEAR.has(k)).sort();
      if (removed.length > 0) await this.deps.local.remove(removed);
      // Modules keeping records elsewhere (page-records.ts: storage.session) clear their own; the reply waits for them.
      await Promise.all([...this.clearListeners].map((l) => l()));
      return { ok: true as const, removed };
    });
  }

  /** Calls `listener` with the new view after each change (own writes, and managedChanged()); returns an unsubscribe. */
  onChange(listener: (view: SettingsView) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Calls `listener` on data-clear, so modules holding recorded data (in memory, storage.session) drop it too; awaited. */
  onDataCleared(listener: () => void | Promise<void>): () => void {
    this.clearListeners.add(listener);
    return () => this.clearListeners.delete(listener);
  }

  /** The browser reported a change of managed storage (storage.onChanged, area `managed`): tell the listeners. */
  async managedChanged(): Promise<void> {
    this.notify(await this.view());
  }

  private async readOwn(): Promise<{ own: Settings; storedProblems: string[] }> {
    const stored = (await this.deps.local.get(SETTINGS_KEY))[SETTINGS_KEY];
    if (stored === undefined) return { own: defaultSettings(this.deps.defaultResolvers), storedProblems: [] };
    const parsed = parseSettings(stored);
    return parsed.ok ? { own: parsed.settings, storedProblems: [] } : { own: defaultSettings(this.deps.defaultResolvers), storedProblems: parsed.problems };
  }

  private async readManaged(): Promise<{ value: unknown } | { error: unknown } | null> {
    if (!this.deps.readManaged) return null;
    try {
      return { value: await this.deps.readManaged() };
    } catch (error) {
      return { error };
    }
  }

  private async write(settings: Settings): Promise<SettingsView> {
    // A change to the resolvers or the current DNS ends the consent given for the old ones (and the uploads agreed
    // under it): stored so, so changing back does not bring it back unasked.
    const { policy } = policyStatus(await this.readManaged());
    const applied = applyPolicy(settings, policy);
    const policyDecides = fixedFields(policy, applied.policyProblems).includes('consent');
    if (!policyDecides && settings.consent.given && settings.consent.for !== consentScope(applied.settings)) {
      settings = { ...settings, consent: { given: false, at: null, for: null }, upload: { ...settings.upload, enabled: false } };
    }
    await this.deps.local.set({ [SETTINGS_KEY]: settings });
    const view = await this.view();
    this.notify(view);
    return view;
  }

  private notify(view: SettingsView): void {
    for (const l of this.changeListeners) {
      try {
        l(view);
      } catch {
        // A listener's bug must not fail the save that triggered it.
      }
    }
  }
}
