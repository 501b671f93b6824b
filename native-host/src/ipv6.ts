// Whether this machine reaches the IPv6 internet, decided as Chromium decides it before it asks AAAA (net/dns
// host_resolver_manager: a UDP connect to a global IPv6 address, port 443, which sends no packet; reachable when the
// kernel finds a route and a source address that is neither link-local nor Teredo, 2001::/32).
import { createSocket } from 'node:dgram';

/** Google Public DNS's IPv6 address, as Chromium probes (no packet is sent to it: a connect only picks a route). */
export const IPV6_PROBE = '2001:4860:4860::8888';

/** True when a route to `probe` exists from a usable source address; never throws, settles within a second. */
export function ipv6Reachable(probe = IPV6_PROBE): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createSocket('udp6');
    let settled = false;
    const done = (ok: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.close();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), 1000);
    socket.on('error', () => done(false));
    socket.connect(443, probe, () => {
      const source = socket.address().address.toLowerCase();
      done(!/^fe[89ab][0-9a-f]:/.test(source) && !/^2001:0*:/.test(source) && source !== '::');
    });
  });
}
