// Stable error codes: they cross process boundaries and are shown to people, so never rename one.

/** Every failure an exchange or a request can end in, by stable code. */
export const ERROR_CODES = {
  // exchange outcomes
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
  // request / boundary errors
  BAD_JSON: 'bad-json',
  BAD_FRAME: 'bad-frame',
  FRAME_TOO_LARGE: 'frame-too-large',
  UNKNOWN_TYPE: 'unknown-type',
  BAD_REQUEST: 'bad-request',
  BAD_HOSTNAME: 'bad-hostname',
  BAD_ENDPOINT: 'bad-endpoint',
  TOO_MANY_HOSTS: 'too-many-hosts',
  UNKNOWN_RESOLVER: 'unknown-resolver',
  BUSY: 'busy',
  INTERNAL: 'internal',
} as const;

export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

/** The one error base class: a stable code plus a human message. */
export class DnscostError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'DnscostError';
  }
}

/** How a failure travels across a process boundary. */
export interface ErrorData {
  code: ErrorCode;
  message: string;
}

/** Turns anything thrown into `{code, message}`; unknown errors become `internal`. */
export function toErrorData(err: unknown): ErrorData {
  if (err instanceof DnscostError) return { code: err.code, message: err.message };
  const message = err instanceof Error ? err.message : String(err);
  return { code: ERROR_CODES.INTERNAL, message };
}
