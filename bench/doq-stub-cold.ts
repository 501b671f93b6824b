// DoQ through the validation's stub against the replay's own DoQ exchange, on the same emulated link: a query over
// UDP (kdig) to a freshly started AdGuard dnsproxy (lab/dnsproxy, as bench/validate/stubs.ts starts it for each cold DoQ
// load) that opens its QUIC connection to the lab resolver, then a second query over that open connection; and
// dnscost-host's cold and warm DoQ exchanges with the same resolver (what the validation's prediction is made of).
// The stub's extra, per profile, says whether it is a constant (CPU: a fresh Go process's first handshake, the local
// hop) or grows with the RTT (the protocol). Rounds alternate which goes first.
//
//   node dist/bench/doq-stub-cold.js [--profiles none,dsl,4g] [--rounds 20] [--out bench/results/doq-stub-cold.md] [--smoke]
//
// Needs root (network namespaces) and scripts/setup (dnsproxy, the companion, dist/). Nothing else may run meanwhile.
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { summarize } from '../common/stats.js';
import { createLabNet, type LabNet } from '../lab/netns.js';
import { profileByName } from '../lab/profiles.js';
import { startCoreDNS, type LabResolver } from '../lab/resolver.js';
import { measureInLab } from '../lab/host-measure.js';
import { ROOT } from '../lab/paths.js';
import { dnsproxyCommand, dnsproxyReady } from './validate/stubs.js';
import { reportPath, SMOKE_OPTION } from './smoke.js';

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    profiles: { type: 'string', default: 'none,dsl,4g' },
    rounds: { type: 'string', default: '20' },
    out: { type: 'string' },
    ...SMOKE_OPTION,
  },
});
// --smoke: 3 rounds with no emulated delay.
const rounds = values.smoke ? 3 : Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 3 || rounds > 200) throw new Error(`--rounds takes a whole number 3–200, not ${values.rounds}`);
if (process.getuid?.() !== 0) throw new Error('needs root: the lab builds network namespaces');
const profiles = (values.smoke ? ['none'] : values.profiles.split(',')).map((p) => profileByName(p.trim()));
const NAME = 'h1.test';

/** One dnscost-host measure in the client namespace: `repeat` exchanges of NAME; their total times (ms). */
async function measure(lab: LabNet, endpoint: string, mode: 'cold' | 'warm', repeat: number, caFile: string): Promise<number[]> {
  const records = await measureInLab(lab, { endpoint, caFile, mode, repeat, name: NAME, timeoutMs: 60_000, extra: ['--timeout', '5000'] });
  const bad = records.find((r) => !r.ok || r.rcode !== 'NOERROR');
  if (bad) throw new Error(`${endpoint} ${mode}: ${JSON.stringify(bad.error ?? bad.rcode)}`);
  return records.map((r) => r.timings.total);
}

/** A fresh dnsproxy in the client namespace; two queries through it over UDP (the first opens its QUIC connection). */
async function throughFreshStub(lab: LabNet, res: LabResolver, work: string): Promise<[number, number]> {
  const d = dnsproxyCommand({ address: '127.0.0.1', dir: work, caFile: res.certs.caFile, certFile: res.certs.certFile, keyFile: res.certs.keyFile });
  const child = lab.spawnIn('client', d.bin, d.args, { stdio: ['ignore', 'ignore', 'pipe'], env: d.env });
  try {
    await dnsproxyReady(child);
    // kdig, not dnscost-host: the host's untimed warm-up exchange would open the stub's connection first.
    const { stdout } = await lab.execIn('client', 'kdig', ['@127.0.0.1', NAME, NAME, '+noall', '+stats', '+timeout=5', '+retry=0'], { timeoutMs: 20_000 });
    const ms = [...stdout.matchAll(/\(UDP\) in ([\d.]+) ms/g)].map((m) => Number(m[1]));
    if (ms.length !== 2) throw new Error(`kdig through the stub: ${stdout}`);
    return [ms[0]!, ms[1]!];
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null) await once(child, 'exit');
  }
}

const f = (x: number | null) => (x === null ? '–' : x.toFixed(1));
const med = (xs: number[]) => summarize(xs).median;
const lines: string[] = [];
const started = new Date();
const work = mkdtempSync(join(tmpdir(), 'dnscost-doq-stub-'));
try {
  for (const profile of profiles) {
    const lab = await createLabNet({ profile, name: profile.name, seed: 1 });
    const res = await startCoreDNS({ netns: lab.server.ns, address: lab.server.addr4 });
    const stubCold: number[] = [], stubWarm: number[] = [], hostCold: number[] = [], hostWarm: number[] = [];
    try {
      for (let i = 0; i < rounds; i++) {
        const stub = async () => {
          const dir = join(work, `${profile.name}-${i}`);
          mkdirSync(dir, { recursive: true });
          const [c, w] = await throughFreshStub(lab, res, dir);
          stubCold.push(c);
          stubWarm.push(w);
        };
        const host = async () => {
          hostCold.push(...(await measure(lab, 'quic://dns.test:853', 'cold', 1, res.certs.caFile)));
          hostWarm.push(...(await measure(lab, 'quic://dns.test:853', 'warm', 2, res.certs.caFile)).slice(1));
        };
        if (i % 2 === 0) { await stub(); await host(); } else { await host(); await stub(); }
      }
    } finally {
      await res.stop();
      await lab.destroy();
    }
    const sc = med(stubCold)!, hc = med(hostCold)!, sw = med(stubWarm)!, hw = med(hostWarm)!;
    lines.push(`| ${profile.name} | ${f(profile.rttMs)} | ${rounds} | ${f(sc)} | ${f(hc)} | **${f(sc - hc)}** | ${f(sw)} | ${f(hw)} | **${f(sw - hw)}** |`);
    process.stderr.write(`${lines.at(-1)}\n`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

const out = [
  '# DoQ through a fresh dnsproxy against the replay\'s own DoQ exchange',
  '',
  `Command: \`node dist/bench/doq-stub-cold.js --profiles ${values.profiles} --rounds ${rounds}\` (as root, nothing else running),`,
  `${started.toISOString().slice(0, 16).replace('T', ' ')} UTC. Medians in ms of one query's total time, each side ${rounds} rounds.`,
  '',
  '*Stub*: a query over UDP (kdig) to a freshly started dnsproxy on the client\'s loopback (cold: it opens its QUIC',
  'connection to the lab resolver; warm: the next query, over that connection). *Replay*: dnscost-host\'s DoQ exchange',
  'with the same resolver (its `total`, what the model prices), cold (a new QUIC connection) and warm (an open one).',
  '',
  '| profile | RTT | rounds | stub cold | replay cold | stub − replay | stub warm | replay warm | stub − replay |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...lines,
  '',
].join('\n');
const file = reportPath(values, 'bench/results/doq-stub-cold.md');
process.stdout.write(out);
if (file) {
  mkdirSync(dirname(resolve(ROOT, file)), { recursive: true });
  writeFileSync(resolve(ROOT, file), out);
  process.stdout.write(`\nwritten to ${relative(process.cwd(), resolve(ROOT, file))}\n`);
}
