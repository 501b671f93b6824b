// What every session over a TCP connection shares: wire totals, events noticed between exchanges, the TLS ticket.
import type { TLSSocket } from 'node:tls';
import type { TlsInfo } from '../../../common/record.js';
import type { TcpWire, WireTotals } from '../dial.js';
import type { SessionEvent, SetupTimings } from './transport.js';

/** Base of the TCP, TLS, HTTP/2 and HTTP/1.1 sessions. */
export abstract class ConnectionSession {
  protected events: SessionEvent[] = [];
  private ticket: Buffer | null = null;

  constructor(
    protected readonly counter: TcpWire,
    readonly setup: SetupTimings,
    readonly tls: TlsInfo | null,
    tlsSocket: TLSSocket | null,
  ) {
    // TLS 1.3 tickets arrive after the handshake; keep the latest for `--resume`.
    tlsSocket?.on('session', (session: Buffer) => (this.ticket = session));
  }

  wire(): WireTotals {
    return this.counter.totals();
  }

  drainEvents(): SessionEvent[] {
    const out = this.events;
    this.events = [];
    return out;
  }

  resumable(): Buffer | null {
    return this.ticket;
  }
}
