// What the automatic sampler (measurements.ts sample()) remembers in storage.local: its recent starts (the hourly
// budget) and when each host was last measured (the re-measure window). Pure: read from and written to a plain object.

/** storage.local key of the automatic sampler's memory. */
export const SAMPLER_KEY = 'measure:sampler';
/** Hosts the sampler remembers as measured, at most (the oldest are forgotten first). */
export const SAMPLER_MAX_HOSTS = 5_000;
const HOUR_MS = 3600_000;

/** The sampler's memory: its recent starts and when each host was last measured (ms since the epoch). */
export interface SamplerState {
  starts: number[];
  hosts: Record<string, number>;
}

/** The stored value read back (anything malformed counts as nothing remembered). */
export function samplerStateOf(got: unknown): SamplerState {
  const s = got as Partial<SamplerState> | undefined;
  return {
    starts: Array.isArray(s?.starts) ? s.starts.filter((t): t is number => typeof t === 'number') : [],
    hosts: s?.hosts && typeof s.hosts === 'object' ? { ...s.hosts } : {},
  };
}

/** The starts within the last hour before `now`. */
export function startsWithinHour(state: SamplerState, now: number): number[] {
  return state.starts.filter((t) => now - t < HOUR_MS);
}

/** Notes a measurement begun at `now` of `hosts` (an automatic one also counts against the hourly budget). */
export function noteStart(state: SamplerState, now: number, hosts: readonly string[], auto: boolean): SamplerState {
  const next: SamplerState = { starts: auto ? [...startsWithinHour(state, now), now] : state.starts, hosts: { ...state.hosts } };
  for (const h of hosts) next.hosts[h] = now;
  const names = Object.entries(next.hosts);
  if (names.length > SAMPLER_MAX_HOSTS) next.hosts = Object.fromEntries(names.sort((a, b) => b[1] - a[1]).slice(0, SAMPLER_MAX_HOSTS));
  return next;
}
