// Two DNSSEC-signed lab zones, signed with BIND's own tools (dnssec-keygen, dnssec-signzone): signed.test, whose
// trust anchor is its key (a validating resolver answers it with AD), and bogus.test, whose trust anchor is a key the
// zone was never signed with (a validating resolver answers SERVFAIL, as for a broken chain of trust in the wild).
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { run } from './capture.js';

const TOOL_TIMEOUT_MS = 30_000;

/** The signed zones' names and the address their names answer. */
export const SIGNED_ZONES = { signed: 'signed.test', bogus: 'bogus.test', a: '192.0.2.53' } as const;

/** Zone files to serve (signed) and the trust anchors a validating resolver is given for them. */
export interface SignedZones {
  zones: { name: string; file: string }[];
  /** One DNSKEY per zone as `NAME FLAGS PROTOCOL ALGORITHM BASE64`. */
  anchors: { name: string; flags: number; protocol: number; algorithm: number; key: string }[];
}

/** A fresh ECDSA P-256 key for `zone` in `dir` (the key's base name, without .key/.private). */
async function keygen(dir: string, zone: string): Promise<string> {
  return (await run('dnssec-keygen', ['-q', '-a', 'ECDSAP256SHA256', '-f', 'KSK', '-K', dir, zone], TOOL_TIMEOUT_MS)).trim();
}

/** The DNSKEY of a key file written by dnssec-keygen. */
async function dnskey(dir: string, base: string): Promise<SignedZones['anchors'][number]> {
  const text = await readFile(join(dir, `${base}.key`), 'utf8');
  const line = text.split('\n').find((l) => l.trim() && !l.startsWith(';'));
  const m = line && /^(\S+)\s+(?:\d+\s+)?IN\s+DNSKEY\s+(\d+)\s+(\d+)\s+(\d+)\s+(.+)$/.exec(line.trim());
  if (!m) throw new Error(`lab: no DNSKEY in ${base}.key`);
  return { name: m[1]!.replace(/\.$/, ''), flags: Number(m[2]), protocol: Number(m[3]), algorithm: Number(m[4]), key: m[5]!.replace(/\s+/g, '') };
}

/** Writes, keys and signs both zones in `dir`. */
export async function signZones(dir: string): Promise<SignedZones> {
  const zones: SignedZones['zones'] = [];
  const anchors: SignedZones['anchors'] = [];
  for (const zone of [SIGNED_ZONES.signed, SIGNED_ZONES.bogus]) {
    const key = await keygen(dir, zone);
    const text = [
      `$ORIGIN ${zone}.`,
      '$TTL 300',
      `@ IN SOA ns.${zone}. hostmaster.${zone}. 1 3600 600 86400 60`,
      `@ IN NS ns.${zone}.`,
      'ns IN A 127.0.0.1',
      `@ IN A ${SIGNED_ZONES.a}`,
      `www IN A ${SIGNED_ZONES.a}`,
      `$INCLUDE ${join(dir, `${key}.key`)}`,
    ].join('\n') + '\n';
    const file = join(dir, `${zone}.zone`);
    await writeFile(file, text);
    // -z: the one key signs every set (no separate zone-signing key needed for a lab zone); -d: its dsset file goes to
    // `dir` too, not to the working directory.
    await run('dnssec-signzone', ['-q', '-z', '-o', zone, '-K', dir, '-d', dir, '-f', `${file}.signed`, file, join(dir, key)], TOOL_TIMEOUT_MS);
    zones.push({ name: zone, file: `${file}.signed` });
    // bogus.test's anchor is a second key of its name, never used to sign it.
    anchors.push(await dnskey(dir, zone === SIGNED_ZONES.bogus ? await keygen(dir, zone) : key));
  }
  return { zones, anchors };
}
