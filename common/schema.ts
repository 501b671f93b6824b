// The one message schema between the extension and the native host. Requests are validated on entry with valibot
// (small: its whole cost in the host's memory is about 3 MB); replies are typed here so both ends compile against
// the same shapes.
import * as v from 'valibot';
import { CODES, type ErrorCode, type Failure } from './errors.js';
import type { ExchangeRecord } from './record.js';
import type { Summary } from './stats.js';
import { MODES, QTYPES, TRANSPORT_IDS, type Mode, type QType, type TransportId } from './transports.js';
import { WITHHELD_REASONS, type Withheld } from './name-privacy.js';
import { resolverProbes, type ResolverProbe } from './probe.js';
import { EDGE_PORTS, edgeRows, type EdgeRow } from './edges.js';

/** Version of this message protocol; the extension refuses a host whose major differs. */
export const PROTOCOL_VERSION = 2;

/** Most hosts one measure request may name (a hostile page must not turn the host into a scanner). */
export const MAX_HOSTS_PER_REQUEST = 500;
/** Most resolvers one request may name. */
export const MAX_RESOLVERS_PER_REQUEST = 16;
/** Most repetitions of each exchange. */
export const MAX_REPEAT = 10_000;
/**
 * Most measured exchanges one request may ask (questions × modes × repeats × endpoints): the extension's plan for a
 * page of 300 hosts asking 2 types, cold and warm, 3 repeats, against 13 endpoints is 46,800.
 */
export const MAX_EXCHANGES_PER_REQUEST = 50_000;
/** Largest frame either side sends: the browser refuses host → browser messages over 1 MiB. */
export const MAX_FRAME_BYTES = 1024 * 1024;

const str = (min: number, max: number) => v.pipe(v.string(), v.minLength(min), v.maxLength(max));
const int = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));
const id = v.union([str(1, 128), int(0, Number.MAX_SAFE_INTEGER)]);
/** True for an IP literal, IPv6 with an optional `%zone` (a link-local server names its interface). */
export function isIpLiteral(text: string): boolean {
  const [address, zone] = text.split('%', 2) as [string, string | undefined];
  if (!v.is(ipSchema, address)) return false;
  return zone === undefined || (address.includes(':') && /^[\w.-]{1,32}$/.test(zone));
}
const ipSchema = v.pipe(v.string(), v.ip());
const list = <T extends v.GenericSchema>(item: T, min: number, max: number) => v.pipe(v.array(item), v.minLength(min), v.maxLength(max));

/** One resolver endpoint: a transport at an address, with the name its certificate must carry. */
export const endpointSpec = v.strictObject({
  transport: v.picklist(TRANSPORT_IDS),
  /** Where to connect: always an IP literal (an IPv6 link-local one with its `%zone`), so measuring never needs a lookup of its own. */
  address: v.pipe(v.string(), v.maxLength(80), v.check((a) => isIpLiteral(a), 'an IP address')),
  port: int(1, 65535),
  /** TLS server name (SNI and certificate check); defaults to the address. */
  serverName: v.optional(str(1, 253)),
  /** DoH path (RFC 8484 URI template without variables). */
  path: v.optional(v.pipe(str(1, 512), v.startsWith('/'))),
  /** DoH method; browsers use POST (Firefox) or GET (Chromium). */
  method: v.optional(v.picklist(['POST', 'GET'])),
});
export type EndpointSpec = v.InferOutput<typeof endpointSpec>;

/** A resolver as the person configured it: an id, a display name, its endpoints and any extra trusted CA. */
export const resolverSpec = v.strictObject({
  id: v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/)),
  name: str(1, 128),
  endpoints: list(endpointSpec, 1, 16),
  /** Extra trusted CA certificates (PEM), e.g. the lab's. */
  ca: v.optional(str(1, 64 * 1024)),
});
export type ResolverSpec = v.InferOutput<typeof resolverSpec>;

/** How a measurement issues its lookups: one at a time, or as the page asked for them (see `schedule` below). */
export const SCHEDULES = ['sequential', 'replay'] as const;

/**
 * A host a page needed and, for replay, when it first needed it (ms since navigation start) and which record types the
 * recording browser asked for it (common/browser-queries.ts; default the request's `qtypes`).
 */
export const hostSpec = v.union([
  str(0, 300),
  v.strictObject({
    name: str(0, 300),
    firstNeededMs: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(3_600_000))),
    qtypes: v.optional(list(v.picklist(QTYPES), 1, QTYPES.length)),
    /** Addresses the browser reached the host at: a non-global one keeps the name from global resolvers (common/name-privacy.ts). */
    reached: v.optional(list(ipSchema, 0, 8)),
    /** The port the browser reached it on: where the CDN check (`edges`) connects. */
    port: v.optional(v.picklist(EDGE_PORTS)),
  }),
]);
/** A host to look up, as the extension plans it, the request carries it and the engine replays it (a bare name is one at 0). */
export type HostSpec = Exclude<v.InferOutput<typeof hostSpec>, string>;

const helloRequest = v.strictObject({ id, type: v.literal('hello') });

const measureRequest = v.strictObject({
  id,
  type: v.literal('measure'),
  hosts: list(hostSpec, 1, MAX_HOSTS_PER_REQUEST),
  resolvers: list(resolverSpec, 1, MAX_RESOLVERS_PER_REQUEST),
  /** Only these transports of the resolvers' endpoints (default: all of them). */
  transports: v.optional(list(v.picklist(TRANSPORT_IDS), 1, TRANSPORT_IDS.length)),
  qtypes: v.optional(list(v.picklist(QTYPES), 1, QTYPES.length)),
  modes: v.optional(list(v.picklist(MODES), 1, MODES.length)),
  repeat: v.optional(int(1, MAX_REPEAT)),
  /** Ask every name once over UDP first so no transport pays for filling the resolver's cache. */
  prime: v.optional(v.boolean()),
  /**
   * One untimed, unreported cold exchange per endpoint first (default true): the first exchange of a process
   * otherwise pays 1–10 ms of code loading and JIT compilation that no later one pays.
   */
  warmup: v.optional(v.boolean()),
  /** Cold connections resume the endpoint's last TLS session (as a browser would after its first visit). */
  resume: v.optional(v.boolean()),
  /** Seed for the order of transports and endpoints; a random one is chosen and reported if absent. */
  seed: v.optional(int(0, 0xffffffff)),
  timeoutMs: v.optional(int(100, 60_000)),
  /**
   * `sequential` (default): one exchange at a time. `replay`: per repeat, mode and endpoint, every host × qtype
   * lookup starts at its host's `at` (0 for plain strings), concurrently, on one connection per endpoint as a
   * browser would, so head-of-line blocking and multiplexing show.
   */
  schedule: v.optional(v.picklist(SCHEDULES)),
  /**
   * The person's lab setting: special-use names (.test, .localhost, …) may go to resolvers on non-global addresses.
   * Without it they go nowhere (common/name-privacy.ts).
   */
  lab: v.optional(v.boolean()),
  /**
   * No name may go out in clear text (the page went through a proxy: its browser resolved none of its names through the
   * person's DNS): the host refuses plain-DNS endpoints and asks no plain resolver for the split-horizon check.
   */
  noCleartext: v.optional(v.boolean()),
  /** Send each exchange's answer records (default false: the extension does not need them; capped either way). */
  answers: v.optional(v.boolean()),
  /**
   * After the replays, time a TCP handshake with the address each resolver gave and the one the browser reached, for
   * hosts with `reached` and `port` (common/edges.ts); never with `noCleartext` (the browser reached no address itself).
   */
  edges: v.optional(v.boolean()),
});

const cancelRequest = v.strictObject({ id, type: v.literal('cancel'), target: id });

/**
 * What each resolver can do (native-host/src/probe/): fixed public names only (common/probe.ts), never a page's; with
 * `noCleartext`, or while the browser encrypts its DNS, only the encrypted endpoints are asked.
 */
const probeRequest = v.strictObject({
  id,
  type: v.literal('probe'),
  resolvers: list(resolverSpec, 1, MAX_RESOLVERS_PER_REQUEST),
  noCleartext: v.optional(v.boolean()),
});

/** Every request the host accepts. */
export const request = v.variant('type', [helloRequest, measureRequest, cancelRequest, probeRequest]);
/** The request types there are (a request of any other type is unknown-type, not a bad request). */
export const REQUEST_TYPES: ReadonlySet<string> = new Set(request.options.map((o) => o.entries.type.literal));
export type Request = v.InferOutput<typeof request>;
export type RequestType = Request['type'];
export type RequestOf<T extends RequestType> = Extract<Request, { type: T }>;
export type MeasureRequest = RequestOf<'measure'>;
export type RequestId = v.InferOutput<typeof id>;

/** Validates a request: the request, or the problems as `path: message` lines (at most five). */
export function parseRequest(value: unknown): { ok: true; request: Request } | { ok: false; problems: string[] } {
  const result = v.safeParse(request, value);
  if (result.success) return { ok: true, request: result.output };
  return {
    ok: false,
    problems: result.issues.slice(0, 5).map((i) => `${(i.path ?? []).map((p) => String(p.key)).join('.') || '(request)'}: ${i.message}`),
  };
}

/** True when `value` is a valid resolver spec. */
export function isResolverSpec(value: unknown): value is ResolverSpec {
  return v.is(resolverSpec, value);
}

/** Statistics for one (resolver, transport, mode, qtype) cell of a measurement. */
export interface SummaryRow {
  resolver: string;
  endpoint: string;
  transport: TransportId;
  mode: Mode;
  qtype: QType;
  total: Summary;
  query: Summary;
  ok: number;
  failed: number;
  bytesPerExchange: Summary;
}

/** An endpoint a measurement left out because its transport cannot run here (e.g. doq/doh3 without the QUIC companion). */
export interface UnavailableEndpoint {
  resolver: string;
  endpoint: string;
  transport: TransportId;
  code: 'transport-unavailable';
  message: string;
}

/**
 * The person's current DNS as the host found it on this machine (native-host/src/current-dns/): the servers their
 * lookups go to (behind a local caching stub, the stub's upstreams), the stub itself, and whether that path is
 * already encrypted. The extension measures it by default and uses it as the baseline.
 */
export interface CurrentDns {
  /** Where it was read: a file or a command (`/etc/resolv.conf`, `resolvectl status`, `scutil --dns`, …). */
  source: string;
  servers: Array<{ address: string; port: number; tlsName?: string }>;
  /** The search domains (names under them are the person's own network's). */
  search: string[];
  /**
   * Domains the system sends to servers of their own (split DNS: a VPN's supplemental resolvers on macOS, Windows NRPT
   * rules, systemd-resolved's routing domains `~corp.example`): their names are private to the network, never asked
   * of a global resolver. Absent from hosts that predate it.
   */
  splitDomains?: string[];
  /** A caching stub on this machine that the browser's lookups go through, and which software it is. */
  stub: { address: string; software: string } | null;
  /** The stub already speaks an encrypted transport upstream (e.g. systemd-resolved with DNSOverTLS=yes). */
  encrypted: { transport: TransportId; by: string; opportunistic: boolean } | null;
  /**
   * How long the system's stub waits before it asks a lost Do53 query again (ms), where the browser's lookups go from
   * it straight to the servers: glibc's resolv.conf `timeout:` (5 s unless set), the Windows DNS Client's first 1 s;
   * null where a caching stub between asks on a timer of its own. Absent from hosts that predate it.
   */
  retryMs?: number | null;
  /** For people: "your current DNS (192.168.1.1, through systemd-resolved on 127.0.0.53)". */
  description: string;
}

/**
 * The DNS over HTTPS of the browser that started the host (native-host/src/current-dns/browser-doh.ts): where its
 * secure DNS is on, its lookups do not go to the current DNS in plain text, and a switch to DoH already happened.
 */
export interface BrowserDoh {
  browser: 'chromium' | 'firefox';
  /** For people: "Chromium", "Google Chrome", "Microsoft Edge", "Firefox", … */
  product: string;
  /** Chromium's DnsOverHttpsMode; Firefox's network.trr.mode 2 is `automatic`, 3 `secure`, everything else `off`. */
  mode: 'off' | 'automatic' | 'secure';
  /** The browser's lookups go over DoH now: secure; automatic with a template or an upgraded provider; Firefox's mode 2. */
  active: boolean;
  /** The DoH URI templates in force (RFC 8484 §4.1); empty when the browser's own default, which is not guessed. */
  templates: string[];
  /** Where the mode was read: a policy file or key, `Local State`, `prefs.js`/`user.js`, or `default`. */
  source: string;
  /** Who set it: an administrator's policy, the person's settings, Mozilla's DoH rollout, or the browser's default. */
  setBy: 'policy' | 'settings' | 'rollout' | 'default';
  /** Lookups may still go over plain DNS when DoH fails (automatic modes); false in secure mode and when off. */
  fallback: boolean;
  /** Chromium's automatic mode: the system's DNS server whose provider's DoH it upgrades to; null otherwise. */
  upgradedFrom: string | null;
  /**
   * The browser's DoH server as an endpoint (its first template, at the address the host found for it), when it is
   * active and known: the baseline while the browser encrypts, and where the split-horizon check goes then. Absent
   * from hosts that predate it.
   */
  endpoint?: EndpointSpec | null;
  /**
   * Chromium only: where the browser was found to send its requests through a proxy (a policy, its command line, the
   * system's settings); absent or null when direct. Its names are then resolved by the proxy, never by the person's
   * DNS, so nothing may go there in clear text (Firefox says so per page instead: PageRecord.proxied).
   */
  proxy?: string | null;
}

/** Limits of a BrowserDoh in a hello (the host clips to them, so one odd setting cannot make the hello invalid). */
export const BROWSER_DOH_LIMITS = { templates: 8, template: 1024, source: 512, product: 64 } as const;

/** Which network a measurement ran on: a fingerprint and what it is made of, for the person. */
export interface NetworkInfo {
  /** NETWORK_ID: 16 hex digits, the same on the same network. */
  id: string;
  /** The gateway, subnets and resolvers it was made of (at most MAX_NETWORK_DESCRIPTION characters). */
  description: string;
}

/** A well-formed NetworkInfo id. */
export const NETWORK_ID = /^[0-9a-f]{16}$/;
export const MAX_NETWORK_DESCRIPTION = 200;

/** The network of a `done` reply, when it is well formed (the extension takes nothing else from the host unchecked). */
export function networkInfo(value: unknown): NetworkInfo | null {
  const n = value as Partial<NetworkInfo> | null;
  return typeof n === 'object' && n !== null && typeof n.id === 'string' && NETWORK_ID.test(n.id) && typeof n.description === 'string'
    ? { id: n.id, description: n.description.slice(0, MAX_NETWORK_DESCRIPTION) }
    : null;
}

/** Every reply the host sends; each echoes the request's id. */
export type Reply =
  | { id: RequestId | null; type: 'hello'; version: string; protocol: number; transports: TransportId[]; currentDns?: CurrentDns; ipv6?: boolean; browserDoh?: BrowserDoh | null }
  | { id: RequestId; type: 'progress'; done: number; total: number }
  | { id: RequestId; type: 'records'; records: ExchangeRecord[] }
  | {
      id: RequestId;
      type: 'done';
      seed: number;
      primed: boolean;
      warmedUp: boolean;
      order: string[];
      exchanges: number;
      cancelled: boolean;
      summary: SummaryRow[];
      /** Endpoints left out because their transport cannot run in this installation (not failures); absent when none. */
      unavailable?: UnavailableEndpoint[];
      /** The network the machine was on when it started (native-host/src/network.ts); absent when there is none to tell. */
      network?: NetworkInfo;
      /** Names the host kept from the resolvers, and why (common/name-privacy.ts); absent when none. */
      withheld?: Array<{ name: string; reason: Withheld }>;
      /** The CDN check's rows when the request asked for `edges` (common/edges.ts). */
      edges?: EdgeRow[];
    }
  | { id: RequestId; type: 'probe-result'; resolvers: ResolverProbe[]; plainLeftOut: boolean }
  | ({ id: RequestId | null; type: 'error' } & Failure<ErrorCode>);

// Replies, validated where they enter the extension (extension/src/background/host-connection.ts). What the extension
// reads and stores is checked field by field; what it never reads (answers, layers, TLS details, events) passes
// unchecked and is dropped by storedRecord (common/cost-model.ts) before anything is stored.
const finite = v.pipe(v.number(), v.finite());
const count = v.pipe(v.number(), v.integer(), v.minValue(0));
const pair = v.object({ sent: count, received: count });
const msOrNull = v.nullable(finite);
const summary = v.object({ n: count, median: msOrNull, p5: msOrNull, p95: msOrNull, mean: msOrNull, rsd: msOrNull, min: msOrNull, max: msOrNull });
const replyId = v.nullable(id);
const exchangeRecord = v.looseObject({
  host: str(1, 300),
  qtype: v.picklist(QTYPES),
  transport: v.picklist(TRANSPORT_IDS),
  endpoint: str(1, 1024),
  resolver: str(1, 128),
  mode: v.picklist(MODES),
  repeat: int(0, MAX_REPEAT),
  ok: v.boolean(),
  rcode: v.nullable(str(1, 32)),
  error: v.nullable(v.looseObject({ code: v.picklist(Object.values(CODES)), message: v.string() })),
  timings: v.object({ connect: msOrNull, tls: msOrNull, query: msOrNull, total: finite }),
  startedAt: finite,
  bytes: pair,
  packets: pair,
  replay: v.optional(v.object({ pageStartedAt: finite, firstNeededMs: finite, endedAt: finite, waitedForConnection: msOrNull, paidSetup: v.boolean(), sharedWith: count })),
  ttl: v.optional(v.nullable(v.pipe(count, v.maxValue(2 ** 31 - 1)))),
});
const replySchema = v.variant('type', [
  v.looseObject({
    id: replyId,
    type: v.literal('hello'),
    version: str(1, 64),
    protocol: int(0, 1_000_000),
    transports: v.array(v.string()),
    ipv6: v.optional(v.boolean()),
    currentDns: v.optional(v.object({
      source: str(1, 200),
      servers: v.pipe(v.array(v.object({ address: v.pipe(v.string(), v.check(isIpLiteral, 'an IP address')), port: int(1, 65535), tlsName: v.optional(str(1, 253)) })), v.maxLength(32)),
      search: v.pipe(v.array(str(1, 253)), v.maxLength(32)),
      splitDomains: v.optional(v.pipe(v.array(str(1, 253)), v.maxLength(64))),
      stub: v.nullable(v.object({ address: v.pipe(v.string(), v.ip()), software: str(1, 64) })),
      encrypted: v.nullable(v.object({ transport: v.picklist(TRANSPORT_IDS), by: str(1, 64), opportunistic: v.boolean() })),
      retryMs: v.optional(v.nullable(int(0, 60_000))),
      description: str(1, 300),
    })),
    // Absent from hosts that predate it; null when no browser started the host (a terminal, doctor, a test). One that
    // does not check is taken as null: an optional fact about the browser must not cost the connection.
    browserDoh: v.optional(v.fallback(v.nullable(v.object({
      browser: v.picklist(['chromium', 'firefox']),
      product: str(1, BROWSER_DOH_LIMITS.product),
      mode: v.picklist(['off', 'automatic', 'secure']),
      active: v.boolean(),
      templates: v.pipe(v.array(str(1, BROWSER_DOH_LIMITS.template)), v.maxLength(BROWSER_DOH_LIMITS.templates)),
      source: str(1, BROWSER_DOH_LIMITS.source),
      setBy: v.picklist(['policy', 'settings', 'rollout', 'default']),
      fallback: v.boolean(),
      upgradedFrom: v.nullable(v.pipe(v.string(), v.check(isIpLiteral, 'an IP address'))),
      // An endpoint that does not check is dropped alone: the rest still says the browser encrypts.
      endpoint: v.optional(v.fallback(v.nullable(endpointSpec), null)),
      proxy: v.optional(v.fallback(v.nullable(str(1, BROWSER_DOH_LIMITS.source)), null)),
    })), null)),
  }),
  v.object({ id, type: v.literal('progress'), done: count, total: count }),
  v.object({ id, type: v.literal('records'), records: v.array(exchangeRecord) }),
  v.looseObject({
    id,
    type: v.literal('done'),
    seed: count,
    primed: v.boolean(),
    warmedUp: v.boolean(),
    order: v.array(v.string()),
    exchanges: count,
    cancelled: v.boolean(),
    summary: v.array(v.looseObject({
      resolver: str(1, 128), endpoint: str(1, 1024), transport: v.picklist(TRANSPORT_IDS), mode: v.picklist(MODES), qtype: v.picklist(QTYPES),
      total: summary, query: summary, ok: count, failed: count, bytesPerExchange: summary,
    })),
    withheld: v.optional(v.array(v.strictObject({ name: str(0, 300), reason: v.picklist(WITHHELD_REASONS) }))),
    // Rows that do not check are dropped, not the measurement with them.
    edges: v.optional(v.fallback(edgeRows, [])),
  }),
  v.object({ id, type: v.literal('probe-result'), resolvers: resolverProbes, plainLeftOut: v.boolean() }),
  // `ok: false` makes it the one failure shape; a host from before it was sent is read the same way.
  v.looseObject({ id: replyId, type: v.literal('error'), ok: v.optional(v.literal(false), false), code: v.picklist(Object.values(CODES)), message: v.string() }),
]);

/**
 * Validates a host reply: the reply, or the problems (at most five `path: message` lines). A hello's transports are
 * not filtered here (the extension keeps the ids it knows); a done's network is checked by networkInfo.
 */
export function parseReply(value: unknown): { ok: true; reply: Reply } | { ok: false; problems: string[] } {
  const result = v.safeParse(replySchema, value);
  // The schema checks every field the extension reads; the rest of each record is the host's and passes through.
  if (result.success) return { ok: true, reply: result.output as unknown as Reply };
  return { ok: false, problems: result.issues.slice(0, 5).map((i) => `${(i.path ?? []).map((p) => String(p.key)).join('.') || '(reply)'}: ${i.message}`) };
}

/** Handler table typed over the union: compilation fails when a request type lacks a handler. */
export type Handlers<Ctx> = { [T in RequestType]: (req: RequestOf<T>, ctx: Ctx) => Promise<void> | void };
