// Benchmark (not a test): the host's per-exchange cost against kdig's on loopback, the wall time of a 200-host
// replay over every transport, and the host's peak RSS. Writes a markdown report.
//
//   node dist/bench/host-vs-kdig.js [--n 1000] [--rounds 5] [--out bench/results/host-vs-kdig.md] [--smoke]
//
// Per-exchange cost is (T(n+1 queries) − T(1 query)) / n for each tool, measured as wall time of the whole process,
// so process start-up (node ≈ 50 ms, kdig ≈ 5 ms) cancels out and each tool's own per-query work — timing,
// parsing, I/O, event loop — is what is compared. Rounds alternate the tools; the median round is reported.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs, promisify } from 'node:util';
import { summarize } from '../common/stats.js';
import { startCoreDNS, type LabResolver } from '../lab/resolver.js';
import { distPath, labBin, HOST_BIN } from '../lab/paths.js';
import { reportPath, SMOKE_OPTION } from './smoke.js';

const run = promisify(execFile);
const { values } = parseArgs({ options: { n: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '5' }, out: { type: 'string' }, ...SMOKE_OPTION } });
// --smoke: 20 exchanges, one round, a 20-host replay.
const N = values.smoke ? 20 : Number(values.n);
const ROUNDS = values.smoke ? 1 : Number(values.rounds);
const REPLAY_HOSTS = values.smoke ? 20 : 200;

interface Case {
  name: string;
  host: (lab: LabResolver, count: number) => string[];
  kdig: (lab: LabResolver, count: number) => string[];
  /** The least a Node.js process does for the same exchanges (bench/node-floor.ts): what Node costs by itself. */
  floor: (lab: LabResolver, count: number) => string[];
}

const port = (url: string): string => new URL(url.replace(/^\w+:/, 'http:')).port;
const names = (count: number): string[] => Array.from({ length: count }, () => 'h1.test');
const hostArgs = (lab: LabResolver, endpoint: string, mode: string, count: number): string[] => [
  HOST_BIN, 'measure', '--quiet', '--endpoint', endpoint, '--connect', `dns.test=${lab.address}`, '--ca', lab.certs.caFile,
  '--mode', mode, '--repeat', String(count), 'h1.test',
];
const floorArgs = (lab: LabResolver, transport: string, url: string, n: number): string[] => [
  distPath('bench/node-floor.ts'), transport, lab.address, port(url), 'dns.test', lab.certs.caFile, String(n),
];
const kdigTls = (lab: LabResolver): string[] => [`+tls-ca=${lab.certs.caFile}`, '+tls-hostname=dns.test'];

const tlsRef = (lab: LabResolver, url: string, transport: string, n: number): string[] => [
  '--transport', transport, '--server', `${lab.address}:${port(url)}`, '--sni', 'dns.test', '--ca', lab.certs.caFile,
  '--mode', 'warm', '--count', String(n), '--name', 'h1.test',
];
const REPORTED: Array<Case & { ref: (lab: LabResolver, n: number) => string[] }> = [];

const CASES: Case[] = [
  {
    name: 'udp',
    host: (lab, n) => hostArgs(lab, lab.endpoints.udp, 'cold', n),
    kdig: (lab, n) => [`@${lab.address}`, '-p', port(lab.endpoints.udp), '+notcp', '+noall', ...names(n)],
    floor: (lab, n) => floorArgs(lab, 'udp', lab.endpoints.udp, n),
  },
  {
    name: 'dot warm',
    host: (lab, n) => hostArgs(lab, lab.endpoints.dot, 'warm', n),
    kdig: (lab, n) => [`@${lab.address}`, '-p', port(lab.endpoints.dot), ...kdigTls(lab), '+keepopen', '+noall', ...names(n)],
    floor: (lab, n) => floorArgs(lab, 'dot', lab.endpoints.dot, n),
  },
  {
    name: 'doh warm',
    host: (lab, n) => hostArgs(lab, lab.endpoints.doh, 'warm', n),
    kdig: (lab, n) => [`@${lab.address}`, '-p', port(lab.endpoints.doh), ...kdigTls(lab), '+https=/dns-query', '+keepopen', '+noall', ...names(n)],
    floor: (lab, n) => floorArgs(lab, 'doh', lab.endpoints.doh, n),
  },
];

REPORTED.push(
  { ...CASES[0]!, ref: (lab, n) => ['--transport', 'udp', '--server', `${lab.address}:${port(lab.endpoints.udp)}`, '--mode', 'cold', '--count', String(n), '--name', 'h1.test'] },
  { ...CASES[1]!, ref: (lab, n) => tlsRef(lab, lab.endpoints.dot, 'dot', n) },
  { ...CASES[2]!, ref: (lab, n) => tlsRef(lab, lab.endpoints.doh, 'doh', n) },
);

async function wall(cmd: string, args: string[]): Promise<number> {
  const start = performance.now();
  await run(cmd, args, { maxBuffer: 256 << 20, timeout: 600_000 });
  return performance.now() - start;
}

async function perExchange(cmd: string, args: (n: number) => string[]): Promise<number> {
  const one = await wall(cmd, args(1));
  const many = await wall(cmd, args(N + 1));
  return (many - one) / N;
}

async function main(): Promise<void> {
  const lab = await startCoreDNS();
  const rows: string[] = [];
  try {
    for (const c of CASES) {
      const host: number[] = [];
      const kdig: number[] = [];
      const floor: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        host.push(await perExchange(process.execPath, (n) => c.host(lab, n)));
        kdig.push(await perExchange('kdig', (n) => c.kdig(lab, n)));
        floor.push(await perExchange(process.execPath, (n) => c.floor(lab, n)));
      }
      const h = summarize(host).median!;
      const k = summarize(kdig).median!;
      const f = summarize(floor).median!;
      rows.push(`| ${c.name} | ${(h * 1000).toFixed(1)} | ${(k * 1000).toFixed(1)} | ${(h / k).toFixed(2)} | ${(f * 1000).toFixed(1)} | ${(f / k).toFixed(2)} | ${ROUNDS} × ${N} |`);
      process.stderr.write(`${c.name}: host ${h.toFixed(4)} ms, kdig ${k.toFixed(4)} ms, node floor ${f.toFixed(4)} ms\n`);
    }
    // What each tool reports per exchange (its own clock around its own exchange), median over N: dnscost's
    // `timings.total`, the Go reference client's `ms`, kdig's "in X ms" (0.1 ms resolution); and the Node floor's
    // span from the query written to the answer read, the least a client on node:dgram, node:tls or node:http2 reports.
    const reported: string[] = [];
    for (const c of REPORTED) {
      const host = await run(process.execPath, [...c.host(lab, N), '--json'], { maxBuffer: 256 << 20 });
      const h = summarize(host.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { timings: { total: number } }).timings.total)).median!;
      const ref = await run(labBin('refclient'), c.ref(lab, N), { maxBuffer: 256 << 20 });
      const r = summarize(ref.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { ms: number }).ms)).median!;
      const kd = await run('kdig', [...c.kdig(lab, N).filter((a) => a !== '+noall'), '+noall', '+stats'], { maxBuffer: 256 << 20 });
      const k = summarize([...kd.stdout.matchAll(/ in ([\d.]+) ms/g)].slice(1).map((m) => Number(m[1]))).median!;
      const f = Number((await run(process.execPath, [...c.floor(lab, N), 'spans'])).stdout.trim());
      reported.push(`| ${c.name} | ${(h * 1000).toFixed(0)} | ${(r * 1000).toFixed(0)} | ${(k * 1000).toFixed(0)} | ${(f * 1000).toFixed(0)} | ${(h / r).toFixed(2)} | ${((f - r) * 1000).toFixed(0)} |`);
    }
    // A 200-host replay over every transport, cold and warm, against one endpoint set; GNU time gives peak RSS.
    const e = lab.endpoints;
    const hosts = Array.from({ length: REPLAY_HOSTS }, (_, i) => `h${i}.test`);
    const replay = [
      HOST_BIN, 'measure', '--quiet', '--json', '--connect', `dns.test=${lab.address}`, '--ca', lab.certs.caFile, '--mode', 'cold,warm',
      ...[e.udp, e.tcp, e.dot, e.doh].flatMap((u) => ['--endpoint', u]), ...hosts,
    ];
    const start = performance.now();
    const { stderr, stdout } = await run('/usr/bin/time', ['-f', 'maxrss_kb=%M', process.execPath, ...replay], { maxBuffer: 256 << 20 });
    const replayMs = performance.now() - start;
    const rss = Number(/maxrss_kb=(\d+)/.exec(stderr)?.[1] ?? NaN) / 1024;
    const records = stdout.trim().split('\n').length;
    const doh1 = [HOST_BIN, 'measure', '--quiet', '--json', '--http1.1', '--connect', `dns.test=${lab.address}`, '--ca', lab.certs.caFile, '--mode', 'cold,warm', '--endpoint', e.doh, ...hosts];
    const start1 = performance.now();
    const r1 = await run('/usr/bin/time', ['-f', 'maxrss_kb=%M', process.execPath, ...doh1], { maxBuffer: 256 << 20 });
    const doh1Ms = performance.now() - start1;
    const rss1 = Number(/maxrss_kb=(\d+)/.exec(r1.stderr)?.[1] ?? NaN) / 1024;

    const report = `# Benchmark: dnscost-host against kdig, replay wall time, peak RSS

Command: \`node dist/bench/host-vs-kdig.js --n ${N} --rounds ${ROUNDS}${values.out ? ` --out ${values.out}` : ''}\` (after \`scripts/setup\`)
Date: ${new Date().toISOString()}; machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, kdig (Knot DNS) from Debian 12; resolver: lab CoreDNS on 127.0.0.1.

## Per-exchange cost on loopback

Wall time per exchange = (T(${N + 1} queries) − T(1 query)) / ${N}, per process, median of ${ROUNDS} alternating rounds.
The host runs \`measure --repeat\` (udp: a new socket per query; warm: one connection); kdig gets the same name
${N + 1} times (\`+keepopen\` keeps one TLS / HTTP/2 connection). The Node floor is the least a Node.js process does
for the same exchanges (bench/node-floor.ts: the same query bytes, nothing done with the answer): beyond it is
dnscost's own work; between it and kdig is Node's.

| transport | dnscost-host µs/exchange | kdig µs/exchange | ratio (target ≤ 1.5) | Node floor µs/exchange | floor / kdig | rounds × n |
| --- | ---: | ---: | ---: | ---: | ---: | --- |
${rows.join('\n')}

## Reported time per exchange on loopback

The time each tool itself reports for an exchange, median of ${N} (kdig's first, with its handshake, left out; kdig
prints 0.1 ms steps). This is the number a person reads; the table above is what producing it costs. The Node floor
times its own exchanges (bench/node-floor.ts \`spans\`: the query written to the answer read, nothing else): what a
client on Node's sockets reports at the least, and how far above the reference that is (target for dnscost: ≤ 50 µs).

| transport | dnscost-host µs | Go reference µs | kdig µs | Node floor µs | dnscost / reference | floor − reference µs |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
${reported.join('\n')}

## 200-host replay

| run | wall time | records | peak RSS (target ≤ 60 MB) |
| --- | ---: | ---: | ---: |
| ${REPLAY_HOSTS} hosts × {udp, tcp, dot, doh} × {cold, warm} | ${(replayMs / 1000).toFixed(2)} s | ${records} | ${rss.toFixed(1)} MB |
| ${REPLAY_HOSTS} hosts × doh1 × {cold, warm} | ${(doh1Ms / 1000).toFixed(2)} s | ${REPLAY_HOSTS * 2} | ${rss1.toFixed(1)} MB |
`;
    process.stdout.write(report);
    const out = reportPath(values);
    if (out) writeFileSync(out, report);
    if (values.smoke && records !== REPLAY_HOSTS * 8) process.exitCode = 1;
  } finally {
    await lab.stop();
  }
}

await main();
