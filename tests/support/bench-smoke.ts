// Runs benchmarks in their smoke mode (bench/smoke.ts): each `node dist/bench/NAME.js --smoke` must exit 0 within its
// bound and print its report. Shared by tests/integration/bench-smoke.test.ts (the lab and the collector) and
// tests/browser/bench-smoke.test.ts (the benchmarks that drive real browsers).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'vitest';
import { distPath, ROOT } from '../../lab/paths.js';

/** One benchmark's smoke run: its file under bench/ and a line its report must contain. */
export interface SmokeCase {
  bench: string;
  /** Arguments beside --smoke (e.g. another browser). */
  args?: string[];
  expect: RegExp;
  /** Bound on the whole run (ms). */
  timeoutMs: number;
}

/** A test per benchmark: `--smoke` exits 0 and prints what its report must show. */
export function smokeTests(cases: readonly SmokeCase[]): void {
  for (const c of cases) {
    const name = [c.bench, ...(c.args ?? []), '--smoke'].join(' ');
    test(`${name} runs end to end`, { timeout: c.timeoutMs + 10_000 }, async (t) => {
      if (process.getuid?.() !== 0) return t.skip('the benchmarks need root (network namespaces)');
      const file = distPath(`bench/${c.bench}.ts`);
      assert.ok(existsSync(file), `${file}: run scripts/setup (it builds dist/)`);
      const started = Date.now();
      const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve) => {
        execFile(process.execPath, [file, ...(c.args ?? []), '--smoke'], { cwd: ROOT, timeout: c.timeoutMs, killSignal: 'SIGKILL', maxBuffer: 64 * 1024 * 1024 },
          (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, out: `${stdout}\n${stderr}` }));
      });
      console.log(`${name}: ${Date.now() - started} ms`);
      assert.equal(code, 0, out.slice(-6000));
      assert.match(out, c.expect, out.slice(-3000));
    });
  }
}
