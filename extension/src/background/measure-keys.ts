// What the measurement scheduler (measurements.ts) keeps in storage.local, and the bounds of it: an index, one meta
// per measured page, the page's records in chunks.

/** storage.local keys: the index, one meta per measured page, record chunks per page. */
export const MEASURE_KEYS = {
  index: 'measure:index',
  meta: (pageId: string) => `measure:meta:${pageId}`,
  chunk: (pageId: string, n: number) => `measure:rec:${pageId}:${n}`,
} as const;
/**
 * Bounds of what is kept: storage is bounded to at most `pages` measurements and `chars` characters of records, none
 * older than `ageMs`; the oldest go first when a new one starts (measurements.ts prune()).
 */
export const MEASURE_CAPS = { pages: 20, chars: 20_000_000, ageMs: 7 * 24 * 3600_000 } as const;
/** A chunk key is closed at this many characters of JSON and the next records go to a new one. */
export const CHUNK_CHARS = 64 * 1024;
/**
 * Progress alone is written to storage at most this often: progress goes to memory at once (measure-status reads it)
 * and to storage with the next records write or at most every PROGRESS_WRITE_MS.
 */
export const PROGRESS_WRITE_MS = 1_000;

/** One measured page in the index. */
export interface IndexEntry {
  pageId: string;
  tabId: number;
  startedAt: number;
  chars: number;
}
