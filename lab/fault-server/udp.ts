// The fault server over UDP: one datagram in, at most one out; stream-only faults read as silence, and a large
// answer is truncated (TC=1) to what the client said it can take.
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket from 'dns-packet';
import type { DecodedPacket, Packet } from 'dns-packet';
import { planFor, queryOpt } from './faults.js';
import { debug, type Runtime } from './runtime.js';

// RFC 6891 §6.2.5: a requestor's payload size below 512 is treated as 512.
const UDP_MIN = 512;

// RFC 1035 §4.2.1 / RFC 6891 §7: a UDP answer larger than the requestor's buffer is cut at whole records and
// marked TC; we keep as many answers as fit (what e.g. PowerDNS does) so the datagram ends near the limit.
function truncateForUdp(packet: Packet, bytes: Buffer, limit: number): Buffer {
  if (bytes.length <= limit) return bytes;
  const all = packet.answers ?? [];
  const flags = (packet.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE;
  let lo = 0;
  let hi = all.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (dnsPacket.encodingLength({ ...packet, answers: all.slice(0, mid) }) <= limit) lo = mid;
    else hi = mid - 1;
  }
  const out = dnsPacket.encode({ ...packet, flags, answers: all.slice(0, lo) });
  // A question too long to fit even alone: send the bare header with TC, still within the limit.
  return out.length <= limit ? out : Buffer.concat([out.subarray(0, 4), Buffer.alloc(8)]);
}

function udpLimit(query: DecodedPacket): number {
  const opt = queryOpt(query);
  if (!opt) return UDP_MIN; // RFC 1035 §4.2.1
  return Math.max(UDP_MIN, Math.min(65_535, opt.udpPayloadSize || UDP_MIN));
}

/** An unbound UDP socket for `address`'s family that answers every datagram by the fault plan. */
export function createUdp(address: string, rt: Runtime): dgram.Socket {
  const udp = dgram.createSocket({ type: net.isIPv6(address) ? 'udp6' : 'udp4' });
  udp.on('error', (err) => debug('udp error', err.message));
  udp.on('message', (msg, rinfo) => {
    try {
      const { plan, query } = planFor(msg, 'udp', rt.seen);
      if (plan.kind !== 'reply') return; // every stream-only fault reads as silence over UDP
      const bytes = plan.packet && query ? truncateForUdp(plan.packet, plan.bytes, udpLimit(query)) : plan.bytes;
      rt.later(plan.delayMs, () => udp.send(bytes, rinfo.port, rinfo.address, (err) => err && debug('udp send', err.message)));
    } catch (err) {
      debug('udp handler', err);
    }
  });
  return udp;
}

/** Binds udp to a free port of address; resolves with the port. */
export function bindUdp(udp: dgram.Socket, address: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    udp.once('error', reject);
    udp.bind({ address, port: 0 }, () => {
      udp.off('error', reject);
      resolve(udp.address().port);
    });
  });
}
