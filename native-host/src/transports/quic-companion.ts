// The QUIC companion process, seen from the host. Lifecycle: nothing runs until the first doq/doh3 use (or
// `prepare`, which the engine calls before any clock starts); then one `dnscost-quic` process serves every QUIC
// connection of this host process and ends when our stdin pipe to it closes (the host exiting). Its pipes are
// unref'd, so it never keeps the host alive; pending requests hold their own timers. If it exits, pending requests
// fail with `internal` and the next use starts it again. A missing binary or a protocol mismatch makes doq and doh3
// *unavailable* (a reason string), which the engine reports apart from lookup failures.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { CODES, DnscostError } from '../../../common/errors.js';
import { CompanionFrameDecoder, encodeCompanionFrame, parseCompanionFrame, QUIC_PROTOCOL_VERSION, type CompanionFrame, type CompanionRequest } from './quic-protocol.js';
import { COMPANION, PACKAGED } from '../paths.js';

/** Extra time the host waits beyond a request's own limit before it gives up on the companion. */
const GRACE_MS = 2000;

type Pending = { resolve(frame: CompanionFrame): void; reject(err: DnscostError): void; timer: NodeJS.Timeout };
type Outgoing = CompanionRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/** Where the companion binary is: $DNSCOST_QUIC_BIN, else native-host/quic/bin/dnscost-quic of this checkout, or beside the packaged executable. */
export function companionPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.DNSCOST_QUIC_BIN) return env.DNSCOST_QUIC_BIN;
  return COMPANION;
}

/** A client of one companion process, started lazily. */
export class QuicCompanion {
  private child: ChildProcessWithoutNullStreams | null = null;
  private started: Promise<void> | null = null;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Map<number, (detail: string) => void>();
  private nextId = 1;
  private broken: string | null = null;
  /** The quic-go version the companion was built with (after the first hello). */
  quicGo: string | null = null;

  constructor(readonly path: string = companionPath()) {}

  /** Why doq/doh3 cannot run here, or null when they can (as far as is known without starting anything). */
  unavailable(): string | null {
    if (this.broken) return this.broken;
    if (!existsSync(this.path)) {
      const fix = PACKAGED ? 'it belongs beside the executable: install again from the archive' : 'run scripts/setup or native-host/quic/build.sh';
      return `the QUIC companion is not built (${this.path} is missing; ${fix})`;
    }
    return null;
  }

  /** Starts the companion (once) and has it load the trust store with `ca`, outside any timed span. Never throws. */
  async prepare(ca?: string): Promise<void> {
    if (this.unavailable()) return;
    try {
      await this.start();
      await this.request({ type: 'hello', ...(ca ? { ca } : {}) }, 10_000);
    } catch (err) {
      this.broken ??= `the QUIC companion did not start: ${(err as Error).message}`;
    }
  }

  private start(): Promise<void> {
    if (this.started) return this.started;
    this.started = this.spawnChild().then(async () => {
      const hello = await this.send({ type: 'hello' }, 10_000);
      if (hello.type !== 'hello' || hello.protocol !== QUIC_PROTOCOL_VERSION) {
        this.broken = `the QUIC companion speaks protocol ${hello.type === 'hello' ? hello.protocol : '?'}, this host ${QUIC_PROTOCOL_VERSION} (rebuild: native-host/quic/build.sh)`;
        throw new Error(this.broken);
      }
      this.quicGo = hello.quicGo;
    });
    this.started.catch(() => {});
    return this.started;
  }

  private spawnChild(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const child = spawn(this.path, [], { stdio: ['pipe', 'pipe', 'inherit'] }) as unknown as ChildProcessWithoutNullStreams;
      this.child = child;
      const decoder = new CompanionFrameDecoder();
      child.once('spawn', () => {
        // Neither the process nor its pipes keep the host alive; pending requests have timers that do.
        child.unref();
        for (const s of [child.stdin, child.stdout] as unknown as Array<{ unref?: () => void }>) s.unref?.();
        resolve();
      });
      child.once('error', (err) => {
        this.broken = `the QUIC companion could not be started: ${err.message}`;
        reject(err);
        this.failAll(`QUIC companion: ${err.message}`);
      });
      child.once('exit', (code, signal) => {
        if (this.child === child) {
          this.child = null;
          this.started = null;
        }
        this.failAll(`the QUIC companion exited (${signal ?? `code ${code}`})`);
      });
      child.stdin.on('error', () => {});
      child.stdout.on('data', (chunk: Buffer) => {
        let bodies: Buffer[];
        try {
          bodies = decoder.push(chunk);
        } catch (err) {
          this.protocolError((err as Error).message);
          return;
        }
        for (const body of bodies) this.onFrame(body);
      });
    });
  }

  private onFrame(body: Buffer): void {
    const parsed = parseCompanionFrame(body);
    if (!parsed.ok) return this.protocolError(`invalid frame from the QUIC companion: ${parsed.problem}`);
    const frame = parsed.frame;
    if (frame.type === 'event') {
      this.listeners.get(frame.conn)?.(frame.detail);
      return;
    }
    const p = this.pending.get(frame.id);
    if (!p) return; // a reply to a request we gave up on
    this.pending.delete(frame.id);
    clearTimeout(p.timer);
    p.resolve(frame);
  }

  private protocolError(message: string): void {
    this.broken = message;
    this.failAll(message);
    this.child?.kill();
  }

  private failAll(message: string): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      this.pending.delete(id);
      p.reject(new DnscostError(CODES.INTERNAL, message));
    }
  }

  /** Sends one request and resolves with its reply frame (an `error` frame too); rejects only if the companion fails. */
  async request(message: Outgoing, timeoutMs: number): Promise<CompanionFrame> {
    await this.start();
    return this.send(message, timeoutMs);
  }

  private send(message: Outgoing, timeoutMs: number): Promise<CompanionFrame> {
    const child = this.child;
    if (!child) return Promise.reject(new DnscostError(CODES.INTERNAL, 'the QUIC companion is not running'));
    const id = this.nextId++;
    return new Promise<CompanionFrame>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new DnscostError(CODES.TIMEOUT, `the QUIC companion did not answer within ${timeoutMs + GRACE_MS} ms`));
      }, timeoutMs + GRACE_MS);
      this.pending.set(id, { resolve, reject, timer });
      child.stdin.write(encodeCompanionFrame({ ...message, id } as CompanionRequest));
    });
  }

  /** Calls `fn` when the companion reports that connection `conn` closed by itself (peer, idle timeout). */
  onClosed(conn: number, fn: ((detail: string) => void) | null): void {
    if (fn) this.listeners.set(conn, fn);
    else this.listeners.delete(conn);
  }
}

/** The companion every doq/doh3 transport of this process shares. */
export const sharedCompanion = new QuicCompanion();
