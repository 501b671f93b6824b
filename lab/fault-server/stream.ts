// The fault server over TCP and DoT: length-prefixed messages, pipelined, each answered as soon as its plan allows
// (RFC 7766 §6.2.1.1), so a delayed answer may be overtaken by later ones on the same connection.
import net from 'node:net';
import tls from 'node:tls';
import { planFor, type Plan } from './faults.js';
import { debug, type Runtime } from './runtime.js';
import type { KeyPair } from './tls.js';

// RFC 1035 §4.2.2 / RFC 7858 §3.3: every message on a stream is preceded by its 2-byte length.
function frame(bytes: Buffer): Buffer {
  const len = Buffer.alloc(2);
  len.writeUInt16BE(bytes.length & 0xffff);
  return Buffer.concat([len, bytes]);
}

function serveStream(sock: net.Socket, transport: 'tcp' | 'dot', rt: Runtime): void {
  let buf: Buffer = Buffer.alloc(0);
  const writable = () => !sock.destroyed && sock.writable;
  sock.on('data', (chunk: Buffer) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    while (buf.length >= 2) {
      const len = buf.readUInt16BE(0);
      if (buf.length < 2 + len) break;
      const msg = buf.subarray(2, 2 + len);
      buf = buf.subarray(2 + len);
      let plan: Plan;
      try {
        plan = planFor(msg, transport, rt.seen).plan;
      } catch (err) {
        debug(transport, 'plan failed', err);
        continue;
      }
      switch (plan.kind) {
        case 'reply': {
          const bytes = plan.bytes;
          rt.later(plan.delayMs, () => writable() && sock.write(frame(bytes)));
          break;
        }
        case 'close-mid': {
          const framed = frame(plan.bytes);
          // Prefix plus half the message, then FIN (and close_notify over TLS): the reader sees a short read.
          if (writable()) sock.end(framed.subarray(0, 2 + Math.floor(plan.bytes.length / 2)));
          return;
        }
        case 'reset':
          if (transport === 'tcp') {
            if (!sock.destroyed) sock.resetAndDestroy();
          }
          else rt.resetUnder(sock);
          return;
        default:
          break; // drop, unparseable, http-only faults: silence, connection stays open
      }
    }
  });
}

/** A TCP server (not yet listening) serving DNS over TCP by the fault plan. */
export function createTcpServer(rt: Runtime): net.Server {
  return net.createServer((sock) => {
    rt.track(sock);
    serveStream(sock, 'tcp', rt);
  });
}

/** The TLS server behind the DoT listener (it is handed connections by tlsFront, never listens itself). */
export function createDotTls(leaf: KeyPair, rt: Runtime): tls.Server {
  // No ALPN list: RFC 7858 clients need not send "dot", and node rejects a mismatched ALPN offer with an alert.
  const dotTls = tls.createServer({ key: leaf.keyPem, cert: leaf.certPem });
  dotTls.on('tlsClientError', (err) => debug('dot tls error', err.message));
  dotTls.on('secureConnection', (sock) => {
    rt.track(sock);
    serveStream(sock, 'dot', rt);
  });
  return dotTls;
}
