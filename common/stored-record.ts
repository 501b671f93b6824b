// The one stored shape of a host record: what the cost model (common/cost-model.ts) reads, and so what the extension
// stores, the validation keeps and the popup, the history and the validation compute a page's cost from.
import type { ExchangeRecord, ReplayInfo } from './record.js';

/**
 * One exchange as the model reads it, and so as the extension stores it: the host's ExchangeRecord without what no
 * reader needs (answers, layers, TLS details, events), its error as the stable code, times to the microsecond. The
 * popup, the history and the validation all read records in this one shape (storedRecord), so all run this model.
 */
export interface StoredRecord extends Pick<ExchangeRecord, 'host' | 'qtype' | 'resolver' | 'transport' | 'mode' | 'repeat' | 'ok' | 'timings' | 'bytes' | 'packets'> {
  /** The error's stable code when not ok. */
  error: string | null;
  /** Where the lookup sat in its replayed page (every field: waiting for a connection is part of the model). */
  replay: ReplayInfo | null;
  /** The answer's TTL (s), as the host found it (ExchangeRecord.ttl); absent in records stored before it was kept. */
  ttl?: number | null;
}

/**
 * A lookup as its page saw it: from when the page needed the host to the answer (waiting for a connection included); a
 * record without replay info, its own duration. The cost model (replay-lookups.ts), the validation's per-lookup layer
 * and the replay-schedule benchmark all read a lookup this way.
 */
export function pageLookupMs(r: Pick<StoredRecord, 'timings'> & { replay?: ReplayInfo | null }): number {
  return r.replay ? r.replay.endedAt - r.replay.pageStartedAt - r.replay.firstNeededMs : r.timings.total;
}

const us = (x: number): number => Math.round(x * 1000) / 1000;
const usOrNull = (x: number | null): number | null => (x === null ? null : us(x));

/** The stored form of a host record: what the cost model and the waterfall read, nothing more. */
export function storedRecord(r: ExchangeRecord): StoredRecord {
  return {
    host: r.host,
    qtype: r.qtype,
    resolver: r.resolver,
    transport: r.transport,
    mode: r.mode,
    repeat: r.repeat,
    ok: r.ok,
    error: r.ok ? null : (r.error?.code ?? 'unknown'),
    timings: { connect: usOrNull(r.timings.connect), tls: usOrNull(r.timings.tls), query: usOrNull(r.timings.query), total: us(r.timings.total) },
    bytes: { sent: r.bytes.sent, received: r.bytes.received },
    packets: { sent: r.packets.sent, received: r.packets.received },
    ttl: r.ttl ?? null,
    replay: r.replay
      ? {
          pageStartedAt: us(r.replay.pageStartedAt),
          firstNeededMs: r.replay.firstNeededMs,
          endedAt: us(r.replay.endedAt),
          waitedForConnection: usOrNull(r.replay.waitedForConnection),
          paidSetup: r.replay.paidSetup,
          sharedWith: r.replay.sharedWith,
        }
      : null,
  };
}

/**
 * A stored record as read back from storage: records stored before protocol 2 named the replay's first-needed time
 * `scheduledAt`. Anything else is returned as it is.
 */
export function revivedRecord(r: StoredRecord): StoredRecord {
  const replay = r.replay as (ReplayInfo & { scheduledAt?: number }) | null;
  if (!replay || replay.firstNeededMs !== undefined || typeof replay.scheduledAt !== 'number') return r;
  const { scheduledAt, ...rest } = replay;
  return { ...r, replay: { ...rest, firstNeededMs: scheduledAt } };
}
