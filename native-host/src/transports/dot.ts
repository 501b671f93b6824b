// DNS over TLS (RFC 7858): TCP, then TLS (ALPN "dot", RFC 7858 §3.2 / IANA), then pipelined length-prefixed queries.
import { dialTcp, startTls, TcpWire } from '../dial.js';
import { StreamSession } from './stream.js';
import type { Transport } from './transport.js';

/** DNS over TLS. */
export const dot: Transport = {
  id: 'dot',
  zeroId: false,
  pad: true,
  async open(endpoint, options) {
    const { socket, connectMs } = await dialTcp(endpoint, options.timeoutMs, options.clock);
    const counter = new TcpWire(socket, endpoint.address);
    const { tlsSocket, tlsMs, info } = await startTls(
      socket,
      { serverName: endpoint.serverName ?? endpoint.address, ca: options.ca, alpn: ['dot'], session: options.tlsSession },
      options.timeoutMs,
      options.clock,
    );
    counter.tlsSocket = tlsSocket;
    return new StreamSession(tlsSocket, counter, { connect: connectMs, tls: tlsMs }, info);
  },
};
