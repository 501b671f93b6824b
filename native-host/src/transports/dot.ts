// DNS over TLS (RFC 7858): TCP, then TLS (ALPN "dot", RFC 7858 §3.2 / IANA), then pipelined length-prefixed queries.
import { openTls } from '../dial.js';
import { StreamSession } from './stream.js';
import type { Transport } from './transport.js';

/** DNS over TLS. */
export const dot: Transport = {
  id: 'dot',
  zeroId: false,
  pad: true,
  async open(endpoint, options) {
    const c = await openTls(endpoint, options, ['dot']);
    return new StreamSession(c.tlsSocket, c.counter, c.setup, c.info);
  },
};
