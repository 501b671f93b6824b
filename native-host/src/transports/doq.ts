// DNS over QUIC (RFC 9250): ALPN "doq", one bidirectional stream per query with a 2-byte length prefix, DNS id 0,
// padded queries; the QUIC work is done by the companion (quic.ts, quic-companion.ts).
import { sharedCompanion } from './quic-companion.js';
import { quicTransport } from './quic.js';
import type { Transport } from './transport.js';

/** DNS over QUIC. */
export const doq: Transport = quicTransport('doq', () => sharedCompanion);
