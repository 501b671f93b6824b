// The named network conditions from the research dnscost builds on (shared/seeds): the lab emulates them
// (lab/profiles.ts, lab/netns.ts) and the cost panel prices a person's pages on them (common/what-if-network.ts).

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
