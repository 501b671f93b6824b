// The DoT stubs the browser's DoT goes through (resolv.conf → stub on 127.0.0.1:53 → the lab resolver over TLS): a
// fresh Debian `stubby` or `unbound` per load, each from a configuration written into the run's work directory, and
// the TCP_NODELAY shim (nodelay-shim.c) that `--stub-nodelay` preloads into it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../../lab/paths.js';
import { sh } from './children.js';
import { SERVER, type InnerConfig } from './types.js';

/** The shim's C source, read from the checkout (not beside the compiled file: dist/ holds no .c). */
const NODELAY_SHIM_SOURCE = join(ROOT, 'bench', 'validate', 'nodelay-shim.c');

/**
 * Compiles the TCP_NODELAY shim for the DoT stub (see ValidationOptions.stubNoDelay) into `work`; resolves with the
 * shared object's path. Needs gcc.
 */
export async function buildNoDelayShim(work: string): Promise<string> {
  const lib = join(work, 'nodelay.so');
  await sh('gcc', ['-shared', '-fPIC', '-O2', '-o', lib, NODELAY_SHIM_SOURCE, '-ldl'], 60_000).catch((e: unknown) => {
    throw new Error(`--stub-nodelay needs gcc: ${String(e)}`);
  });
  return lib;
}

/** Which stub, where its files go, the lab CA it authenticates the resolver with, a library to preload into it. */
export type DotStubOptions = Pick<InnerConfig, 'work' | 'dotStub' | 'caFile'> & { stubPreload?: string | null | undefined };

/**
 * A fresh DoT stub (c.dotStub, with c.stubPreload if given) on 127.0.0.1:53 forwarding over TLS to the lab
 * resolver; resolves once it listens.
 */
export async function startDotStub(c: DotStubOptions): Promise<ChildProcess> {
  const dir = join(c.work, c.dotStub);
  mkdirSync(dir, { recursive: true });
  const args = c.dotStub === 'unbound' ? unboundArgs(c, dir) : stubbyArgs(c, dir);
  const env = { ...process.env, ...(c.stubPreload ? { LD_PRELOAD: c.stubPreload } : {}) };
  return startListening(spawn(c.dotStub, args, { stdio: ['ignore', 'pipe', 'pipe'], env }), c.dotStub);
}

/**
 * unbound's arguments, its configuration written to `dir`: on 127.0.0.1:53 as a forwarder (no cache carried between
 * loads: a new process per load), every query over TLS to the lab resolver, dns.test authenticated with the lab CA;
 * it pipelines the queries of a burst over a reused TLS stream. Like stubby it leaves Nagle's algorithm on
 * (ValidationOptions.stubNoDelay).
 */
function unboundArgs(c: DotStubOptions, dir: string): string[] {
  const conf = join(dir, 'unbound.conf');
  writeFileSync(conf, [
    'server:',
    '  interface: 127.0.0.1',
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
    `  tls-cert-bundle: "${c.caFile}"`,
    '  prefetch: no',
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

/** stubby's arguments, its configuration written to `dir`: on 127.0.0.1:53, every query over TLS to the lab resolver. */
function stubbyArgs(c: DotStubOptions, dir: string): string[] {
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
    `tls_ca_file: "${c.caFile}"`,
    `appdata_dir: "${dir}"`,
    'listen_addresses:',
    '  - 127.0.0.1',
    'upstream_recursive_servers:',
    `  - address_data: ${SERVER}`,
    '    tls_port: 853',
    '    tls_auth_name: "dns.test"',
    '',
  ].join('\n'));
  return ['-C', conf];
}

/** Waits until `child` (a stub) listens on 127.0.0.1:53 (UDP); kills it and throws after 5 s or if it exits. */
async function startListening(child: ChildProcess, name: string): Promise<ChildProcess> {
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 5000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}): ${out}`);
    const listening = await sh('ss', ['-Hlnu', 'src', '127.0.0.1:53']).catch(() => '');
    if (listening.trim()) return child;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} not listening on 127.0.0.1:53 after 5 s: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
