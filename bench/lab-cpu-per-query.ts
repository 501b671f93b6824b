// CPU time the lab's own processes spend per query on each DNS path, with no shaping: the lab resolver (CoreDNS)
// answering kdig over Do53, DoT, DoH and DoQ, and DoQ through the validation's stub (dnsproxy, as
// bench/validate/stubs.ts starts it) in front of it. In the validation these processes share the machine's two cores
// with the browser, so a page of N names costs the browser's loads about N × (record types) × this figure of CPU
// that a replay, alone on the machine, does not pay. Read from /proc/PID/stat (utime + stime) around `--rounds` rounds of
// `--queries` sequential queries, each round over one connection; a round kdig fails is asked again once, its CPU left out.
//
//   node dist/bench/lab-cpu-per-query.js [--queries 200] [--rounds 10] [--out bench/results/lab-cpu-per-query.md] [--smoke]
//
// Needs root (network namespaces) and scripts/setup. Nothing else may run meanwhile.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createLabNet } from '../lab/netns.js';
import { cpuMs } from '../lab/proc.js';
import { ROOT } from '../lab/paths.js';
import { startCoreDNS } from '../lab/resolver.js';
import { dnsproxyCommand, dnsproxyReady } from './validate/stubs.js';
import { reportPath, SMOKE_OPTION } from './smoke.js';

const { values } = parseArgs({ args: process.argv.slice(2), options: { queries: { type: 'string', default: '200' }, rounds: { type: 'string', default: '10' }, out: { type: 'string' }, ...SMOKE_OPTION } });
// --smoke: one round of 100 queries.
const N = values.smoke ? 100 : Number(values.queries);
// One kdig call asks them over one connection; batches of 400 and more over one DoQ connection failed now and then here
// (kdig: "QUIC, failed to send"), so a round is at most 300 and the rounds add up.
if (!Number.isInteger(N) || N < 100 || N > 300) throw new Error(`--queries takes a whole number 100–300, not ${values.queries}`);
const ROUNDS = values.smoke ? 1 : Number(values.rounds);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1 || ROUNDS > 50) throw new Error(`--rounds takes a whole number 1–50, not ${values.rounds}`);
if (process.getuid?.() !== 0) throw new Error('needs root: the lab builds network namespaces');

const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
const newest = (pattern: string) => Number(execFileSync('pgrep', ['-n', '-f', pattern], { encoding: 'utf8' }).trim());

const work = mkdtempSync(join(tmpdir(), 'dnscost-cpu-'));
const lab = await createLabNet({ profile: 'none' });
const rows: string[] = [];
try {
  const res = await startCoreDNS({ netns: lab.server.ns, address: lab.server.addr4 });
  const core = newest('coredns');
  const d = dnsproxyCommand({ address: '127.0.0.1', dir: work, caFile: res.certs.caFile, certFile: res.certs.certFile, keyFile: res.certs.keyFile });
  const proxy = lab.spawnIn('client', d.bin, d.args, { stdio: ['ignore', 'ignore', 'pipe'], env: d.env });
  await dnsproxyReady(proxy);
  const stub = newest(d.bin);
  const tls = [`+tls-ca=${res.certs.caFile}`, '+tls-hostname=dns.test'];
  const server = `@${lab.server.addr4}`;
  const cases: Array<[string, string[]]> = [
    ['Do53 (UDP)', [server, '+notcp']],
    ['DoT', [server, '-p', '853', ...tls, '+keepopen']],
    ['DoH (HTTP/2)', [server, '-p', '443', ...tls, '+https=/dns-query', '+keepopen']],
    ['DoQ', [server, '-p', '853', ...tls, '+quic', '+keepopen']],
    ['DoQ through dnsproxy (kdig → stub over UDP)', ['@127.0.0.1']],
  ];
  try {
    for (const [label, args] of cases) {
      let coreMs = 0, stubMs = 0, retried = 0;
      for (let r = 0; r < ROUNDS; r++) {
        // kdig's DoQ client does not retransmit while it waits for a stream's acknowledgement: a datagram the loopback
        // drops under load ends the call with "QUIC, failed to send". Such a round's CPU is left out and the round is
        // asked again, once.
        for (let attempt = 1; ; attempt++) {
          const c = cpuMs(core), s = cpuMs(stub);
          try {
            await lab.execIn('client', 'kdig', [...args, '+noall', '+timeout=5', '+retry=0', ...Array<string>(N).fill('h1.test')], { timeoutMs: 120_000 });
            coreMs += cpuMs(core) - c;
            stubMs += cpuMs(stub) - s;
            break;
          } catch (e) {
            if (attempt === 2) throw new Error(`${label}: kdig failed twice in round ${r + 1}: ${String(e).slice(-300)}`);
            retried++;
            process.stderr.write(`${label}: round ${r + 1} failed, asked again: ${String(e).slice(-200)}\n`);
          }
        }
      }
      const c = coreMs / (N * ROUNDS), s = stubMs / (N * ROUNDS);
      rows.push(`| ${label} | ${c.toFixed(3)} | ${s.toFixed(3)} | ${(c + s).toFixed(3)} | ${retried} |`);
      process.stderr.write(`${rows.at(-1)}\n`);
    }
  } finally {
    proxy.kill('SIGTERM');
    await res.stop();
  }
} finally {
  await lab.destroy();
  rmSync(work, { recursive: true, force: true });
}
const out = [
  '# CPU the lab spends per query, by path',
  '',
  `Command: \`node dist/bench/lab-cpu-per-query.js --queries ${N} --rounds ${ROUNDS}\` (as root, nothing else running), ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC.`,
  `${ROUNDS} rounds of ${N} sequential queries of one name over one connection (kdig), no shaping; CPU time (user + system, /proc, ${TICK_MS} ms ticks) per query, in ms.`,
  '',
  '| path | lab resolver (CoreDNS) | stub (dnsproxy) | both | rounds asked again |',
  '| --- | ---: | ---: | ---: | ---: |',
  ...rows,
  '',
].join('\n');
const file = reportPath(values, 'bench/results/lab-cpu-per-query.md');
if (file) {
  mkdirSync(dirname(resolve(ROOT, file)), { recursive: true });
  writeFileSync(resolve(ROOT, file), out);
}
process.stdout.write(out);
