// Fuzzing every boundary at length (issue 13): each target of bench/fuzz-targets.ts gets N inputs (default
// 1,000,000), seeded; counted are the inputs, the crashes (a check that threw: an uncoded exception, a broken
// promise, an input over HANG_MS) and the slowest input. The first crash stops its target and is printed with the
// seed and path fast-check gives to replay it.
//
//   node dist/bench/fuzz.js [--runs 1000000] [--seed 1] [--targets NAME,…] [--out bench/results/fuzz.md]
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { FUZZ_TARGETS, HANG_MS } from './fuzz-targets.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '1000000' }, seed: { type: 'string', default: '1' }, targets: { type: 'string' }, out: { type: 'string' } } });
const runs = Math.max(1, Math.min(100_000_000, Number(values.runs) || 1_000_000));
const seed = Number(values.seed) || 1;
const wanted = values.targets?.split(',').map((s) => s.trim());
const rows: string[] = [];
let failed = false;
for (const target of FUZZ_TARGETS.filter((t) => !wanted || wanted.some((w) => t.name.includes(w)))) {
  let slowest = 0;
  let n = 0;
  const t0 = performance.now();
  const check = target.check as (i: unknown) => void;
  const result = fc.check(fc.property(target.arbitrary as fc.Arbitrary<unknown>, (input) => {
    const s = performance.now();
    try {
      check(input);
    } finally {
      n++;
      slowest = Math.max(slowest, performance.now() - s);
    }
  }), { numRuns: runs, seed });
  const seconds = (performance.now() - t0) / 1000;
  const crash = result.failed ? `${String(result.errorInstance).slice(0, 200)} (seed ${result.seed}, path ${result.counterexamplePath})` : '';
  failed ||= result.failed;
  rows.push(`| ${target.name} | ${n.toLocaleString('en')} | ${result.failed ? 1 : 0} | ${slowest > HANG_MS ? 1 : 0} | ${slowest.toFixed(1)} | ${seconds.toFixed(0)} | ${crash || '—'} |`);
  process.stderr.write(`${rows.at(-1)}\n`);
}
const report = [
  '# Fuzzing the boundaries',
  '',
  `Command: \`node dist/bench/fuzz.js ${process.argv.slice(2).join(' ')}\``.replace(/ `$/, '`'),
  `Run: ${new Date().toISOString()}; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}; fast-check, seed ${seed}, ${runs.toLocaleString('en')} inputs per target.`,
  '',
  `Inputs: random bytes, strings and JSON, and valid inputs mutated (bytes flipped or cut, a field replaced or dropped).`,
  `A crash is an exception that is not the boundary's own coded refusal, or a result that breaks its promises; a hang is an input over ${HANG_MS} ms.`,
  '',
  '| target | inputs | crashes | hangs | slowest input (ms) | seconds | first crash |',
  '| --- | ---: | ---: | ---: | ---: | ---: | --- |',
  ...rows,
  '',
].join('\n');
if (values.out) writeFileSync(values.out, report);
process.stdout.write(report);
process.exitCode = failed ? 1 : 0;
