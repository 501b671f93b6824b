// The hello probe: starts the host as a browser would (the browser's arguments and environment, through cmd.exe for a
// `.bat`), sends one framed `hello` and reads the first frame back within a time limit. It is the doctor's last
// check, the one that shows the whole chain (manifest, launcher, node, compiled host) works.
import { spawn } from 'node:child_process';
import { GECKO_ID } from '../../../common/extension-ids.js';
import { encodeFrame, FrameDecoder } from '../framing.js';
import type { BrowserTarget } from './browsers.js';
import { CHROMIUM_ORIGIN } from './manifest.js';
import type { Platform } from './platform.js';

/** PATH of a browser started from the desktop on macOS (launchd's default): doctor starts the host with it. */
export const BROWSER_PATH = '/usr/bin:/bin:/usr/sbin:/sbin';
/** How long doctor waits for the host to answer `hello` (node's start plus the host's module load). */
export const DOCTOR_HELLO_TIMEOUT_MS = 10_000;

/** Arguments a browser starts the host with: Firefox the manifest path and add-on id, Chromium the origin. */
export function browserArgs(target: BrowserTarget, platform: Platform): string[] {
  if (target.browser === 'firefox') return [target.manifestPath, GECKO_ID];
  // Chromium on Windows also passes the calling window's handle.
  return platform === 'win32' ? [CHROMIUM_ORIGIN, '--parent-window=0'] : [CHROMIUM_ORIGIN];
}

/** The host's answer to a framed hello, or why there was none. */
export type HelloResult =
  | { ok: true; ms: number; reply: { type?: unknown; version?: unknown; protocol?: unknown } }
  | { ok: false; ms: number; error: string; stderr: string };

/**
 * Starts `file ARGS` with `env` as a browser would, sends one framed hello, and resolves with the first frame's
 * JSON (or why none came within `timeoutMs`). Then closes stdin, as a browser closing the port does, and makes sure
 * the process is gone.
 */
export function probeHello(file: string, args: string[], env: Record<string, string>, timeoutMs: number): Promise<HelloResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    // Node refuses to spawn a .bat without a shell (CVE-2024-27980); Chromium starts hosts through cmd.exe too.
    const isBat = /\.(bat|cmd)$/i.test(file);
    const child = isBat
      ? spawn(env.ComSpec ?? process.env.ComSpec ?? 'cmd.exe', ['/d', '/s', '/c', `"${[file, ...args].map((a) => `"${a}"`).join(' ')}"`], { env, windowsVerbatimArguments: true, stdio: 'pipe' })
      : spawn(file, args, { env, stdio: 'pipe' });
    const decoder = new FrameDecoder(1024 * 1024);
    let stderr = '';
    let settled = false;
    const finish = (result: HelloResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.stdin.end();
      const kill = setTimeout(() => child.kill('SIGKILL'), 1000);
      if (child.exitCode !== null || child.signalCode !== null) clearTimeout(kill);
      else child.once('close', () => clearTimeout(kill));
      resolve(result);
    };
    const ms = (): number => performance.now() - started;
    const timer = setTimeout(() => {
      finish({ ok: false, ms: ms(), error: `no answer within ${timeoutMs} ms`, stderr });
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (s: string) => {
      if (stderr.length < 16384) stderr += s;
    });
    child.stdout.on('data', (chunk: Buffer) => {
      for (const ev of decoder.push(chunk)) {
        if (ev.kind !== 'frame') {
          finish({ ok: false, ms: ms(), error: `answered with a malformed frame (${ev.kind})`, stderr });
          return;
        }
        try {
          finish({ ok: true, ms: ms(), reply: JSON.parse(ev.body.toString('utf8')) as Record<string, unknown> });
        } catch {
          finish({ ok: false, ms: ms(), error: 'answered with a frame that is not JSON', stderr });
        }
        return;
      }
    });
    child.on('error', (e) => finish({ ok: false, ms: ms(), error: `cannot start ${file}: ${e.message}`, stderr }));
    child.on('close', (code, signal) => finish({ ok: false, ms: ms(), error: `exited (${signal ?? `code ${code}`}) without answering`, stderr }));
    child.stdin.on('error', () => {}); // EPIPE when it died first: 'close' reports that
    child.stdin.write(encodeFrame(JSON.stringify({ id: 'doctor', type: 'hello' })));
  });
}
