// One line per transport.
import type { TransportId } from '../../../common/transports.js';
import { doh } from './doh.js';
import { doh1 } from './doh1.js';
import { dot } from './dot.js';
import { tcp } from './tcp.js';
import type { Transport } from './transport.js';
import { udp } from './udp.js';

/** Every transport this build measures, by id. */
export const TRANSPORTS: Record<TransportId, Transport> = { udp, tcp, dot, doh, doh1 };
