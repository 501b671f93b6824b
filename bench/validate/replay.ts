// dnscost's replay of a Do53 visit, as the extension asks the native host for it: every host of the page record at
// the time the browser asked for it (common/lookup-starts.ts, capped as the extension caps it), each asked for the
// record types the recording browser asks for it (common/browser-queries.ts; the lab namespaces have no IPv6 route),
// over Do53 (the baseline) and every candidate of the run against the replay resolver, in the modes the visit's
// scenario prices.
// The records are stored through storedRecord, as the extension stores them, so the prediction runs the model
// exactly as the popup does.
import { pageHostQtypes } from '../../common/browser-queries.js';
import { lookupStarts, replayAt, type LookupStartsInput } from '../../common/lookup-starts.js';
import type { PageForCost } from '../../common/page-cost.js';
import type { EndpointSpec, MeasureRequest } from '../../common/schema.js';
import { storedRecord, type StoredRecord } from '../../common/stored-record.js';
import type { Mode } from '../../common/transports.js';
import { measure } from '../../native-host/src/engine/measure.js';
import { REPLAY_PORTS, SERVER, type Candidate, type Scenario } from './types.js';

/** The modes a scenario's predictions read: its own, or both for the expected one (each visit picks). */
export function modesOf(scenario: Scenario): Mode[] {
  return scenario === 'expected' ? ['cold', 'warm'] : [scenario];
}

/** The replay request for `page` (pure): hosts with their offsets and record types, the endpoints of `transports`. */
export function replayRequest(page: PageForCost & LookupStartsInput, transports: readonly Candidate[], modes: Mode[], repeat: number, seed: number, caPem: string): MeasureRequest {
  const browser = page.browser ?? null;
  const names = page.hosts.filter((h) => h.kind === 'name' && h.name !== page.host);
  // As the lab's browsers ask: no IPv6 route, Firefox without HTTPS-First (pages load as recorded).
  const qtypes = (name: string) => pageHostQtypes(browser, page, name, { ipv6: false, httpsFirst: false });
  const starts = lookupStarts(page);
  const hosts = [
    { name: page.host, firstNeededMs: 0, qtypes: qtypes(page.host) },
    ...names.map((h) => ({ name: h.name, firstNeededMs: starts.get(h.name) ?? replayAt(h.firstNeededMs), qtypes: qtypes(h.name) })),
  ];
  const endpoints: EndpointSpec[] = [{ transport: 'udp', address: SERVER, port: REPLAY_PORTS.dns }];
  for (const t of transports) {
    if (t === 'dot') endpoints.push({ transport: 'dot', address: SERVER, port: REPLAY_PORTS.tls, serverName: 'dns.test' });
    // Chromium's DoH asks with GET (its template has {?dns}), Firefox's TRR with POST.
    if (t === 'doh') endpoints.push({ transport: 'doh', address: SERVER, port: REPLAY_PORTS.https, serverName: 'dns.test', path: '/dns-query', method: browser === 'firefox' ? 'POST' : 'GET' });
    if (t === 'doq') endpoints.push({ transport: 'doq', address: SERVER, port: REPLAY_PORTS.tls, serverName: 'dns.test' });
  }
  return {
    id: 1, type: 'measure', hosts, resolvers: [{ id: 'lab', name: 'lab', ca: caPem, endpoints }], modes, repeat,
    // CoreDNS answers the zone itself (no recursion, no cache): there is nothing to prime.
    prime: false, schedule: 'replay', seed,
  };
}

/** Replays `page` against the replay resolver; resolves with the records as the extension stores them. */
export async function replay(page: PageForCost & LookupStartsInput, transports: readonly Candidate[], modes: Mode[], repeat: number, seed: number, caPem: string): Promise<StoredRecord[]> {
  const result = await measure(replayRequest(page, transports, modes, repeat, seed, caPem));
  if (result.unavailable.length) throw new Error(`replay: ${result.unavailable.map((u) => `${u.transport}: ${u.message}`).join('; ')}`);
  return result.records.map(storedRecord);
}
