// The test runner's configuration: three kinds, each runnable alone (`npx vitest run --project unit`), run in this
// order by `scripts/test`. Unit tests sit beside their code and run in parallel; integration tests (real servers,
// emulated networks, captures, timing against a reference) and browser tests (real Chromium and Firefox) run one file
// at a time, never beside another file: their timings are milliseconds on 2 cores.
import { defineConfig } from 'vitest/config';

const SERIAL = { fileParallelism: false, maxWorkers: 1 } as const;

export default defineConfig({
  test: {
    // Child processes, not threads: tests spawn servers, load a native addon (koffi) and re-run files in namespaces.
    pool: 'forks',
    // node:test had no per-test limit; each kind states its own, and long tests state theirs beside them.
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['common/**/*.test.ts', 'native-host/src/**/*.test.ts', 'collector/**/*.test.ts', 'extension/src/**/*.test.ts', 'lab/**/*.test.ts', 'tests/*.test.ts'],
          testTimeout: 60_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'integration', include: ['tests/integration/**/*.test.ts'], testTimeout: 600_000, hookTimeout: 600_000, ...SERIAL, sequence: { groupOrder: 1 } },
      },
      {
        extends: true,
        test: { name: 'browser', include: ['tests/browser/**/*.test.ts'], testTimeout: 900_000, hookTimeout: 600_000, ...SERIAL, sequence: { groupOrder: 2 } },
      },
    ],
  },
});
