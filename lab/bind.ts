// BIND 9.18 (Debian's bind9) in the lab, over UDP, TCP, DoT and DoH (h2), serving labZone() like the others, in one
// of two roles: authoritative for more zones (the signed zones of lab/dnssec.ts), or a validating resolver that
// forwards those zones to an authoritative server and holds their trust anchors. Recursion never leaves the box:
// the root hints point at loopback and every zone beyond the lab's is forwarded, forward only.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LOOPBACK_ROOT_HINTS, start, tcpTlsEndpoints, type LabResolver, type StartOptions } from './resolver.js';
import type { SignedZones } from './dnssec.js';
import { labZone } from './zone.js';

/** What a lab BIND serves beyond labZone(). */
export interface BindOptions extends Pick<StartOptions, 'workDir' | 'address' | 'netns' | 'certs' | 'ports' | 'onOutput'> {
  /** Authoritative for these zones too (files as written by signZones()). */
  zones?: SignedZones['zones'];
  /** A validating resolver: these zones forwarded to `to`, with these trust anchors. */
  forward?: { zones: string[]; to: { address: string; port: number }; anchors: SignedZones['anchors'] };
}

/** The executable: Debian installs it in /usr/sbin, outside a non-root PATH. */
function named(): string {
  return existsSync('/usr/sbin/named') ? '/usr/sbin/named' : 'named';
}

/**
 * Starts BIND. Configured, not defaulted, where the probe reads it: TLS 1.2 and 1.3 only, responses padded to 468
 * octets for clients that pad (RFC 8467), DNSSEC validation on only as a resolver.
 */
export function startBind(opts: BindOptions = {}): Promise<LabResolver> {
  const q = (s: string) => JSON.stringify(s);
  return start(
    {
      name: 'bind',
      async configure({ dir, address, ports, certs, serial }) {
        // A resolver's forwarded zones are delegated from its test. zone: BIND answers names inside a zone it serves
        // from that zone, and recurses (to the zone's forwarders) only past a delegation.
        const delegations = (opts.forward?.zones ?? []).flatMap((z) => [`${z}. IN NS ns.${z}.`, `ns.${z}. IN A 127.0.0.1`]);
        await writeFile(join(dir, 'test.zone'), labZone(serial) + delegations.map((l) => l + '\n').join(''));
        await writeFile(join(dir, 'root.hints'), LOOPBACK_ROOT_HINTS);
        const f = opts.forward;
        const conf = [
          'options {',
          `  directory ${q(dir)};`,
          `  pid-file ${q(join(dir, 'named.pid'))};`,
          `  session-keyfile ${q(join(dir, 'session.key'))};`,
          `  managed-keys-directory ${q(dir)};`,
          `  listen-on port ${ports.dns} { ${address}; };`,
          `  listen-on port ${ports.tls} tls lab-tls { ${address}; };`,
          `  listen-on port ${ports.https} tls lab-tls http lab-http { ${address}; };`,
          '  listen-on-v6 { none; };',
          '  allow-query { any; };',
          f ? '  recursion yes;\n  allow-recursion { any; };\n  dnssec-validation yes;' : '  recursion no;\n  dnssec-validation no;',
          '  response-padding { any; } block-size 468;',
          '  notify no;',
          '};',
          `tls lab-tls { key-file ${q(certs.keyFile)}; cert-file ${q(certs.certFile)}; protocols { TLSv1.2; TLSv1.3; }; };`,
          'http lab-http { endpoints { "/dns-query"; }; };',
          'zone "." { type hint; file "root.hints"; };',
          'zone "test." { type primary; file "test.zone"; };',
          ...(opts.zones ?? []).map((z) => `zone ${q(z.name + '.')} { type primary; file ${q(z.file)}; };`),
          ...(f ? f.zones.map((z) => `zone ${q(z + '.')} { type forward; forward only; forwarders { ${f.to.address} port ${f.to.port}; }; };`) : []),
          ...(f?.anchors.length
            ? ['trust-anchors {', ...f.anchors.map((a) => `  ${q(a.name + '.')} static-key ${a.flags} ${a.protocol} ${a.algorithm} ${q(a.key)};`), '};']
            : []),
        ].join('\n') + '\n';
        const confFile = join(dir, 'named.conf');
        await writeFile(confFile, conf);
        // -g: foreground, logs on stderr; -n 1: one worker thread, as the lab's other servers.
        return [named(), ['-g', '-n', '1', '-c', confFile]];
      },
      endpoints: tcpTlsEndpoints,
    },
    opts,
  );
}
