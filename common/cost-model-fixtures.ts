// Pages and replay records the cost model's tests share (cost-model.test.ts): a page of four hosts, replay cells built
// from a host → lookup table, and the one cell of a cost. Test fixtures only: nothing of the product imports them.
import type { CellCost, PageInput } from './cost-model.js';
import type { StoredRecord } from './stored-record.js';
import type { Mode, QType, TransportId } from './transports.js';

/** A page: the document looked up from 5 to 25 ms, first paint at 300, onLoad at 1000. */
export function page(hosts: PageInput['hosts'], over: Partial<PageInput['navigation']> = {}): PageInput {
  return {
    documentHost: 'doc.test',
    navigation: { domainLookupStart: 5, domainLookupEnd: 25, connectStart: 25, responseStart: 100, loadEventEnd: 1000, firstPaint: 300, ...over },
    hosts,
  };
}

/** Replay records for one cell: host → lookup ms (null: every record type failed), at its offset, A and AAAA. */
export function cell(
  resolver: string,
  transport: TransportId,
  lookups: Record<string, number | null>,
  at: Record<string, number>,
  { mode = 'cold' as Mode, repeats = 1, bytes = 100 } = {},
): StoredRecord[] {
  const out: StoredRecord[] = [];
  for (let repeat = 1; repeat <= repeats; repeat++) {
    for (const [host, ms] of Object.entries(lookups)) {
      for (const qtype of ['A', 'AAAA'] as QType[]) {
        const total = ms ?? 5000;
        out.push({
          host, qtype, resolver, transport, mode, repeat, ok: ms !== null, error: ms === null ? 'timeout' : null,
          bytes: { sent: bytes, received: 2 * bytes }, packets: { sent: 1, received: 1 },
          timings: { connect: null, tls: null, query: total, total },
          replay: { pageStartedAt: 1000 * repeat, firstNeededMs: at[host] ?? 0, endedAt: 1000 * repeat + (at[host] ?? 0) + total, waitedForConnection: null, paidSetup: false, sharedWith: 1 },
        });
      }
    }
  }
  return out;
}

export const AT = { 'doc.test': 0, 'cdn.test': 120, 'img.test': 400, 'beacon.test': 1200 };
export const HOSTS: PageInput['hosts'] = [
  { name: 'cdn.test', firstNeededMs: 120 },
  { name: 'img.test', firstNeededMs: 400 },
  { name: 'beacon.test', firstNeededMs: 1200 },
];
export const SYSTEM = cell('system', 'udp', { 'doc.test': 20, 'cdn.test': 10, 'img.test': 10, 'beacon.test': 10 }, AT);

export function only(costs: CellCost[], resolver: string, transport: TransportId, mode: Mode = 'cold'): CellCost {
  const c = costs.find((x) => x.resolver === resolver && x.transport === transport && x.mode === mode);
  if (!c) throw new Error(`no cell ${resolver} ${transport} ${mode}`);
  return c;
}
