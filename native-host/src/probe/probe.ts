// `dnscost-host probe`: what a resolver can do, item by item, asked of the resolver itself (Böttger et al. Table 2
// did this by hand for public DoH servers). Each check is one small exchange or handshake with a bound on its time;
// nothing here is timed for the cost model and nothing the measuring engine does changes.
import http2 from 'node:http2';
import https from 'node:https';
import net from 'node:net';
import { PROBE_ITEMS, type ProbeItem, type ProbeNames, type ProbeRow } from '../../../common/probe.js';
import type { EndpointSpec, ResolverSpec } from '../../../common/schema.js';
import { isEncrypted, TRANSPORT_IDS, TRANSPORTS, type TransportId } from '../../../common/transports.js';
import { monotonic } from '../dial.js';
import { randomId } from '../dns-wire.js';
import { endpointUrl } from '../endpoints.js';
import { REGISTRY } from '../transports/registry.js';
import type { Session } from '../transports/transport.js';
import { handshake, verifiedTls, type TlsVersion } from './tls.js';
import { encodeProbeQuery, readProbeAnswer, type ProbeAnswer, type ProbeQuery } from './wire.js';

export interface ProbeOptions {
  names: ProbeNames;
  /** Bound on each check (handshake or exchange). */
  timeoutMs: number;
}

/** The documentation prefix (RFC 5737) the ECS check sends: never the person's own subnet. */
export const PROBE_SUBNET = '192.0.2.0';

// What each check applies to, read from the transport table: TLS over TCP (DoT, DoH/2, DoH/1.1), DoH over TCP, QUIC.
const tlsOverTcp = (t: TransportId): boolean => TRANSPORTS[t].encrypted && !TRANSPORTS[t].quic;
const dohOverTcp = (t: TransportId): boolean => TRANSPORTS[t].doh && !TRANSPORTS[t].quic;
const overQuic = (t: TransportId): boolean => TRANSPORTS[t].quic;
/** Which endpoint carries the resolver-wide checks: the table's order, plain DNS first, as the least in the way. */
const PREFERENCE: readonly TransportId[] = TRANSPORT_IDS;
const ENCRYPTED: readonly TransportId[] = TRANSPORT_IDS.filter(isEncrypted);
const VERSIONS: [ProbeItem, TlsVersion][] = [['tls-1.0', 'TLSv1'], ['tls-1.1', 'TLSv1.1'], ['tls-1.2', 'TLSv1.2'], ['tls-1.3', 'TLSv1.3']];
const TICKET_WAIT_MS = 1000;
/** RFC 8467 §4.1: servers pad responses to a multiple of 468 octets. */
const PAD_BLOCK = 468;

const yes = (item: ProbeItem, endpoint: string | null, detail: string): ProbeRow => ({ item, endpoint, result: 'yes', detail });
const no = (item: ProbeItem, endpoint: string | null, detail: string): ProbeRow => ({ item, endpoint, result: 'no', detail });

/** Opens a session on `endpoint`, runs `fn` on it, closes it. */
async function withSession<T>(endpoint: EndpointSpec, ca: string | undefined, o: ProbeOptions, fn: (s: Session) => Promise<T>, tlsSession?: Buffer): Promise<T> {
  const session = await REGISTRY[endpoint.transport].open(endpoint, { timeoutMs: o.timeoutMs, clock: monotonic, ...(ca ? { ca } : {}), ...(tlsSession ? { tlsSession } : {}) });
  try {
    return await fn(session);
  } finally {
    session.close();
  }
}

/** Sends one probe query over `session`. */
async function ask(session: Session, endpoint: EndpointSpec, q: ProbeQuery, o: ProbeOptions): Promise<ProbeAnswer> {
  const id = REGISTRY[endpoint.transport].zeroId ? 0 : randomId();
  return readProbeAnswer(await session.exchange(encodeProbeQuery(q, id), id, o.timeoutMs), id);
}

/** Asks one query on a fresh session. */
function askOnce(endpoint: EndpointSpec, ca: string | undefined, q: ProbeQuery, o: ProbeOptions): Promise<ProbeAnswer> {
  return withSession(endpoint, ca, o, (s) => ask(s, endpoint, q, o));
}

const message = (err: unknown): string => (err as Error)?.message ?? String(err);

/** Runs `check`; an exception becomes an `error` row (the check could not run), never a `no`. */
async function guarded(item: ProbeItem, endpoint: string | null, check: () => Promise<ProbeRow>): Promise<ProbeRow> {
  try {
    return await check();
  } catch (err) {
    return { item, endpoint, result: 'error', detail: message(err) };
  }
}

/** A query refused on the wire (timeout, an HTTP error, a closed connection) is an answer of "no" for that item. */
async function answered(item: ProbeItem, url: string | null, run: () => Promise<ProbeAnswer>, judge: (a: ProbeAnswer) => ProbeRow): Promise<ProbeRow> {
  let a: ProbeAnswer;
  try {
    a = await run();
  } catch (err) {
    return no(item, url, message(err));
  }
  return judge(a);
}

/** The rows of one endpoint: it answers, and what its TLS, HTTP and QUIC layers offer. */
async function endpointRows(e: EndpointSpec, ca: string | undefined, o: ProbeOptions): Promise<ProbeRow[]> {
  // An https URL is both DoH/2's and DoH/1.1's: the row says which.
  const url = endpointUrl(e) + (e.transport === 'doh1' ? ' (HTTP/1.1)' : '');
  const t = REGISTRY[e.transport];
  const unavailable = t.unavailable?.();
  if (unavailable) return [{ item: 'answers', endpoint: url, result: 'error', detail: unavailable }];
  await t.prepare?.({ ...(ca ? { ca } : {}) });
  const rows: ProbeRow[] = [];
  const q: ProbeQuery = { questions: [{ name: o.names.name, type: 'A' }] };
  let tlsInfo: Session['tls'] = null;
  rows.push(await answered('answers', url, () => withSession(e, ca, o, async (s) => {
    const a = await ask(s, e, q, o);
    tlsInfo = s.tls;
    return a;
  }), (a) => (a.rcode === 'NOERROR' ? yes('answers', url, `${a.rcode}, ${a.answerTypes.length} records`) : no('answers', url, a.rcode))));
  if (tlsOverTcp(e.transport)) {
    for (const [item, version] of VERSIONS) {
      rows.push(await guarded(item, url, async () => {
        const h = await handshake(e, { ca, version, timeoutMs: o.timeoutMs });
        return h.ok && h.version === version ? yes(item, url, h.version) : no(item, url, h.ok ? `agreed ${h.version}` : h.error);
      }));
    }
  }
  if (dohOverTcp(e.transport)) {
    // Offered alone, chosen, and then DoH over it answers: a server may choose http/1.1 and serve only h2 (unbound).
    for (const [item, alpn, transport] of [['alpn-h2', 'h2', 'doh'], ['alpn-http/1.1', 'http/1.1', 'doh1']] as const) {
      rows.push(await guarded(item, url, async () => {
        const h = await handshake(e, { ca, alpn: [alpn], timeoutMs: o.timeoutMs });
        if (!h.ok || h.alpn !== alpn) return no(item, url, h.ok ? `offered only ${alpn}: ${h.alpn ?? 'none'} chosen` : h.error);
        return answered(item, url, () => askOnce({ ...e, transport }, ca, q, o), (a) => yes(item, url, `chosen; DoH over it answered ${a.rcode}`));
      }));
    }
  }
  if (e.transport === 'doh3') {
    const info = tlsInfo as Session['tls'];
    rows.push(info?.alpn === 'h3' ? yes('alpn-h3', url, 'DoH over HTTP/3 answered') : no('alpn-h3', url, info ? `ALPN ${info.alpn ?? 'none'}` : 'no answer over HTTP/3'));
  }
  if (TRANSPORTS[e.transport].doh) {
    for (const [item, method] of [['doh-get', 'GET'], ['doh-post', 'POST']] as const) {
      rows.push(await answered(item, url, () => askOnce({ ...e, method }, ca, q, o), (a) => (a.rcode === 'NOERROR' ? yes(item, url, `${method} answered`) : no(item, url, `${method}: ${a.rcode}`))));
    }
  }
  if (dohOverTcp(e.transport)) rows.push(await guarded('dns-json', url, () => dnsJson(e, ca, o, url)));
  if (tlsOverTcp(e.transport)) rows.push(await guarded('resumption', url, () => tcpResumption(e, ca, o, url)));
  if (overQuic(e.transport)) rows.push(...(await quicResumption(e, ca, o, url)));
  return rows;
}

/** A TLS 1.3 ticket from a first handshake, offered on a second. */
async function tcpResumption(e: EndpointSpec, ca: string | undefined, o: ProbeOptions, url: string): Promise<ProbeRow> {
  const alpn = e.transport === 'dot' ? ['dot'] : ['h2', 'http/1.1'];
  const first = await handshake(e, { ca, alpn, ticketWaitMs: TICKET_WAIT_MS, timeoutMs: o.timeoutMs });
  if (!first.ok) return no('resumption', url, first.error);
  if (!first.session) return no('resumption', url, `no session ticket within ${TICKET_WAIT_MS} ms of the handshake`);
  const second = await handshake(e, { ca, alpn, session: first.session, timeoutMs: o.timeoutMs });
  if (!second.ok) return no('resumption', url, second.error);
  return second.resumed ? yes('resumption', url, `${second.version} session resumed`) : no('resumption', url, 'ticket offered, full handshake again');
}

/** QUIC: a second connection resuming the first's session, its query in 0-RTT (GET for DoH3, the 0-RTT-safe method). */
async function quicResumption(e: EndpointSpec, ca: string | undefined, o: ProbeOptions, url: string): Promise<ProbeRow[]> {
  const endpoint: EndpointSpec = e.transport === 'doh3' ? { ...e, method: 'GET' } : e;
  const q: ProbeQuery = { questions: [{ name: o.names.name, type: 'A' }] };
  try {
    const ticket = await withSession(endpoint, ca, o, async (s) => {
      await ask(s, endpoint, q, o);
      return s.resumable();
    });
    if (!ticket) return [no('resumption', url, 'no session ticket'), no('0-rtt', url, 'no session ticket')];
    const info = await withSession(endpoint, ca, o, async (s) => {
      await ask(s, endpoint, q, o);
      return s.tls;
    }, ticket);
    return [
      info?.resumed ? yes('resumption', url, 'QUIC handshake resumed') : no('resumption', url, 'ticket offered, full handshake again'),
      info?.earlyData ? yes('0-rtt', url, 'query sent in 0-RTT, the server accepted early data') : no('0-rtt', url, info?.resumed ? '0-RTT rejected: the query went again after the handshake' : 'not resumed'),
    ];
  } catch (err) {
    return [no('resumption', url, message(err)), no('0-rtt', url, message(err))];
  }
}

/** `application/dns-json` (the JSON API some public resolvers offer beside RFC 8484) on the endpoint's path. */
async function dnsJson(e: EndpointSpec, ca: string | undefined, o: ProbeOptions, url: string): Promise<ProbeRow> {
  const base = (e.path ?? '/dns-query').split('?')[0]!.replace(/\{.*$/, '');
  const path = `${base}?name=${encodeURIComponent(o.names.name)}&type=A`;
  const serverName = e.serverName ?? e.address;
  const tlsOptions = verifiedTls(e, ca);
  // A connection the server will not serve over this HTTP version (closed, reset) is a no, as a refused query is.
  const reply = await new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${o.timeoutMs} ms`)), o.timeoutMs);
    const collect = (status: number, type: string, stream: NodeJS.ReadableStream, end: () => void) => {
      let body = '';
      stream.setEncoding('utf8');
      stream.on('data', (d: string) => { if (body.length < 65536) body += d; });
      stream.on('end', () => { clearTimeout(timer); end(); resolve({ status, type, body }); });
      stream.on('error', (err) => { clearTimeout(timer); end(); reject(err); });
    };
    if (e.transport === 'doh') {
      const client = http2.connect(`https://${net.isIPv6(e.address) ? `[${e.address}]` : e.address}:${e.port}`, tlsOptions);
      client.on('error', (err) => { clearTimeout(timer); client.destroy(); reject(err); });
      const req = client.request({ ':method': 'GET', ':path': path, ':authority': serverName, accept: 'application/dns-json' });
      req.on('response', (h) => collect(Number(h[':status']), String(h['content-type'] ?? ''), req, () => client.close()));
      req.on('error', (err) => { clearTimeout(timer); client.destroy(); reject(err); });
      req.end();
    } else {
      const req = https.request({ host: e.address, port: e.port, path, method: 'GET', headers: { host: serverName, accept: 'application/dns-json' }, agent: false, ...tlsOptions }, (res) => collect(res.statusCode ?? 0, String(res.headers['content-type'] ?? ''), res, () => {}));
      req.on('error', (err) => { clearTimeout(timer); reject(err); });
      req.end();
    }
  }).catch((err: unknown) => message(err));
  if (typeof reply === 'string') return no('dns-json', url, reply);
  let status: unknown;
  try {
    status = (JSON.parse(reply.body) as { Status?: unknown }).Status;
  } catch {
    status = undefined;
  }
  if (reply.status === 200 && /json/.test(reply.type) && typeof status === 'number') return yes('dns-json', url, `HTTP 200, ${reply.type}, Status ${status}`);
  return no('dns-json', url, `HTTP ${reply.status}${reply.type ? `, ${reply.type}` : ''}`);
}

/** The rows about the resolver as a whole, each asked over one of its endpoints. */
async function resolverRows(endpoints: EndpointSpec[], ca: string | undefined, o: ProbeOptions): Promise<ProbeRow[]> {
  const usable = endpoints.filter((e) => !REGISTRY[e.transport].unavailable?.());
  const pick = (order: readonly TransportId[]) => order.map((t) => usable.find((e) => e.transport === t)).find((e) => e !== undefined);
  const plain = pick(PREFERENCE);
  const encrypted = pick(ENCRYPTED);
  const rows: ProbeRow[] = [];
  const na = (item: ProbeItem, why: string) => rows.push({ item, endpoint: null, result: 'n/a', detail: why });
  if (!plain) {
    for (const item of ['qdcount-2', 'padding', 'ede', 'ecs', 'ecs-upstream', 'dnssec', 'https-rr'] as const) na(item, 'no endpoint this build can reach');
    return rows;
  }
  const via = endpointUrl(plain);
  const n = o.names;
  rows.push(await answered('qdcount-2', via, () => askOnce(plain, ca, { questions: [{ name: n.name, type: 'A' }, { name: n.name, type: 'AAAA' }] }, o), (a) =>
    a.rcode === 'NOERROR' && a.questions === 2 ? yes('qdcount-2', via, 'both questions answered') : no('qdcount-2', via, `${a.rcode}, ${a.questions} question${a.questions === 1 ? '' : 's'} in the answer`)));
  if (encrypted) {
    const at = endpointUrl(encrypted);
    // Padding that hides the answer's size pads it to a block (RFC 8467 §4.1: 468 octets); an option copied back from
    // the query as it came hides nothing.
    rows.push(await answered('padding', at, () => askOnce(encrypted, ca, { questions: [{ name: n.name, type: 'A' }], pad: true }, o), (a) =>
      a.padded && a.bytes % PAD_BLOCK === 0 ? yes('padding', at, `answer padded to ${a.bytes} bytes, a multiple of ${PAD_BLOCK}`)
        : no('padding', at, a.padded ? `a padding option, but the answer is ${a.bytes} bytes: not padded to ${PAD_BLOCK}-octet blocks` : `padded query, answer of ${a.bytes} bytes without padding`)));
  } else na('padding', 'no encrypted endpoint');
  // Answers to the signed and the bogus name, with DO and AD set: DNSSEC and EDE are read from the same two.
  const signed = await askOnce(plain, ca, { questions: [{ name: n.signed, type: 'A' }], dnssec: true }, o).catch((err: unknown) => message(err));
  const bogus = await askOnce(plain, ca, { questions: [{ name: n.bogus, type: 'A' }], dnssec: true }, o).catch((err: unknown) => message(err));
  const ede = [signed, bogus].flatMap((a) => (typeof a === 'string' ? [] : a.ede));
  rows.push(ede.length
    ? yes('ede', via, ede.map((x) => `EDE ${x.code}${x.text ? ` "${x.text}"` : ''}`).join(', '))
    : no('ede', via, 'no Extended DNS Error on the signed or the bogus name'));
  rows.push(await answered('ecs', via, () => askOnce(plain, ca, { questions: [{ name: n.name, type: 'A' }], clientSubnet: PROBE_SUBNET }, o), (a) =>
    a.clientSubnetScope !== null ? yes('ecs', via, `client subnet ${PROBE_SUBNET}/24 echoed, scope /${a.clientSubnetScope}`) : no('ecs', via, 'no client subnet option in the answer')));
  // What the whoami name's authoritative server saw: the person's subnet, when the resolver sends it upstream (ECS).
  rows.push(await answered('ecs-upstream', via, () => askOnce(plain, ca, { questions: [{ name: n.whoami, type: 'TXT' }] }, o), (a) => {
    const sent = a.txt.map((x) => /^edns0-client-subnet (\S+)/.exec(x)?.[1]).find((x) => x !== undefined);
    if (sent) return yes('ecs-upstream', via, `${n.whoami}'s server saw client subnet ${sent}`);
    return a.txt.length ? no('ecs-upstream', via, `${n.whoami}'s server saw no client subnet (${a.txt.join(', ')})`)
      : { item: 'ecs-upstream', endpoint: via, result: 'n/a', detail: `${a.rcode}, no TXT answer for ${n.whoami}` };
  }));
  const describe = (a: ProbeAnswer | string, name: string) => (typeof a === 'string' ? `${name}: ${a}` : `${name}: ${a.rcode}${a.ad ? ', AD' : ''}`);
  const validates = typeof signed !== 'string' && signed.ad && signed.rcode === 'NOERROR' && typeof bogus !== 'string' && bogus.rcode === 'SERVFAIL';
  rows.push({ item: 'dnssec', endpoint: via, result: validates ? 'yes' : 'no', detail: `${describe(signed, n.signed)}; ${describe(bogus, n.bogus)}` });
  rows.push(await answered('https-rr', via, () => askOnce(plain, ca, { questions: [{ name: n.https, type: 'HTTPS' }] }, o), (a) =>
    a.https.length ? yes('https-rr', via, `${n.https} HTTPS ${a.https[0]}`) : no('https-rr', via, `${a.rcode}, no HTTPS record for ${n.https}`)));
  return rows;
}

/** Probes one resolver: its endpoints one after another, then the resolver-wide items. */
export async function probe(resolver: ResolverSpec, o: ProbeOptions): Promise<ProbeRow[]> {
  const rows: ProbeRow[] = [];
  for (const e of resolver.endpoints) rows.push(...(await endpointRows(e, resolver.ca, o)));
  rows.push(...(await resolverRows(resolver.endpoints, resolver.ca, o)));
  const order = (r: ProbeRow) => PROBE_ITEMS.indexOf(r.item);
  return rows.sort((a, b) => order(a) - order(b));
}
