// Fuzzing every boundary at length (issue 13): each target of bench/fuzz-targets.ts gets N inputs (default
// 1,000,000), seeded; counted are the inputs, the crashes (a check that threw: an uncoded exception, a broken
// promise, an input over HANG_MS) and the slowest input. The first crash stops its target and is printed with the
// seed and path fast-check gives to replay it (`fc.check(…, { seed, path })`).
//
// Each target runs in a worker thread that counts its inputs in shared memory: an input that never returns (an
// endless loop a synchronous check cannot time itself out of) stops the count, and after STALL_MS without one the
// worker is ended and the target recorded as hung at that input (its path is the count: replayable the same way).
//
//   node dist/bench/fuzz.js [--runs 1000000] [--seed 1] [--targets NAME,…] [--out bench/results/fuzz.md] [--smoke]
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import fc from 'fast-check';
import { FUZZ_TARGETS, HANG_MS } from './fuzz-targets.js';
import { reportPath, SMOKE_OPTION } from './smoke.js';

/** No input finished for this long: the one running is a hang (far above HANG_MS, which a slow input trips first). */
const STALL_MS = 30_000;
/** The main thread looks at the workers' counters this often. */
const POLL_MS = 500;

interface Job { name: string; runs: number; seed: number; shared: SharedArrayBuffer }
interface Outcome { inputs: number; crashed: boolean; hung: boolean; slowestMs: number; seconds: number; crash: string }

/** In the worker: runs one target, counting inputs in `shared` ([0] inputs begun, [1] inputs ended; slowest in ms). */
async function runTarget(job: Job): Promise<void> {
  const target = FUZZ_TARGETS.find((t) => t.name === job.name)!;
  const counts = new Int32Array(job.shared, 0, 2);
  const slowest = new Float64Array(job.shared, 8, 1);
  const check = target.check as (i: unknown) => void | Promise<void>;
  const begin = () => {
    Atomics.add(counts, 0, 1);
    return performance.now();
  };
  const ended = (s: number) => {
    slowest[0] = Math.max(slowest[0]!, performance.now() - s);
    Atomics.add(counts, 1, 1);
  };
  const arbitrary = target.arbitrary as fc.Arbitrary<unknown>;
  const property = target.async
    ? fc.asyncProperty(arbitrary, async (input) => {
      const s = begin();
      try {
        await check(input);
      } finally {
        ended(s);
      }
    })
    : fc.property(arbitrary, (input) => {
      const s = begin();
      try {
        void check(input);
      } finally {
        ended(s);
      }
    });
  const result = await fc.check(property, { numRuns: job.runs, seed: job.seed });
  const crash = result.failed ? `${String(result.errorInstance).slice(0, 200)} (seed ${result.seed}, path ${result.counterexamplePath})` : '';
  // numRuns: the inputs tried up to and including the first failing one (shrinking is not counted).
  parentPort!.postMessage({ inputs: result.numRuns, crashed: result.failed, crash });
}

/** In the main thread: one target in a worker, watched for a hang; its outcome. */
async function fuzzTarget(name: string, runs: number, seed: number): Promise<Outcome> {
  const shared = new SharedArrayBuffer(16);
  const counts = new Int32Array(shared, 0, 2);
  const slowest = new Float64Array(shared, 8, 1);
  const t0 = performance.now();
  const worker = new Worker(new URL(import.meta.url), { workerData: { name, runs, seed, shared } satisfies Job });
  return new Promise<Outcome>((resolve) => {
    let lastEnded = -1;
    let lastChange = performance.now();
    const finish = (o: Omit<Outcome, 'slowestMs' | 'seconds'>) => {
      clearInterval(watch);
      resolve({ ...o, slowestMs: slowest[0]!, seconds: (performance.now() - t0) / 1000 });
    };
    const watch = setInterval(() => {
      const ended = Atomics.load(counts, 1);
      if (ended !== lastEnded) {
        lastEnded = ended;
        lastChange = performance.now();
        return;
      }
      if (performance.now() - lastChange < STALL_MS) return;
      const begun = Atomics.load(counts, 0);
      void worker.terminate();
      finish({ inputs: begun, crashed: false, hung: true, crash: `input ${begun} ran over ${STALL_MS / 1000} s and was stopped (a hang; seed ${seed}, path ${begun - 1})` });
    }, POLL_MS);
    worker.once('message', (m: { inputs: number; crashed: boolean; crash: string }) => {
      finish({ inputs: m.inputs, crashed: m.crashed, hung: m.crashed && /\(a hang\)$/.test(m.crash.split(' (seed')[0]!), crash: m.crash });
      void worker.terminate();
    });
    worker.once('error', (err) => finish({ inputs: Atomics.load(counts, 0), crashed: true, hung: false, crash: `the worker failed: ${String(err).slice(0, 200)}` }));
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '1000000' }, seed: { type: 'string', default: '1' }, targets: { type: 'string' }, out: { type: 'string' }, ...SMOKE_OPTION } });
  // --smoke: 500 inputs per target, through the same workers.
  const runs = values.smoke ? 500 : Math.max(1, Math.min(100_000_000, Number(values.runs) || 1_000_000));
  const seed = Number(values.seed) || 1;
  const wanted = values.targets?.split(',').map((s) => s.trim());
  const rows: string[] = [];
  let failed = false;
  for (const target of FUZZ_TARGETS.filter((t) => !wanted || wanted.some((w) => t.name.includes(w)))) {
    const o = await fuzzTarget(target.name, runs, seed);
    failed ||= o.crashed || o.hung;
    rows.push(`| ${target.name} | ${o.inputs.toLocaleString('en')} | ${o.crashed && !o.hung ? 1 : 0} | ${o.hung || o.slowestMs > HANG_MS ? 1 : 0} | ${o.slowestMs.toFixed(1)} | ${o.seconds.toFixed(0)} | ${o.crash || '—'} |`);
    process.stderr.write(`${rows.at(-1)}\n`);
  }
  const report = [
    '# Fuzzing the boundaries',
    '',
    `Command: \`nice -n 19 node dist/bench/fuzz.js ${process.argv.slice(2).join(' ')}\``.replace(/ `$/, '`'),
    `Run: ${new Date().toISOString()}; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}; node ${process.version}; fast-check, seed ${seed}, ${runs.toLocaleString('en')} inputs per target.`,
    '',
    `Inputs: random bytes, strings and JSON, and valid inputs mutated (bytes flipped or cut, a field replaced or dropped).`,
    `A crash is an exception that is not the boundary's own coded refusal, or a result that breaks its promises; a hang is an input over ${HANG_MS} ms`,
    `(or one that never returns: each target runs in a worker whose input count is watched, and one stuck for ${STALL_MS / 1000} s is stopped).`,
    `A target stops at its first crash or hang, so its inputs are then fewer than asked.`,
    '',
    '| target | inputs | crashes | hangs | slowest input (ms) | seconds | first crash or hang |',
    '| --- | ---: | ---: | ---: | ---: | ---: | --- |',
    ...rows,
    '',
  ].join('\n');
  const out = reportPath(values);
  if (out) writeFileSync(out, report);
  process.stdout.write(report);
  process.exitCode = failed ? 1 : 0;
}

if (isMainThread) await main();
else await runTarget(workerData as Job);
