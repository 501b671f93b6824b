// The validation experiment's shared words: the browsers, sides (Do53 and the encrypted transports), scenarios and
// DoT stubs it knows, the lab addresses every part uses, what to run (ValidationOptions), the pages it loads
// (PageSpec), what a run records (Visit, ProfileRun, ValidationRun: the raw file's shape) and what the outer half
// hands the inner one (InnerConfig, as config.json).
import type { RecordingBrowser } from '../../common/browser-queries.js';
import type { PageForCost } from '../../common/page-cost.js';
import type { StoredRecord } from '../../common/stored-record.js';
import { TRANSPORTS } from '../../common/transports.js';
import type { NetProfile } from '../../lab/profiles.js';

/** The browsers the validation drives, as common/browser-queries.ts names them. */
export const BROWSERS = ['chromium', 'firefox'] as const satisfies readonly RecordingBrowser[];
/** The encrypted transports a browser is validated on, each against the Do53 baseline. */
export const CANDIDATES = ['dot', 'doh', 'doq'] as const;
/** One of CANDIDATES. */
export type Candidate = (typeof CANDIDATES)[number];
/**
 * The A/A controls: a second, independent series of Do53 loads (compared with Do53) and of DoT loads (compared with
 * DoT). Their rows' true change is 0, so they test the measured change's interval, never the model.
 */
export const CONTROLS = ['do53-aa', 'dot-aa'] as const;
/** One of CONTROLS. */
export type Control = (typeof CONTROLS)[number];
/** How a browser resolves in one run of loads: the baseline `do53`, a candidate, or a control. */
export const SIDES = ['do53', ...CANDIDATES, ...CONTROLS] as const;
/** One of SIDES (called a transport in rows and the raw file). */
export type Side = (typeof SIDES)[number];
/** What a row compares against its baseline. */
export type Compared = Candidate | Control;
/** The DNS path a side's browser takes (a control takes its baseline's). */
export const PATH_OF: Record<Side, 'do53' | Candidate> = { do53: 'do53', dot: 'dot', doh: 'doh', doq: 'doq', 'do53-aa': 'do53', 'dot-aa': 'dot' };
/** The side each compared side is measured against: Do53 for the candidates, the same path for a control. */
export const BASELINE_OF: Record<Compared, Side> = { dot: 'do53', doh: 'do53', doq: 'do53', 'do53-aa': 'do53', 'dot-aa': 'dot' };

/** True for the A/A controls. */
export function isControl(side: string): side is Control {
  return (CONTROLS as readonly string[]).includes(side);
}

/** The connection states a load is validated in (see the report's "What ran"). */
export const SCENARIOS = ['cold', 'warm', 'expected'] as const;
/** One of SCENARIOS. */
export type Scenario = (typeof SCENARIOS)[number];
/** The real stubs the browser's DoT can go through (resolv.conf → stub → the lab resolver over TLS). */
export const DOT_STUBS = ['unbound', 'stubby'] as const;
/** One of DOT_STUBS. */
export type DotStub = (typeof DOT_STUBS)[number];

const PATH_SCHEME = { do53: 'dns', dot: 'tls', doh: 'https', doq: 'quic' } as const;
/** The CoreDNS log scheme each side must show up on. */
export const SCHEME_OF = Object.fromEntries(SIDES.map((s) => [s, PATH_SCHEME[PATH_OF[s]]])) as Record<Side, string>;
/** The resolver's encrypted TCP port each side's connection goes to (null: no TCP connection to watch: Do53, QUIC). */
export const RESOLVER_PORT = Object.fromEntries(SIDES.map((s) => {
  const path = PATH_OF[s];
  return [s, path === 'dot' || path === 'doh' ? TRANSPORTS[path].url.defaultPort : null];
})) as Record<Side, number | null>;

/** The server namespace's address: the browser's CoreDNS, the replay CoreDNS and the synthetic site listen on it. */
export const SERVER = '192.0.2.2';
/** The replay CoreDNS's ports (the browser's uses the standard ones), so replays never show in the browser's counts. */
export const REPLAY_PORTS = { dns: 5300, tls: 8530, https: 4430 };

/** What to run. */
export interface ValidationOptions {
  browsers: RecordingBrowser[];
  profiles: NetProfile[];
  /** Synthetic pages by their number of hostnames (lab/site/validation-site.ts). */
  pages: number[];
  /** HAR files, each rebuilt in the lab (lab/har/). */
  hars: string[];
  scenarios: Scenario[];
  /** The candidates (Do53 is always loaded: it is the baseline). */
  transports: Candidate[];
  /** The A/A controls loaded beside them (absent in runs before 2026-11-26: none). */
  controls?: Control[];
  /** Loads per side of every row, fixed before the run (never decided by the result). */
  loads: number;
  /**
   * Runs before 2026-11-26 only: loads per side before a row could stop, which it did as soon as its interval was
   * narrow enough (so `loads` was a cap). A run without it loaded every row exactly `loads` times a side.
   */
  minLoads?: number;
  /** Replay repeats per Do53 visit (the extension uses 3; 1 keeps the experiment's length bearable). */
  repeat: number;
  seed: number;
  /** The local stub the browser's DoT goes through. */
  dotStub: DotStub;
  /**
   * Force TCP_NODELAY on the DoT stub's sockets (an LD_PRELOAD shim compiled with gcc): Debian 12's stubby and
   * unbound leave Nagle's algorithm on, so a query written while a previous segment is unacknowledged (the TLS
   * Finished, or the previous query of a burst) waits for the server's delayed ACK.
   */
  stubNoDelay: boolean;
  /** The lab resolver's idle timeout for DoT, DoH and DoQ connections (s); default: see serverIdleFor. */
  serverIdleS?: number;
  /** Progress lines (stderr by default). */
  log?: (line: string) => void;
  /** Called with the run so far after each profile (the raw file is written there, so a long run keeps its data). */
  onProfile?: (run: ValidationRun) => void;
}

/** One page the validation loads: a synthetic page of `hosts` names, or a HAR file's page. */
export interface PageSpec {
  /** The synthetic page's host count as text ("10"), or the HAR file's name without `.har`. */
  id: string;
  kind: 'synthetic' | 'har';
  /** The HAR file (kind har). */
  file?: string;
  /** Hostnames the lab resolver answers for it. */
  hosts: number;
  url: string;
}

/** One load of one page by one browser on one side in one scenario. */
export interface Visit {
  browser: RecordingBrowser;
  page: string;
  transport: Side;
  scenario: Scenario;
  /** The load's number on its side of its row (1, 2, …). */
  round: number;
  /** loadEventStart (ms since navigation start); null when the load failed. */
  onLoad: number | null;
  error: string | null;
  /** True when the first attempt was aborted with ERR_NETWORK_CHANGED and this is the second. */
  retried?: boolean;
  /** When the visit began (its set-up included) and ended, ms since the epoch: its window in the query log. */
  startedAt: number;
  endedAt: number;
  /** This side's established connections to the resolver (the browser's for DoH, the stub's for DoT) as the navigation started; null where none is watched (Do53; DoQ runs over UDP). */
  openBefore: number | null;
  /** How long the most recently active of those connections had been idle then (ms), when one was open. */
  connIdleMs?: number | null;
  /** Expected scenario: the planned gap before this load (ms); the realized one is pageRecord.idleBeforeMs. */
  gapMs?: number;
  /** The page as the extension would record it; Do53 visits also dnscost's replay of it, as the extension stores it. */
  pageRecord?: PageForCost & { idleBeforeMs?: number | null };
  records?: StoredRecord[];
  /** Why dnscost's replay of this Do53 visit failed (it then has no records and no prediction). */
  replayError?: string;
  /** What the browser's resolver was asked in this visit's window: scheme → name → record type → count (page names). */
  asked?: Record<string, Record<string, Record<string, number>>>;
  /** The scheme the visit's own warm-up lookup (scenario warm, or a trace's start) went over, if any was seen. */
  warmScheme?: string[];
  /** The browser's own lookups in this visit's window (names neither the page's nor a warm-up), ms after its start. */
  background?: { atMs: number; scheme: string; qtype: string; name: string }[];
  /** Chromium: each lookup of the page's names as its NetLog has it (netlog.ts), ms after the visit's start. */
  lookups?: VisitLookup[];
}

/** A lookup as a visit keeps it: times in ms, `atMs` from the visit's start, the rest from when the name was asked. */
export interface VisitLookup {
  name: string;
  atMs: number;
  /** In the resolver's queue before its job started; null when unknown. */
  queueMs: number | null;
  /** From asked to resolved (or failed); null when the log ends before. */
  ms: number | null;
  secure: boolean | null;
  error: number | null;
  /** Each record type's transaction: when it began and how long it took (null: unfinished). */
  tx: { qtype: string; startMs: number; ms: number | null }[];
}

/** One profile's run. */
export interface ProfileRun {
  profile: NetProfile;
  pages: PageSpec[];
  visits: Visit[];
  browserVersions: Partial<Record<RecordingBrowser, string>>;
  /** The lab resolver's idle timeout for encrypted connections during the run (s). */
  serverIdleS: number;
  /** Queries the browser's resolver saw for the pages' names: scheme → record type → count. */
  queryTypes: Record<string, Record<string, number>>;
}

/** A whole run, as the raw file keeps it. */
export interface ValidationRun {
  format: 2;
  /** The command that made the run. */
  command?: string;
  options: Omit<ValidationOptions, 'log' | 'onProfile' | 'profiles'> & { profiles: string[] };
  startedAt: string;
  finishedAt: string;
  machine: string;
  /** The code that made the loads (run.ts codeAt: a commit, maybe with changes); absent before 2026-11-26. */
  code?: string;
  profiles: ProfileRun[];
}

/** One profile's work for the inner half (written by the outer half to config.json; read once at its start). */
export interface InnerConfig {
  profile: NetProfile;
  serverNs: string;
  /** The HAR pages' server address (and the HARs' own IP literals, already added to the server side). */
  harAddress: string;
  options: Omit<ValidationOptions, 'log' | 'onProfile' | 'profiles'>;
  serverIdleS: number;
  seed: number;
  work: string;
  out: string;
  stubPreload?: string;
}
