// The one message schema between the extension and the native host. Requests are validated on entry with zod;
// replies are typed here so both ends compile against the same shapes.
import { z } from 'zod';
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
export const MAX_REPEAT = 1000;
/** Largest frame either side sends: the browser refuses host → browser messages over 1 MiB. */
export const MAX_FRAME_BYTES = 1024 * 1024;

const id = z.union([z.string().min(1).max(128), z.number().int().nonnegative()]);
const ipLiteral = z.union([z.ipv4(), z.ipv6()]);

/** One resolver endpoint: a transport at an address, with the name its certificate must carry. */
export const endpointSpec = z.strictObject({
  transport: z.enum(TRANSPORT_IDS),
  /** Where to connect: always an IP literal, so measuring never needs a DNS lookup of its own. */
  address: ipLiteral,
  port: z.number().int().min(1).max(65535),
  /** TLS server name (SNI and certificate check); defaults to the address. */
  serverName: z.string().min(1).max(253).optional(),
  /** DoH path (RFC 8484 URI template without variables). */
  path: z.string().startsWith('/').max(512).optional(),
  /** DoH method; browsers use POST (Firefox) or GET (Chromium). */
  method: z.enum(['POST', 'GET']).optional(),
});
export type EndpointSpec = z.infer<typeof endpointSpec>;

/** A resolver as the person configured it: an id, a display name, its endpoints and any extra trusted CA. */
export const resolverSpec = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/),
  name: z.string().min(1).max(128),
  endpoints: z.array(endpointSpec).min(1).max(16),
  /** Extra trusted CA certificates (PEM), e.g. the lab's. */
  ca: z.string().max(64 * 1024).optional(),
});
export type ResolverSpec = z.infer<typeof resolverSpec>;

/** A host a page needed and, for replay, when it first needed it (ms since navigation start). */
export const hostSpec = z.union([
  z.string().max(300),
  z.strictObject({ name: z.string().max(300), at: z.number().min(0).max(3_600_000).optional() }),
]);

const helloRequest = z.strictObject({ id, type: z.literal('hello') });

const measureRequest = z.strictObject({
  id,
  type: z.literal('measure'),
  hosts: z.array(hostSpec).min(1).max(MAX_HOSTS_PER_REQUEST),
  resolvers: z.array(resolverSpec).min(1).max(MAX_RESOLVERS_PER_REQUEST),
  /** Only these transports of the resolvers' endpoints (default: all of them). */
  transports: z.array(z.enum(TRANSPORT_IDS)).min(1).optional(),
  qtypes: z.array(z.enum(QTYPES)).min(1).max(QTYPES.length).optional(),
  modes: z.array(z.enum(MODES)).min(1).optional(),
  repeat: z.number().int().min(1).max(MAX_REPEAT).optional(),
  /** Ask every name once over UDP first so no transport pays for filling the resolver's cache. */
  prime: z.boolean().optional(),
  /** Cold connections resume the endpoint's last TLS session (as a browser would after its first visit). */
  resume: z.boolean().optional(),
  /** Seed for the order of transports and endpoints; a random one is chosen and reported if absent. */
  seed: z.number().int().min(0).max(0xffffffff).optional(),
  timeoutMs: z.number().int().min(100).max(60_000).optional(),
});

const cancelRequest = z.strictObject({ id, type: z.literal('cancel'), target: id });

/** Every request the host accepts. */
export const request = z.discriminatedUnion('type', [helloRequest, measureRequest, cancelRequest]);
export type Request = z.infer<typeof request>;
export type RequestType = Request['type'];
export type RequestOf<T extends RequestType> = Extract<Request, { type: T }>;
export type MeasureRequest = RequestOf<'measure'>;
export type RequestId = z.infer<typeof id>;

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
      order: string[];
      exchanges: number;
      cancelled: boolean;
      summary: SummaryRow[];
    }
  | { id: RequestId | null; type: 'error'; code: ErrorCode; message: string };

/** Handler table typed over the union: compilation fails when a request type lacks a handler. */
export type Handlers<Ctx> = { [T in RequestType]: (req: RequestOf<T>, ctx: Ctx) => Promise<void> | void };
