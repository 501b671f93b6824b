// Child processes of the validation experiment: run a command for its output, stop a long-running one.
import { execFile, type ChildProcess } from 'node:child_process';

/** Runs `cmd` and resolves with its stdout; rejects with its stderr (or the error) when it fails or outlives `timeoutMs`. */
export function sh(cmd: string, args: string[], timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: timeoutMs }, (err, stdout, stderr) => (err ? reject(new Error(`${cmd} ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout)));
  });
}

/** Stops `child` (SIGTERM, SIGKILL after 2 s); resolves once it has exited (at once if it already has). */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 2000);
  await exited;
  clearTimeout(t);
}
