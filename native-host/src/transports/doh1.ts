// DNS over HTTPS over HTTP/1.1 (RFC 8484 allows any HTTP version): one keep-alive connection, one request at a
// time on it (HTTP/1.1 has no multiplexing; pipelining is off in every browser). node:http drives the protocol
// over the TLS socket we opened and timed; its agent may never open a connection of its own.
import http from 'node:http';
import type { TLSSocket } from 'node:tls';
import { CODES, DnscostError } from '../../../common/errors.js';
import type { TlsInfo } from '../../../common/record.js';
import type { EndpointSpec } from '../../../common/schema.js';
import { openTls, socketError, type TcpWire } from '../dial.js';
import { ConnectionSession } from './connection-session.js';
import { checkDohResponse, dohRequest } from './doh.js';
import type { Session, SetupTimings, Transport } from './transport.js';

const MAX_BODY = 65535;

/** An agent that hands out exactly one pre-opened socket and refuses to dial again: no hidden reconnects. */
class OneSocketAgent extends http.Agent {
  private socket: TLSSocket | null;
  constructor(socket: TLSSocket) {
    super({ keepAlive: true, maxSockets: 1, maxFreeSockets: 1, timeout: 0 });
    this.socket = socket;
  }
  override createConnection(): TLSSocket {
    const s = this.socket;
    this.socket = null;
    if (!s) throw new DnscostError(CODES.CONNECTION_CLOSED, 'HTTP/1.1 connection was closed; dnscost does not reconnect silently');
    return s;
  }
}

class H1Session extends ConnectionSession implements Session {
  private readonly agent: OneSocketAgent;
  private broken: DnscostError | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly tlsSocket: TLSSocket,
    counter: TcpWire,
    private readonly endpoint: EndpointSpec,
    setup: SetupTimings,
    tls: TlsInfo,
  ) {
    super(counter, setup, tls, tlsSocket);
    this.agent = new OneSocketAgent(tlsSocket);
    tlsSocket.on('close', () => {
      if (!this.broken) this.events.push({ type: 'connection-closed', detail: 'HTTP/1.1 connection closed' });
      this.broken ??= new DnscostError(CODES.CONNECTION_CLOSED, 'HTTP/1.1 connection closed');
    });
  }

  get usable(): boolean {
    return this.broken === null;
  }

  exchange(query: Buffer, id: number, timeoutMs: number): Promise<Buffer> {
    // Requests wait their turn on the one connection, as a browser's would.
    const run = this.queue.then(() => this.send(query, timeoutMs));
    this.queue = run.catch(() => {});
    return run;
  }

  private send(query: Buffer, timeoutMs: number): Promise<Buffer> {
    if (this.broken) return Promise.reject(this.broken);
    const { method, path } = dohRequest(this.endpoint, query);
    const host = this.endpoint.serverName ?? this.endpoint.address;
    const headers: http.OutgoingHttpHeaders = { host: `${host}:${this.endpoint.port}`, accept: 'application/dns-message' };
    if (method === 'POST') {
      headers['content-type'] = 'application/dns-message';
      headers['content-length'] = query.length;
    }
    this.counter.dns.sent += query.length;
    return new Promise<Buffer>((resolve, reject) => {
      let settled = false;
      const finish = (err: DnscostError | null, body?: Buffer): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) {
          this.broken ??= err.code === CODES.HTTP_STATUS || err.code === CODES.HTTP_CONTENT_TYPE ? null : err;
          if (this.broken) req.destroy();
          reject(err);
        } else resolve(body!);
      };
      const req = http.request({ agent: this.agent, method, path, headers, host, port: this.endpoint.port });
      const timer = setTimeout(() => finish(new DnscostError(CODES.TIMEOUT, `query: no answer within ${Math.round(timeoutMs)} ms`)), timeoutMs);
      req.on('error', (err) => finish(this.broken ?? (err instanceof DnscostError ? err : socketError(err, 'HTTP/1.1 request'))));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BODY) finish(new DnscostError(CODES.MALFORMED_ANSWER, `body longer than ${MAX_BODY} bytes`));
          else chunks.push(chunk);
        });
        res.on('end', () => {
          try {
            checkDohResponse(res.statusCode ?? 0, res.headers['content-type']);
          } catch (err) {
            return finish(err as DnscostError);
          }
          const body = Buffer.concat(chunks);
          this.counter.dns.received += body.length;
          finish(null, body);
        });
        res.on('aborted', () => finish(new DnscostError(CODES.CONNECTION_CLOSED, 'connection closed mid-answer')));
        res.on('error', (err) => finish(socketError(err, 'HTTP/1.1 response')));
      });
      req.end(method === 'POST' ? query : undefined);
    });
  }

  close(): void {
    this.broken ??= new DnscostError(CODES.CONNECTION_CLOSED, 'closed by dnscost');
    this.agent.destroy();
    this.tlsSocket.destroy();
  }
}

/** DoH over HTTP/1.1. */
export const doh1: Transport = {
  id: 'doh1',
  zeroId: true,
  pad: true,
  lengthPrefix: 0,
  idleMs: null,
  socketPerQuery: false,
  splits: { tls: true, http: true },
  // Shown and written as https, like doh: the HTTP version is the transport id's, chosen with --http1.1.
  url: { scheme: 'https', defaultPort: 443, named: true, path: true, http1: true },
  async open(endpoint, options) {
    const c = await openTls(endpoint, options, ['http/1.1']);
    return new H1Session(c.tlsSocket, c.counter, endpoint, c.setup, c.info);
  },
};
