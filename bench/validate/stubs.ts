// The machine's stub, as a side's resolv.conf names it (resolv.conf → stub on a loopback address, port 53 → the lab
// resolver): for DoT a fresh Debian `unbound` or `stubby` over TLS, for DoQ AdGuard dnsproxy (lab/dnsproxy, built by
// lab/build.sh) over QUIC; each from a configuration written into the side's work directory. Also the TCP_NODELAY
// shim (nodelay-shim.c) that `--stub-nodelay` preloads into a DoT stub. None of them caches: every page's names
// reach the lab resolver, as the query log checks.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dnsproxyBinary } from '../../lab/dnsproxy.js';
import { ROOT } from '../../lab/paths.js';
import { sh } from './children.js';
import { SERVER, type DotStub } from './types.js';

/** The shim's C source, read from the checkout (not beside the compiled file: dist/ holds no .c). */
const NODELAY_SHIM_SOURCE = join(ROOT, 'bench', 'validate', 'nodelay-shim.c');

/** Compiles the TCP_NODELAY shim (ValidationOptions.stubNoDelay) into `work`; resolves with the shared object's path. Needs gcc. */
export async function buildNoDelayShim(work: string): Promise<string> {
  const lib = join(work, 'nodelay.so');
  await sh('gcc', ['-shared', '-fPIC', '-O2', '-o', lib, NODELAY_SHIM_SOURCE, '-ldl'], 60_000).catch((e: unknown) => {
    throw new Error(`--stub-nodelay needs gcc: ${String(e)}`);
  });
  return lib;
}

/** Which stub, where it listens, where its files go, the lab CA (and for dnsproxy a certificate), a library to preload. */
export interface StubOptions {
  kind: DotStub | 'dnsproxy';
  /** The loopback address it listens on (port 53). */
  address: string;
  work: string;
  caFile: string;
  /** dnsproxy's own listeners need a certificate (it serves DoT/DoH too, unused here). */
  certFile?: string;
  keyFile?: string;
  preload?: string | undefined;
}

/** The stub's process, and what it is. */
export interface Stub {
  kind: StubOptions['kind'];
  child: ChildProcess;
}

/**
 * The lab's dnsproxy as the DoQ stub, its command and environment: listening on `o.address` (port 53; its DoT and DoH
 * listeners on 853 and 443 are unused), forwarding over DoQ to the lab resolver, which it authenticates with the lab CA.
 */
export function dnsproxyCommand(o: { address: string; dir: string; caFile: string; certFile?: string | undefined; keyFile?: string | undefined }): { bin: string; args: string[]; env: NodeJS.ProcessEnv } {
  const bin = dnsproxyBinary();
  if (!existsSync(bin)) throw new Error(`${bin} is missing: scripts/setup builds it (lab/build.sh)`);
  // Go takes its roots from SSL_CERT_FILE (the lab CA, whose server certificate names the resolver's address) and
  // SSL_CERT_DIR, read on the first verification: the system's ~290 files cost 40–55 ms of CPU inside the first
  // handshake, which a running stub pays once per process, not per connection. An empty directory keeps a fresh
  // stub's cold handshake what a running stub's new one costs.
  const certDir = join(o.dir, 'no-certs');
  mkdirSync(certDir, { recursive: true });
  return {
    bin,
    args: ['-listen', o.address, '-dns-port', '53', '-tls-port', '853', '-https-port', '443', '-cert', o.certFile!, '-key', o.keyFile!, '-upstream', `quic://${SERVER}:853`],
    env: { ...process.env, SSL_CERT_FILE: o.caFile, SSL_CERT_DIR: certDir },
  };
}

/** Resolves once a dnsproxy started from `dnsproxyCommand` (stderr piped) says every listener is bound; rejects if it exits or after 5 s. */
export function dnsproxyReady(child: ChildProcess): Promise<void> {
  let err = '';
  return new Promise<void>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`dnsproxy not ready in 5 s: ${err}`)), 5000);
    child.stderr!.on('data', (b: Buffer) => {
      err = (err + b.toString()).slice(-2000);
      if (err.includes('dnsproxy-lab ready')) { clearTimeout(timer); ok(); }
    });
    child.once('exit', (code) => { clearTimeout(timer); fail(new Error(`dnsproxy exited (${code}): ${err}`)); });
  });
}

/** A fresh stub on `o.address`:53 forwarding to the lab resolver; resolves once it listens. */
export async function startStub(o: StubOptions): Promise<Stub> {
  const dir = join(o.work, `${o.kind}-${o.address}`);
  mkdirSync(dir, { recursive: true });
  if (o.kind === 'dnsproxy') {
    const d = dnsproxyCommand({ ...o, dir });
    return { kind: o.kind, child: await startListening(spawn(d.bin, d.args, { stdio: ['ignore', 'pipe', 'pipe'], env: d.env }), o.kind, o.address) };
  }
  const args = o.kind === 'unbound' ? unboundArgs(o, dir) : stubbyArgs(o, dir);
  const env = { ...process.env, ...(o.preload ? { LD_PRELOAD: o.preload } : {}) };
  return { kind: o.kind, child: await startListening(spawn(o.kind, args, { stdio: ['ignore', 'pipe', 'pipe'], env }), o.kind, o.address) };
}

/** A fresh DoT stub (`c.dotStub`) on 127.0.0.1:53, as bench/idle-lifetimes.ts starts one; resolves once it listens. */
export async function startDotStub(c: { work: string; dotStub: DotStub; caFile: string; stubPreload?: string | null }): Promise<ChildProcess> {
  return (await startStub({ kind: c.dotStub, address: '127.0.0.1', work: c.work, caFile: c.caFile, preload: c.stubPreload ?? undefined })).child;
}

/**
 * unbound's arguments, its configuration written to `dir`: a forwarder on the address, every query over TLS to the
 * lab resolver, dns.test authenticated with the lab CA; it pipelines a burst's queries over one reused TLS stream and
 * keeps it 60 s idle (tcp-reuse-timeout, Debian's default). Its cache is off (cache-max-ttl 0), so a trace's pages
 * are asked again each time.
 */
function unboundArgs(o: StubOptions, dir: string): string[] {
  const conf = join(dir, 'unbound.conf');
  writeFileSync(conf, [
    'server:',
    `  interface: ${o.address}`,
    '  port: 53',
    '  do-ip6: no',
    '  username: ""',
    '  chroot: ""',
    `  directory: "${dir}"`,
    `  pidfile: "${join(dir, 'unbound.pid')}"`,
    '  use-syslog: no',
    '  logfile: ""',
    '  verbosity: 0',
    '  num-threads: 1',
    '  module-config: "iterator"',
    `  tls-cert-bundle: "${o.caFile}"`,
    '  prefetch: no',
    '  cache-max-ttl: 0',
    '  cache-max-negative-ttl: 0',
    'remote-control:',
    '  control-enable: no',
    'forward-zone:',
    '  name: "."',
    '  forward-tls-upstream: yes',
    `  forward-addr: ${SERVER}@853#dns.test`,
    '',
  ].join('\n'));
  return ['-d', '-c', conf];
}

/** stubby's arguments, its configuration written to `dir`: on the address, every query over TLS to the lab resolver (no cache; 10 s idle). */
function stubbyArgs(o: StubOptions, dir: string): string[] {
  const conf = join(dir, 'stubby.yml');
  writeFileSync(conf, [
    'resolution_type: GETDNS_RESOLUTION_STUB',
    'dns_transport_list:',
    '  - GETDNS_TRANSPORT_TLS',
    'tls_authentication: GETDNS_AUTHENTICATION_REQUIRED',
    'tls_query_padding_blocksize: 128',
    'edns_client_subnet_private: 1',
    'round_robin_upstreams: 0',
    'idle_timeout: 10000',
    `tls_ca_file: "${o.caFile}"`,
    `appdata_dir: "${dir}"`,
    'listen_addresses:',
    `  - ${o.address}`,
    'upstream_recursive_servers:',
    `  - address_data: ${SERVER}`,
    '    tls_port: 853',
    '    tls_auth_name: "dns.test"',
    '',
  ].join('\n'));
  return ['-C', conf];
}

/** Waits until `child` listens on `address`:53 (UDP); kills it and throws after 5 s or if it exits. */
async function startListening(child: ChildProcess, name: string, address: string): Promise<ChildProcess> {
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
  child.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
  const deadline = Date.now() + 5000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}): ${out}`);
    const listening = await sh('ss', ['-Hlnu', 'src', `${address}:53`]).catch(() => '');
    if (listening.trim()) return child;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} not listening on ${address}:53 after 5 s: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
