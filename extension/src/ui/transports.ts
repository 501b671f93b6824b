// How the extension's pages draw a transport: one colour each, the same in the popup's waterfall and the dashboard's
// charts. Names are not here: pages take them from common/transports.ts TRANSPORTS (`name` in sentences, `short` in
// tables and charts).
import type { TransportId } from '../../../common/transports.js';

/** One colour per transport (a new transport id fails to compile until it has one). */
export const TRANSPORT_COLOURS: Record<TransportId, string> = { udp: '#44aa77', tcp: '#2277aa', dot: '#aa7722', doh: '#aa2277', doh1: '#7722aa', doq: '#228888', doh3: '#888822' };
