// Fixtures of the extension's background tests: page records, replay records and a storage area in memory.
import type { MeasurementMeta } from '../messages/measure.js';
import type { ExchangeRecord } from '../../../common/record.js';
import type { PageHost, PageRecord } from '../../../common/page-record.js';
import { storedRecord, type StoredRecord } from '../../../common/stored-record.js';
import type { StorageArea } from './storage.js';
import type { NativePort } from './host-connection.js';
import type { ResolverSpec } from '../../../common/schema.js';

/** A page host as the recorder keeps it (names under .localhost, .local or single-label are internal). */
export function host(name: string, firstNeededMs: number, extra: Partial<PageHost> = {}): PageHost {
  const internal = /\.localhost$|\.local$|^[^.]+$/.test(name);
  return {
    name, kind: 'name', internal, measurable: !internal, firstNeededMs, requests: 1, types: {}, ips: [], protocols: [], schemes: ['https'],
    fromCache: 0, errors: 0, viaRedirect: false, fromSubframe: false, lookup: null, completedMs: null, ...extra,
  };
}

/** A finished page record of `hosts` (the first is the document's), onLoad 400 ms. */
export function pageRecord(pageId: string, hosts: PageHost[], tabId = 7): PageRecord {
  return {
    version: 1, tabId, pageId, url: `https://${hosts[0]?.name ?? 'x.example'}/`, host: hosts[0]?.name ?? 'x.example', startedAt: 1, committed: true, complete: true,
    navigationTiming: { domainLookupStart: 1, domainLookupEnd: 21, connectStart: 21, responseStart: 60, loadEventEnd: 400, domContentLoadedEventEnd: 300 },
    onLoadMs: 400, timeOrigin: 1, hosts,
    counts: { hosts: hosts.length, measurable: hosts.filter((h) => h.measurable).length, internal: hosts.filter((h) => h.internal).length, ipLiterals: 0, requests: hosts.length },
    redirects: [], dropped: { hostsOverCap: 0, requestsOverCap: 0, invalidNames: 0, invalidSamples: [], redirectsOverCap: 0, timingHostsIgnored: 0 },
    resourceTiming: null, caps: { hosts: 500, redirects: 100 },
  };
}

/** Lets every promise already settled run its continuations (one macrotask). */
export const settle = () => new Promise((r) => setTimeout(r, 0));

/** A clock and timers under a test's hand: `advance` moves the clock by `ms`, running the timers due on the way in order. */
export function fakeClock(start = 0) {
  let now = start;
  let next = 1;
  const timers = new Map<number, { at: number; fn: () => void }>();
  return {
    timers,
    now: () => now,
    setTimer: (fn: () => void, ms: number): unknown => {
      timers.set(next, { at: now + ms, fn });
      return next++;
    },
    clearTimer: (h: unknown) => void timers.delete(h as number),
    advance(ms: number): void {
      const until = now + ms;
      for (;;) {
        const due = [...timers.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        now = due[1].at;
        due[1].fn();
      }
      now = until;
    },
  };
}

/** A storage area in memory, with a count of writes. */
export class FakeArea implements StorageArea {
  data = new Map<string, unknown>();
  sets = 0;
  async get(keys?: string | string[] | null): Promise<Record<string, unknown>> {
    const list = keys == null ? [...this.data.keys()] : typeof keys === 'string' ? [keys] : keys;
    const out: Record<string, unknown> = {};
    for (const k of list) if (this.data.has(k)) out[k] = structuredClone(this.data.get(k));
    return out;
  }
  async set(items: Record<string, unknown>): Promise<void> {
    this.sets++;
    for (const [k, v] of Object.entries(items)) this.data.set(k, structuredClone(v));
  }
  async remove(keys: string | string[]): Promise<void> {
    for (const k of typeof keys === 'string' ? [keys] : keys) this.data.delete(k);
  }
}

/** A replay record of the lab resolver: `lookup` ms from the host's offset 0. */
export function exchange(hostName: string, transport: ExchangeRecord['transport'], mode: ExchangeRecord['mode'], repeat: number, qtype: 'A' | 'AAAA', lookup: number, ok = true): ExchangeRecord {
  return {
    host: hostName, qtype, transport, endpoint: `${transport}://127.0.0.1`, resolver: 'lab', mode, repeat, ok, rcode: ok ? 'NOERROR' : null,
    error: ok ? null : { code: 'refused', message: 'REFUSED' }, answers: [], timings: { connect: null, tls: null, query: lookup, total: lookup }, startedAt: 10,
    bytes: { sent: 60, received: 90 }, packets: { sent: 1, received: 1 }, layers: { dns: { sent: 30, received: 60 }, http: null, tls: null, headers: { sent: 30, received: 30 } },
    provenance: { bytes: 'counted', packets: 'counted' }, reused: false, connection: null, tls: null, events: [],
    replay: { pageStartedAt: 100, firstNeededMs: 0, endedAt: 100 + lookup, waitedForConnection: null, paidSetup: false, sharedWith: 1 },
  };
}

/**
 * A finished measurement of a 3-host page (the document, a host at 40 ms, one after onLoad at 500 ms) over the lab
 * resolver's udp and dot, cold and warm, 3 repeats of A and AAAA: 5 ms lookups, `dotColdMs` over cold DoT, where the
 * late host fails every lookup.
 */
export function measured(pageId: string, finishedAt: number, dotColdMs: number, pageHost = 'www.example.org'): { meta: MeasurementMeta; records: StoredRecord[] } {
  const page = pageRecord(pageId, [host(pageHost, 0), host('cdn.example.net', 40), host('late.example.com', 500)]);
  const records: StoredRecord[] = [];
  for (const h of page.hosts) for (const t of ['udp', 'dot'] as const) for (const m of ['cold', 'warm'] as const) for (let r = 1; r <= 3; r++) for (const q of ['A', 'AAAA'] as const) {
    const fails = h.name === 'late.example.com' && t === 'dot' && m === 'cold';
    const e = exchange(h.name, t, m, r, q, t === 'dot' && m === 'cold' ? dotColdMs : 5, !fails);
    records.push(storedRecord({ ...e, replay: { pageStartedAt: 100, firstNeededMs: h.firstNeededMs, endedAt: 100 + h.firstNeededMs + e.timings.total, waitedForConnection: null, paidSetup: false, sharedWith: 1 } }));
  }
  const meta = {
    version: 1, pageId, tabId: 7, url: page.url, host: page.host, state: 'done', trigger: 'manual', startedAt: finishedAt - 1000, updatedAt: finishedAt, finishedAt,
    done: records.length, total: records.length, records: records.length, chunks: 1, chars: 1, plan: {} as MeasurementMeta['plan'], page, seed: 1, primed: true, summary: [], error: null,
  } satisfies MeasurementMeta;
  return { meta, records };
}

/** A native port in memory: what the background sends, and a way to answer as the host (serialized on the way). */
export class FakeNativePort implements NativePort {
  sent: Array<Record<string, unknown>> = [];
  private listeners: Array<(m: unknown) => void> = [];
  onMessage = { addListener: (l: (m: unknown) => void) => void this.listeners.push(l) };
  onDisconnect = { addListener: () => undefined };
  postMessage(m: unknown): void {
    this.sent.push(m as Record<string, unknown>);
  }
  disconnect(): void {}
  reply(m: unknown): void {
    for (const l of this.listeners) l(JSON.parse(JSON.stringify(m)));
  }
}

/** A lab resolver on loopback (Do53, DoT and DoH endpoints) for tests that plan a measurement. */
export const LOOPBACK_LAB: ResolverSpec = {
  id: 'lab',
  name: 'Lab',
  endpoints: [
    { transport: 'udp', address: '127.0.0.1', port: 53 },
    { transport: 'dot', address: '127.0.0.1', port: 853, serverName: 'dns.test' },
    { transport: 'doh', address: '127.0.0.1', port: 443, serverName: 'dns.test', path: '/dns-query' },
  ],
};
/** The popup as a message sender. */
export const POPUP_SENDER = { id: 'ext', url: 'chrome-extension://ext/popup/popup.html' };
