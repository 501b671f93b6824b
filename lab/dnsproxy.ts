// AdGuard dnsproxy (lab/dnsproxy, built by lab/build.sh) in front of a lab resolver: UDP, TCP, DoT, DoH
// (h2 and HTTP/1.1), DoQ and DoH3, forwarding every query to the resolver over UDP (TCP when truncated). Unlike the
// lab's CoreDNS it accepts 0-RTT on DoQ (quic-go ListenEarly) and sends full-size answers over QUIC and HTTPS.
// It clears AA in the answers it relays (a forwarder's answer is not authoritative).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { labBin } from './paths.js';
import type { LabCerts } from './certs.js';
import { hostPort, pickPorts, spawnLabChild, type LabEndpoints, type LabResolver, type PortName } from './resolver.js';

/** A running dnsproxy; endpoints have the same shape as a LabResolver's (names dns.test, pin them to `address`). */
export interface LabDnsproxy {
  name: 'dnsproxy';
  address: string;
  ports: Record<PortName, number>;
  endpoints: Required<LabEndpoints>;
  /** The upstream's certs: clients trust the same CA and send SNI dns.test. */
  certs: LabCerts;
  /** The server it forwards to (plain DNS over UDP). */
  upstream: DnsproxyUpstream;
  logs(): string;
  stop(): Promise<void>;
}

/**
 * What dnsproxy forwards to: a lab resolver, or any server answering `test. SOA` over UDP with the lab's certs (the
 * fault server, whose slow names then reach DoQ and DoH3 clients through it).
 */
export type DnsproxyUpstream = Pick<LabResolver, 'address' | 'certs'> & { endpoints: Pick<LabEndpoints, 'udp'> };

export interface DnsproxyOptions {
  /** Address to listen on; default the upstream's address (127.0.0.1 for a loopback lab resolver). */
  address?: string;
  /** Run inside `ip netns exec NS` (the upstream's namespace, or one that reaches it). */
  netns?: string;
  /** Fixed ports; unset ones are picked free on the address, or 1053/1853/1443 in a netns. */
  ports?: Partial<Record<PortName, number>>;
  /** Debug logging (every query) to the process output. */
  verbose?: boolean;
}

const READY_TIMEOUT_MS = 10_000;
const NETNS_PORTS: Record<PortName, number> = { dns: 1053, tls: 1853, https: 1443 };
const PORT_RACE = /address already in use/i;

/** Path of the lab's dnsproxy binary built by lab/build.sh. */
export function dnsproxyBinary(): string {
  return labBin('dnsproxy');
}


function kdig(netns: string | undefined, args: string[]): Promise<{ ok: boolean; out: string }> {
  const [cmd, full] = netns ? ['ip', ['netns', 'exec', netns, 'kdig', ...args]] : ['kdig', args];
  return new Promise((resolve) => {
    execFile(cmd, full, { timeout: 3000 }, (err, stdout, stderr) => resolve({ ok: !err, out: stdout + stderr }));
  });
}

/** The SOA serial a server answers for test. (UDP or TCP), or undefined. */
async function serial(netns: string | undefined, address: string, port: number, tcp: boolean): Promise<string | undefined> {
  const r = await kdig(netns, [`@${address}`, '-p', String(port), 'test.', 'SOA', tcp ? '+tcp' : '+notcp', '+time=1', '+retry=0', '+short']);
  return r.ok ? r.out.split(/\s+/)[2] : undefined;
}

/**
 * Starts dnsproxy in front of `upstream` (forwarding over UDP to its `udp` endpoint) with the upstream's certs.
 * Ready once every listener is bound and the upstream's SOA serial comes back through it over UDP and TCP.
 */
export async function startDnsproxy(upstream: DnsproxyUpstream, opts: DnsproxyOptions = {}): Promise<LabDnsproxy> {
  const bin = dnsproxyBinary();
  if (!existsSync(bin)) throw new Error(`lab: ${bin} missing; run: bash lab/build.sh`);
  const address = opts.address ?? upstream.address;
  const upstreamPort = Number(/:(\d+)$/.exec(upstream.endpoints.udp)?.[1]);
  const want = await serial(opts.netns, upstream.address, upstreamPort, false);
  if (!want) throw new Error(`lab: the upstream ${upstream.endpoints.udp} does not answer test. SOA`);
  const autoPorts = !opts.netns && Object.keys(opts.ports ?? {}).length < 3;
  for (let attempt = 1; ; attempt++) {
    const ports = await pickPorts(opts, address, NETNS_PORTS);
    try {
      return await launch(upstream, opts, address, ports, want);
    } catch (e) {
      if (!autoPorts || attempt >= 3 || !PORT_RACE.test(String(e))) throw e;
    }
  }
}

async function launch(upstream: DnsproxyUpstream, opts: DnsproxyOptions, address: string, ports: Record<PortName, number>, want: string): Promise<LabDnsproxy> {
  const args = [
    '-listen', address,
    '-dns-port', String(ports.dns), '-tls-port', String(ports.tls), '-https-port', String(ports.https),
    '-cert', upstream.certs.certFile, '-key', upstream.certs.keyFile,
    '-upstream', upstream.endpoints.udp,
    ...(opts.verbose ? ['-verbose'] : []),
  ];
  const { child, log, stop } = spawnLabChild(dnsproxyBinary(), args, { netns: opts.netns });
  try {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    let ready = false;
    for (let round = 0; !ready; round++) {
      if (Date.now() > deadline) throw new Error(`lab: dnsproxy not ready on ${hostPort(address, ports.dns)} within ${READY_TIMEOUT_MS} ms\n${log()}`);
      await new Promise((r) => setTimeout(r, round ? 50 : 0));
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`lab: dnsproxy exited (${child.exitCode ?? child.signalCode ?? 'spawn failed'}) before answering:\n${log()}`);
      }
      if (!log().includes('dnsproxy-lab ready')) continue;
      ready = (await serial(opts.netns, address, ports.dns, false)) === want && (await serial(opts.netns, address, ports.dns, true)) === want;
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    name: 'dnsproxy',
    address,
    ports,
    certs: upstream.certs,
    upstream,
    logs: log,
    stop,
    endpoints: {
      udp: `udp://${hostPort(address, ports.dns)}`,
      tcp: `tcp://${hostPort(address, ports.dns)}`,
      dot: `tls://dns.test:${ports.tls}`,
      doh: `https://dns.test:${ports.https}/dns-query`,
      doq: `quic://dns.test:${ports.tls}`,
      doh3: `h3://dns.test:${ports.https}/dns-query`,
    },
  };
}
