// DNS over HTTPS over HTTP/2 (RFC 8484) with node:http2: one multiplexed connection per endpoint, a stream per
// query, `application/dns-message`, POST (Firefox) or GET with ?dns= (Chromium), DNS id 0.
import http2 from 'node:http2';
import type { TLSSocket } from 'node:tls';
import { CODES, DnscostError } from '../../../common/errors.js';
import type { EndpointSpec } from '../../../common/schema.js';
import { TRANSPORTS } from '../../../common/transports.js';
import { openTls, socketError, type Clock, type TcpWire } from '../dial.js';
import { ConnectionSession } from './connection-session.js';
import type { Session, SetupTimings, Transport } from './transport.js';
import type { TlsInfo } from '../../../common/record.js';

const DNS_MESSAGE = 'application/dns-message';
/** Largest DNS message (RFC 1035 over TCP/HTTP); a longer body is not a DNS answer. */
export const MAX_DOH_BODY = 65535;

/** The request line and headers of a DoH query, shared with `doh1`. */
export function dohRequest(endpoint: EndpointSpec, query: Buffer): { method: 'GET' | 'POST'; path: string } {
  const path = endpoint.path ?? TRANSPORTS[endpoint.transport].url.path ?? '/';
  if ((endpoint.method ?? TRANSPORTS[endpoint.transport].url.method) === 'GET') {
    const sep = path.includes('?') ? '&' : '?';
    return { method: 'GET', path: `${path}${sep}dns=${query.toString('base64url')}` };
  }
  return { method: 'POST', path };
}

/** Checks a DoH response's status and media type (RFC 8484 §4.2.1); throws a coded error. */
export function checkDohResponse(status: number, contentType: string | undefined): void {
  if (status !== 200) throw new DnscostError(CODES.HTTP_STATUS, `HTTP status ${status}`);
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== DNS_MESSAGE) throw new DnscostError(CODES.HTTP_CONTENT_TYPE, `content-type ${JSON.stringify(contentType ?? '')} is not ${DNS_MESSAGE}`);
}

class H2Session extends ConnectionSession implements Session {
  private broken: DnscostError | null = null;
  /** Each answer's query phase where its bytes were: from the request's departure to the answer's last byte. */
  private readonly queryTimes = new WeakMap<Buffer, number>();

  constructor(
    private readonly session: http2.ClientHttp2Session,
    private readonly tlsSocket: TLSSocket,
    counter: TcpWire,
    private readonly endpoint: EndpointSpec,
    setup: SetupTimings,
    tls: TlsInfo,
    private readonly clock: Clock,
  ) {
    super(counter, setup, tls, tlsSocket);
    session.on('goaway', (code, lastStreamId) => {
      this.broken ??= new DnscostError(CODES.HTTP_GOAWAY, `server sent GOAWAY (code ${code}, last stream ${lastStreamId})`);
      this.events.push({ type: 'goaway', detail: `code ${code}, last stream ${lastStreamId}` });
    });
    session.on('error', (err) => {
      this.broken ??= socketError(err, 'HTTP/2 session');
    });
    session.on('close', () => {
      if (!this.broken) this.events.push({ type: 'connection-closed', detail: 'HTTP/2 session closed' });
      this.broken ??= new DnscostError(CODES.CONNECTION_CLOSED, 'HTTP/2 session closed');
    });
  }

  get usable(): boolean {
    return this.broken === null && !this.session.closed && !this.session.destroyed;
  }

  queryMs(answer: Buffer): number | null {
    return this.queryTimes.get(answer) ?? null;
  }

  exchange(query: Buffer, _id: number, timeoutMs: number): Promise<Buffer> {
    if (!this.usable) return Promise.reject(this.broken ?? new DnscostError(CODES.CONNECTION_CLOSED, 'HTTP/2 session closed'));
    const { method, path } = dohRequest(this.endpoint, query);
    const headers: http2.OutgoingHttpHeaders = { ':method': method, ':path': path, accept: DNS_MESSAGE };
    if (method === 'POST') {
      headers['content-type'] = DNS_MESSAGE;
      headers['content-length'] = query.length;
    }
    this.counter.dns.sent += query.length;
    return new Promise<Buffer>((resolve, reject) => {
      let stream: http2.ClientHttp2Stream;
      try {
        stream = this.session.request(headers, { endStream: method === 'GET' });
      } catch (err) {
        return reject(this.broken ?? socketError(err, 'HTTP/2 request'));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let status = 0;
      let contentType: string | undefined;
      let settled = false;
      // Where the bytes are: node:http2 writes the request in the event loop's next check phase (nghttp2's
      // SendPendingData is a native immediate, which runs before any immediate of ours), and hands the answer over
      // as 'response', 'data', then 'end' a step later. The query phase runs from our immediate just after that
      // write (0.05–0.16 ms after the request left, in a capture on 2 cores: bench/results/timing-vs-reference.md)
      // to the 'data' that completes a body of known length, which comes in the same step as the bytes.
      let sentAt: number | null = null;
      let answeredAt: number | null = null;
      const finish = (err: DnscostError | null, body?: Buffer): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) {
          if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_CANCEL);
          reject(err);
        } else {
          if (sentAt !== null) this.queryTimes.set(body!, (answeredAt ?? this.clock()) - sentAt);
          resolve(body!);
        }
      };
      const timer = setTimeout(() => finish(new DnscostError(CODES.TIMEOUT, `query: no answer within ${Math.round(timeoutMs)} ms`)), timeoutMs);
      let declared: number | null = null;
      stream.on('response', (h) => {
        status = Number(h[':status']);
        contentType = h['content-type'] as string | undefined;
        if (h['content-length'] !== undefined) declared = Number(h['content-length']);
      });
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_DOH_BODY) return finish(new DnscostError(CODES.MALFORMED_ANSWER, `body longer than ${MAX_DOH_BODY} bytes`));
        chunks.push(chunk);
        if (size === declared) answeredAt = this.clock();
      });
      stream.on('end', () => {
        try {
          checkDohResponse(status, contentType);
        } catch (err) {
          return finish(err as DnscostError);
        }
        const body = Buffer.concat(chunks);
        this.counter.dns.received += body.length;
        // node:http2 ends a stream the server cancelled mid-body like a complete one; the length tells them apart.
        if ((declared !== null && body.length !== declared) || (stream.rstCode ?? 0) !== http2.constants.NGHTTP2_NO_ERROR) {
          return finish(new DnscostError(CODES.CONNECTION_CLOSED, `answer cut off: ${body.length} of ${declared ?? '?'} bytes arrived (RST_STREAM ${stream.rstCode ?? 'none'})`));
        }
        finish(null, body);
      });
      stream.on('error', (err: NodeJS.ErrnoException) => finish(this.streamError(err)));
      stream.on('close', () => {
        if (settled) return;
        const code = stream.rstCode;
        if (code !== undefined && code !== http2.constants.NGHTTP2_NO_ERROR) {
          return finish(this.broken?.code === CODES.HTTP_GOAWAY
            ? this.broken
            : new DnscostError(CODES.HTTP_STREAM_RESET, `stream reset by server (RST_STREAM code ${code})`));
        }
        finish(this.broken ?? new DnscostError(CODES.CONNECTION_CLOSED, 'stream closed before the answer was complete'));
      });
      if (method === 'POST') stream.end(query);
      setImmediate(() => (sentAt = this.clock()));
    });
  }

  private streamError(err: NodeJS.ErrnoException): DnscostError {
    if (this.broken?.code === CODES.HTTP_GOAWAY) return this.broken;
    if (err.code === 'ERR_HTTP2_STREAM_ERROR') return new DnscostError(CODES.HTTP_STREAM_RESET, `stream reset: ${err.message}`);
    if (err.code === 'ERR_HTTP2_GOAWAY_SESSION') return new DnscostError(CODES.HTTP_GOAWAY, err.message);
    return this.broken ?? socketError(err, 'HTTP/2 stream');
  }

  close(): void {
    this.broken ??= new DnscostError(CODES.CONNECTION_CLOSED, 'closed by dnscost');
    this.session.destroy();
    // After a GOAWAY node:http2 may leave the socket open (the session is closing, not destroyed): end it here.
    this.tlsSocket.destroy();
  }
}

/** DoH over HTTP/2. */
export const doh: Transport = {
  id: 'doh',
  zeroId: true,
  pad: true,
  lengthPrefix: 0,
  idleMs: null,
  socketPerQuery: false,
  splits: { tls: true, http: true },
  async open(endpoint, options) {
    const { tlsSocket, counter, setup, info } = await openTls(endpoint, options, ['h2']);
    const serverName = endpoint.serverName ?? endpoint.address;
    if (info.alpn !== 'h2') {
      tlsSocket.destroy();
      throw new DnscostError(CODES.TLS_HANDSHAKE, `server did not negotiate HTTP/2 (ALPN ${info.alpn ?? 'none'})`);
    }
    const authority = `https://${serverName.includes(':') ? `[${serverName}]` : serverName}:${endpoint.port}`;
    // The connection is already open and timed; http2 only runs the HTTP/2 preface over it.
    const session = http2.connect(authority, { createConnection: () => tlsSocket });
    session.on('error', () => {});
    return new H2Session(session, tlsSocket, counter, endpoint, setup, info, options.clock);
  },
};
