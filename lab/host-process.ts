// Spawns the real dnscost-host in native-messaging mode and reads its frames, for integration tests.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { encodeFrame, FrameDecoder } from '../native-host/src/framing.js';
import { HOST_BIN } from './paths.js';


/** A running host with a reply queue. */
export interface HostProcess {
  child: ChildProcessWithoutNullStreams;
  send(message: unknown): void;
  sendRaw(bytes: Buffer): void;
  /** The next reply frame (parsed), or rejects after `timeoutMs`. */
  next(timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Replies until one matches `done`, collecting all of them. */
  until(done: (r: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Array<Record<string, unknown>>>;
  stderr(): string;
  exit(): Promise<number | null>;
}

/** Starts `dnscost-host ARGS` (default: as Chromium starts it, with the extension origin). */
export function startHost(args: string[] = ['chrome-extension://abcdefghijklmnopabcdefghijklmnop/'], env: NodeJS.ProcessEnv = {}): HostProcess {
  return attachHost(spawn(process.execPath, [HOST_BIN, ...args], { env: { ...process.env, ...env }, stdio: 'pipe' }));
}

/** Speaks native messaging with a host started some other way (a packaged executable, inside a namespace). */
export function attachHost(child: ChildProcessWithoutNullStreams): HostProcess {
  // A host that has exited (a framing error ends it) refuses more input: what it answered is what a test checks.
  child.stdin.on('error', () => undefined);
  const decoder = new FrameDecoder(64 * 1024 * 1024);
  const queue: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  child.stdout.on('data', (chunk: Buffer) => {
    for (const e of decoder.push(chunk)) {
      if (e.kind !== 'frame') throw new Error(`host wrote a bad frame: ${JSON.stringify(e)}`);
      queue.push(JSON.parse(e.body.toString('utf8')) as Record<string, unknown>);
    }
    while (waiters.length) waiters.shift()!();
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const next = async (timeoutMs = 10_000): Promise<Record<string, unknown>> => {
    const deadline = Date.now() + timeoutMs;
    while (queue.length === 0) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no reply from the host within ${timeoutMs} ms; stderr: ${err.slice(-2000)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return queue.shift()!;
  };
  return {
    child,
    send: (message) => child.stdin.write(encodeFrame(JSON.stringify(message))),
    sendRaw: (bytes) => child.stdin.write(bytes),
    next,
    async until(done, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      const out: Array<Record<string, unknown>> = [];
      for (;;) {
        const r = await next(Math.max(1, deadline - Date.now()));
        out.push(r);
        if (done(r)) return out;
      }
    },
    stderr: () => err,
    async exit() {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
