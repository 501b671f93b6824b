// DNS over TLS (RFC 7858): TCP, then TLS (ALPN "dot", RFC 7858 §3.2 / IANA), then pipelined length-prefixed queries.
import { openTls } from '../dial.js';
import { LENGTH_PREFIX, StreamSession } from './stream.js';
import type { Transport } from './transport.js';

/** DNS over TLS. */
export const dot: Transport = {
  id: 'dot',
  zeroId: false,
  pad: true,
  lengthPrefix: LENGTH_PREFIX,
  // RFC 7858 §3.4 leaves the idle time to the client; stub resolvers such as stubby close after 10 s.
  idleMs: 10_000,
  socketPerQuery: false,
  splits: { tls: true, http: false },
  // RFC 7858 §3.1: port 853.
  async open(endpoint, options) {
    const c = await openTls(endpoint, options, ['dot']);
    return new StreamSession(c.tlsSocket, c.counter, c.setup, c.info);
  },
};
