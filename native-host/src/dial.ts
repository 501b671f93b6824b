// Dialing, TLS and wire counting, written once for every transport over TCP.
import net from 'node:net';
import tls from 'node:tls';
import { CODES, DnscostError } from '../../common/errors.js';
import type { Pair, Provenance, TlsInfo } from '../../common/record.js';
import { offeredSynOptions, readTcpInfo, socketFd, type SynOptions, type TcpCounters } from './tcp-info.js';

/** A monotonic clock in milliseconds. */
export type Clock = () => number;

/** The default clock: performance.now() is monotonic and sub-millisecond. */
export const monotonic: Clock = () => performance.now();

/** Where a connection goes: an IP literal, a port and, for TLS, the name the certificate must carry. */
export interface DialTarget {
  address: string;
  port: number;
  serverName?: string;
}

/** Options every TLS connection takes. */
export interface TlsOptions {
  serverName: string;
  /** Extra trusted CA certificates (PEM), added to the system's. */
  ca?: string;
  alpn?: string[];
  /** A session to resume (TLS 1.3 PSK); omitted for a full handshake. */
  session?: Buffer;
}

/** Cumulative wire figures of one connection (or UDP socket) at IP level. */
export interface WireTotals {
  bytes: Pair;
  packets: Pair;
  /** Transport payload (TCP or UDP data) — DNS, HTTP and TLS bytes together. */
  payload: Pair;
  /** Application bytes inside TLS (null without TLS). */
  plain: Pair | null;
  /** DNS messages with their framing (the 2-byte length prefix over TCP). */
  dns: Pair;
  provenance: { bytes: Provenance; packets: Provenance };
}

const IPV4_HEADER = 20;
const IPV6_HEADER = 40;
const TCP_HEADER = 20;
const TCP_TIMESTAMP_OPTION = 12;
/** SYN and SYN-ACK carry MSS, SACK-permitted, window scale and timestamps: 20 bytes of options, 8 more than later segments. */
const SYN_OPTIONS_EXTRA = 8;
const UDP_HEADER = 8;
/** Typical MSS for the estimate when the kernel counters are unavailable. */
const ESTIMATE_MSS = 1448;

/**
 * TCP option bytes of a SYN or SYN-ACK with these options, as Linux lays them out (tcp_options_write): MSS 4;
 * timestamps 10 plus SACK-permitted or two NOPs, 12; else SACK-permitted after two NOPs, 4; window scale after a
 * NOP, 4. All on: 20; no timestamps: 12; no window scaling: 16.
 */
export function synOptionBytes(o: SynOptions): number {
  return 4 + (o.timestamps ? 12 : o.sack ? 4 : 0) + (o.wscale ? 4 : 0);
}

/** IP header size for an address family. */
export function ipHeaderBytes(address: string): number {
  return net.isIPv6(address) ? IPV6_HEADER : IPV4_HEADER;
}

/** UDP datagram size at IP level for a payload (no fragmentation: EDNS 1232 keeps answers under one MTU). */
export function udpWireBytes(address: string, payload: number): number {
  return payload + UDP_HEADER + ipHeaderBytes(address);
}

function errno(err: unknown): string {
  return (err as NodeJS.ErrnoException)?.code ?? '';
}

/** Maps a socket error to a stable code, naming the phase it happened in. */
export function socketError(err: unknown, phase: string): DnscostError {
  if (err instanceof DnscostError) return err;
  const code = errno(err);
  const message = `${phase}: ${(err as Error)?.message ?? String(err)}`;
  switch (code) {
    case 'ECONNREFUSED':
      return new DnscostError(CODES.CONNECT_REFUSED, message);
    case 'ECONNRESET':
    case 'EPIPE':
      return new DnscostError(CODES.CONNECTION_RESET, message);
    case 'CERT_HAS_EXPIRED':
    case 'CERT_NOT_YET_VALID':
      return new DnscostError(CODES.TLS_CERT_EXPIRED, message);
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return new DnscostError(CODES.TLS_CERT_NAME, message);
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'CERT_UNTRUSTED':
      return new DnscostError(CODES.TLS_CERT_UNTRUSTED, message);
    default:
      if (/ALERT/i.test(code) || /alert/i.test(message)) return new DnscostError(CODES.TLS_ALERT, message);
      if (code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS')) return new DnscostError(CODES.TLS_HANDSHAKE, message);
      if (phase === 'connect') return new DnscostError(CODES.CONNECT_FAILED, message);
      return new DnscostError(CODES.CONNECTION_CLOSED, message);
  }
}

/** Rejects after `ms` with a `timeout` error naming the phase; the returned cancel function stops the timer. */
export function deadline(ms: number, phase: string): { promise: Promise<never>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DnscostError(CODES.TIMEOUT, `${phase}: no answer within ${ms} ms`)), ms);
  });
  promise.catch(() => {});
  return { promise, cancel: () => clearTimeout(timer) };
}

const contexts = new Map<string, tls.SecureContext>();

/**
 * The TLS context trusting the system's roots plus `ca`, built once per CA: parsing ~150 root certificates takes
 * ~20 ms, which would otherwise be counted as handshake time on every cold connection.
 */
export function secureContextFor(ca: string | undefined): tls.SecureContext {
  const key = ca ?? '';
  let context = contexts.get(key);
  if (!context) {
    context = tls.createSecureContext({ ca: ca ? [...tls.rootCertificates, ca] : undefined, minVersion: 'TLSv1.2' });
    contexts.set(key, context);
  }
  return context;
}

/** Opens a TCP connection, timing the three-way handshake. */
export async function dialTcp(target: DialTarget, timeoutMs: number, clock: Clock): Promise<{ socket: net.Socket; connectMs: number }> {
  const start = clock();
  const socket = net.connect({ host: target.address, port: target.port, noDelay: true });
  const limit = deadline(timeoutMs, 'connect');
  try {
    await Promise.race([
      new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      }),
      limit.promise,
    ]);
  } catch (err) {
    socket.destroy();
    throw socketError(err, 'connect');
  } finally {
    limit.cancel();
  }
  socket.removeAllListeners('error');
  return { socket, connectMs: clock() - start };
}

/** Runs a TLS handshake over an open TCP socket, timing it; the certificate is checked against `serverName`. */
export async function startTls(
  socket: net.Socket,
  options: TlsOptions,
  timeoutMs: number,
  clock: Clock,
): Promise<{ tlsSocket: tls.TLSSocket; tlsMs: number; info: TlsInfo }> {
  const start = clock();
  const tlsSocket = tls.connect({
    socket,
    servername: net.isIP(options.serverName) ? undefined : options.serverName,
    host: options.serverName,
    secureContext: secureContextFor(options.ca),
    ALPNProtocols: options.alpn,
    session: options.session,
  });
  const limit = deadline(timeoutMs, 'TLS handshake');
  try {
    await Promise.race([
      new Promise<void>((resolve, reject) => {
        tlsSocket.once('secureConnect', resolve);
        tlsSocket.once('error', reject);
        tlsSocket.once('close', () => reject(new DnscostError(CODES.TLS_HANDSHAKE, 'TLS handshake: server closed the connection')));
      }),
      limit.promise,
    ]);
  } catch (err) {
    // The TCP socket stays open for the caller to count what the failed handshake cost, then close.
    tlsSocket.destroy();
    throw socketError(err, 'TLS handshake');
  } finally {
    limit.cancel();
  }
  tlsSocket.removeAllListeners('error');
  tlsSocket.removeAllListeners('close');
  const cipher = tlsSocket.getCipher();
  return {
    tlsSocket,
    tlsMs: clock() - start,
    info: {
      version: tlsSocket.getProtocol() ?? null,
      alpn: typeof tlsSocket.alpnProtocol === 'string' ? tlsSocket.alpnProtocol : null,
      cipher: cipher?.standardName ?? cipher?.name ?? null,
      resumed: tlsSocket.isSessionReused(),
    },
  };
}

/**
 * Counts one TCP connection's wire bytes: payload and segments from the kernel (TCP_INFO), header bytes derived
 * from the segment count, TLS plaintext from the TLS socket. Read it while the socket is open.
 */
export class TcpWire {
  readonly dns: Pair = { sent: 0, received: 0 };
  private readonly fd: number | null;
  private readonly ipHeader: number;
  private last: TcpCounters | null = null;
  tlsSocket: tls.TLSSocket | null = null;

  constructor(
    private readonly socket: net.Socket,
    address: string,
  ) {
    this.fd = socketFd(socket);
    this.ipHeader = ipHeaderBytes(address);
  }

  /** Cumulative totals since the connection opened. */
  totals(): WireTotals {
    const info = this.socket.destroyed ? null : readTcpInfo(this.fd);
    if (info) this.last = info;
    const payload = { sent: this.socket.bytesWritten, received: this.socket.bytesRead };
    const plain = this.tlsSocket ? { sent: this.tlsSocket.bytesWritten, received: this.tlsSocket.bytesRead } : null;
    const counters = info ?? this.last;
    if (counters && !info && this.socket.destroyed) {
      // Closed since the last read: the payload is still counted by node, segments since then are not.
      return this.estimate(payload, plain, counters);
    }
    if (counters) {
      const tsOption = counters.timestamps ? TCP_TIMESTAMP_OPTION : 0;
      const header = TCP_HEADER + tsOption + this.ipHeader;
      // The SYN carries what this host offers, the SYN-ACK what was agreed; later segments only the timestamps.
      const synExtra = synOptionBytes(offeredSynOptions() ?? counters) - tsOption;
      const synAckExtra = synOptionBytes(counters) - tsOption;
      return {
        payload: { sent: counters.bytesSent, received: counters.bytesReceived },
        plain,
        dns: { ...this.dns },
        bytes: {
          sent: counters.bytesSent + counters.segsOut * header + synExtra,
          received: counters.bytesReceived + counters.segsIn * header + synAckExtra,
        },
        packets: { sent: counters.segsOut, received: counters.segsIn },
        provenance: { bytes: counters.totalRetrans === 0 ? 'counted' : 'estimated', packets: 'counted' },
      };
    }
    return this.estimate(payload, plain, null);
  }

  /** Without kernel counters: SYN/SYN-ACK/ACK plus one segment per MSS of payload and one ACK per flight. */
  private estimate(payload: Pair, plain: Pair | null, base: TcpCounters | null): WireTotals {
    const header = TCP_HEADER + TCP_TIMESTAMP_OPTION + this.ipHeader;
    const segs = (n: number): number => Math.ceil(n / ESTIMATE_MSS);
    const out = base ? base.segsOut + segs(payload.sent - base.bytesSent) : 2 + segs(payload.sent) + segs(payload.received);
    const inn = base ? base.segsIn + segs(payload.received - base.bytesReceived) : 1 + segs(payload.received) + segs(payload.sent);
    return {
      payload,
      plain,
      dns: { ...this.dns },
      bytes: { sent: payload.sent + out * header + SYN_OPTIONS_EXTRA, received: payload.received + inn * header + SYN_OPTIONS_EXTRA },
      packets: { sent: out, received: inn },
      provenance: { bytes: 'estimated', packets: 'estimated' },
    };
  }
}

/** A TCP connection with TLS on top, its set-up timed, its wire counted. */
export interface TlsConnection {
  tlsSocket: tls.TLSSocket;
  counter: TcpWire;
  setup: { connect: number; tls: number };
  info: TlsInfo;
}

/** Dials TCP, then runs TLS offering `alpn`: the shared opening of `dot`, `doh` and `doh1`. */
export async function openTls(
  endpoint: DialTarget,
  options: { timeoutMs: number; clock: Clock; ca?: string; tlsSession?: Buffer },
  alpn: string[],
): Promise<TlsConnection> {
  const { socket, connectMs } = await dialTcp(endpoint, options.timeoutMs, options.clock);
  const counter = new TcpWire(socket, endpoint.address);
  try {
    const { tlsSocket, tlsMs, info } = await startTls(
      socket,
      { serverName: endpoint.serverName ?? endpoint.address, ca: options.ca, alpn, session: options.tlsSession },
      options.timeoutMs,
      options.clock,
    );
    counter.tlsSocket = tlsSocket;
    return { tlsSocket, counter, setup: { connect: connectMs, tls: tlsMs }, info };
  } catch (err) {
    const failure = err as SetupFailure;
    failure.wire = counter.totals();
    failure.setup = { connect: connectMs, tls: null };
    socket.destroy();
    throw failure;
  }
}

/** A set-up error that knows what the attempt cost on the wire and how long its finished phases took. */
export type SetupFailure = DnscostError & { wire?: WireTotals; setup?: { connect: number | null; tls: number | null } };

/** Wire totals of nothing yet. */
export function zeroTotals(): WireTotals {
  return {
    bytes: { sent: 0, received: 0 },
    packets: { sent: 0, received: 0 },
    payload: { sent: 0, received: 0 },
    plain: null,
    dns: { sent: 0, received: 0 },
    provenance: { bytes: 'counted', packets: 'counted' },
  };
}
