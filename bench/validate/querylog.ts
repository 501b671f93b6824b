// The browser resolver's query log, per visit: CoreDNS logs every query as `dnscost-query SCHEME TYPE NAME`
// (lab/resolver.ts logQueries); each line is stamped when it arrives, and a query belongs to the visit whose window
// (from its start to the next visit's start — loads run one at a time) holds it. A visit then knows which of its
// page's names were asked over which scheme and for which record types, and over which scheme its own warm-up
// lookup went (`warm-…` names; `warm-t…` open a trace and belong to none): the proof that the browser used the side's
// transport for every name, and that no cache answered one. Every other name is the browser's own background lookup,
// kept per visit (`background`): such a lookup opens or keeps the encrypted connection as a page's would.
import type { Visit } from './types.js';

/** A visit keeps at most this many of the browser's own lookups. */
const MAX_BACKGROUND = 20;

/** One logged query. */
export interface LoggedQuery {
  at: number;
  scheme: string;
  qtype: string;
  name: string;
}

/** The lines CoreDNS writes, stamped as they arrive. */
export class QueryLog {
  readonly entries: LoggedQuery[] = [];
  private pending = '';

  /** Takes CoreDNS output (any chunking). */
  feed(text: string, at = Date.now()): void {
    const lines = (this.pending + text).split('\n');
    this.pending = lines.pop() ?? '';
    for (const line of lines) {
      const m = /dnscost-query (\w+) (\S+) (\S+?)\.?$/.exec(line.trim());
      if (m) this.entries.push({ at, scheme: m[1]!, qtype: m[2]!, name: m[3]!.toLowerCase() });
    }
  }
}

/**
 * Gives each of `visits` (one group's, any order) what the log holds in its window: `asked` for the names
 * `isPageName` accepts, `warmScheme` for the schemes warm-up names went over. Returns the page names' totals per
 * scheme and record type.
 */
export function attribute(entries: readonly LoggedQuery[], visits: Visit[], isPageName: (name: string) => boolean): Record<string, Record<string, number>> {
  const byStart = [...visits].sort((a, b) => a.startedAt - b.startedAt);
  const totals: Record<string, Record<string, number>> = {};
  let i = -1;
  for (const q of [...entries].sort((a, b) => a.at - b.at)) {
    while (i + 1 < byStart.length && byStart[i + 1]!.startedAt <= q.at) i++;
    const page = isPageName(q.name);
    if (page) {
      const t = (totals[q.scheme] ??= {});
      t[q.qtype] = (t[q.qtype] ?? 0) + 1;
    }
    const v = byStart[i];
    if (!v) continue;
    if (page) {
      const per = ((v.asked ??= {})[q.scheme] ??= {});
      const types = (per[q.name] ??= {});
      types[q.qtype] = (types[q.qtype] ?? 0) + 1;
    } else if (q.name.startsWith('warm-') && !q.name.startsWith('warm-t')) {
      // A trace's opening lookup (warm-t…) is no visit's own.
      v.warmScheme = [...new Set([...(v.warmScheme ?? []), q.scheme])];
    } else if (!q.name.startsWith('warm-') && (v.background ??= []).length < MAX_BACKGROUND) {
      // The browser's own lookups (not the page's, not ours): they open or keep the encrypted connection too.
      v.background.push({ atMs: q.at - v.startedAt, scheme: q.scheme, qtype: q.qtype, name: q.name });
    }
  }
  for (const v of visits) v.asked ??= {};
  return totals;
}
