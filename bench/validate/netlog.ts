// Chromium's own account of each lookup, from its NetLog (`--log-net-log`): per host resolver job, when the browser
// asked for the name, when the job left the resolver's queue, when each record type's transaction began and ended, and
// when the name resolved, on the browser's clock (ms since the epoch). The file is read as Chromium writes it (one event
// a line after the constants), so a log cut short by a killed browser still reads up to its last whole line.
import type { Visit, VisitLookup } from './types.js';

/** One record type's DNS transaction of a lookup (over the system's Do53 or the browser's DoH). */
export interface NetLogTransaction {
  qtype: string;
  startedAt: number;
  endedAt: number | null;
}

/** One name Chromium looked up: a host resolver job, from its creation to its end. */
export interface BrowserLookup {
  name: string;
  /** The job's creation: when the first request for the name found nothing in the cache. */
  askedAt: number;
  /** When the job left the resolver's queue (JOB_STARTED); null when the log ends before. */
  startedAt: number | null;
  /** When the name resolved or failed; null when the log ends before. */
  endedAt: number | null;
  /** True for a DNS task over the browser's DoH, false for its own Do53 client, null when only the system resolver ran. */
  secure: boolean | null;
  transactions: NetLogTransaction[];
  /** The job's net error, when it failed. */
  error: number | null;
}

interface RawEvent {
  time: string;
  type: number;
  phase: number;
  source: { id: number; type: number };
  params?: Record<string, unknown>;
}

interface Constants {
  logEventTypes: Record<string, number>;
  logEventPhase: Record<string, number>;
  timeTickOffset: string | number;
}

/** The record types a browser asks, by their number on the wire. */
export const QTYPE_NAMES = new Map<number, string>([[1, 'A'], [28, 'AAAA'], [65, 'HTTPS'], [64, 'SVCB'], [5, 'CNAME'], [16, 'TXT']]);

/** The host of a job's `host` parameter (`https://name`, `name:443`, or the name alone); null when there is none. */
function hostOf(raw: unknown): string | null {
  if (typeof raw !== 'string' || raw.length === 0) return null;
  try {
    return new URL(raw.includes('://') ? raw : `http://${raw}`).hostname.toLowerCase();
  } catch {
    return null;
  }
}

/** The constants and the events of a NetLog's text, up to its last whole event line. */
export function parseNetLog(text: string): { constants: Constants; events: RawEvent[] } {
  const lines = text.split('\n');
  const head = lines[0]?.trim() ?? '';
  if (!head.startsWith('{"constants":')) throw new Error('not a NetLog file: it does not start with its constants');
  const constants = (JSON.parse(`${head.replace(/,$/, '')}}`) as { constants: Constants }).constants;
  const events: RawEvent[] = [];
  for (const line of lines.slice(1)) {
    const l = line.trim().replace(/,$/, '');
    if (!l.startsWith('{"')) continue;
    try {
      const e = JSON.parse(l) as RawEvent;
      if (typeof e.type === 'number' && e.source) events.push(e);
    } catch {
      // The last line of a log still being written, or polled data after the events.
    }
  }
  return { constants, events };
}

/** Every host resolver job in a NetLog's text, in the order the jobs began. */
export function netLogLookups(text: string): BrowserLookup[] {
  const { constants, events } = parseNetLog(text);
  const T = constants.logEventTypes;
  const P = constants.logEventPhase;
  const offset = Number(constants.timeTickOffset);
  const at = (e: RawEvent) => Number(e.time) + offset;
  const jobs = new Map<number, BrowserLookup>();
  const transactions = new Map<number, NetLogTransaction>();
  for (const e of events) {
    const p = e.params ?? {};
    const begin = e.phase === P.PHASE_BEGIN;
    const end = e.phase === P.PHASE_END;
    if (e.type === T.HOST_RESOLVER_MANAGER_JOB) {
      if (begin) {
        const name = hostOf(p.host);
        if (name) jobs.set(e.source.id, { name, askedAt: at(e), startedAt: null, endedAt: null, secure: null, transactions: [], error: null });
      } else if (end) {
        const j = jobs.get(e.source.id);
        if (j) [j.endedAt, j.error] = [at(e), typeof p.net_error === 'number' ? p.net_error : null];
      }
    } else if (e.type === T.HOST_RESOLVER_MANAGER_JOB_STARTED) {
      const j = jobs.get(e.source.id);
      if (j && j.startedAt === null) j.startedAt = at(e);
    } else if (e.type === T.HOST_RESOLVER_DNS_TASK && begin) {
      const j = jobs.get(e.source.id);
      if (j) j.secure = p.secure === true;
    } else if (e.type === T.DNS_TRANSACTION) {
      // On the job's source: which transaction it started; on the transaction's own source: its begin and end.
      const dep = p.source_dependency as { id?: number } | undefined;
      const j = jobs.get(e.source.id);
      if (j && typeof dep?.id === 'number') {
        const t: NetLogTransaction = { qtype: '?', startedAt: at(e), endedAt: null };
        transactions.set(dep.id, t);
        j.transactions.push(t);
      } else if (begin) {
        const t = transactions.get(e.source.id);
        if (t) [t.qtype, t.startedAt] = [QTYPE_NAMES.get(Number(p.query_type)) ?? String(p.query_type), at(e)];
      } else if (end) {
        const t = transactions.get(e.source.id);
        if (t) t.endedAt = at(e);
      }
    }
  }
  return [...jobs.values()];
}

/** The lookups of `names` asked between `from` and `to` (ms since the epoch), as a visit starting at `from` keeps them. */
export function visitLookups(all: readonly BrowserLookup[], names: ReadonlySet<string>, from: number, to: number): VisitLookup[] {
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return all
    .filter((l) => names.has(l.name) && l.askedAt >= from && l.askedAt <= to)
    .map((l) => ({
      name: l.name,
      atMs: r(l.askedAt - from),
      queueMs: l.startedAt === null ? null : r(l.startedAt - l.askedAt),
      ms: l.endedAt === null ? null : r(l.endedAt - l.askedAt),
      secure: l.secure,
      error: l.error,
      tx: l.transactions.map((t) => ({ qtype: t.qtype, startMs: r(t.startedAt - l.askedAt), ms: t.endedAt === null ? null : r(t.endedAt - t.startedAt) })),
    }));
}

/** Gives each of a browser session's visits the lookups of its page's names made in its window (none without a log). */
export function attachLookups(visits: readonly Visit[], all: readonly BrowserLookup[] | undefined): void {
  if (!all) return;
  for (const v of visits) {
    if (!v.pageRecord) continue;
    const names = new Set([v.pageRecord.host, ...v.pageRecord.hosts.filter((h) => h.kind === 'name').map((h) => h.name)]);
    v.lookups = visitLookups(all, names, v.startedAt, v.endedAt);
  }
}
