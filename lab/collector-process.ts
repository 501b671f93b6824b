// The collector run as its own process (dist/collector/main.js), as the tests and the collector benchmarks run it:
// started with the given arguments, resolved once it prints "listening on URL", so it can be stopped, killed with
// SIGKILL and restarted on the same data. Nothing here talks beyond the address the collector was given.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { distPath } from './paths.js';

const MAIN = distPath('collector/main.ts');

/** A running collector process. */
export interface CollectorProcess {
  url: string;
  /** Milliseconds from spawn to "listening on". */
  startMs: number;
  /** The process id (its CPU and memory are read from /proc). */
  pid: number;
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the collector with `args` and `env` added to this process's; rejects if it exits or is not listening in 60 s. */
export async function startCollectorProcess(args: readonly string[], env: Record<string, string> = {}): Promise<CollectorProcess> {
  const t0 = Date.now();
  const child: ChildProcess = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  const exited = once(child, 'exit');
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`collector did not start:\n${log}`));
    }, 60_000);
    child.stderr!.on('data', (d: Buffer) => {
      log = (log + d.toString()).slice(-8000);
      const m = /listening on (http:\/\/\S+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`collector exited (${code}) before listening:\n${log}`));
    });
  });
  return {
    url,
    startMs: Date.now() - t0,
    pid: child.pid!,
    async kill9() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
