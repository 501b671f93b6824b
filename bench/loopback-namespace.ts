// The browser benchmarks run in a loopback-only network namespace: the script re-runs itself under
// `unshare --net` (root) with its own arguments, and the inner run does the work.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Runs `inner` when this is the inner run; otherwise re-runs the module at `moduleUrl` inside a new namespace. */
export async function inLoopbackNamespace(moduleUrl: string, inner: () => Promise<void>, timeoutMs: number): Promise<void> {
  if (process.env.DNSCOST_BENCH_INNER) return inner();
  const args = process.argv.slice(2).map((a) => `'${a}'`).join(' ');
  execFileSync('unshare', ['--net', 'sh', '-c', `ip link set lo up && exec "${process.execPath}" "${fileURLToPath(moduleUrl)}" ${args}`], {
    env: { ...process.env, DNSCOST_BENCH_INNER: '1' },
    stdio: 'inherit',
    timeout: timeoutMs,
  });
}
