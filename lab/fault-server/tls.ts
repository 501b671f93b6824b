// The fault server's TLS listeners: which certificate a TLS mode serves, and the plain TCP front that stalls, sends
// an alert, or hands the connection to the TLS server beneath (DoT, DoH h2 or DoH over HTTP/1.1).
import net from 'node:net';
import type tls from 'node:tls';
import { connKey, type Runtime } from './runtime.js';
import type { FaultServerOptions, FaultTlsMode } from './types.js';

// A TLS 1.2-framed fatal alert record, handshake_failure (RFC 8446 §6, §B.2: level 2, description 40).
const TLS_ALERT_HANDSHAKE_FAILURE = Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28]);

/** A certificate and its key, PEM. */
export interface KeyPair {
  certPem: string;
  keyPem: string;
}

/** The certificate the TLS listeners serve in `mode`; throws when that mode's certificate was not given. */
export function leafFor(opts: FaultServerOptions, mode: FaultTlsMode): KeyPair {
  let leaf = { certPem: opts.certPem, keyPem: opts.keyPem };
  if (mode === 'expired') {
    if (!opts.expiredCert) throw new Error("startFaultServer: tls 'expired' needs opts.expiredCert");
    leaf = opts.expiredCert;
  } else if (mode === 'wrong-name') {
    if (!opts.wrongNameCert) throw new Error("startFaultServer: tls 'wrong-name' needs opts.wrongNameCert");
    leaf = opts.wrongNameCert;
  }
  return leaf;
}

/** Tracks inner's TLS sockets, by peer in rt.tlsByPeer, so DoH handlers can reach the real socket. */
export function trackTlsByPeer(inner: tls.Server, rt: Runtime): void {
  inner.on('secureConnection', (sock: tls.TLSSocket) => {
    const key = connKey(sock);
    rt.tlsByPeer.set(key, sock);
    rt.track(sock);
    sock.on('close', () => rt.tlsByPeer.delete(key));
  });
}

/**
 * A plain TCP server (not yet listening) in front of inner: it hands connections to inner only in the modes that
 * handshake, so 'stall' and 'alert' can misbehave before TLS begins; every raw socket is kept in rt.raws.
 */
export function tlsFront(inner: tls.Server, mode: FaultTlsMode, rt: Runtime): net.Server {
  return net.createServer((raw) => {
    rt.track(raw);
    const key = connKey(raw);
    rt.raws.set(key, raw);
    raw.on('close', () => rt.raws.delete(key));
    if (rt.stopped) return void raw.destroy();
    if (mode === 'stall') return; // accept, read nothing, say nothing: the client's handshake timer must fire
    if (mode === 'alert') {
      raw.once('data', () => {
        if (!raw.destroyed) raw.end(TLS_ALERT_HANDSHAKE_FAILURE);
      });
      return;
    }
    inner.emit('connection', raw);
  });
}
