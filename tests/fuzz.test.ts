// A short fuzzing run of every boundary (bench/fuzz-targets.ts): 2,000 inputs each, seeded, so a failure reproduces.
// The recorded 1,000,000-input runs: bench/fuzz.ts, bench/results/fuzz.md.
import { execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'vitest';
import fc from 'fast-check';
import { ROOT } from '../lab/paths.js';
import { FUZZ_TARGETS } from '../bench/fuzz-targets.js';

for (const target of FUZZ_TARGETS) {
  test(`fuzz: ${target.name} — no crash, no hang, every refusal coded (2,000 inputs)`, { timeout: 120_000 }, async () => {
    const arbitrary = target.arbitrary as fc.Arbitrary<unknown>;
    const check = target.check as (i: unknown) => void | Promise<void>;
    if ('async' in target && target.async) await fc.assert(fc.asyncProperty(arbitrary, async (input) => check(input)), { numRuns: 2000, seed: 42 });
    else fc.assert(fc.property(arbitrary, (input) => void check(input)), { numRuns: 2000, seed: 42 });
  });
}

// The QUIC companion's boundaries are fuzzed by Go (native-host/quic/fuzz_test.go): here their seeds run as tests, with
// the machine's Go as native-host/quic/build.sh uses it; the recorded 1,000,000-input runs are in bench/results/fuzz.md.
test('fuzz: the QUIC companion\'s frames and DoQ answers (Go fuzz targets, their seeds)', { timeout: 300_000 }, () => {
  const out = execFileSync('go', ['test', '-count=1', '-run', '^Fuzz', '.'], {
    cwd: join(ROOT, 'native-host', 'quic'),
    env: { ...process.env, PATH: `${process.env.PATH}:/usr/local/go/bin`, GOFLAGS: '-mod=readonly', GOTOOLCHAIN: 'local' },
    encoding: 'utf8',
  });
  assert.match(out, /^ok\s/m);
});
