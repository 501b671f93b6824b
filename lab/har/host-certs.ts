// Certificates for the hosts of a rebuilt page (lab/har/), one per group of hosts that shared a server in the
// recording (PagePlan.hostGroups), all signed by the lab CA. Why not one certificate naming every host: every host of
// the lab site has the same address, so a browser pools HTTP/2 connections across any two hosts one certificate
// covers (Chromium and Firefox both do), and the page would load over a handful of connections where the real one
// opened one per server. One certificate per recorded server keeps the pooling the real page could have had.
//
// A page may have a hundred groups: the leaves share one key pair and are signed through node:crypto (a
// millisecond each) rather than node-forge's JavaScript RSA (~60 ms each); node-forge still writes the certificates.
import { constants, createPrivateKey, generateKeyPairSync, privateEncrypt, randomBytes, type KeyObject } from 'node:crypto';
import forge from 'node-forge';

/** A certificate and its key, PEM. */
export interface PemPair {
  certPem: string;
  keyPem: string;
}

const HOUR = 3600_000;
// DER prefix of a PKCS#1 v1.5 DigestInfo for SHA-256 (RFC 8017 §9.2 note 1): what an RSA signature encrypts.
const SHA256_DIGEST_INFO = Buffer.from('3031300d060960864801650304020105000420', 'hex');

// A stand-in for a forge private key whose sign() runs in node:crypto (forge calls key.sign(md) and wants a binary string).
function signer(key: KeyObject): forge.pki.rsa.PrivateKey {
  const sign = (md: forge.md.MessageDigest) =>
    privateEncrypt({ key, padding: constants.RSA_PKCS1_PADDING }, Buffer.concat([SHA256_DIGEST_INFO, Buffer.from(md.digest().getBytes(), 'binary')])).toString('binary');
  return { sign } as unknown as forge.pki.rsa.PrivateKey;
}

/** The SAN naming `host`: an IP SAN for an address (RFC 5280 §4.2.1.6), else a DNS name (underscores included). */
export function altName(host: string): { type: 2; value: string } | { type: 7; ip: string } {
  return /^[\d.]+$|:/.test(host) ? { type: 7, ip: host } : { type: 2, value: host };
}

/** Issues one leaf per group of names or IP addresses (valid an hour ago … 30 days), all with one fresh key, signed by `ca`. */
export function issueGroupCerts(ca: PemPair, groups: string[][]): PemPair[] {
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const caKey = signer(createPrivateKey(ca.keyPem));
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const publicKey = forge.pki.publicKeyFromPem(pair.publicKey.export({ type: 'spki', format: 'pem' }).toString());
  const authorityKeyId = caCert.generateSubjectKeyIdentifier().getBytes();
  return groups.map((names) => {
    const cert = forge.pki.createCertificate();
    cert.publicKey = publicKey;
    const serial = randomBytes(16);
    serial[0] = serial[0]! & 0x7f;
    cert.serialNumber = serial.toString('hex');
    cert.validity.notBefore = new Date(Date.now() - HOUR);
    cert.validity.notAfter = new Date(Date.now() + 30 * 24 * HOUR);
    // Browsers read only the SANs; forge writes the CN as a PrintableString, which cannot hold a host's `_` (Chromium
    // then refuses the certificate as malformed: ERR_SSL_SERVER_CERT_BAD_FORMAT).
    cert.setSubject([{ name: 'commonName', value: 'dnscost lab site' }]);
    cert.setIssuer(caCert.subject.attributes);
    cert.setExtensions([
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: names.map(altName) },
      { name: 'subjectKeyIdentifier' },
      { name: 'authorityKeyIdentifier', keyIdentifier: authorityKeyId },
    ]);
    cert.sign(caKey, forge.md.sha256.create());
    return { certPem: forge.pki.certificateToPem(cert), keyPem };
  });
}
