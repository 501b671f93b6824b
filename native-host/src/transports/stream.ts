// DNS over a byte stream (RFC 7766 for TCP, RFC 7858 for TLS): 2-byte length prefix, pipelined queries matched by
// id, answers in any order. Shared by `tcp` and `dot`.
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { CODES, DnscostError } from '../../../common/errors.js';
import type { TlsInfo } from '../../../common/record.js';
import { socketError, type TcpWire } from '../dial.js';
import { ConnectionSession } from './connection-session.js';
import type { Session, SetupTimings } from './transport.js';

/** The 2-byte length before every DNS message on a stream (RFC 1035 §4.2.2, RFC 7766 §8). */
export const LENGTH_PREFIX = 2;

interface Pending {
  resolve(answer: Buffer): void;
  reject(err: DnscostError): void;
  timer: NodeJS.Timeout;
}

/** A session over a TCP or TLS stream carrying length-prefixed DNS messages. */
export class StreamSession extends ConnectionSession implements Session {
  private readonly pending = new Map<number, Pending>();
  private buffer: Buffer = Buffer.alloc(0);
  private closedReason: DnscostError | null = null;

  constructor(
    private readonly stream: Socket | TLSSocket,
    counter: TcpWire,
    setup: SetupTimings,
    tls: TlsInfo | null,
  ) {
    super(counter, setup, tls, tls ? (stream as TLSSocket) : null);
    stream.on('data', (chunk: Buffer) => this.onData(chunk));
    stream.on('error', (err) => this.fail(socketError(err, 'query')));
    stream.on('end', () => this.fail(new DnscostError(CODES.CONNECTION_CLOSED, 'server closed the connection')));
    stream.on('close', () => this.fail(new DnscostError(CODES.CONNECTION_CLOSED, 'connection closed')));
  }

  get usable(): boolean {
    return this.closedReason === null;
  }

  exchange(query: Buffer, id: number, timeoutMs: number): Promise<Buffer> {
    if (this.closedReason) return Promise.reject(this.closedReason);
    if (this.pending.has(id)) return Promise.reject(new DnscostError(CODES.INTERNAL, `id ${id} already in flight`));
    return new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new DnscostError(CODES.TIMEOUT, `query: no answer within ${Math.round(timeoutMs)} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      const prefix = Buffer.alloc(LENGTH_PREFIX);
      prefix.writeUInt16BE(query.length);
      this.counter.dns.sent += query.length + LENGTH_PREFIX;
      // One write, so prefix and message leave in one segment (RFC 7766 §8).
      this.stream.write(Buffer.concat([prefix, query]));
    });
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    while (this.buffer.length >= LENGTH_PREFIX) {
      const length = this.buffer.readUInt16BE(0);
      if (this.buffer.length < LENGTH_PREFIX + length) return;
      const message = this.buffer.subarray(LENGTH_PREFIX, LENGTH_PREFIX + length);
      this.buffer = this.buffer.subarray(LENGTH_PREFIX + length);
      this.counter.dns.received += length + LENGTH_PREFIX;
      this.deliver(message);
    }
  }

  private deliver(message: Buffer): void {
    if (message.length < 2) {
      // Too short to carry an id: it can only belong to the oldest query still waiting.
      const first = this.pending.keys().next();
      if (!first.done) this.settle(first.value, message);
      return;
    }
    const id = message.readUInt16BE(0);
    if (this.pending.has(id)) return this.settle(id, message);
    // An answer with an id we never asked: with one query in flight it is that query's (wrong) answer,
    // and parseAnswer will name the mismatch; with several it cannot be matched and is reported on all.
    if (this.pending.size === 1) return this.settle(this.pending.keys().next().value!, message);
    for (const [pid, p] of this.pending) {
      clearTimeout(p.timer);
      this.pending.delete(pid);
      p.reject(new DnscostError(CODES.ID_MISMATCH, `answer id ${id} matches no query in flight`));
    }
  }

  private settle(id: number, message: Buffer): void {
    const p = this.pending.get(id)!;
    clearTimeout(p.timer);
    this.pending.delete(id);
    p.resolve(message);
  }

  private fail(err: DnscostError): void {
    if (!this.closedReason) {
      this.closedReason = err;
      this.events.push({ type: 'connection-closed', detail: err.message });
    }
    const partial = this.buffer.length > 0;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      this.pending.delete(id);
      p.reject(partial && err.code === CODES.CONNECTION_CLOSED
        ? new DnscostError(CODES.CONNECTION_CLOSED, `connection closed mid-answer (${this.buffer.length} bytes of a message received)`)
        : err);
    }
  }

  close(): void {
    this.closedReason ??= new DnscostError(CODES.CONNECTION_CLOSED, 'closed by dnscost');
    this.stream.destroy();
  }
}
