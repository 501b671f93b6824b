// A two-host lab network: a client and a server namespace joined by one veth pair, with the delay,
// jitter and loss of a NetProfile and its rates.
//
// Lifecycle: createLabNet removes namespaces left by crashed runs, builds both namespaces, starts one
// netem delayer per side (waits for its "ready"), then routes the veth's INPUT traffic into it.
// destroy() (also run synchronously on exit, SIGINT and SIGTERM) kills what the lab spawned and
// deletes the namespaces. Every external command has a bounded timeout.
//
// Why the receiving side: holding a packet on its way out blocks the sender's socket and inflates
// TCP/TLS times, so each side delays what it receives by half the RTT. This kernel has no netem
// qdisc; rates use tbf on each side's egress with a bucket near one packet so small answers are shaped.

import { execFile, execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import { labBin } from './paths.js';
import { PROFILES, profileByName, type NetProfile } from './profiles.js';

/** Which namespace a command runs in. */
export type LabSideName = 'client' | 'server';

/** One end of the lab link, addressable only from inside the other namespace. */
export interface LabSide {
  ns: string;
  addr4: string;
  addr6: string;
  iface: string;
}

/** A live lab network; call destroy() when done. */
export interface LabNet {
  client: LabSide;
  server: LabSide;
  profile: NetProfile;
  seed: number;
  spawnIn(side: LabSideName, cmd: string, args: string[], options?: SpawnOptions): ChildProcess;
  execIn(side: LabSideName, cmd: string, args: string[], opts?: { timeoutMs?: number }): Promise<{ stdout: string; stderr: string }>;
  destroy(): Promise<void>;
}

/** A preset (name or object, default none) and per-field overrides; seed fixes the loss and jitter draws. */
export interface LabNetOptions {
  profile?: NetProfile | string;
  rttMs?: number;
  jitterMs?: number;
  lossPct?: number;
  downMbit?: number;
  upMbit?: number;
  seed?: number;
  /** Label of the resulting profile (defaults to the preset's name, with "+custom" when overridden). */
  name?: string;
}

const PREFIX = 'dnscost-';
const STALE = /^dnscost-[cs]-(\d+)-\d+$/;
const CMD_TIMEOUT_MS = 5000;
const READY_TIMEOUT_MS = 5000;


function run(cmd: string, args: string[], timeoutMs = CMD_TIMEOUT_MS): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) {
        const why = err.killed ? `timed out after ${timeoutMs} ms` : (stderr.trim() || err.message);
        reject(new Error(`${cmd} ${args.join(' ')}: ${why}`));
      } else resolve({ stdout, stderr });
    });
  });
}

/** Resolves the effective profile: a preset (default none) with any per-field overrides applied. */
export function resolveProfile(opts: LabNetOptions): NetProfile {
  const base = typeof opts.profile === 'string' ? profileByName(opts.profile) : (opts.profile ?? PROFILES.none!);
  const fields = ['rttMs', 'jitterMs', 'lossPct', 'downMbit', 'upMbit'] as const;
  const custom = fields.some((f) => opts[f] !== undefined);
  const p: NetProfile = {
    ...base,
    rttMs: opts.rttMs ?? base.rttMs,
    jitterMs: opts.jitterMs ?? base.jitterMs,
    lossPct: opts.lossPct ?? base.lossPct,
    downMbit: opts.downMbit ?? base.downMbit,
    upMbit: opts.upMbit ?? base.upMbit,
    name: opts.name ?? (custom ? `${base.name}+custom` : base.name),
  };
  if (p.rttMs < 0 || p.jitterMs < 0 || p.lossPct < 0 || p.lossPct > 100) throw new Error(`bad network profile ${JSON.stringify(p)}`);
  for (const r of [p.downMbit, p.upMbit]) if (r !== null && !(r > 0)) throw new Error(`bad rate in profile ${JSON.stringify(p)}`);
  return p;
}

// Each direction drops independently, so split the round-trip loss: 1-(1-d)^2 = lossPct.
function directionLossPct(lossPct: number): number {
  return 100 * (1 - Math.sqrt(1 - lossPct / 100));
}

interface LiveNet { namespaces: string[]; children: Set<ChildProcess>; stopping: boolean }
const live = new Set<LiveNet>();
let hooksInstalled = false;
let staleChecked = false;
let counter = 0;

function cleanupSync(): void {
  for (const net of live) {
    net.stopping = true;
    for (const c of net.children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const ns of net.namespaces) {
      try { execFileSync('ip', ['netns', 'del', ns], { timeout: 2000, stdio: 'ignore' }); } catch { /* already gone */ }
    }
  }
  live.clear();
}

function installExitHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.once('exit', cleanupSync);
  for (const [sig, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.once(sig, () => { cleanupSync(); process.exit(code); });
  }
}

function alive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch (e) { return (e as NodeJS.ErrnoException).code === 'EPERM'; }
}

// A crashed run leaves namespaces (and their delayers) behind; its pid in the name tells it is gone.
async function removeStale(): Promise<void> {
  const { stdout } = await run('ip', ['netns', 'list']);
  for (const line of stdout.split('\n')) {
    const ns = line.split(' ')[0] ?? '';
    const m = STALE.exec(ns);
    if (!m || Number(m[1]) === process.pid || alive(Number(m[1]))) continue;
    const pids = await run('ip', ['netns', 'pids', ns]).then((r) => r.stdout.split(/\s+/).filter(Boolean), () => []);
    for (const pid of pids) { try { process.kill(Number(pid), 'SIGKILL'); } catch { /* exited */ } }
    await run('ip', ['netns', 'del', ns]).catch(() => undefined);
  }
}

async function checkHost(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('the lab network needs root (network namespaces, iptables, tc)');
  await run('ip', ['-V']).catch(() => { throw new Error('the lab network needs iproute2: `ip` was not found or failed'); });
}

/** What startNetem runs: the delayer's flags, the namespace it runs in (the current one when absent). */
export interface NetemOptions {
  ns?: string;
  queue: number;
  delayMs: number;
  jitterMs: number;
  lossPct?: number;
  seed?: number;
  /** Called with the child as soon as it is spawned (so a teardown can kill it even before it is ready). */
  track?: (child: ChildProcess) => void;
  /** Hears of an exit after it was ready (the queue is then unbound: all its traffic is dropped). */
  onLateExit?: (message: string) => void;
}

/** Starts the lab's netem delayer on an NFQUEUE and resolves with it once it says "ready"; rejects (and kills it) otherwise. */
export function startNetem(o: NetemOptions): Promise<ChildProcess> {
  const bin = labBin('netem');
  // Without the delayer the profile would silently not apply; refuse rather than use --queue-bypass.
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`bash lab/build.sh\``);
  const flags = ['--queue', String(o.queue), '--delay', String(o.delayMs), '--jitter', String(o.jitterMs), '--loss', String(o.lossPct ?? 0), '--seed', String(o.seed ?? 1)];
  const child = o.ns ? spawn('ip', ['netns', 'exec', o.ns, bin, ...flags], { stdio: ['ignore', 'pipe', 'pipe'] }) : spawn(bin, flags, { stdio: ['ignore', 'pipe', 'pipe'] });
  o.track?.(child);
  const name = o.ns ? `netem in ${o.ns}` : 'netem';
  return new Promise((resolve, reject) => {
    let stderr = '';
    let ready = false;
    const fail = (why: string) => { clearTimeout(timer); child.kill('SIGKILL'); reject(new Error(`${name}: ${why} ${stderr.trim()}`)); };
    const timer = setTimeout(() => fail(`not ready after ${READY_TIMEOUT_MS} ms`), READY_TIMEOUT_MS);
    child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.stdout!.on('data', (d: Buffer) => { if (!ready && d.toString().includes('ready')) { ready = true; clearTimeout(timer); resolve(child); } });
    child.once('error', (e) => fail(e.message));
    child.once('exit', (code, sig) => {
      if (!ready) fail(`exited (${code ?? sig}) before ready:`);
      else o.onLateExit?.(`${name} exited (${code ?? sig}): ${stderr.trim()}`);
    });
  });
}

async function startDelayer(ns: string, queue: number, delayMs: number, jitterMs: number, lossPct: number, seed: number, net: LiveNet): Promise<void> {
  await startNetem({
    ns, queue, delayMs, jitterMs, lossPct, seed,
    track: (child) => net.children.add(child),
    // After ready only destroy() stops it; any other exit leaves the queue unbound (all traffic dropped).
    onLateExit: (message) => { if (!net.stopping || process.env.DNSCOST_LAB_VERBOSE) process.stderr.write(`${message}\n`); },
  });
}

async function queueInput(ns: string, iface: string, queue: number): Promise<void> {
  const nfq = ['-j', 'NFQUEUE', '--queue-num', String(queue)];
  await run('ip', ['netns', 'exec', ns, 'iptables', '-A', 'INPUT', '-i', iface, ...nfq]);
  await run('ip', ['netns', 'exec', ns, 'ip6tables', '-A', 'INPUT', '-i', iface, ...nfq]);
}

// Static neighbour entries: address resolution on a fresh veth can stall the first IPv6 packet
// for a 1 s retransmit, which would land in some unlucky query's timing.
async function pinNeighbours(a: LabSide, b: LabSide): Promise<void> {
  const mac = async (s: LabSide) => {
    const [link] = JSON.parse((await run('ip', ['-n', s.ns, '-j', 'link', 'show', 'dev', s.iface])).stdout) as { address: string }[];
    if (!link) throw new Error(`no link ${s.iface} in ${s.ns}`);
    return link.address;
  };
  const [macA, macB] = [await mac(a), await mac(b)];
  for (const [self, peer, peerMac] of [[a, b, macB], [b, a, macA]] as const) {
    for (const addr of [peer.addr4, peer.addr6]) {
      await run('ip', ['-n', self.ns, 'neigh', 'replace', addr, 'lladdr', peerMac, 'dev', self.iface, 'nud', 'permanent']);
    }
  }
}

async function shapeEgress(ns: string, iface: string, mbit: number): Promise<void> {
  const bytesPerSec = (mbit * 1e6) / 8;
  const burst = Math.max(1600, Math.ceil(bytesPerSec * 100e-6)); // ~one packet, or 100 µs at high rates
  await run('tc', ['-n', ns, 'qdisc', 'replace', 'dev', iface, 'root', 'tbf', 'rate', `${Math.round(mbit * 1000)}kbit`, 'burst', String(burst), 'latency', '500ms']);
}

/** Builds the two-namespace lab with the given conditions; rejects with a clear error when not root or when a step fails. */
export async function createLabNet(opts: LabNetOptions = {}): Promise<LabNet> {
  await checkHost();
  const profile = resolveProfile(opts);
  const seed = opts.seed ?? 1;
  if (!staleChecked) { staleChecked = true; await removeStale(); }
  installExitHooks();

  const n = counter++;
  const client: LabSide = { ns: `${PREFIX}c-${process.pid}-${n}`, addr4: '192.0.2.1', addr6: '2001:db8::1', iface: 'lab-c' };
  const server: LabSide = { ns: `${PREFIX}s-${process.pid}-${n}`, addr4: '192.0.2.2', addr6: '2001:db8::2', iface: 'lab-s' };
  const state: LiveNet = { namespaces: [client.ns, server.ns], children: new Set<ChildProcess>(), stopping: false };
  live.add(state);
  const sides = { client, server };

  let destroyed: Promise<void> | undefined;
  const destroy = (): Promise<void> => (destroyed ??= (async () => {
    state.stopping = true;
    const exits = [...state.children].filter((c) => c.exitCode === null && c.signalCode === null).map((c) => new Promise<void>((resolve) => {
      const hard = setTimeout(() => c.kill('SIGKILL'), 2000);
      c.once('exit', () => { clearTimeout(hard); resolve(); });
      c.kill('SIGTERM');
    }));
    await Promise.all(exits);
    for (const ns of state.namespaces) await run('ip', ['netns', 'del', ns]).catch(() => undefined);
    live.delete(state);
  })());

  try {
    await run('ip', ['netns', 'add', client.ns]);
    await run('ip', ['netns', 'add', server.ns]);
    await run('ip', ['link', 'add', client.iface, 'netns', client.ns, 'type', 'veth', 'peer', 'name', server.iface, 'netns', server.ns]);
    for (const s of [client, server]) {
      await run('ip', ['-n', s.ns, 'link', 'set', 'lo', 'up']);
      await run('ip', ['-n', s.ns, 'addr', 'add', `${s.addr4}/24`, 'dev', s.iface]);
      await run('ip', ['-n', s.ns, 'addr', 'add', `${s.addr6}/64`, 'dev', s.iface, 'nodad']);
      await run('ip', ['-n', s.ns, 'link', 'set', s.iface, 'up']);
    }
    await pinNeighbours(client, server);
    if (profile.upMbit !== null) await shapeEgress(client.ns, client.iface, profile.upMbit);
    if (profile.downMbit !== null) await shapeEgress(server.ns, server.iface, profile.downMbit);
    if (profile.rttMs > 0 || profile.jitterMs > 0 || profile.lossPct > 0) {
      const dirLoss = directionLossPct(profile.lossPct);
      const queues: [LabSide, number][] = [[client, 1], [server, 2]];
      await Promise.all(queues.map(([s, q]) =>
        startDelayer(s.ns, q, profile.rttMs / 2, profile.jitterMs / 2, dirLoss, seed * 2 + q, state)));
      for (const [s, q] of queues) await queueInput(s.ns, s.iface, q);
    }
  } catch (e) {
    await destroy();
    throw e;
  }

  return {
    client,
    server,
    profile,
    seed,
    spawnIn(side, cmd, args, options = {}) {
      const child = spawn('ip', ['netns', 'exec', sides[side].ns, cmd, ...args], options);
      state.children.add(child);
      child.once('exit', () => state.children.delete(child));
      return child;
    },
    execIn(side, cmd, args, { timeoutMs = 10_000 } = {}) {
      return run('ip', ['netns', 'exec', sides[side].ns, cmd, ...args], timeoutMs);
    },
    destroy,
  };
}
