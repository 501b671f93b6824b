// DNS over HTTPS over HTTP/1.1 (RFC 8484 allows any HTTP version): one keep-alive connection, one request at a
// time on it (HTTP/1.1 has no multiplexing; pipelining is off in every browser). A small client of our own writes
// each request in one write on the TLS socket we opened and timed, and reads the response off that socket as it
// arrives (http1-reader.ts): the answer is complete the moment its last byte is in, as in a browser's network stack,
// where node:http would hand it over three event-loop steps later. It never dials again by itself.
import type { TLSSocket } from 'node:tls';
import { CODES, DnscostError } from '../../../common/errors.js';
import type { TlsInfo } from '../../../common/record.js';
import type { EndpointSpec } from '../../../common/schema.js';
import { openTls, socketError, type TcpWire } from '../dial.js';
import { ConnectionSession } from './connection-session.js';
import { checkDohResponse, dohRequest, MAX_DOH_BODY } from './doh.js';
import { Http1Reader, type Http1Response } from './http1-reader.js';
import type { Session, SetupTimings, Transport } from './transport.js';

interface Waiting {
  resolve(response: Http1Response): void;
  reject(err: DnscostError): void;
}

class H1Session extends ConnectionSession implements Session {
  private broken: DnscostError | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly reader = new Http1Reader(MAX_DOH_BODY);
  private waiting: Waiting | null = null;
  private readonly hostHeader: string;

  constructor(
    private readonly tlsSocket: TLSSocket,
    counter: TcpWire,
    private readonly endpoint: EndpointSpec,
    setup: SetupTimings,
    tls: TlsInfo,
  ) {
    super(counter, setup, tls, tlsSocket);
    const host = endpoint.serverName ?? endpoint.address;
    this.hostHeader = `${host.includes(':') ? `[${host}]` : host}:${endpoint.port}`;
    tlsSocket.on('data', (chunk: Buffer) => this.onData(chunk));
    tlsSocket.on('error', (err) => this.fail(socketError(err, 'HTTP/1.1 response'), true));
    tlsSocket.on('end', () => this.onEnd());
    tlsSocket.on('close', () => this.onEnd());
  }

  get usable(): boolean {
    return this.broken === null;
  }

  exchange(query: Buffer, _id: number, timeoutMs: number): Promise<Buffer> {
    // Requests wait their turn on the one connection, as a browser's would.
    const run = this.queue.then(() => this.send(query, timeoutMs));
    this.queue = run.catch(() => {});
    return run;
  }

  private send(query: Buffer, timeoutMs: number): Promise<Buffer> {
    if (this.broken) return Promise.reject(this.broken);
    const { method, path } = dohRequest(this.endpoint, query);
    const head = `${method} ${path} HTTP/1.1\r\nhost: ${this.hostHeader}\r\naccept: application/dns-message\r\n`
      + (method === 'POST' ? `content-type: application/dns-message\r\ncontent-length: ${query.length}\r\n\r\n` : '\r\n');
    this.counter.dns.sent += query.length;
    return new Promise<Buffer>((resolve, reject) => {
      // The answer may still come late: the connection cannot carry another request in step, so it is done.
      const timer = setTimeout(() => this.fail(new DnscostError(CODES.TIMEOUT, `query: no answer within ${Math.round(timeoutMs)} ms`)), timeoutMs);
      this.waiting = {
        resolve: (response) => {
          clearTimeout(timer);
          try {
            checkDohResponse(response.status, response.headers.get('content-type'));
          } catch (err) {
            return reject(err as DnscostError);
          }
          this.counter.dns.received += response.body.length;
          resolve(response.body);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      // One write: the request line, the header fields and the message leave together.
      this.tlsSocket.write(method === 'POST' ? Buffer.concat([Buffer.from(head, 'latin1'), query]) : head);
    });
  }

  private onData(chunk: Buffer): void {
    if (this.broken) return;
    let response: Http1Response | null;
    try {
      response = this.reader.push(chunk);
    } catch (err) {
      return this.fail(err as DnscostError);
    }
    if (response) this.settle(response);
  }

  private settle(response: Http1Response): void {
    const w = this.waiting;
    this.waiting = null;
    if (!w) return this.fail(new DnscostError(CODES.MALFORMED_ANSWER, `HTTP/1.1 response ${response.status} to no request`));
    if (response.close && !this.broken) {
      this.broken = new DnscostError(CODES.CONNECTION_CLOSED, 'the server closes the HTTP/1.1 connection after its answer');
      this.events.push({ type: 'connection-closed', detail: this.broken.message });
    }
    w.resolve(response);
  }

  private onEnd(): void {
    if (this.broken) return;
    try {
      const last = this.reader.end();
      if (last) this.settle(last);
    } catch (err) {
      return this.fail(err as DnscostError, true);
    }
    this.fail(new DnscostError(CODES.CONNECTION_CLOSED, 'HTTP/1.1 connection closed'), true);
  }

  /** The connection is done (the server's doing, or a failure): the request waiting learns why; nothing more is read. */
  private fail(err: DnscostError, byServer = false): void {
    if (!this.broken) {
      this.broken = err;
      if (byServer) this.events.push({ type: 'connection-closed', detail: err.message });
    }
    const w = this.waiting;
    this.waiting = null;
    w?.reject(err);
    this.tlsSocket.destroy();
  }

  close(): void {
    this.broken ??= new DnscostError(CODES.CONNECTION_CLOSED, 'closed by dnscost');
    this.waiting?.reject(this.broken);
    this.waiting = null;
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
  async open(endpoint, options) {
    const c = await openTls(endpoint, options, ['http/1.1']);
    return new H1Session(c.tlsSocket, c.counter, endpoint, c.setup, c.info);
  },
};
