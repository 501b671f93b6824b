// The validation experiment's outer half: per profile, the lab network (createLabNet: a client and a server namespace
// joined by the emulated link) with the HAR pages' address (and any IP-literal host of theirs) on its server side,
// then one inner process (inner.ts, re-executed from dist/ as main.js) in the client namespace and a private mount
// namespace, which starts the resolvers, the sites and the side workers there and loads the pages; it collects the
// inner half's visits into the raw run. Importable from the sources (the browser test runs it under vitest); the
// inner half and the side workers always run compiled. As root; nothing leaves loopback and the namespaces it creates.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { findBrowser } from '../../lab/browsers.js';
import { addLiteralAddresses, addSiteAddress } from '../../lab/har/address.js';
import { createLabNet, type LabNet } from '../../lab/netns.js';
import { distPath, labBin, ROOT } from '../../lab/paths.js';
import { harLiterals } from './groups.js';
import { serverIdleFor } from './schedule.js';
import { buildNoDelayShim } from './stubs.js';
import type { InnerConfig, ProfileRun, ValidationOptions, ValidationRun } from './types.js';

/** The compiled entry the inner half is started from (main.ts dispatches to inner.ts on DNSCOST_VALIDATION_INNER). */
const INNER_ENTRY = distPath('bench/validate/main.ts');

/** What this machine lacks for `opts`, as sentences (empty when it can run). */
export function missingFor(opts: Pick<ValidationOptions, 'browsers' | 'transports' | 'dotStub' | 'stubNoDelay' | 'hars'>): string[] {
  const out: string[] = [];
  if (process.getuid?.() !== 0) out.push('the validation needs root (network and mount namespaces)');
  for (const b of opts.browsers) if (!findBrowser(b)) out.push(`${b} is not installed: scripts/setup installs it`);
  const onPath = (bin: string) => ['/usr/bin', '/usr/sbin', '/bin', '/sbin'].some((d) => existsSync(join(d, bin)));
  for (const bin of ['certutil', 'ss', 'kdig', 'unshare', ...(opts.transports.includes('dot') ? [opts.dotStub] : []), ...(opts.stubNoDelay ? ['gcc'] : [])]) {
    if (!onPath(bin)) out.push(`${bin} is missing: scripts/setup installs it`);
  }
  for (const bin of ['coredns', 'netem', ...(opts.transports.includes('doq') ? ['dnsproxy'] : [])]) if (!existsSync(labBin(bin))) out.push(`lab/bin/${bin} is missing: scripts/setup builds it`);
  if (!existsSync(INNER_ENTRY)) out.push(`${INNER_ENTRY} is missing: scripts/setup builds dist/`);
  for (const f of opts.hars) if (!existsSync(f)) out.push(`no HAR file ${f}`);
  return out;
}

/**
 * The code this checkout runs: its commit, and whether files differ from it (the model that predicts is this code;
 * a frozen model is a commit named before its final run). "unknown" outside a git checkout.
 */
export function codeAt(root = ROOT): string {
  try {
    const git = (...args: string[]) => execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const commit = git('rev-parse', '--short=12', 'HEAD');
    // Results written meanwhile (bench/results/) are not the code.
    return git('status', '--porcelain', '--untracked-files=no', '--', '.', ':(exclude)bench/results') ? `${commit} with uncommitted changes` : commit;
  } catch {
    return 'unknown';
  }
}

/** Runs the experiment for every profile; returns the raw run (predictions and rows come from it: analysis.ts). */
export async function runValidation(opts: ValidationOptions): Promise<ValidationRun> {
  const log = opts.log ?? ((l: string) => process.stderr.write(l + '\n'));
  const missing = missingFor(opts);
  if (missing.length) throw new Error(missing.join('; '));
  const serverIdleS = serverIdleFor(opts);
  const literals = [...new Set((await Promise.all(opts.hars.map(harLiterals))).flat())];
  const startedAt = new Date().toISOString();
  const profiles: ProfileRun[] = [];
  for (const [k, profile] of opts.profiles.entries()) {
    const work = mkdtempSync(join(tmpdir(), 'dnscost-validation-'));
    let net: LabNet | undefined;
    try {
      net = await createLabNet({ profile, seed: opts.seed + k });
      const harAddress = (await addSiteAddress(net)).v4;
      await addLiteralAddresses(net, literals);
      const stubPreload = opts.stubNoDelay ? await buildNoDelayShim(work) : undefined;
      const { log: _log, onProfile: _onProfile, profiles: _profiles, ...options } = opts;
      const config: InnerConfig = {
        profile: net.profile, serverNs: net.server.ns, harAddress, options, serverIdleS, seed: opts.seed + 1000 * k, work, out: join(work, 'visits.json'),
        ...(stubPreload ? { stubPreload } : {}),
      };
      writeFileSync(join(work, 'config.json'), JSON.stringify(config));
      log(`${profile.name}: RTT ${net.profile.rttMs} ms; ${opts.browsers.join(', ')}; pages ${[...opts.pages.map(String), ...opts.hars.map((f) => f.replace(/^.*\//, ''))].join(', ')}; ` +
        `${opts.scenarios.join(', ')}; do53 vs ${opts.transports.join(', ')}; ${opts.loads} loads per side; server idle ${serverIdleS} s`);
      const capture = process.env.DNSCOST_CAPTURE ? await startCapture(net, join(process.env.DNSCOST_CAPTURE, `${profile.name}.pcap`)) : null;
      try {
        await runInner(net, work, log);
      } finally {
        await capture?.stop();
      }
      const inner = JSON.parse(readFileSync(config.out, 'utf8')) as Omit<ProfileRun, 'profile'>;
      profiles.push({ profile: net.profile, ...inner });
      opts.onProfile?.(snapshot(opts, startedAt, profiles));
    } finally {
      await net?.destroy();
      rmSync(work, { recursive: true, force: true });
    }
  }
  return snapshot(opts, startedAt, profiles);
}

/**
 * DNSCOST_CAPTURE=DIR: tshark on the server's side of the lab link for the whole profile (headers only), to count
 * what each load sent upstream (bench/uplink-bytes.ts). A diagnostic, never a validation run's default: the capture
 * costs CPU beside the loads.
 */
async function startCapture(net: LabNet, file: string): Promise<{ stop(): Promise<void> }> {
  mkdirSync(dirname(file), { recursive: true });
  const child = net.spawnIn('server', 'tshark', ['-i', net.server.iface, '-s', '128', '-q', '-w', file], { stdio: 'ignore' });
  let failed: Error | null = null;
  child.once('error', (e) => (failed = e));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // tshark says nothing on -q; the file appears once it captures.
  for (let i = 0; i < 50 && !existsSync(file) && !failed && child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 100));
  if (!existsSync(file)) {
    child.kill('SIGKILL');
    throw new Error(`DNSCOST_CAPTURE: tshark did not start writing ${file}${failed ? `: ${(failed as Error).message}` : ''} (scripts/setup installs tshark)`);
  }
  return {
    async stop() {
      child.kill('SIGINT');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

function snapshot(opts: ValidationOptions, startedAt: string, profiles: ProfileRun[]): ValidationRun {
  const { log: _log, onProfile: _onProfile, profiles: ps, ...options } = opts;
  return {
    format: 2,
    options: { ...options, profiles: ps.map((p) => p.name) },
    startedAt,
    finishedAt: new Date().toISOString(),
    machine: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GB, Linux ${os.release()}`,
    code: codeAt(),
    profiles: [...profiles],
  };
}

// The inner half runs in the client namespace and a private mount namespace (its side workers each make their own).
function runInner(net: LabNet, work: string, log: (l: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = net.spawnIn('client', 'unshare', ['--mount', '--propagation', 'private', process.execPath, INNER_ENTRY], {
      env: { ...process.env, DNSCOST_VALIDATION_INNER: join(work, 'config.json') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let tail = '';
    let rest = '';
    child.stdout!.on('data', (d: Buffer) => {
      const parts = (rest + d.toString()).split('\n');
      rest = parts.pop() ?? '';
      for (const line of parts) {
        if (line.startsWith('progress ')) log(line.slice(9));
        else tail = (tail + line + '\n').slice(-8000);
      }
    });
    child.stderr!.on('data', (d: Buffer) => (tail = (tail + d.toString()).slice(-8000)));
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`validation inner run failed (${code}):\n${tail}`))));
  });
}
