// The history in storage.local (extension/src/history.ts): one key per entry and an index of (id, time, size) in finishing
// order, so adding an entry writes two small keys and the caps drop the oldest without reading them. Writes run one
// after another; an entry that does not read back as one (an older version, a damaged store) is skipped and counted.
import { HISTORY_CAPS, isHistoryEntry, matchesFilter, type HistoryEntry, type HistoryFilter } from '../history.js';
import { QueuedArea, type StorageArea } from './storage.js';

export const HISTORY_KEYS = {
  index: 'history:index',
  entry: (id: string) => `history:e:${id}`,
} as const;

interface IndexEntry {
  id: string;
  at: number;
  chars: number;
}

export class HistoryStore {
  private readonly writes: QueuedArea;

  constructor(private readonly area: StorageArea) {
    this.writes = new QueuedArea(area);
  }

  /** Adds (or replaces, by id) an entry; the oldest go beyond HISTORY_CAPS. */
  add(entry: HistoryEntry): Promise<void> {
    return this.writes.run(async () => {
      const index = (await this.index()).filter((e) => e.id !== entry.id);
      index.push({ id: entry.id, at: entry.at, chars: JSON.stringify(entry).length });
      index.sort((a, b) => a.at - b.at);
      let chars = index.reduce((s, e) => s + e.chars, 0);
      const drop: string[] = [];
      while (index.length > HISTORY_CAPS.entries || (index.length > 1 && chars > HISTORY_CAPS.chars)) {
        const old = index.shift()!;
        chars -= old.chars;
        drop.push(HISTORY_KEYS.entry(old.id));
      }
      await this.area.set({ [HISTORY_KEYS.entry(entry.id)]: entry, [HISTORY_KEYS.index]: index });
      if (drop.length > 0) await this.area.remove(drop);
    });
  }

  /** The entries that match `filter`, oldest first, and how many stored entries did not read back. */
  async list(filter: HistoryFilter = {}): Promise<{ entries: HistoryEntry[]; total: number; unreadable: number }> {
    await this.writes.settled();
    const index = await this.index();
    const wanted = index.filter((e) => (filter.since === undefined || e.at >= filter.since) && (filter.until === undefined || e.at <= filter.until));
    const stored = wanted.length > 0 ? await this.area.get(wanted.map((e) => HISTORY_KEYS.entry(e.id))) : {};
    const entries: HistoryEntry[] = [];
    let unreadable = 0;
    for (const e of wanted) {
      const x = stored[HISTORY_KEYS.entry(e.id)];
      if (!isHistoryEntry(x)) unreadable++;
      else if (matchesFilter(x, filter)) entries.push(x);
    }
    return { entries, total: index.length, unreadable };
  }

  /** Removes the entries whose page host `excluded` says (a site the person excluded); how many. */
  remove(excluded: (host: string) => boolean): Promise<number> {
    return this.writes.run(async () => {
      const index = await this.index();
      if (index.length === 0) return 0;
      const stored = await this.area.get(index.map((e) => HISTORY_KEYS.entry(e.id)));
      const gone = new Set(index.filter((e) => {
        const x = stored[HISTORY_KEYS.entry(e.id)];
        return isHistoryEntry(x) && excluded(x.host);
      }).map((e) => e.id));
      if (gone.size === 0) return 0;
      await this.area.set({ [HISTORY_KEYS.index]: index.filter((e) => !gone.has(e.id)) });
      await this.area.remove([...gone].map(HISTORY_KEYS.entry));
      return gone.size;
    });
  }

  /** Removes every entry. */
  clear(): Promise<void> {
    return this.writes.run(async () => {
      const keys = Object.keys(await this.area.get(null)).filter((k) => k.startsWith('history:'));
      if (keys.length > 0) await this.area.remove(keys);
    });
  }

  private async index(): Promise<IndexEntry[]> {
    const raw = (await this.area.get(HISTORY_KEYS.index))[HISTORY_KEYS.index];
    return Array.isArray(raw)
      ? raw.filter((e): e is IndexEntry => typeof e === 'object' && e !== null && typeof e.id === 'string' && Number.isFinite(e.at) && Number.isFinite(e.chars))
      : [];
  }
}
