// The probe's TLS handshakes: one protocol version or one ALPN protocol at a time, and a resumption of the session a
// first handshake left. Only the handshake: no DNS goes over these connections.
import net from 'node:net';
import tls from 'node:tls';
import type { EndpointSpec } from '../../../common/schema.js';

export type TlsVersion = 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';

/** What to offer. */
export interface HandshakeOptions {
  ca?: string | undefined;
  /** Offer exactly this version (else 1.2 to 1.3, as the engine does). */
  version?: TlsVersion;
  alpn?: string[];
  session?: Buffer;
  /** Wait this long after the handshake for a session ticket (TLS 1.3 sends them after it). */
  ticketWaitMs?: number;
  timeoutMs: number;
}

/** What a handshake showed: the version and protocol agreed, whether a session was resumed, a ticket to resume. */
export type Handshake =
  | { ok: true; version: string | null; alpn: string | null; resumed: boolean; session: Buffer | null }
  | { ok: false; error: string };

/** The TLS client options that check the endpoint's certificate against its name, trusting `ca` beside the system's. */
export function verifiedTls(endpoint: EndpointSpec, ca: string | undefined): Pick<tls.ConnectionOptions, 'ca' | 'servername' | 'checkServerIdentity'> {
  const serverName = endpoint.serverName ?? endpoint.address;
  return {
    ca: ca ? [...tls.rootCertificates, ca] : undefined,
    servername: net.isIP(serverName) ? undefined : serverName,
    checkServerIdentity: (_host, cert) => tls.checkServerIdentity(serverName, cert),
  };
}

/** One TLS handshake with the endpoint (its certificate checked against its name), then closed. */
export function handshake(endpoint: EndpointSpec, o: HandshakeOptions): Promise<Handshake> {
  // TLS 1.0 and 1.1 sign with SHA-1, which OpenSSL 3 refuses above security level 0: the probe asks what the server
  // accepts, so it offers them as an old client would.
  const old = o.version === 'TLSv1' || o.version === 'TLSv1.1';
  return new Promise((resolve) => {
    let settled = false;
    let session: Buffer | null = null;
    const socket = tls.connect({
      host: endpoint.address,
      port: endpoint.port,
      ...verifiedTls(endpoint, o.ca),
      minVersion: o.version ?? 'TLSv1.2',
      maxVersion: o.version ?? 'TLSv1.3',
      ...(old ? { ciphers: 'DEFAULT:@SECLEVEL=0' } : {}),
      ALPNProtocols: o.alpn,
      session: o.session,
    });
    const finish = (result: Handshake) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish({ ok: false, error: `no handshake within ${o.timeoutMs} ms` }), o.timeoutMs);
    socket.on('session', (s: Buffer) => {
      session = s;
    });
    socket.once('error', (err) => finish({ ok: false, error: (err as NodeJS.ErrnoException).code ?? err.message }));
    socket.once('secureConnect', () => {
      const done = () =>
        finish({
          ok: true,
          version: socket.getProtocol() ?? null,
          alpn: typeof socket.alpnProtocol === 'string' ? socket.alpnProtocol : null,
          resumed: socket.isSessionReused(),
          session,
        });
      if (!o.ticketWaitMs || session) return done();
      const wait = setTimeout(done, o.ticketWaitMs);
      socket.once('session', () => {
        clearTimeout(wait);
        setImmediate(done);
      });
    });
  });
}
