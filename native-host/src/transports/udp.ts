// Do53 over UDP (RFC 1035): a new socket (a new random source port) per query, as stub resolvers do against
// spoofing, bound when the session opens and closed once the answer is handed over. A truncated answer is returned as
// it is: no fallback to TCP here.
import dgram from 'node:dgram';
import net from 'node:net';
import { CODES, DnscostError } from '../../../common/errors.js';
import { canonicalIp } from '../../../common/ip-address.js';
import { socketError, udpWireBytes, zeroTotals, type WireTotals } from '../dial.js';
import type { Session, SessionEvent, Transport } from './transport.js';

class UdpSession implements Session {
  readonly setup = { connect: null, tls: null };
  readonly tls = null;
  readonly usable = true;
  private totals: WireTotals = zeroTotals();
  /** The server's address in canonical form, to compare each datagram's source with. */
  private readonly canonical: string;

  constructor(
    private readonly address: string,
    private readonly port: number,
    /** A socket bound when the session opened, for its first exchange; later ones make their own. */
    private spare: dgram.Socket | null,
  ) {
    this.canonical = canonicalIp(address);
  }

  exchange(query: Buffer, id: number, timeoutMs: number): Promise<Buffer> {
    const socket = this.spare ?? socketFor(this.address);
    this.spare = null;
    const t = this.totals;
    return new Promise<Buffer>((resolve, reject) => {
      // Settles once: a late send error after the timeout, or a second datagram, must not close the socket again.
      let settled = false;
      const done = (err: DnscostError | null, answer?: Buffer): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(answer!);
        // Closed after the engine has taken its clock (it resumes in the microtask queued by settling, before this
        // one): closing a local socket is not the lookup's time.
        queueMicrotask(() => socket.close());
      };
      const timer = setTimeout(() => done(new DnscostError(CODES.TIMEOUT, `query: no answer within ${Math.round(timeoutMs)} ms`)), timeoutMs);
      socket.on('error', (err) => done(socketError(err, 'query')));
      socket.on('message', (msg, rinfo) => {
        // Only the server's own address and port can answer (RFC 5452 §9.1); anything else is not counted as ours.
        // Compared in canonical form: `::ffff:192.0.2.1` is 192.0.2.1, `0:0::1` is ::1.
        if (rinfo.port !== this.port || (rinfo.address !== this.address && canonicalIp(rinfo.address) !== this.canonical)) return;
        t.packets.received += 1;
        t.payload.received += msg.length;
        t.dns.received += msg.length;
        t.bytes.received += udpWireBytes(this.address, msg.length);
        done(null, msg);
      });
      socket.send(query, this.port, this.address, (err) => {
        if (err) return done(socketError(err, 'send'));
        t.packets.sent += 1;
        t.payload.sent += query.length;
        t.dns.sent += query.length;
        t.bytes.sent += udpWireBytes(this.address, query.length);
      });
    });
  }

  wire(): WireTotals {
    const t = this.totals;
    return { ...t, bytes: { ...t.bytes }, packets: { ...t.packets }, payload: { ...t.payload }, dns: { ...t.dns } };
  }

  drainEvents(): SessionEvent[] {
    return [];
  }

  resumable(): null {
    return null;
  }

  close(): void {
    this.spare?.close();
    this.spare = null;
  }
}

/** A new UDP socket of the server address's family. */
function socketFor(address: string): dgram.Socket {
  return dgram.createSocket(net.isIPv6(address) ? 'udp6' : 'udp4');
}

/**
 * A socket bound to a random port, ready to send. Opening a session binds one, so that where the engine opens the
 * session before its clock starts (a cold exchange over UDP: exchange.ts) binding is not timed as the lookup's.
 */
function bound(address: string): Promise<dgram.Socket> {
  const socket = socketFor(address);
  return new Promise((resolve, reject) => {
    const failed = (err: Error): void => {
      socket.close();
      reject(socketError(err, 'bind'));
    };
    socket.once('error', failed);
    socket.bind(0, () => {
      socket.off('error', failed);
      resolve(socket);
    });
  });
}

/** Do53 over UDP. */
export const udp: Transport = {
  id: 'udp',
  zeroId: false,
  pad: false,
  lengthPrefix: 0,
  idleMs: null,
  socketPerQuery: true,
  splits: { tls: false, http: false },
  async open(endpoint) {
    return new UdpSession(endpoint.address, endpoint.port, await bound(endpoint.address));
  },
};
