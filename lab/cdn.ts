// The lab's CDN (issue 29 item 1): two "edges" of one service at different round trips, an authoritative server that
// answers each client with its nearest edge (CoreDNS with the lab's cdnmap plugin, lab/coredns/cdnmap: by the EDNS
// Client Subnet a resolver sends, else by the resolver's own address), and two unbound resolvers in front of it: one
// sends the client's subnet (unbound's subnetcache module), one does not. A client in CDN_NET.clients asking the first
// gets the near edge; asking the second, whose own address is elsewhere, the far one: a public resolver's CDN penalty.
//
// Call it as root inside a network namespace of its own (tests/support/namespace.ts): it adds its addresses to that
// namespace's loopback and an iptables rule per edge that hands the edge's packets to the lab's netem delayer, so
// every TCP handshake with an edge takes its round trip.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { coreDNSBinary, start, tcpTlsEndpoints, type LabResolver } from './resolver.js';
import { startNetem } from './netns.js';
import { labZone } from './zone.js';

/** The CDN's zone: every name in it is one service, answered by edge. */
export const CDN_ZONE = 'cdn.example';

/** The lab CDN's addresses (on the namespace's loopback). */
export const CDN_NET = {
  /** The clients' subnet: where the measuring host asks from (a query to 10.9.0.x leaves from that address). */
  clients: '10.9.0.0/24',
  authoritative: '10.9.0.53',
  /** The resolvers: one sending ECS, one not; each sends its upstream queries from its own address outside `clients`. */
  ecs: { listen: '10.9.0.2', outgoing: '10.9.5.98' },
  plain: { listen: '10.9.0.3', outgoing: '10.9.5.99' },
  near: '10.9.1.1',
  far: '10.9.2.1',
} as const;

/** A running lab CDN. */
export interface CdnLab {
  authoritative: LabResolver;
  /** The resolver that sends the client's subnet, and the one that does not. */
  ecs: LabResolver;
  plain: LabResolver;
  /** The edges' addresses and the port they accept TCP on. */
  near: string;
  far: string;
  port: number;
  stop(): Promise<void>;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe', timeout: 5000 });

/** The authoritative server: the lab zone (for readiness) and CDN_ZONE by client subnet. */
function startAuthoritative(): Promise<LabResolver> {
  return start({
    name: 'coredns',
    async configure({ dir, address, ports, serial }) {
      const zoneFile = join(dir, 'db.test');
      await writeFile(zoneFile, labZone(serial));
      const corefile = [
        `dns://test.:${ports.dns} {`, `  bind ${address}`, `  file ${zoneFile} test.`, '}',
        `dns://${CDN_ZONE}.:${ports.dns} {`, `  bind ${address}`, '  cdnmap {', `    subnet ${CDN_NET.clients} ${CDN_NET.near}`, `    default ${CDN_NET.far}`, '  }', '}',
      ].join('\n') + '\n';
      const conf = join(dir, 'Corefile');
      await writeFile(conf, corefile);
      return [coreDNSBinary(), ['-conf', conf]];
    },
    endpoints: tcpTlsEndpoints,
  }, { address: CDN_NET.authoritative, ports: { dns: 53, tls: 853, https: 443 } });
}

/** One unbound: the lab zone itself, CDN_ZONE forwarded to the authoritative from `outgoing`, with ECS when `ecs`. */
function startResolver(side: { listen: string; outgoing: string }, ecs: boolean): Promise<LabResolver> {
  return start({
    name: 'unbound',
    async configure({ dir, address, ports, serial }) {
      const zoneFile = join(dir, 'test.zone');
      await writeFile(zoneFile, labZone(serial));
      const conf = [
        'server:',
        '  verbosity: 1', '  do-daemonize: no', '  chroot: ""', '  username: ""', `  directory: "${dir}"`, `  pidfile: "${join(dir, 'unbound.pid')}"`,
        '  use-syslog: no', '  logfile: ""', '  num-threads: 1', '  interface-automatic: no', '  so-reuseport: no',
        `  interface: ${address}@${ports.dns}`, `  port: ${ports.dns}`, `  outgoing-interface: ${side.outgoing}`,
        '  access-control: 0.0.0.0/0 allow',
        `  module-config: "${ecs ? 'subnetcache iterator' : 'iterator'}"`,
        // ECS as a public resolver that sends it does: the client's /24 (RFC 7871 §11.1), only to this server.
        ...(ecs ? [`  send-client-subnet: ${CDN_NET.authoritative}`, '  max-client-subnet-ipv4: 24'] : []),
        '  local-zone: "." refuse', '  local-zone: "test." transparent', `  local-zone: "${CDN_ZONE}." transparent`,
        'auth-zone:', '  name: "test."', `  zonefile: "${zoneFile}"`, '  for-downstream: yes', '  for-upstream: no', '  fallback-enabled: no',
        'forward-zone:', `  name: "${CDN_ZONE}."`, `  forward-addr: ${CDN_NET.authoritative}@53`,
        'remote-control:', '  control-enable: no',
      ].join('\n') + '\n';
      const confFile = join(dir, 'unbound.conf');
      await writeFile(confFile, conf);
      return [existsSync('/usr/sbin/unbound') ? '/usr/sbin/unbound' : 'unbound', ['-d', '-c', confFile]];
    },
    endpoints: tcpTlsEndpoints,
  }, { address: side.listen, ports: { dns: 53, tls: 853, https: 443 } });
}

/** An edge: accepts TCP on `port` and closes each connection at once (the host only times the handshake). */
async function startEdge(address: string, port: number): Promise<Server> {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => resolve());
  });
  return server;
}

/**
 * Starts the lab CDN: the edges at `nearRttMs` and `farRttMs` round trips (every packet from an edge waits that long
 * in the lab's netem delayer), the authoritative server and the two resolvers. stop() undoes all of it but the
 * addresses, which go with the namespace.
 */
export async function startCdnLab(o: { nearRttMs: number; farRttMs: number; port?: number }): Promise<CdnLab> {
  const port = o.port ?? 443;
  for (const a of [CDN_NET.authoritative, CDN_NET.ecs.listen, CDN_NET.plain.listen, CDN_NET.ecs.outgoing, CDN_NET.plain.outgoing, CDN_NET.near, CDN_NET.far]) {
    ip('addr', 'add', `${a}/32`, 'dev', 'lo');
  }
  const stops: Array<() => Promise<void> | void> = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s();
  };
  try {
    const delayers: ChildProcess[] = [];
    stops.push(() => delayers.forEach((d) => d.kill('SIGTERM')));
    for (const [queue, edge, rtt] of [[21, CDN_NET.near, o.nearRttMs], [22, CDN_NET.far, o.farRttMs]] as const) {
      delayers.push(await startNetem({ queue, delayMs: rtt, jitterMs: 0 }));
      execFileSync('iptables', ['-A', 'INPUT', '-p', 'tcp', '-s', edge, '--sport', String(port), '-j', 'NFQUEUE', '--queue-num', String(queue)], { timeout: 5000 });
      const server = await startEdge(edge, port);
      stops.push(() => new Promise<void>((r) => server.close(() => r())));
    }
    const authoritative = await startAuthoritative();
    stops.push(() => authoritative.stop());
    const ecs = await startResolver(CDN_NET.ecs, true);
    stops.push(() => ecs.stop());
    const plain = await startResolver(CDN_NET.plain, false);
    stops.push(() => plain.stop());
    return { authoritative, ecs, plain, near: CDN_NET.near, far: CDN_NET.far, port, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
