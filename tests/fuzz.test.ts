// A short fuzzing run of every boundary (bench/fuzz-targets.ts): 2,000 inputs each, seeded, so a failure reproduces.
// The recorded 1,000,000-input runs: bench/fuzz.ts, bench/results/fuzz.md.
import { test } from 'vitest';
import fc from 'fast-check';
import { FUZZ_TARGETS } from '../bench/fuzz-targets.js';

for (const target of FUZZ_TARGETS) {
  test(`fuzz: ${target.name} — no crash, no hang, every refusal coded (2,000 inputs)`, { timeout: 120_000 }, () => {
    fc.assert(fc.property(target.arbitrary as fc.Arbitrary<unknown>, (input) => (target.check as (i: unknown) => void)(input)), { numRuns: 2000, seed: 42 });
  });
}
