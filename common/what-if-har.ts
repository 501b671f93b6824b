// The popup's what-if HAR: the page as it was recorded, one entry per host at the time the page first needed it, its DNS
// time replaced by the chosen resolver × transport × connection state's (the replay's median lookup for that host, A and
// AAAA both answered), and the page's onLoad moved by the cost model's estimate. A HAR 1.2 file any HAR viewer opens; the
// hosts' other phases are not known to the extension and are -1 (HAR's "does not apply").
import type { PageRecord } from './page-record.js';
import { percentile } from './stats.js';
import { pageLookupMs, type StoredRecord } from './stored-record.js';
import type { Mode, TransportId } from './transports.js';

/** The choice a what-if HAR is about. */
export interface WhatIf {
  resolver: string;
  resolverName: string;
  transport: TransportId;
  transportName: string;
  mode: Mode;
  /** The cost model's estimated change of onLoad for this choice (ms), null when it has none. */
  onLoadDeltaMs: number | null;
}

/** What of a measurement the HAR is made of. */
export interface WhatIfPage {
  url: string;
  startedAt: number;
  page: Pick<PageRecord, 'hosts' | 'onLoadMs' | 'timeOrigin'>;
}

const round = (x: number): number => Math.round(x * 1000) / 1000;

/**
 * A host's lookup time in the page's replay for one choice: per repeat the later of its record types' answers (a
 * browser connects once both have come), from when the page needed it (so waiting for a connection counts); the
 * median over repeats whose every lookup answered. Null when none did.
 */
export function replayedLookupMs(records: readonly StoredRecord[], host: string, w: Pick<WhatIf, 'resolver' | 'transport' | 'mode'>): number | null {
  const byRepeat = new Map<number, StoredRecord[]>();
  for (const r of records) {
    if (r.host !== host || r.resolver !== w.resolver || r.transport !== w.transport || r.mode !== w.mode) continue;
    byRepeat.set(r.repeat, [...(byRepeat.get(r.repeat) ?? []), r]);
  }
  const times: number[] = [];
  for (const rs of byRepeat.values()) {
    if (!rs.every((r) => r.ok)) continue;
    times.push(Math.max(...rs.map(pageLookupMs)));
  }
  const median = percentile(times.sort((a, b) => a - b), 50);
  return median === null ? null : round(median);
}

/** The what-if HAR (HAR 1.2) of a measured page for choice `w`. */
export function whatIfHar(m: WhatIfPage, records: readonly StoredRecord[], w: WhatIf, creator: { name: string; version: string }): object {
  const origin = m.page.timeOrigin ?? m.startedAt;
  const label = `${w.resolverName} over ${w.transportName}, ${w.mode}`;
  const onLoad = m.page.onLoadMs !== null && w.onLoadDeltaMs !== null ? round(m.page.onLoadMs + w.onLoadDeltaMs) : -1;
  const entries = [...m.page.hosts].sort((a, b) => a.firstNeededMs - b.firstNeededMs).map((h) => {
    const dns = replayedLookupMs(records, h.name, w);
    const recorded = h.lookup ? `the browser's own lookup took ${round(h.lookup.durationMs)} ms` : 'the browser did not expose its lookup';
    return {
      pageref: 'page_1',
      startedDateTime: new Date(origin + h.firstNeededMs).toISOString(),
      time: dns ?? 0,
      request: { method: 'GET', url: `${h.schemes.includes('http') && !h.schemes.includes('https') ? 'http' : 'https'}://${h.name}/`, httpVersion: '', cookies: [], headers: [], queryString: [], headersSize: -1, bodySize: -1 },
      response: { status: 0, statusText: '', httpVersion: '', cookies: [], headers: [], content: { size: 0, mimeType: '' }, redirectURL: '', headersSize: -1, bodySize: -1 },
      cache: {},
      timings: { blocked: -1, dns: dns ?? -1, connect: -1, ssl: -1, send: 0, wait: 0, receive: 0 },
      comment: dns === null
        ? `dnscost: no lookup of ${h.name} answered over ${label}; ${recorded}`
        : `dnscost: the lookup over ${label} in the page's replay; ${recorded}`,
    };
  });
  return {
    log: {
      version: '1.2',
      creator,
      pages: [{
        startedDateTime: new Date(origin).toISOString(),
        id: 'page_1',
        title: m.url,
        pageTimings: { onContentLoad: -1, onLoad },
        comment: `dnscost what-if: ${label}. Each host's DNS time is that choice's lookup in the page's replay; onLoad is the measured one`
          + (onLoad === -1 ? ' (no estimate)' : ` ${w.onLoadDeltaMs! >= 0 ? '+' : '−'}${Math.abs(round(w.onLoadDeltaMs!))} ms, the cost model's estimate, not a measurement`) + '.',
      }],
      entries,
    },
  };
}
