// Do53 over TCP (RFC 7766): one connection, pipelined length-prefixed queries.
import { dialTcp, TcpWire } from '../dial.js';
import { LENGTH_PREFIX, StreamSession } from './stream.js';
import type { Transport } from './transport.js';

/** Do53 over TCP. */
export const tcp: Transport = {
  id: 'tcp',
  zeroId: false,
  pad: false,
  lengthPrefix: LENGTH_PREFIX,
  idleMs: null,
  socketPerQuery: false,
  splits: { tls: false, http: false },
  async open(endpoint, options) {
    const { socket, connectMs } = await dialTcp(endpoint, options.timeoutMs, options.clock);
    return new StreamSession(socket, new TcpWire(socket, endpoint.address), { connect: connectMs, tls: null }, null);
  },
};
