// Every stable error code dnscost answers with, declared once, and the one failure shape. Codes cross process
// boundaries (native messaging, the extension's messages, uploads to the collector) and are shown to people, so
// never rename one. Each boundary names the subset it can answer with as a type below; the literal lives only here.

/** Every stable code, by name. */
export const CODES = {
  // An exchange's outcome: the `error.code` of a host record.
  TIMEOUT: 'timeout',
  CONNECT_REFUSED: 'connect-refused',
  CONNECT_FAILED: 'connect-failed',
  CONNECTION_RESET: 'connection-reset',
  CONNECTION_CLOSED: 'connection-closed',
  TLS_HANDSHAKE: 'tls-handshake',
  TLS_CERT_EXPIRED: 'tls-cert-expired',
  TLS_CERT_NAME: 'tls-cert-name',
  TLS_CERT_UNTRUSTED: 'tls-cert-untrusted',
  TLS_ALERT: 'tls-alert',
  HTTP_STATUS: 'http-status',
  HTTP_GOAWAY: 'http2-goaway',
  HTTP_STREAM_RESET: 'http2-stream-reset',
  HTTP_CONTENT_TYPE: 'http-content-type',
  MALFORMED_ANSWER: 'malformed-answer',
  SHORT_ANSWER: 'short-answer',
  ID_MISMATCH: 'id-mismatch',
  QUESTION_MISMATCH: 'question-mismatch',
  TRUNCATED: 'truncated',
  SERVFAIL: 'servfail',
  REFUSED: 'refused',
  NXDOMAIN: 'nxdomain',
  RCODE: 'rcode',
  /** The transport cannot run in this installation (e.g. the QUIC companion is not built): not a lookup failure. */
  TRANSPORT_UNAVAILABLE: 'transport-unavailable',

  // The native host's refusals of a frame or a request.
  BAD_JSON: 'bad-json',
  BAD_FRAME: 'bad-frame',
  FRAME_TOO_LARGE: 'frame-too-large',
  UNKNOWN_TYPE: 'unknown-type',
  BAD_REQUEST: 'bad-request',
  BAD_HOSTNAME: 'bad-hostname',
  BAD_ENDPOINT: 'bad-endpoint',
  TOO_MANY_HOSTS: 'too-many-hosts',
  UNKNOWN_RESOLVER: 'unknown-resolver',
  /** Another request is running (the host measures one at a time; the extension one page at a time). */
  BUSY: 'busy',
  /** A measurement ran past the host's deadline and was stopped (its records so far were sent). */
  DEADLINE: 'deadline',
  /** The measurement would ask a resolver more than the host's hourly budget of exchanges allows (nothing was sent). */
  OVER_BUDGET: 'over-budget',
  /** The browser resolves over DoH and the request has a plain-DNS endpoint: no name goes out in clear text (nothing was sent). */
  CLEARTEXT_REFUSED: 'cleartext-refused',
  /** Something failed that should not have: the message says what. */
  INTERNAL: 'internal',

  // The native host's connection, as the extension's background reports it (host-status).
  /** The first attempt has not settled yet. */
  HOST_CONNECTING: 'host-connecting',
  /** The browser found no host manifest for this extension (not installed, or installed for another id). */
  HOST_MISSING: 'host-missing',
  /** The host answered hello with another protocol version. */
  HOST_INCOMPATIBLE: 'host-incompatible',
  /** The host exited, closed the connection, answered hello wrongly or not in time. */
  HOST_DISCONNECTED: 'host-disconnected',
  /** A running measurement heard nothing from the host for a minute: the host was restarted. */
  HOST_STALLED: 'host-stalled',
  /** The host sent a reply that is not one of the protocol's (it is dropped; the request it names fails). */
  BAD_REPLY: 'bad-reply',

  // The extension's own messages.
  /** The message came from somewhere it may not (e.g. only the extension's own pages may measure). */
  BAD_SENDER: 'bad-sender',
  /** The tab has no recorded web page (none yet, not a web page, closed, or its data was cleared). */
  NO_PAGE: 'no-page',
  /** The tab is in a private window: never recorded, never measured. */
  PRIVATE_WINDOW: 'private-window',
  /** The tab's site is excluded in the settings. */
  EXCLUDED: 'excluded',
  /** The person has not agreed to have their hostnames re-resolved (options page, first-run consent). */
  NO_CONSENT: 'no-consent',
  /** The page needed no host that may be sent to the resolvers in force (internal names, IP literals only). */
  NO_MEASURABLE_HOSTS: 'no-measurable-hosts',
  /** The native host is not connected (missing, incompatible, stopped); host-status says why. */
  HOST_NOT_CONNECTED: 'host-not-connected',
  /** Nothing is running for this tab (measure-cancel). */
  NOT_RUNNING: 'not-running',
  /** The host refused or failed a resolver probe; the message carries its code. */
  PROBE_FAILED: 'probe-failed',
  /** An extension page's message got no answer (the background was not running or threw before replying). */
  NO_BACKGROUND: 'no-background',
  /** An administrator's policy fixes the field (managed storage). */
  POLICY_FIXED: 'policy-fixed',
  /** The settings (a change or an imported file) do not pass the schema; `problems` says where. */
  INVALID_SETTINGS: 'invalid-settings',

  // Uploads: the schema's refusals (400, with the `path` of the problem) and the collector's other answers.
  BAD_TYPE: 'bad-type',
  BAD_VERSION: 'bad-version',
  MISSING_FIELD: 'missing-field',
  UNKNOWN_FIELD: 'unknown-field',
  BAD_VALUE: 'bad-value',
  OUT_OF_RANGE: 'out-of-range',
  TOO_MANY_ITEMS: 'too-many-items',
  TOO_PRECISE: 'too-precise',
  INCONSISTENT: 'inconsistent',
  /** 400: a missing or malformed dnscost-deletion-token header. */
  BAD_DELETION_TOKEN: 'bad-deletion-token',
  /** 400: an unknown aggregate filter or value. */
  BAD_QUERY: 'bad-query',
  /** 404: no such path, or no such batch for this token. */
  NOT_FOUND: 'not-found',
  METHOD_NOT_ALLOWED: 'method-not-allowed',
  /** 409: the key was used for a different body or token. */
  KEY_CONFLICT: 'key-conflict',
  BODY_TOO_LARGE: 'body-too-large',
  BAD_CONTENT_TYPE: 'bad-content-type',
  /** 429, with Retry-After. */
  RATE_LIMITED: 'rate-limited',
  /** 503: the store did not commit; nothing was acknowledged, retry later. */
  UNAVAILABLE: 'unavailable',
} as const;

type CodeOf<K extends keyof typeof CODES> = (typeof CODES)[K];

/** Any stable code. */
export type ErrorCode = (typeof CODES)[keyof typeof CODES];

/** The native host's connection state as host-status reports it when not connected. */
export type HostStatusCode = CodeOf<'HOST_CONNECTING' | 'HOST_MISSING' | 'HOST_INCOMPATIBLE' | 'HOST_DISCONNECTED'>;

/** Why an upload batch does not pass the schema (400, with a `path`). */
export type BatchCode = CodeOf<
  'BAD_TYPE' | 'BAD_VERSION' | 'MISSING_FIELD' | 'UNKNOWN_FIELD' | 'BAD_VALUE' | 'OUT_OF_RANGE' | 'TOO_MANY_ITEMS' | 'TOO_PRECISE' | 'INCONSISTENT'
>;

/** Every answer of the collector that is not a success. */
export type CollectorCode = BatchCode | CodeOf<
  | 'BAD_JSON' | 'BAD_DELETION_TOKEN' | 'BAD_QUERY' | 'NOT_FOUND' | 'METHOD_NOT_ALLOWED' | 'KEY_CONFLICT' | 'BODY_TOO_LARGE'
  | 'BAD_CONTENT_TYPE' | 'RATE_LIMITED' | 'INTERNAL' | 'UNAVAILABLE'
>;

/** The one failure shape at every boundary: `{ ok: false, code, message }` (a boundary may add fields, e.g. `path`). */
export interface Failure<C extends string = ErrorCode> {
  ok: false;
  code: C;
  message: string;
}

/** A failure inside a record (an exchange's error): the code and the human message. */
export type ErrorData = Omit<Failure<ErrorCode>, 'ok'>;

/** The one error base class: a stable code plus a human message. */
export class DnscostError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'DnscostError';
  }
}

/** Turns anything thrown into `{code, message}`; unknown errors become `internal`. */
export function toErrorData(err: unknown): ErrorData {
  if (err instanceof DnscostError) return { code: err.code, message: err.message };
  const message = err instanceof Error ? err.message : String(err);
  return { code: CODES.INTERNAL, message };
}

/** The failure `{ ok: false, code, message }`. */
export function failure<C extends string>(code: C, message: string): Failure<C> {
  return { ok: false, code, message };
}
