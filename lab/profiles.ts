// Named network conditions from the research dnscost builds on (shared/seeds), and custom ones written
// `rtt=MS,jitter=MS,loss=PCT,down=MBIT,up=MBIT` (parseProfile).

/** One emulated access network. Conventions, so a profile means the same thing everywhere in the lab: */
export interface NetProfile {
  name: string;
  /** The round-trip delay added by the lab; createLabNet holds packets rttMs/2 on each side. */
  rttMs: number;
  /** Bounds the RTT's deviation: each direction draws uniformly within ±jitterMs/2. */
  jitterMs: number;
  /**
   * The chance that one query/answer round trip loses a packet; each direction drops 1 - sqrt(1 - lossPct/100), so
   * the two directions together lose lossPct.
   */
  lossPct: number;
  /** Server→client; null means unshaped. */
  downMbit: number | null;
  /** Client→server; null means unshaped. */
  upMbit: number | null;
  source: string;
}

/**
 * Hounsel et al. shaped only the measurement node's OUTGOING traffic ("an additional latency of
 * 53.3 ms", netem on one side), so 53.3 ms (and 150 ms for 3G) is added to every round trip: it is
 * the RTT, not the one-way delay. Their Table 1 agrees: 4G "Default" (the on-site resolver,
 * 0.44 ms when wired) measures 52.67 min / 53.91 avg, 3G 142.44 / 150.75. Their rates are given as
 * "uplink 7.44 Mb/s, downlink 22.1 Mb/s", i.e. down 22.1 / up 7.44.
 */
const HOUNSEL = 'Hounsel et al., "Analyzing the Costs (and Benefits) of DNS, DoT, and DoH for the Modern Web", §3.2';
/** Kosek et al. (Table II) give delay explicitly as RTT, split symmetrically, with download/upload columns. */
const KOSEK = 'Sengupta, Kosek et al., "Evaluating Cross-Layer Interactions of QUIC, Encrypted DNS and HTTP/3", Table II';

function p(name: string, rttMs: number, downMbit: number | null, upMbit: number | null, source: string, jitterMs = 0, lossPct = 0): NetProfile {
  return { name, rttMs, jitterMs, lossPct, downMbit, upMbit, source };
}

/** Every preset by name; `none` adds nothing (loopback-fast veth). */
export const PROFILES: Record<string, NetProfile> = Object.freeze({
  none: p('none', 0, null, null, 'no shaping'),
  fiber: p('fiber', 14.8, 99.9, 109.1, KOSEK),
  cable: p('cable', 25.2, 165.1, 11.6, KOSEK),
  dsl: p('dsl', 42.4, 10.7, 0.8, KOSEK),
  '4g': p('4g', 91.9, 54.0, 21.2, KOSEK),
  '4g-medium': p('4g-medium', 104.5, 28.7, 4.2, KOSEK),
  'hounsel-4g': p('hounsel-4g', 53.3, 22.1, 7.44, HOUNSEL, 1, 0.5),
  '4g-lossy': p('4g-lossy', 53.3, 22.1, 7.44, HOUNSEL, 1, 1.5),
  '3g': p('3g', 150, 1, 1, HOUNSEL, 8, 2.1),
});

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
