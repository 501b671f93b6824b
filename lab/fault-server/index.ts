// The lab's fault-injecting resolver: answers, or deliberately mis-answers, by the query name's first label, over
// UDP, TCP, DoT, DoH (HTTP/2) and DoH over HTTP/1.1, so every failure dnscost classifies can be produced on demand.
import net from 'node:net';
import type tls from 'node:tls';
import { createDoh1Server, createDohServer } from './http.js';
import { Runtime } from './runtime.js';
import { createDotTls, createTcpServer } from './stream.js';
import { leafFor, tlsFront, trackTlsByPeer } from './tls.js';
import type { FaultServer, FaultServerOptions, FaultTlsMode } from './types.js';
import { bindUdp, createUdp } from './udp.js';

export type { FaultServer, FaultServerOptions, FaultTlsMode, FaultTransport, SeenQuery } from './types.js';

// Name the TLS endpoints carry; the lab certificate covers it and clients map it to `address`.
const TLS_HOST = 'dns.test';

function hostPort(address: string, port: number): string {
  return net.isIPv6(address) ? `[${address}]:${port}` : `${address}:${port}`;
}

/**
 * Starts every listener on free loopback ports; resolves once all are listening.
 *
 * First label → behaviour (rest of the name is free, e.g. `servfail.fault.test`):
 *   ok (anything unknown)  NOERROR, A 192.0.2.53 TTL 60 (AAAA 2001:db8::53 for AAAA, a SOA for SOA, as the lab's
 *                          readiness probe asks through a front such as dnsproxy; no answer for other types)
 *   delay-<ms>             the ok answer after <ms> (capped at 60 s); on TCP/DoT later queries may overtake it
 *   drop                   never answer; streams stay open and silent
 *   tc                     NOERROR, TC=1, no answers, on every transport
 *   servfail refused nxdomain formerr   that rcode
 *   malformed / short      40 bytes of 0xff / the first 7 bytes of the answer, correctly framed
 *   wrong-id               id+1 (id 0, as DoH sends, becomes 0x1234)
 *   wrong-question         question and answer for other.fault.test
 *   close-mid              stream transports: half the message, then the connection ends; UDP: drop
 *   reset                  stream transports: TCP RST; UDP: drop
 *   goaway / rst-stream    HTTP/2 GOAWAY excluding this stream / RST_STREAM INTERNAL_ERROR; elsewhere: drop
 *   http-<status>          DoH/DoH1: that HTTP status with a text body; plain DNS transports: the ok answer
 *   bad-ctype              DoH/DoH1: the ok answer as text/html; plain DNS transports: the ok answer
 *   big                    ~3000 bytes of A records; over UDP truncated (TC=1) to the client's EDNS size or 512
 *   many-<n>               n A (or AAAA) records, at most 4,000 A (~64 KB) or what fits one datagram, names
 *                          compressed, whole on every transport: over UDP too, whatever EDNS size the client said
 *
 * The TLS listeners (dot, doh, doh1) can also misbehave before any DNS, for the whole server: FaultTlsMode.
 */
export async function startFaultServer(opts: FaultServerOptions): Promise<FaultServer> {
  const address = opts.address ?? '127.0.0.1';
  const mode: FaultTlsMode = opts.tls ?? 'ok';
  const leaf = leafFor(opts, mode);
  const rt = new Runtime();

  // faults.ts decides (label → Plan, answer building); udp.ts, stream.ts (TCP, DoT) and http.ts (DoH h2, h1)
  // carry the plans out; tls.ts is the TLS front and certificates; runtime.ts holds shared state and stop().
  const udp = createUdp(address, rt);
  const tcp = createTcpServer(rt);
  const h2 = createDohServer(leaf, rt);
  const h1 = createDoh1Server(leaf, rt);
  const dotTls = createDotTls(leaf, rt);
  for (const inner of [h2, h1] as tls.Server[]) trackTlsByPeer(inner, rt);

  const dot = tlsFront(dotTls, mode, rt);
  const doh = tlsFront(h2, mode, rt);
  const doh1 = tlsFront(h1, mode, rt);

  const udpPort = await bindUdp(udp, address);
  const [tcpPort, dotPort, dohPort, doh1Port] = await Promise.all([rt.listen(tcp, address), rt.listen(dot, address), rt.listen(doh, address), rt.listen(doh1, address)]);

  return {
    address,
    seen: rt.seen,
    endpoints: {
      udp: `udp://${hostPort(address, udpPort)}`,
      tcp: `tcp://${hostPort(address, tcpPort!)}`,
      dot: `tls://${TLS_HOST}:${dotPort}`,
      doh: `https://${TLS_HOST}:${dohPort}/dns-query`,
      doh1: `https://${TLS_HOST}:${doh1Port}/dns-query`,
    },
    stop: () => rt.stop(udp),
  };
}
