// The real native host behind the extension's port interface, as a browser runs it, so the background's own
// connection and measurement code (extension/src/background/host-connection.ts, measurements.ts) can drive a real
// host process under Node (tests/integration/chaos.test.ts).
//
// Lifecycle, as Chromium's native messaging does it (extensions/browser/api/messaging/native_message_process_host.cc):
// connect() starts `dnscost-host <origin>` with pipes; postMessage writes one frame to its stdin; each frame on its
// stdout is one message (a frame over 1 MiB, or one that is not JSON, closes the port with an error); the process
// exiting or closing stdout closes the port (onDisconnect, "Native host has exited."). disconnect() closes stdin and
// ends the process: SIGTERM, then SIGKILL after 2 s (base::EnsureProcessTerminated), which also ends a stopped one.
// onDisconnect is not called for the side that disconnected.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { NativePort } from '../extension/src/background/host-connection.js';
import { MAX_FRAME_BYTES } from '../common/schema.js';
import { encodeFrame, FrameDecoder } from '../native-host/src/framing.js';
import { HOST_BIN } from './paths.js';

/** What Chromium says when the host's process ends, and when its output breaks the protocol. */
export const HOST_EXITED = 'Native host has exited.';
export const HOST_BROKE_PROTOCOL = 'Error when communicating with the native messaging host.';
/** How long a disconnected host gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 2000;

/** A port onto one real host process, with handles a test needs (the process, bytes of a frame not yet whole). */
export class HostProcessPort implements NativePort {
  readonly child: ChildProcessWithoutNullStreams;
  error: { message?: string } | null = null;
  /** Resolves with the exit code (or signal name) once the process has ended. */
  readonly exited: Promise<number | string | null>;
  /** Every frame the host wrote, by size (a test checks none was over the limit). */
  readonly frameSizes: number[] = [];
  private readonly decoder = new FrameDecoder(MAX_FRAME_BYTES);
  private readonly messageListeners: Array<(m: unknown) => void> = [];
  private readonly disconnectListeners: Array<(p: NativePort) => void> = [];
  private closed = false;
  private split: { at: number; rest: Buffer | null; released: boolean } | null = null;
  private err = '';

  constructor(args: string[], env: NodeJS.ProcessEnv) {
    this.child = spawn(process.execPath, [HOST_BIN, ...args], { env: { ...process.env, ...env }, stdio: 'pipe' });
    this.exited = once(this.child, 'exit').then(([code, signal]) => (code as number | null) ?? (signal as string | null));
    this.child.stdin.on('error', () => undefined); // a host that ended refuses more input; the port reports that
    this.child.stderr.on('data', (d: Buffer) => (this.err = (this.err + d.toString()).slice(-8000)));
    this.child.stdout.on('data', (chunk: Buffer) => {
      for (const e of this.decoder.push(chunk)) {
        if (this.closed) return;
        if (e.kind !== 'frame') return this.close(HOST_BROKE_PROTOCOL);
        this.frameSizes.push(e.body.length);
        let message: unknown;
        try {
          message = JSON.parse(e.body.toString('utf8'));
        } catch {
          return this.close(HOST_BROKE_PROTOCOL);
        }
        for (const l of this.messageListeners) l(message);
      }
    });
    this.child.once('close', () => this.close(HOST_EXITED));
  }

  onMessage = { addListener: (l: (m: unknown) => void) => void this.messageListeners.push(l) };
  onDisconnect = { addListener: (l: (p: NativePort) => void) => void this.disconnectListeners.push(l) };

  postMessage(message: unknown): void {
    if (this.closed) throw new Error('Attempting to use a disconnected port object');
    const frame = encodeFrame(JSON.stringify(message));
    const split = this.split;
    if (split && split.rest === null) {
      this.child.stdin.write(frame.subarray(0, split.at));
      split.rest = frame.subarray(split.at);
      if (split.released) this.child.stdin.write(split.rest);
      this.split = null;
      return;
    }
    this.child.stdin.write(frame);
  }

  /**
   * The next message goes out as its first `at` bytes only; the rest when the returned function is called (a host
   * stopped while a frame to it is half-written, e.g. by a suspended machine).
   */
  splitNextWrite(at: number): () => void {
    const split: { at: number; rest: Buffer | null; released: boolean } = { at, rest: null, released: false };
    this.split = split;
    return () => {
      split.released = true;
      if (split.rest) this.child.stdin.write(split.rest);
    };
  }

  disconnect(): void {
    if (this.closed) return;
    this.closed = true;
    this.terminate();
  }

  /** True while a frame the host began is not whole yet (e.g. it stopped in the middle of writing one). */
  midFrame(): boolean {
    return this.decoder.pending;
  }

  /** Stops / resumes reading the host's output (its pipe fills and its writes block, as with a busy browser). */
  pauseReading(): void {
    this.child.stdout.pause();
  }
  resumeReading(): void {
    this.child.stdout.resume();
  }

  /** True while the host is blocked writing to its full stdout pipe (Linux: its /proc wchan is pipe_write). */
  blockedWriting(): boolean {
    try {
      return readFileSync(`/proc/${this.child.pid}/wchan`, 'utf8').trim() === 'pipe_write';
    } catch {
      return false;
    }
  }

  /** The host's stderr (its log), the last 8,000 characters. */
  stderr(): string {
    return this.err;
  }

  private close(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.error = { message: reason };
    this.terminate();
    for (const l of this.disconnectListeners) l(this);
  }

  private terminate(): void {
    this.child.stdin.end();
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), KILL_GRACE_MS);
    void this.exited.then(() => clearTimeout(timer));
  }
}

/** A connect() for HostConnection that starts a real host per call (as Chromium starts one per connectNative). */
export function hostPortFactory(env: NodeJS.ProcessEnv = {}, args = ['chrome-extension://abcdefghijklmnopabcdefghijklmnop/']): { connect(): HostProcessPort; ports: HostProcessPort[] } {
  const ports: HostProcessPort[] = [];
  return {
    ports,
    connect() {
      const port = new HostProcessPort(args, env);
      ports.push(port);
      return port;
    },
  };
}
