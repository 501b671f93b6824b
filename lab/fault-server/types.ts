// The fault server's public shapes: what startFaultServer takes, what it records, and what it hands back.

/** The transport a query came in on, spelled as in common/transports.ts. */
export type FaultTransport = 'udp' | 'tcp' | 'dot' | 'doh' | 'doh1';

/** How the TLS listeners (dot, doh, doh1) behave before any DNS is exchanged. */
export type FaultTlsMode = 'ok' | 'stall' | 'alert' | 'expired' | 'wrong-name';

/** What startFaultServer needs: the lab leaf for dns.test, plus the bad certificates its TLS modes serve. */
export interface FaultServerOptions {
  certPem: string;
  keyPem: string;
  /** Loopback address to listen on: 127.0.0.1 (default) or ::1. */
  address?: string;
  tls?: FaultTlsMode;
  /** Served in 'expired' mode. */
  expiredCert?: { certPem: string; keyPem: string };
  /** Served in 'wrong-name' mode. */
  wrongNameCert?: { certPem: string; keyPem: string };
}

/** One query the server decoded, in arrival order. */
export interface SeenQuery {
  transport: FaultTransport;
  name: string;
  qtype: string;
  /** Date.now() at arrival. */
  at: number;
}

/** A running fault server: where to reach it, what it was asked, and how to shut it down (within a second). */
export interface FaultServer {
  /** udp://A:P, tcp://A:P, tls://dns.test:P, https://dns.test:P/dns-query (h2) and the same for HTTP/1.1. */
  endpoints: { udp: string; tcp: string; dot: string; doh: string; doh1: string };
  /** The loopback address every listener is on; dns.test in the TLS endpoints must be mapped to it. */
  address: string;
  seen: SeenQuery[];
  stop(): Promise<void>;
}
