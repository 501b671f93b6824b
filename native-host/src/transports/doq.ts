// DNS over QUIC (RFC 9250): ALPN "doq", one bidirectional stream per query with a 2-byte length prefix, DNS id 0,
// unpadded queries; the QUIC work is done by the companion (quic.ts, quic-companion.ts).
import { sharedCompanion } from './quic-companion.js';
import { quicTransport, type QuicKind } from './quic.js';
import type { Transport } from './transport.js';

/** What DoQ is beside what every QUIC transport is (tests build it over a companion of their own). */
export const DOQ: QuicKind = {
  id: 'doq',
  // RFC 9250 §4.2: each DNS message on its stream has a 2-byte length, counted with the message.
  lengthPrefix: 2,
  // RFC 9250 §4.1.1: port 853, over UDP.
  // Unpadded, as the DoQ client people run sends its queries: no browser speaks DoQ, a stub does, and AdGuard's
  // dnsproxy (the lab's DoQ path) sends them bare, 107-byte packets where the replay's padded ones were 198 (RFC 9250
  // §5.4 asks for padding; the replay measures what the path sends). On DSL's 0.8 Mbit/s uplink that made the replay's
  // 200 queries of a 100-host page 18 KB, 180 ms, heavier than the path's (validation/lookups/README.md).
  pad: false,
};

/** DNS over QUIC. */
export const doq: Transport = quicTransport(DOQ, () => sharedCompanion);
