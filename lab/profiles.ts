// Named network conditions (common/network-profiles.ts) by name, and custom ones written
// `rtt=MS,jitter=MS,loss=PCT,down=MBIT,up=MBIT` (parseProfile).

import { PROFILES, type NetProfile } from '../common/network-profiles.js';

export { PROFILES, type NetProfile } from '../common/network-profiles.js';

/** Returns the preset called `name`, or throws an error that lists the known names. */
export function profileByName(name: string): NetProfile {
  const found = Object.hasOwn(PROFILES, name) ? PROFILES[name] : undefined;
  if (!found) throw new Error(`unknown network profile "${name}"; known: ${Object.keys(PROFILES).join(', ')}`);
  return found;
}

/** The keys of a custom profile spec, and the NetProfile field each one sets. */
const SPEC_KEYS = { rtt: 'rttMs', jitter: 'jitterMs', loss: 'lossPct', down: 'downMbit', up: 'upMbit' } as const;

/**
 * A named preset, or a custom profile from `rtt=MS,jitter=MS,loss=PCT,down=MBIT,up=MBIT` (any subset, any order; unset
 * fields are 0, rates unshaped); its name is the spec as given. Throws naming the bad part.
 */
export function parseProfile(spec: string): NetProfile {
  const text = spec.trim();
  if (!text.includes('=')) return profileByName(text);
  const p: NetProfile = { name: text, rttMs: 0, jitterMs: 0, lossPct: 0, downMbit: null, upMbit: null, source: 'custom' };
  const seen = new Set<string>();
  for (const part of text.split(',')) {
    const m = /^\s*(\w+)\s*=\s*([0-9]+(?:\.[0-9]+)?)\s*$/.exec(part);
    if (!m) throw new Error(`profile "${text}": "${part}" is not KEY=NUMBER (keys: ${Object.keys(SPEC_KEYS).join(', ')})`);
    const key = m[1]!;
    if (!Object.hasOwn(SPEC_KEYS, key)) throw new Error(`profile "${text}": unknown key "${key}" (keys: ${Object.keys(SPEC_KEYS).join(', ')})`);
    if (seen.has(key)) throw new Error(`profile "${text}": "${key}" given twice`);
    seen.add(key);
    const value = Number(m[2]);
    const field = SPEC_KEYS[key as keyof typeof SPEC_KEYS];
    if (field === 'lossPct' && value >= 100) throw new Error(`profile "${text}": loss must be below 100 %`);
    if ((field === 'downMbit' || field === 'upMbit') && !(value > 0)) throw new Error(`profile "${text}": ${key} must be above 0 Mbit/s`);
    p[field] = value;
  }
  return p;
}

/**
 * The profiles one command-line value names: one custom spec (it has `=`), else a comma list of preset names.
 */
export function parseProfileList(value: string): NetProfile[] {
  if (value.includes('=')) return [parseProfile(value)];
  return value.split(',').map((s) => s.trim()).filter(Boolean).map(profileByName);
}
