// The person's settings: which resolvers to measure against, the automatic measurement budget, excluded sites and
// consent. Pure: validated with valibot, merged with an administrator's policy (storage.managed), exported and
// imported as JSON by the options page.
import * as v from 'valibot';
import { normalizeHostname } from '../../common/hostname.js';
import { resolverSpec, type EndpointSpec, type ResolverSpec } from '../../common/schema.js';
import { uploadBatch } from '../../common/upload-batch.js';

/** Settings version; an import of another major is refused. */
export const SETTINGS_VERSION = 1;

const budget = v.strictObject({
  /** Automatic measurements: at most this many pages per hour (0 turns the sampler off). */
  pagesPerHour: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(120)),
  /** A host measured within this many hours is not measured again automatically. */
  remeasureAfterHours: v.pipe(v.number(), v.minValue(1), v.maxValue(24 * 30)),
});

/** True for a collector address uploads may go to: https, or http to this machine (a collector of one's own). */
export function isCollectorUrl(text: string): boolean {
  try {
    const u = new URL(text);
    if (u.username || u.password || u.search || u.hash) return false;
    return u.protocol === 'https:' || (u.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname));
  } catch {
    return false;
  }
}

const upload = v.pipe(
  v.strictObject({
    /** The person turned uploads on (off by default; a settings file never turns them on). */
    enabled: v.boolean(),
    /** Uploads paused: batches wait in the queue. */
    paused: v.boolean(),
    /** The collector's address; '' until the person chooses one. */
    collector: v.pipe(v.string(), v.maxLength(2048), v.check((u) => u === '' || isCollectorUrl(u), 'an https address (or http on this machine), without user, query or fragment')),
    /** How the person describes this network: coarse on purpose (the upload's `network`). */
    network: uploadBatch.entries.network,
  }),
  v.check((u) => !u.enabled || u.collector !== '', 'uploads need a collector address'),
);
export type UploadSettings = v.InferOutput<typeof upload>;
export const DEFAULT_UPLOAD: UploadSettings = { enabled: false, paused: false, collector: '', network: { type: 'unknown' } };

/** Every setting, as stored and as exported. */
export const settingsSchema = v.strictObject({
  version: v.literal(SETTINGS_VERSION),
  /** Resolvers to measure against (defaults plus custom ones); at least one. */
  resolvers: v.pipe(v.array(resolverSpec), v.minLength(1), v.maxLength(16)),
  /**
   * Also measure the person's current DNS, as the host finds it on this machine (and the local stub in front of it):
   * the baseline every other resolver is compared with. On unless the person turns it off (absent in older settings).
   */
  currentDns: v.optional(v.boolean(), true),
  /**
   * Lab mode: special-use names (.test, .localhost, .example, …) may go to resolvers on non-global addresses (a
   * resolver on this computer or this network, e.g. a test lab). Off by default: a local stub forwards what it cannot
   * answer upstream, so such names go nowhere (common/name-privacy.ts).
   */
  lab: v.optional(v.boolean(), false),
  budget,
  /** Sites never recorded or measured: hostnames; each also covers its subdomains. */
  exclusions: v.pipe(v.array(v.pipe(v.string(), v.maxLength(253))), v.maxLength(1000)),
  /**
   * First-run consent: nothing is measured before the person agreed to what leaves for which resolver. `for` is what
   * it was given for (consentScope: the resolvers and the current DNS); it holds only while that is unchanged
   * (absent in older settings: asked again).
   */
  consent: v.strictObject({ given: v.boolean(), at: v.nullable(v.number()), for: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(20_000))), null) }),
  /** Opt-in upload of per-page aggregates (absent in settings from before uploads existed: off). */
  upload: v.optional(upload, () => structuredClone(DEFAULT_UPLOAD)),
});
export type Settings = v.InferOutput<typeof settingsSchema>;

/** Defaults: a conservative budget, no exclusions, no consent yet; resolvers come from the host's defaults. */
export function defaultSettings(resolvers: ResolverSpec[]): Settings {
  return {
    version: SETTINGS_VERSION,
    resolvers,
    currentDns: true,
    lab: false,
    budget: { pagesPerHour: 4, remeasureAfterHours: 24 },
    exclusions: [],
    consent: { given: false, at: null, for: null },
    upload: structuredClone(DEFAULT_UPLOAD),
  };
}

/** Validates settings (e.g. an import): the settings, or the problems as `path: message` lines. */
export function parseSettings(value: unknown): { ok: true; settings: Settings } | { ok: false; problems: string[] } {
  const result = v.safeParse(settingsSchema, value);
  if (!result.success) {
    return { ok: false, problems: result.issues.slice(0, 5).map((i) => `${(i.path ?? []).map((p) => String(p.key)).join('.') || '(settings)'}: ${i.message}`) };
  }
  const exclusions: string[] = [];
  for (const e of result.output.exclusions) {
    try {
      exclusions.push(normalizeHostname(e));
    } catch (err) {
      return { ok: false, problems: [`exclusions: ${(err as Error).message}`] };
    }
  }
  return { ok: true, settings: { ...result.output, exclusions: [...new Set(exclusions)] } };
}

/**
 * What an administrator may fix through browser policy (storage.managed): resolvers and consent. Each present
 * field replaces the person's own; anything invalid in the policy is ignored as a whole and reported.
 */
export const managedPolicySchema = v.strictObject({
  resolvers: v.optional(v.pipe(v.array(resolverSpec), v.minLength(1), v.maxLength(16))),
  currentDns: v.optional(v.boolean()),
  consent: v.optional(v.boolean()),
});

/** The settings in force: the person's, with the policy's fields on top. */
export function applyPolicy(settings: Settings, policy: unknown): { settings: Settings; policyProblems: string[] } {
  if (policy === undefined || policy === null || (typeof policy === 'object' && Object.keys(policy).length === 0)) {
    return { settings, policyProblems: [] };
  }
  const result = v.safeParse(managedPolicySchema, policy);
  if (!result.success) return { settings, policyProblems: result.issues.slice(0, 5).map((i) => i.message) };
  const p = result.output;
  return {
    settings: {
      ...settings,
      ...(p.resolvers ? { resolvers: p.resolvers } : {}),
      ...(p.currentDns !== undefined ? { currentDns: p.currentDns } : {}),
      ...(p.consent !== undefined ? { consent: { given: p.consent, at: settings.consent.at, for: null } } : {}),
    },
    policyProblems: [],
  };
}

/**
 * What consent to measure is given for, as one string: every resolver with each endpoint (transport, address, port,
 * path, certificate name) and the CA it is trusted with, whether the current DNS is measured, and the lab setting. A
 * change to any of them changes which names leave the machine, for where, or who may answer for that server, so the
 * consent given before no longer holds. (Uploads have their own opt-in, bound to its collector: see the settings
 * store.) A resolver without its own CA adds nothing, so consents given before the CA counted still hold.
 */
export function consentScope(s: Pick<Settings, 'resolvers' | 'currentDns' | 'lab'>): string {
  const endpoint = (e: EndpointSpec) => JSON.stringify([e.transport, e.address, e.port, e.path ?? null, e.serverName ?? null]);
  const resolvers = s.resolvers
    .map((r) => [r.id, r.endpoints.map(endpoint).sort(), ...(r.ca ? [r.ca.trim()] : [])])
    .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  return JSON.stringify({ resolvers, currentDns: s.currentDns, lab: s.lab });
}

/**
 * The settings with consent as it holds: given only if it was given for these settings' scope (a policy that decides
 * consent is taken as it is). Where it does not hold, uploads are off too: there is nothing agreed to upload.
 */
export function boundConsent(s: Settings, policyDecides: boolean): Settings {
  if (policyDecides || !s.consent.given || s.consent.for === consentScope(s)) return s;
  return { ...s, consent: { given: false, at: null, for: null }, upload: { ...s.upload, enabled: false } };
}

/** True when `hostname` is an excluded site or under one. */
export function isExcluded(settings: Pick<Settings, 'exclusions'>, hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return settings.exclusions.some((e) => h === e || h.endsWith(`.${e}`));
}
