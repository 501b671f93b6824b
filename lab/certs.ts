// Per-run TLS material for the lab: a throwaway CA and the resolvers' server certificate.
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import forge from 'node-forge';

const pki = forge.pki;

export interface LabCerts {
  dir: string;
  caPem: string;
  caFile: string;
  certPem: string;
  keyPem: string;
  certFile: string;
  keyFile: string;
}

/** A CA that can sign more leaves (fault servers need expired or wrong-name certs from the same trust root). */
export interface CertAuthority {
  cert: forge.pki.Certificate;
  key: forge.pki.rsa.PrivateKey;
  certPem: string;
}

/** Names and addresses every lab server certificate covers (loopback plus the netns documentation addresses). */
export const LAB_CERT_NAMES = ['dns.test', 'localhost'];
export const LAB_CERT_IPS = ['127.0.0.1', '::1', '192.0.2.1', '192.0.2.2', '2001:db8::1', '2001:db8::2'];

const HOUR = 3600_000;

// forge delegates to node's native RSA generator when called synchronously; pure-JS generation takes seconds.
function keyPair(): forge.pki.rsa.KeyPair {
  return pki.rsa.generateKeyPair({ bits: 2048, e: 0x10001 });
}

// A positive, random serial: a leading byte >= 0x80 would be read as negative by strict parsers.
function serial(): string {
  const b = randomBytes(16);
  b[0] = (b[0] ?? 0) & 0x7f;
  return b.toString('hex');
}

/** Creates a self-signed CA valid from an hour ago for 30 days. */
export function makeCA(commonName = 'dnscost lab CA'): CertAuthority {
  const keys = keyPair();
  const cert = pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(Date.now() - HOUR);
  cert.validity.notAfter = new Date(Date.now() + 30 * 24 * HOUR);
  const subject = [{ name: 'commonName', value: commonName }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { cert, key: keys.privateKey, certPem: pki.certificateToPem(cert) };
}

/** Signs a server leaf for the given DNS names and IPs; validity defaults to an hour ago .. 30 days ahead. */
export function issueLeaf(
  ca: CertAuthority,
  opts: { names: string[]; ips?: string[]; notBefore?: Date; notAfter?: Date },
): { certPem: string; keyPem: string } {
  const keys = keyPair();
  const cert = pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serial();
  cert.validity.notBefore = opts.notBefore ?? new Date(Date.now() - HOUR);
  cert.validity.notAfter = opts.notAfter ?? new Date(Date.now() + 30 * 24 * HOUR);
  cert.setSubject([{ name: 'commonName', value: opts.names[0] ?? opts.ips?.[0] ?? 'lab' }]);
  cert.setIssuer(ca.cert.subject.attributes);
  const altNames = [
    ...opts.names.map((value) => ({ type: 2, value })),
    ...(opts.ips ?? []).map((ip) => ({ type: 7, ip })),
  ];
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: ca.cert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(ca.key, forge.md.sha256.create());
  return { certPem: pki.certificateToPem(cert), keyPem: pki.privateKeyToPem(keys.privateKey) };
}

/** Makes a fresh CA plus the standard lab server cert (also naming `extraNames`) and writes ca.pem, server.pem, server.key into dir. */
export async function makeCerts(dir: string, extraNames: string[] = []): Promise<LabCerts & { ca: CertAuthority }> {
  const ca = makeCA();
  const leaf = issueLeaf(ca, { names: [...LAB_CERT_NAMES, ...extraNames.filter((n) => !LAB_CERT_NAMES.includes(n))], ips: LAB_CERT_IPS });
  await mkdir(dir, { recursive: true });
  const caFile = join(dir, 'ca.pem');
  const certFile = join(dir, 'server.pem');
  const keyFile = join(dir, 'server.key');
  await writeFile(caFile, ca.certPem);
  await writeFile(certFile, leaf.certPem);
  await writeFile(keyFile, leaf.keyPem, { mode: 0o600 });
  return { dir, ca, caPem: ca.certPem, caFile, certPem: leaf.certPem, keyPem: leaf.keyPem, certFile, keyFile };
}
