// The one message schema between the extension and the native host. Requests are validated on entry with valibot
// (small: its whole cost in the host's memory is about 3 MB); replies are typed here so both ends compile against
// the same shapes.
import * as v from 'valibot';
import type { ErrorCode } from './errors.js';
import type { ExchangeRecord } from './record.js';
import type { Summary } from './stats.js';
import { MODES, QTYPES, TRANSPORT_IDS, type Mode, type QType, type TransportId } from './transports.js';

/** Version of this message protocol; the extension refuses a host whose major differs. */
export const PROTOCOL_VERSION = 1;

/** Most hosts one measure request may name (a hostile page must not turn the host into a scanner). */
export const MAX_HOSTS_PER_REQUEST = 500;
/** Most resolvers one request may name. */
export const MAX_RESOLVERS_PER_REQUEST = 16;
/** Most repetitions of each exchange. */
export const MAX_REPEAT = 10_000;
/** Largest frame either side sends: the browser refuses host → browser messages over 1 MiB. */
export const MAX_FRAME_BYTES = 1024 * 1024;

const str = (min: number, max: number) => v.pipe(v.string(), v.minLength(min), v.maxLength(max));
const int = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));
const id = v.union([str(1, 128), int(0, Number.MAX_SAFE_INTEGER)]);
const list = <T extends v.GenericSchema>(item: T, min: number, max: number) => v.pipe(v.array(item), v.minLength(min), v.maxLength(max));

/** One resolver endpoint: a transport at an address, with the name its certificate must carry. */
export const endpointSpec = v.strictObject({
  transport: v.picklist(TRANSPORT_IDS),
  /** Where to connect: always an IP literal, so measuring never needs a DNS lookup of its own. */
  address: v.pipe(v.string(), v.ip()),
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
export type Schedule = (typeof SCHEDULES)[number];

/** A host a page needed and, for replay, when it first needed it (ms since navigation start). */
export const hostSpec = v.union([
  str(0, 300),
  v.strictObject({ name: str(0, 300), at: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(3_600_000))) }),
]);

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
});

const cancelRequest = v.strictObject({ id, type: v.literal('cancel'), target: id });

/** Every request the host accepts. */
export const request = v.variant('type', [helloRequest, measureRequest, cancelRequest]);
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
  | { id: RequestId | null; type: 'hello'; version: string; protocol: number; transports: TransportId[] }
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
    }
  | { id: RequestId | null; type: 'error'; code: ErrorCode; message: string };

/** Handler table typed over the union: compilation fails when a request type lacks a handler. */
export type Handlers<Ctx> = { [T in RequestType]: (req: RequestOf<T>, ctx: Ctx) => Promise<void> | void };
