// What the page recorder (page-records.ts) keeps per tab and needs from its surroundings: its dependencies, a page's
// entry with its privacy gate, a tab's state, and webRequest's details as it reads them.
import type { RecordingBrowser } from '../../../common/browser-queries.js';
import type { PageBuilder } from '../../../common/page-builder.js';
import type { StorageArea } from './storage.js';

/** What the recorder needs from its surroundings: it touches no browser global, everything comes in through deps. */
export interface PageRecorderDeps {
  /** storage.session. */
  area: StorageArea;
  /** Whether a tab is in a private window (tabs.get(tabId).incognito); null when the tab is gone. */
  isIncognitoTab(tabId: number): Promise<boolean | null>;
  /** The exclusions in force (the settings store's loadSettings()). */
  loadExclusions(): Promise<string[]>;
  /** The extension's own base URL (runtime.getURL('')): page-report is answered only to its pages. */
  extensionBase: string;
  newId(): string;
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
  /** Where a failure of storage is reported (never thrown into the browser's event dispatch). */
  log(message: string): void;
  /** The browser recording (its report says so: it decides which record types a replay asks). */
  browser?: RecordingBrowser;
}

export type Gate = 'checking' | 'ok' | 'private' | 'excluded';

export interface Entry {
  /** The page record's builder: every change of the record goes through its methods. */
  page: PageBuilder;
  gate: Gate;
  /** Settles when the gate has been decided (at most once per check). */
  gateDone: Promise<void>;
  /** webNavigation.onBeforeNavigate has been seen for this navigation. */
  navigateSeen: boolean;
}

/** Memory is bounded: per tab one current and one pending page, each capped by PAGE_CAPS. */
export interface TabState {
  current: Entry | null;
  pending: Entry | null;
  /** A pending page a new navigation replaced while its main request was in flight, and the page that replaced it. */
  replaced: { entry: Entry; by: Entry } | null;
  writeTimer: unknown;
  /** When the scheduled write is due (deps.now() time). */
  writeDue: number;
}

/** webRequest details as the recorder reads them (Chromium and Firefox share these fields). */
export interface RequestDetails {
  requestId: string;
  url: string;
  tabId: number;
  frameId: number;
  /** −1 for a top-level frame. */
  parentFrameId?: number | undefined;
  type: string;
  timeStamp: number;
  /** Firefox only. */
  incognito?: boolean | undefined;
}
