// DNS over HTTPS over HTTP/3 (RFC 8484 over RFC 9114): ALPN "h3", a request stream per query, POST or GET ?dns=,
// DNS id 0; GET may travel in 0-RTT on a resumed connection. The QUIC work is done by the companion (quic.ts).
import { sharedCompanion } from './quic-companion.js';
import { quicTransport, type QuicKind } from './quic.js';
import type { Transport } from './transport.js';

/** What DoH3 is beside what every QUIC transport is (tests build it over a companion of their own). */
export const DOH3: QuicKind = {
  id: 'doh3',
  // HTTP/3 frames the message; no length prefix of DNS's own.
  lengthPrefix: 0,
  // HTTPS's port 443, over UDP; written h3:// so it is not taken for DoH over TCP.
  // Padded as the browsers pad their DoH (RFC 8467).
  pad: true,
};

/** DoH over HTTP/3. */
export const doh3: Transport = quicTransport(DOH3, () => sharedCompanion);
