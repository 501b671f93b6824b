// The validation experiment's shared words: the browser transports and DoT stubs it knows, the lab addresses both
// halves use, what to run (ValidationOptions), what a run records (Visit, ProfileRun, ValidationRun: the raw file's
// shape) and what the outer half hands the inner one (InnerConfig, as config.json).
import type { StoredRecord } from '../../common/stored-record.js';
import type { PageForCost } from '../../common/page-cost.js';
import type { NetProfile } from '../../lab/profiles.js';

/** The browser's transports, as the table names them. */
export const BROWSER_TRANSPORTS = ['do53', 'dot', 'doh'] as const;
/** One of BROWSER_TRANSPORTS. */
export type BrowserTransport = (typeof BROWSER_TRANSPORTS)[number];
/** The real stubs the browser's DoT can go through (resolv.conf → stub on 127.0.0.1 → lab resolver over TLS). */
export const DOT_STUBS = ['stubby', 'unbound'] as const;
/** One of DOT_STUBS. */
export type DotStub = (typeof DOT_STUBS)[number];

/** The CoreDNS log schemes each browser transport must show up on. */
export const SCHEME_OF: Record<BrowserTransport, string> = { do53: 'dns', dot: 'tls', doh: 'https' };

/** The server namespace's address: the browser's CoreDNS, the replay CoreDNS and the validation site all listen on it. */
export const SERVER = '192.0.2.2';
/** The replay CoreDNS's ports (the browser's uses the standard ones), so replays never show in the browser's counts. */
export const REPLAY_PORTS = { dns: 5300, tls: 8530, https: 4430 };

/** What to run. */
export interface ValidationOptions {
  profiles: string[];
  pages: number[];
  loads: number;
  browser: 'chromium';
  /** Replay repeats per Do53 visit (the extension uses 3; 1 keeps the experiment's length bearable). */
  repeat: number;
  /** The browser transports to load with (default all three; Do53 is always included: it is the baseline). */
  transports?: BrowserTransport[];
  /**
   * Force TCP_NODELAY on the DoT stub's sockets (an LD_PRELOAD shim compiled with gcc): Debian 12's stubby (getdns
   * 1.7) and unbound (1.17) both leave Nagle's algorithm on, so a query written while a previous segment is unacknowledged (the TLS Finished,
   * or the previous query of a burst) waits for the server's (delayed) ACK. Off unless asked (`--stub-nodelay`).
   */
  stubNoDelay?: boolean;
  /** The local stub the browser's DoT goes through: Debian's `stubby` (getdns) or `unbound` as a forwarder. */
  dotStub?: DotStub;
  seed: number;
  /** Progress lines (stderr by default). */
  log?: (line: string) => void;
  /** Called with the run so far after each profile (the raw file is written there, so a long run keeps its data). */
  onProfile?: (run: ValidationRun) => void;
}

/** One load of one page over one transport. */
export interface Visit {
  page: number;
  transport: BrowserTransport;
  round: number;
  /** loadEventStart (ms since navigation start); null when the load failed. */
  onLoad: number | null;
  error: string | null;
  /** True when the first attempt was aborted with ERR_NETWORK_CHANGED and this is the second. */
  retried?: boolean;
  /** The page as the extension would record it; Do53 visits also dnscost's replay of it, as the extension stores it. */
  pageRecord?: PageForCost;
  records?: StoredRecord[];
}

/** One profile's run. */
export interface ProfileRun {
  profile: NetProfile;
  visits: Visit[];
  /** Queries the browser's CoreDNS saw for the site's names, per scheme (dns, tls, https) and name. */
  queries: Record<string, Record<string, number>>;
  /** The same queries per scheme and record type (A, AAAA, HTTPS, …): what the browser asked. */
  queryTypes?: Record<string, Record<string, number>>;
  browserVersion: string;
}

/** A whole run, as the raw file keeps it. */
export interface ValidationRun {
  /** The command that made the run (absent in runs made before it was recorded). */
  command?: string;
  options: Omit<ValidationOptions, 'log' | 'onProfile'>;
  startedAt: string;
  finishedAt: string;
  machine: string;
  profiles: ProfileRun[];
}

/** One profile's work for the inner half (written by the outer half to config.json; read once at its start). */
export interface InnerConfig {
  profile: NetProfile;
  pages: number[];
  loads: number;
  seed: number;
  repeat: number;
  caFile: string;
  work: string;
  out: string;
  transports?: BrowserTransport[];
  stubPreload?: string;
  dotStub: DotStub;
}
