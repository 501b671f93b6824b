// Timing agreement between dnscost-host and the lab's reference client, shared by tests/integration/timing.test.ts and
// bench/timing-vs-reference.ts. Both clients run as separate processes in the client namespace of a lab link
// with an emulated RTT, against one CoreDNS in the server namespace, in alternating blocks so neither
// gets systematically better conditions.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import tls from 'node:tls';
import type { ExchangeRecord } from '../common/record.js';
import { summarize, type Summary } from '../common/stats.js';
import { TRANSPORTS, type Mode, type TransportId } from '../common/transports.js';
import { measureInLab } from './host-measure.js';
import { createLabNet, type LabNet } from './netns.js';
import { distPath, HOST_BIN, labBin } from './paths.js';
import { coreDNSBinary, startCoreDNS, type LabResolver } from './resolver.js';

/** One line of the comparison: a transport in a mode. UDP has no connection, so it has only one line. */
export interface TimingRow {
  transport: TransportId;
  mode: Mode;
}

export const TIMING_ROWS: readonly TimingRow[] = [
  { transport: 'udp', mode: 'cold' },
  { transport: 'tcp', mode: 'cold' },
  { transport: 'dot', mode: 'cold' },
  { transport: 'doh', mode: 'cold' },
  { transport: 'doh1', mode: 'cold' },
  { transport: 'tcp', mode: 'warm' },
  { transport: 'dot', mode: 'warm' },
  { transport: 'doh', mode: 'warm' },
  { transport: 'doh1', mode: 'warm' },
];

/** The QUIC rows (the companion against the reference's own quic-go client). */
export const QUIC_TIMING_ROWS: readonly TimingRow[] = [
  { transport: 'doq', mode: 'cold' },
  { transport: 'doh3', mode: 'cold' },
  { transport: 'doq', mode: 'warm' },
  { transport: 'doh3', mode: 'warm' },
];

/** A name CoreDNS answers authoritatively from the lab zone: no recursion, no cache. */
export const TIMING_NAME = 'h1.test';

/**
 * Round trips no exchange can beat: udp 1, tcp cold 2 (SYN + query), TLS cold 3 (SYN + TLS 1.3 + query), QUIC cold 2
 * (QUIC handshake with TLS 1.3 + query), warm 1.
 */
export function floorRtts(row: TimingRow): number {
  if (row.mode === 'warm' || row.transport === 'udp') return 1;
  return row.transport === 'tcp' || row.transport === 'doq' || row.transport === 'doh3' ? 2 : 3;
}

/** Allowed |dnscost − reference| between medians: 5 % of the reference's, at least 2 ms. */
export function toleranceMs(referenceMedian: number): number {
  return Math.max(0.05 * referenceMedian, 2);
}


/** What must exist before a comparison can run; empty when everything is there. */
export function missingPrerequisites(hostBin = HOST_BIN): string[] {
  const out: string[] = [];
  for (const b of ['netem', 'refclient']) if (!existsSync(labBin(b))) out.push(`${labBin(b)} (run: bash lab/build.sh)`);
  if (!existsSync(coreDNSBinary())) out.push(`${coreDNSBinary()} (run: bash lab/build.sh)`);
  if (!existsSync(distPath('native-host/src/main.ts'))) out.push('dist/native-host (run: npx tsc -p tsconfig.json)');
  if (!existsSync(hostBin)) out.push(hostBin);
  return out;
}

/** One timed exchange as either client reported it; phases null where the client has none. */
export interface Sample {
  ok: boolean;
  error: string | null;
  ms: number;
  connect: number | null;
  tls: number | null;
  /** dnscost only: query sent → answer parsed. */
  query: number | null;
  /** dnscost only: whether TLS resumed (must not, in this comparison). */
  resumed: boolean;
}

/** Per-phase medians, for finding where a difference comes from. */
export interface PhaseMedians {
  connect: number | null;
  tls: number | null;
  query: number | null;
  /** The rest of the span: total − connect − tls − query (dnscost), or total − connect − tls (reference). */
  other: number | null;
}

export interface RowResult extends TimingRow {
  rttMs: number;
  floorMs: number;
  dnscost: Summary;
  reference: Summary;
  dnscostPhases: PhaseMedians;
  referencePhases: PhaseMedians;
  /** Medians of the discarded first exchanges of each process. */
  firstDnscost: number | null;
  firstReference: number | null;
  failures: string[];
  resumed: number;
  diffMs: number | null;
  diffPct: number | null;
  toleranceMs: number | null;
  floorOk: boolean;
  /** The reference also respects the floor (otherwise the lab, not dnscost, is wrong). */
  referenceFloorOk: boolean;
  agreementOk: boolean;
  complete: boolean;
  ok: boolean;
}

export interface CompareOptions {
  rttMs: number;
  /** Timed exchanges per side and row (after discarding warm-ups). */
  count: number;
  /** Processes per side and row; the count is split among them. Default ceil(count / 10). */
  blocks?: number;
  /** Exchanges discarded at the start of every process, on both sides. Default 1. */
  warmup?: number;
  name?: string;
  hostBin?: string;
  rows?: readonly TimingRow[];
  log?: (line: string) => void;
}


function endpointUrl(t: TransportId, server: string): string {
  switch (t) {
    case 'udp': return `udp://${server}:53`;
    case 'tcp': return `tcp://${server}:53`;
    case 'dot': return 'tls://dns.test:853';
    case 'doh':
    case 'doh1': return 'https://dns.test:443/dns-query';
    case 'doq': return 'quic://dns.test:853';
    case 'doh3': return 'h3://dns.test:443/dns-query';
  }
}

function lines(stdout: string): unknown[] {
  return stdout.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as unknown);
}

/** Bounded time for one process: every exchange at its floor several times over, plus start-up. */
function processTimeout(row: TimingRow, rttMs: number, n: number): number {
  return 15_000 + n * (floorRtts(row) * rttMs * 4 + 200);
}

async function runDnscost(lab: LabNet, res: LabResolver, hostBin: string, row: TimingRow, n: number, name: string, rttMs: number): Promise<Sample[]> {
  const records = await measureInLab(lab, {
    endpoint: endpointUrl(row.transport, lab.server.addr4), caFile: res.certs.caFile, mode: row.mode, repeat: n, name, hostBin,
    timeoutMs: processTimeout(row, rttMs, n), extra: row.transport === 'doh1' ? ['--http1.1'] : [],
  });
  return records.map((r) => ({
    ok: r.ok && r.rcode === 'NOERROR' && r.transport === row.transport && r.mode === row.mode,
    error: r.ok ? (r.rcode === 'NOERROR' ? null : `rcode ${r.rcode}`) : `${r.error?.code}: ${r.error?.message}`,
    ms: r.timings.total,
    connect: r.timings.connect,
    tls: r.timings.tls,
    query: r.timings.query,
    resumed: r.tls?.resumed ?? false,
  }));
}

interface RefLine { ok: boolean; ms: number; rcode: string | null; error: string | null; connect_ms: number | null; tls_ms: number | null }

async function runReference(lab: LabNet, res: LabResolver, row: TimingRow, n: number, name: string, rttMs: number): Promise<Sample[]> {
  const args = [
    '--transport', row.transport,
    '--server', `${lab.server.addr4}:${TRANSPORTS[row.transport].url.defaultPort}`,
    '--sni', 'dns.test',
    '--ca', res.certs.caFile,
    '--mode', row.mode,
    '--count', String(n),
    '--name', name,
  ];
  const { stdout } = await lab.execIn('client', labBin('refclient'), args, { timeoutMs: processTimeout(row, rttMs, n) });
  const out = lines(stdout) as RefLine[];
  if (out.length !== n) throw new Error(`refclient printed ${out.length} lines, expected ${n}`);
  return out.map((r) => ({
    ok: r.ok && r.rcode === 'NOERROR',
    error: r.ok ? (r.rcode === 'NOERROR' ? null : `rcode ${r.rcode}`) : r.error,
    ms: r.ms,
    connect: r.connect_ms,
    tls: r.tls_ms,
    query: null,
    resumed: false,
  }));
}

const medianOf = (xs: (number | null)[]): number | null => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length === xs.length ? summarize(v).median : null;
};

function phases(samples: Sample[]): PhaseMedians {
  const ok = samples.filter((s) => s.ok);
  if (ok.length === 0) return { connect: null, tls: null, query: null, other: null };
  return {
    connect: medianOf(ok.map((s) => s.connect)),
    tls: medianOf(ok.map((s) => s.tls)),
    query: medianOf(ok.map((s) => s.query)),
    other: summarize(ok.map((s) => s.ms - (s.connect ?? 0) - (s.tls ?? 0) - (s.query ?? 0))).median,
  };
}

/** Judges one row from both sides' timed samples. */
export function judge(row: TimingRow, rttMs: number, count: number, d: Sample[], r: Sample[], firstD: number[], firstR: number[]): RowResult {
  const dnscost = summarize(d.filter((s) => s.ok).map((s) => s.ms));
  const reference = summarize(r.filter((s) => s.ok).map((s) => s.ms));
  const floorMs = floorRtts(row) * rttMs;
  const failures = [
    ...d.filter((s) => !s.ok).map((s) => `dnscost: ${s.error}`),
    ...r.filter((s) => !s.ok).map((s) => `reference: ${s.error}`),
  ];
  const resumed = d.filter((s) => s.resumed).length;
  const dm = dnscost.median;
  const rm = reference.median;
  const diffMs = dm !== null && rm !== null ? dm - rm : null;
  const tol = rm !== null ? toleranceMs(rm) : null;
  const floorOk = dm !== null && dm >= floorMs;
  const referenceFloorOk = rm !== null && rm >= floorMs;
  const agreementOk = diffMs !== null && tol !== null && Math.abs(diffMs) <= tol;
  const complete = dnscost.n >= count && reference.n >= count && failures.length === 0 && resumed === 0;
  return {
    ...row,
    rttMs,
    floorMs,
    dnscost,
    reference,
    dnscostPhases: phases(d),
    referencePhases: phases(r),
    firstDnscost: firstD.length ? summarize(firstD).median : null,
    firstReference: firstR.length ? summarize(firstR).median : null,
    failures,
    resumed,
    diffMs,
    diffPct: diffMs !== null && rm ? (100 * diffMs) / rm : null,
    toleranceMs: tol,
    floorOk,
    referenceFloorOk,
    agreementOk,
    complete,
    ok: floorOk && referenceFloorOk && agreementOk && complete,
  };
}

/** Splits `count` into `blocks` near-equal parts. */
export function splitCount(count: number, blocks: number): number[] {
  const b = Math.max(1, Math.min(blocks, count));
  return Array.from({ length: b }, (_, i) => Math.floor(count / b) + (i < count % b ? 1 : 0));
}

/**
 * Builds a lab link with `rttMs`, starts CoreDNS behind it, and measures every row with dnscost-host and the
 * reference client, alternating which goes first by block and row; tears everything down before returning.
 *
 * What each side's figure spans (the fairness contract; refclient's main.go states its side):
 *   - Both ask the same question in the same bytes: EDNS0 with a 1232-byte buffer and, on encrypted transports,
 *     padding to a 128-octet block, as browsers pad (refclient's buildQuery), so the server does the same work.
 *   - cold: dnscost `timings.total` and refclient `ms` both run from just before the dial (UDP: the socket) to
 *     the parsed answer: connect + TLS + HTTP preface + query. Over QUIC dnscost's total leaves out the pipe to its
 *     companion process (the companion times handshake and query itself), which refclient, one process, has not;
 *     over HTTP/2 it leaves out node:http2's own stepping (the request written in the event loop's next check phase,
 *     the answer handed over a step after its last byte): its query runs from the request's departure to the
 *     answer's last byte (native-host/src/transports/doh.ts).
 *   - warm: the connection is opened before the clock starts (untimed) and reused; both figures span sending
 *     the query to the parsed answer.
 *   - Each process's first `warmup` exchanges are discarded on both sides: they pay one-off process costs
 *     (module loading, JIT, lazily built state) that belong to neither protocol nor path. Their medians are
 *     reported separately.
 */
export async function compareTimings(opts: CompareOptions): Promise<RowResult[]> {
  const name = opts.name ?? TIMING_NAME;
  const hostBin = opts.hostBin ?? HOST_BIN;
  const rows = opts.rows ?? TIMING_ROWS;
  const warmup = opts.warmup ?? 1;
  const sizes = splitCount(opts.count, opts.blocks ?? Math.ceil(opts.count / 10));
  const log = opts.log ?? (() => {});
  const lab = await createLabNet({ rttMs: opts.rttMs, jitterMs: 0, lossPct: 0, name: `rtt-${opts.rttMs}` });
  let res: LabResolver | null = null;
  try {
    res = await startCoreDNS({ netns: lab.server.ns, address: lab.server.addr4 });
    const acc = rows.map(() => ({ d: [] as Sample[], r: [] as Sample[], firstD: [] as number[], firstR: [] as number[] }));
    for (const [b, size] of sizes.entries()) {
      for (const [i, row] of rows.entries()) {
        const n = size + warmup;
        const dnscostFirst = (b + i) % 2 === 0;
        const a = acc[i]!;
        const runD = async () => {
          const s = await runDnscost(lab, res!, hostBin, row, n, name, opts.rttMs);
          a.firstD.push(...s.slice(0, warmup).filter((x) => x.ok).map((x) => x.ms));
          a.d.push(...s.slice(warmup));
        };
        const runR = async () => {
          const s = await runReference(lab, res!, row, n, name, opts.rttMs);
          a.firstR.push(...s.slice(0, warmup).filter((x) => x.ok).map((x) => x.ms));
          a.r.push(...s.slice(warmup));
        };
        if (dnscostFirst) { await runD(); await runR(); } else { await runR(); await runD(); }
        log(`rtt ${opts.rttMs} ms, block ${b + 1}/${sizes.length}: ${row.transport} ${row.mode} done`);
      }
    }
    return rows.map((row, i) => judge(row, opts.rttMs, opts.count, acc[i]!.d, acc[i]!.r, acc[i]!.firstD, acc[i]!.firstR));
  } finally {
    await res?.stop();
    await lab.destroy();
  }
}

const f = (x: number | null, digits = 1): string => (x === null ? '–' : x.toFixed(digits));
const yes = (b: boolean): string => (b ? 'yes' : '**NO**');

/** The main table: one line per RTT × transport × mode. */
export function formatTable(results: readonly RowResult[]): string {
  const head = ['RTT ms', 'transport', 'mode', 'n', 'dnscost median', 'p5', 'p95', 'reference median', 'diff ms', 'diff %', 'tolerance ms', 'floor ms', 'floor ok', 'agreement ok'];
  const body = results.map((r) => [
    String(r.rttMs),
    r.transport,
    r.mode,
    r.dnscost.n === r.reference.n ? String(r.dnscost.n) : `${r.dnscost.n}/${r.reference.n}`,
    f(r.dnscost.median, 2),
    f(r.dnscost.p5, 2),
    f(r.dnscost.p95, 2),
    f(r.reference.median, 2),
    r.diffMs === null ? '–' : (r.diffMs >= 0 ? '+' : '') + r.diffMs.toFixed(2),
    r.diffPct === null ? '–' : (r.diffPct >= 0 ? '+' : '') + r.diffPct.toFixed(1),
    f(r.toleranceMs, 2),
    String(r.floorMs),
    yes(r.floorOk && r.referenceFloorOk),
    yes(r.agreementOk),
  ]);
  return markdown(head, body);
}

/** Where the time goes: per-phase medians of both clients, and the discarded first exchanges. */
export function formatPhases(results: readonly RowResult[]): string {
  const head = ['RTT ms', 'transport', 'mode', 'dnscost connect', 'tls', 'query', 'other', 'reference connect', 'tls', 'query + other', 'first exchange dnscost', 'first exchange reference'];
  const body = results.map((r) => [
    String(r.rttMs),
    r.transport,
    r.mode,
    f(r.dnscostPhases.connect, 2),
    f(r.dnscostPhases.tls, 2),
    f(r.dnscostPhases.query, 2),
    f(r.dnscostPhases.other, 2),
    f(r.referencePhases.connect, 2),
    f(r.referencePhases.tls, 2),
    f(r.referencePhases.other, 2),
    f(r.firstDnscost, 2),
    f(r.firstReference, 2),
  ]);
  return markdown(head, body);
}

/** Every failed check in words; empty when all passed. */
export function describeFailures(results: readonly RowResult[]): string[] {
  const out: string[] = [];
  for (const r of results) {
    const at = `RTT ${r.rttMs} ms ${r.transport} ${r.mode}`;
    if (!r.floorOk) out.push(`${at}: dnscost median ${f(r.dnscost.median, 2)} ms is below the floor ${r.floorMs} ms`);
    if (!r.referenceFloorOk) out.push(`${at}: reference median ${f(r.reference.median, 2)} ms is below the floor ${r.floorMs} ms (the lab link is not delaying)`);
    if (!r.agreementOk) out.push(`${at}: dnscost median ${f(r.dnscost.median, 2)} ms vs reference ${f(r.reference.median, 2)} ms differ by ${f(r.diffMs, 2)} ms, more than ${f(r.toleranceMs, 2)} ms`);
    if (r.failures.length) {
      const counts = new Map<string, number>();
      for (const x of r.failures) counts.set(x, (counts.get(x) ?? 0) + 1);
      out.push(`${at}: failed exchanges: ${[...counts].map(([k, v]) => `${v}× ${k}`).join('; ')}`);
    }
    if (r.resumed) out.push(`${at}: ${r.resumed} dnscost exchanges resumed a TLS session (the reference never does)`);
    if (r.dnscost.n === 0 || r.reference.n === 0) out.push(`${at}: no successful exchange on ${r.dnscost.n === 0 ? 'the dnscost side' : 'the reference side'}`);
  }
  return out;
}

function markdown(head: string[], body: string[][]): string {
  const numeric = (i: number) => i > 2;
  const sep = head.map((_, i) => (numeric(i) ? '---:' : '---'));
  return [head, sep, ...body].map((cells) => `| ${cells.join(' | ')} |`).join('\n') + '\n';
}

/** CPU cost (median of `rounds`, ms) of building a TLS context from Node's root certificates plus `caPem`, and from `caPem` alone. */
export function secureContextCost(caPem: string, rounds = 9): { withRoots: number; caOnly: number; roots: number } {
  const time = (make: () => unknown): number => {
    const xs: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const t = performance.now();
      make();
      xs.push(performance.now() - t);
    }
    return summarize(xs).median!;
  };
  return {
    withRoots: time(() => tls.createSecureContext({ ca: [...tls.rootCertificates, caPem] })),
    caOnly: time(() => tls.createSecureContext({ ca: [caPem] })),
    roots: tls.rootCertificates.length,
  };
}

/** Runs a command without a shell, bounded in time; resolves with its trimmed stdout or null. */
export function quietOutput(cmd: string, args: string[], timeoutMs = 5000): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: timeoutMs }, (err, stdout) => resolve(err ? null : stdout.trim()));
  });
}

/** One QUIC transport's cold medians with a full handshake and with a resumed session (0-RTT where accepted). */
export interface ResumedResult {
  transport: 'doq' | 'doh3';
  rttMs: number;
  cold: Summary;
  resumed: Summary;
  /** Resumed exchanges whose query went in 0-RTT and was accepted (TlsInfo.earlyData). */
  earlyData: number;
  /** Resumed exchanges that did resume (TlsInfo.resumed). */
  resumedCount: number;
  failures: string[];
}

/**
 * On a lab link with `rttMs`, runs dnscost-host cold over doq and doh3 (GET, the method that may travel in 0-RTT),
 * once with full handshakes and once with `--resume`; each process discards its first `warmup` exchanges (the first
 * resumed one has no ticket yet). Tears everything down before returning.
 */
export async function compareResumed(opts: { rttMs: number; count: number; warmup?: number; name?: string; hostBin?: string }): Promise<ResumedResult[]> {
  const name = opts.name ?? TIMING_NAME;
  const hostBin = opts.hostBin ?? HOST_BIN;
  const warmup = opts.warmup ?? 1;
  const lab = await createLabNet({ rttMs: opts.rttMs, jitterMs: 0, lossPct: 0, name: `resume-${opts.rttMs}` });
  let res: LabResolver | null = null;
  try {
    res = await startCoreDNS({ netns: lab.server.ns, address: lab.server.addr4 });
    const out: ResumedResult[] = [];
    for (const transport of ['doq', 'doh3'] as const) {
      const runOnce = async (resume: boolean): Promise<ExchangeRecord[]> => {
        const n = opts.count + warmup;
        const records = await measureInLab(lab, {
          endpoint: endpointUrl(transport, lab.server.addr4), caFile: res!.certs.caFile, mode: 'cold', repeat: n, name, hostBin,
          timeoutMs: processTimeout({ transport, mode: 'cold' }, opts.rttMs, n), extra: ['--get', ...(resume ? ['--resume'] : [])],
        });
        return records.slice(warmup);
      };
      const full = await runOnce(false);
      const resumed = await runOnce(true);
      const okMs = (rs: ExchangeRecord[]) => rs.filter((r) => r.ok && r.rcode === 'NOERROR').map((r) => r.timings.total);
      out.push({
        transport,
        rttMs: opts.rttMs,
        cold: summarize(okMs(full)),
        resumed: summarize(okMs(resumed)),
        earlyData: resumed.filter((r) => r.tls?.earlyData).length,
        resumedCount: resumed.filter((r) => r.tls?.resumed).length,
        failures: [...full, ...resumed].filter((r) => !r.ok).map((r) => `${r.error?.code}: ${r.error?.message}`),
      });
    }
    return out;
  } finally {
    await res?.stop();
    await lab.destroy();
  }
}

/** The resumed table: cold with a full handshake vs resumed (0-RTT), per QUIC transport. */
export function formatResumed(results: readonly ResumedResult[]): string {
  const head = ['RTT ms', 'transport', 'mode', 'n', 'cold median', 'resumed median', 'resumed p5', 'resumed p95', 'resumed', '0-RTT accepted'];
  const body = results.map((r) => [
    String(r.rttMs), r.transport, 'cold', String(r.resumed.n), f(r.cold.median, 2), f(r.resumed.median, 2), f(r.resumed.p5, 2), f(r.resumed.p95, 2),
    `${r.resumedCount}/${r.resumed.n}`, `${r.earlyData}/${r.resumed.n}`,
  ]);
  return markdown(head, body);
}
