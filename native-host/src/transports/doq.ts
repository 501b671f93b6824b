// DNS over QUIC (RFC 9250): ALPN "doq", one bidirectional stream per query with a 2-byte length prefix, DNS id 0,
// padded queries; the QUIC work is done by the companion (quic.ts, quic-companion.ts).
import { sharedCompanion } from './quic-companion.js';
import { quicTransport, type QuicKind } from './quic.js';
import type { Transport } from './transport.js';

/** What DoQ is beside what every QUIC transport is (tests build it over a companion of their own). */
export const DOQ: QuicKind = {
  id: 'doq',
  // RFC 9250 §4.2: each DNS message on its stream has a 2-byte length, counted with the message.
  lengthPrefix: 2,
  // RFC 9250 §4.1.1: port 853, over UDP.
};

/** DNS over QUIC. */
export const doq: Transport = quicTransport(DOQ, () => sharedCompanion);
