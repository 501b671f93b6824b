// The fault server's shared running state: the log of seen queries, deferred answers, every open socket and HTTP/2
// session, and the peer maps that let one layer reach the socket beneath another.
//
// Lifecycle: startFaultServer creates one Runtime before any listener; listeners register their sockets, sessions
// and deferred actions here; stop() (idempotent) cancels every deferred action, destroys every session and socket and
// closes every listener, never waiting past 900 ms. Nothing deferred runs after stop().
import type dgram from 'node:dgram';
import type http2 from 'node:http2';
import type net from 'node:net';
import type tls from 'node:tls';
import type { SeenQuery } from './types.js';

const DEBUG = process.env.DEBUG_FAULT === '1';

/** Logs to stderr when DEBUG_FAULT=1; otherwise the fault server says nothing. */
export function debug(...args: unknown[]): void {
  if (DEBUG) console.error('[fault-server]', ...args);
}

/** Anything with a peer address: a raw TCP socket, the TLS socket over it, or an HTTP/2 session's socket proxy. */
export type Peer = { remoteAddress?: string | undefined; remotePort?: number | undefined };

/** The key of a peer in the maps below: the same for a raw socket and the TLS socket over it. */
export const connKey = (s: Peer) => `${s.remoteAddress}|${s.remotePort}`;

/** The state one fault server shares between its listeners, and its shutdown. */
export class Runtime {
  /** Every decoded query, in arrival order (capped by the fault engine). */
  readonly seen: SeenQuery[] = [];
  /** True once stop() began: deferred actions no longer run, new TLS connections are destroyed. */
  stopped = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  // Raw TCP sockets and the TLS sockets over them.
  private readonly sockets = new Set<net.Socket>();
  /** Open HTTP/2 sessions, destroyed by stop(). */
  readonly sessions = new Set<http2.ServerHttp2Session>();
  private readonly servers: net.Server[] = [];
  /** Raw TCP sockets under the TLS listeners, by peer, so a TLS-level handler can send an RST on the TCP beneath. */
  readonly raws = new Map<string, net.Socket>();
  /** TLS sockets by peer, so the h2 handler (which only sees a guarded proxy of the socket) can destroy the real one. */
  readonly tlsByPeer = new Map<string, tls.TLSSocket>();

  /** Runs fn after ms (at once when ms <= 0) unless stopped by then; a throw is logged, never raised. */
  later(ms: number, fn: () => void): void {
    const run = () => {
      if (this.stopped) return;
      try {
        fn();
      } catch (err) {
        debug('deferred action failed', err);
      }
    };
    if (ms <= 0) return run();
    const t = setTimeout(() => {
      this.timers.delete(t);
      run();
    }, ms);
    this.timers.add(t);
  }

  /** Keeps s until it closes, so stop() can destroy it; its errors are logged. */
  track(s: net.Socket): void {
    this.sockets.add(s);
    s.on('error', (err) => debug('socket error', err.message));
    s.on('close', () => this.sockets.delete(s));
  }

  /** Sends a TCP RST on the raw socket under a TLS listener's connection from s, if it is still open. */
  resetUnder(s: Peer | undefined): void {
    const raw = s ? this.raws.get(connKey(s)) : undefined;
    if (raw && !raw.destroyed) raw.resetAndDestroy();
  }

  /** Listens on a free port of address; resolves with the port, and stop() will close the listener. */
  listen(srv: net.Server, address: string): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen({ host: address, port: 0 }, () => {
        srv.off('error', reject);
        srv.on('error', (err) => debug('listener error', err.message));
        this.servers.push(srv);
        resolve((srv.address() as net.AddressInfo).port);
      });
    });
  }

  /** Stops everything (see the lifecycle note) and closes udp; resolves within about 900 ms; idempotent. */
  async stop(udp: dgram.Socket): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const s of this.sessions) s.destroy();
    for (const s of this.sockets) s.destroy();
    const closes = this.servers.map((srv) => new Promise<void>((resolve) => srv.close(() => resolve())));
    closes.push(new Promise<void>((resolve) => udp.close(() => resolve())));
    // close() waits for sockets to finish closing, which after destroy() is a tick or two; never wait past 900 ms.
    let guard: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(closes), new Promise<void>((resolve) => (guard = setTimeout(resolve, 900)))]);
    clearTimeout(guard);
  }
}
