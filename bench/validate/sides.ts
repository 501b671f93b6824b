// The inner half's handle on a side worker (side.ts): it starts the worker in a private mount namespace of its own
// (`unshare --mount`, inside the lab's client network namespace where the inner half runs), sends it one command at a
// time and waits for its `reply` line. A worker that dies fails its pending command with its last output.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { distPath } from '../../lab/paths.js';
import { stop } from './children.js';
import type { SideCommand, SideConfig, SideReply } from './side.js';

/** The compiled entry a side worker is started from (main.ts dispatches to side.ts on DNSCOST_VALIDATION_SIDE). */
const ENTRY = distPath('bench/validate/main.ts');
const COMMAND_TIMEOUT_MS = 240_000;

/** A running side worker. */
export class SideHandle {
  private pending: { resolve(r: SideReply): void; reject(e: Error): void } | null = null;
  private tail = '';

  private constructor(readonly config: SideConfig, private readonly child: ChildProcess) {
    let rest = '';
    child.stdout!.on('data', (d: Buffer) => {
      const parts = (rest + d.toString()).split('\n');
      rest = parts.pop() ?? '';
      for (const line of parts) {
        if (!line.startsWith('reply ')) continue;
        const p = this.pending;
        this.pending = null;
        p?.resolve(JSON.parse(line.slice(6)) as SideReply);
      }
    });
    child.stderr!.on('data', (d: Buffer) => (this.tail = (this.tail + d.toString()).slice(-4000)));
    child.once('exit', (code) => {
      const p = this.pending;
      this.pending = null;
      p?.reject(new Error(`side worker ${config.browser}/${config.side} exited (${code}): ${this.tail}`));
    });
  }

  /** Starts a worker for `config` (its config file goes into config.work). */
  static start(config: SideConfig): SideHandle {
    const file = join(config.work, 'side.json');
    writeFileSync(file, JSON.stringify(config));
    // Not the inner half's variable: the entry would take the worker for the inner half.
    const { DNSCOST_VALIDATION_INNER: _inner, ...env } = process.env;
    const child = spawn('unshare', ['--mount', '--propagation', 'private', process.execPath, ENTRY], {
      env: { ...env, DNSCOST_VALIDATION_SIDE: file }, stdio: ['pipe', 'pipe', 'pipe'],
    });
    return new SideHandle(config, child);
  }

  /** Sends `cmd`; resolves with the worker's reply, rejects when it fails (ok: false), dies or takes too long. */
  send(cmd: SideCommand): Promise<Extract<SideReply, { ok: true }>> {
    if (this.pending) return Promise.reject(new Error('one command at a time'));
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        this.pending = null;
        reject(new Error(`side worker ${this.config.browser}/${this.config.side}: ${cmd.op} took over ${COMMAND_TIMEOUT_MS} ms`));
      }, COMMAND_TIMEOUT_MS);
      this.pending = {
        resolve: (r) => {
          clearTimeout(t);
          if (r.ok) resolve(r);
          else reject(new Error(`side worker ${this.config.browser}/${this.config.side}: ${cmd.op}: ${r.error}`));
        },
        reject: (e) => {
          clearTimeout(t);
          reject(e);
        },
      };
      this.child.stdin!.write(`${JSON.stringify(cmd)}\n`);
    });
  }

  /** Whether the worker still runs. */
  alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Ends the worker (its browser and stub with it). */
  async stop(): Promise<void> {
    this.child.stdin!.end();
    const exited = new Promise((r) => this.child.once('exit', r));
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
    await stop(this.child);
  }
}
