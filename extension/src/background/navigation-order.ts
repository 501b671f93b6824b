// Which page a late or repeated main-frame event belongs to, when the browser reports a navigation's events out of
// order (Firefox under load delivers webRequest events after webNavigation's) or a navigation repeats itself (Firefox's
// HTTPS-First tries https, is refused, and navigates again over http: one page to the person). Pure decisions for
// page-records.ts, on the page builder's state.
import { storedUrl, type PageBuilder } from '../../../common/page-builder.js';

/** What these decisions read of a recorder's page. */
export interface NavEntry {
  page: PageBuilder;
}

/** Longest a navigation's late or repeated events are still counted as its own. */
const LATE_MS = 30_000;

/** The same address but for http or https (HTTPS-First tries one, then the other). */
export function sameAddress(a: string, b: string): boolean {
  const bare = (u: string) => storedUrl(u).replace(/^https?:/i, '');
  return bare(a) === bare(b);
}

/** True when a navigation or main-frame request to `url` at `at` repeats `entry`'s uncommitted address, other scheme. */
export function fallbackOf(entry: NavEntry, url: string, at: number): boolean {
  return entry.page.committedAt === null && at - entry.page.startedAt < LATE_MS && sameAddress(entry.page.url, url);
}

/**
 * True when `d`, a main-frame request arriving with no pending page, belongs to the committed `current` page: it
 * started before the commit. When the page holds a main request already, `d` must have started after the navigation
 * did: HTTPS-First's https attempt, refused, is followed by a new request over http, a leg of the same navigation.
 */
export function lateMainRequest(current: NavEntry | null, d: { timeStamp: number }): boolean {
  const committedAt = current?.page.committedAt ?? null;
  if (!current || committedAt === null || d.timeStamp > committedAt || committedAt - d.timeStamp >= LATE_MS) return false;
  return current.page.mainRequestId === null || d.timeStamp >= current.page.startedAt;
}

/**
 * True when `replaced.entry`, a pending page a new navigation (`replaced.by`) replaced while its main request was in
 * flight, is that navigation after all: its main request, reported late, leads to the navigation's address `url`, and
 * the navigation has no main request of its own (HTTPS-First's fallback after a redirect, reported out of order). The
 * typed address, its redirect and its start then stay the page's.
 */
export function resumes(replaced: { entry: NavEntry; by: NavEntry }, url: string): boolean {
  return replaced.by.page.mainRequestId === null && sameAddress(replaced.by.page.url, url);
}
