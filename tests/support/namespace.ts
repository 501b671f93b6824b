// Tests that re-run themselves inside a namespace: a browser reaches for outside services even with every "no
// background networking" flag, and some checks need a network stack of their own (other TCP options). The outer
// half of such a test runs the same file again under vitest inside `unshare` (root only) with an environment
// variable telling the file it is the inner half; the inner run's exit code is the outer test's verdict.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'vitest';
import { findBrowser, type BrowserName } from '../../lab/browsers.js';
import { requireBuiltExtension } from '../../lab/extension-build.js';
import { ROOT } from '../../lab/paths.js';

/** The shell command that runs one test file (a module URL or path) under vitest from the checkout's root. */
export function vitestCommand(file: string): string {
  const path = file.startsWith('file:') ? fileURLToPath(file) : file;
  return `exec "${process.execPath}" "${join(ROOT, 'node_modules/vitest/vitest.mjs')}" run --config "${join(ROOT, 'vitest.config.ts')}" "${path}"`;
}

/** What an inner run printed and how it ended. */
export interface InnerRun {
  code: number | null;
  text: string;
}

/**
 * Runs `script` (sh) under `unshare` with `unshareArgs` (a new network namespace by default) and `env` added; the
 * runner's own variables are removed so the inner vitest is a run of its own. Never rejects: a failure is its code.
 */
export function runInNamespace(script: string, env: Record<string, string>, timeoutMs: number, unshareArgs: readonly string[] = ['--net']): Promise<InnerRun> {
  const full: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const k of Object.keys(full)) if (k.startsWith('VITEST') || k === 'NODE_TEST_CONTEXT') delete full[k];
  return new Promise((resolve) => {
    execFile('unshare', [...unshareArgs, 'sh', '-c', script], { env: full, cwd: ROOT, timeout: timeoutMs, killSignal: 'SIGTERM', maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, text: stdout + stderr }));
  });
}

/** The inner run's lines that start with `prefix` (its timing lines, e.g. `chromium: …`). */
export function linesOf(run: InnerRun, prefix: string): string[] {
  // Without the colour codes vitest puts before a test's console line.
  return run.text.split('\n').map((l) => l.replace(/\x1b\[[0-9;]*m/g, '')).filter((l) => l.startsWith(prefix));
}

/**
 * The outer half of a browser test: for each browser, a test that re-runs `file` inside a fresh loopback-only network
 * namespace (unshare --net, as root) with `innerEnv`=browser name set, prints the inner run's `NAME: …` timing lines,
 * and fails with the inner run's output when it fails. The file's inner half (the variable set) runs the real tests.
 */
export function outerBrowserTests(
  file: string,
  innerEnv: string,
  title: (name: BrowserName) => string,
  budgetMs: Record<BrowserName, number>,
  browsers: readonly BrowserName[] = ['chromium', 'firefox'],
): void {
  for (const name of browsers) {
    test(title(name), { timeout: budgetMs[name] + 10_000 }, async (t) => {
      if (process.getuid?.() !== 0) return t.skip('needs root: browsers run in a loopback-only network namespace (unshare --net)');
      if (!findBrowser(name)) assert.fail(`${name} is not installed: scripts/setup installs it`);
      requireBuiltExtension(name);
      const started = Date.now();
      const out = await runInNamespace(`ip link set lo up && ${vitestCommand(file)}`, { [innerEnv]: name }, budgetMs[name]);
      console.log(`${linesOf(out, `${name}: `).join('\n')}\n${name}: whole run in the namespace ${Date.now() - started} ms`);
      assert.equal(out.code, 0, out.text.slice(-8000));
    });
  }
}
