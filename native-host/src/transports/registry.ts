// One line per transport.
import type { TransportId } from '../../../common/transports.js';
import { doh } from './doh.js';
import { doh1 } from './doh1.js';
import { doh3 } from './doh3.js';
import { doq } from './doq.js';
import { dot } from './dot.js';
import { tcp } from './tcp.js';
import type { Transport } from './transport.js';
import { udp } from './udp.js';

/** Every transport this build measures, by id: the code (what each is, and how it is written, is common/transports.ts). */
export const REGISTRY: Record<TransportId, Transport> = { udp, tcp, dot, doh, doh1, doq, doh3 };

/** The transports that can run in this installation (doq and doh3 need the QUIC companion). */
export function availableTransports(transports: Record<TransportId, Transport> = REGISTRY): TransportId[] {
  return (Object.keys(transports) as TransportId[]).filter((id) => !transports[id].unavailable?.());
}
