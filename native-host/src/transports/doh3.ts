// DNS over HTTPS over HTTP/3 (RFC 8484 over RFC 9114): ALPN "h3", a request stream per query, POST or GET ?dns=,
// DNS id 0; GET may travel in 0-RTT on a resumed connection. The QUIC work is done by the companion (quic.ts).
import { sharedCompanion } from './quic-companion.js';
import { quicTransport } from './quic.js';
import type { Transport } from './transport.js';

/** DoH over HTTP/3. */
export const doh3: Transport = quicTransport('doh3', () => sharedCompanion);
