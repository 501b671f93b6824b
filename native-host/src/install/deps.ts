// Everything the installer's I/O shell touches (platform, HOME, environment, node and the host script or the packaged
// executable and the files beside it, the file system,
// `reg`, the hello probe, stdout and stderr) as one value. The pure parts (locations, manifest, launcher, `reg` lines,
// verdicts) are functions of their inputs; the commands take `Deps` as a second argument, so tests pass fakes (a
// Windows file system and registry, a canned host) without mocking modules. `defaultDeps()` is the real machine.
import { execFile, spawn } from 'node:child_process';
import { homedir } from 'node:os';
import { existsSync } from 'node:fs';
import { COMPANION, HOST_SCRIPT, PACKAGED, PACKAGED_FFI } from '../paths.js';
import { realFs, type FsLike } from './fs.js';
import { probeHello, type HelloResult } from './hello-probe.js';
import { platformOf, type Platform } from './platform.js';
import type { Command } from './windows-registry.js';

/** The packaged executable and the files it keeps beside it (the QUIC companion, on Linux koffi's native module). */
export interface PackagedHost {
  exe: string;
  /** Absolute paths beside `exe`, copied along with it. */
  files: string[];
}

/** Everything the shell touches; `defaultDeps()` is the real machine. */
export interface Deps {
  platform: Platform;
  /** HOME when --home is not given. */
  home: string;
  env: Record<string, string | undefined>;
  /** The node that launchers run (absolute). */
  execPath: string;
  /** native-host/bin/dnscost-host.js (absolute); null when packaged. */
  hostScript: string | null;
  /** The packaged host (scripts/package) install copies into the data dir; null when running from a checkout. */
  packaged: PackagedHost | null;
  fs: FsLike;
  /** Runs `reg` (Windows only). */
  run(cmd: Command): Promise<{ code: number; stdout: string; stderr: string }>;
  /**
   * Windows: deletes `files`, then the `dirs` left empty, after this process has exited (a running executable cannot be
   * deleted there). Fire and forget.
   */
  removeAfterExit(files: string[], dirs: string[]): void;
  /** Starts the host like a browser and asks hello. */
  hello(file: string, args: string[], env: Record<string, string>, timeoutMs: number): Promise<HelloResult>;
  out(text: string): void;
  err(text: string): void;
}

/** The words that run this host (the packaged executable, or node with the host script), for the fixes doctor prints. */
export function selfCommand(deps: Pick<Deps, 'execPath' | 'hostScript' | 'packaged'>): string[] {
  return deps.packaged ? [deps.packaged.exe] : [deps.execPath, deps.hostScript ?? 'native-host/bin/dnscost-host.js'];
}

/** The real machine's dependencies. */
export function defaultDeps(): Deps {
  return {
    platform: platformOf(process.platform),
    home: homedir(),
    env: process.env,
    execPath: process.execPath,
    hostScript: HOST_SCRIPT,
    packaged: PACKAGED ? { exe: process.execPath, files: [COMPANION, PACKAGED_FFI].filter((f): f is string => f !== null && existsSync(f)) } : null,
    fs: realFs,
    run: (cmd) =>
      new Promise((resolve) => {
        execFile(cmd.file, cmd.args, { windowsHide: true }, (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          resolve({ code, stdout: String(stdout), stderr: String(stderr) || (error && !stderr ? error.message : '') });
        });
      }),
    removeAfterExit: (files, dirs) => {
      // A detached cmd.exe that outlives us: ping waits about two seconds (cmd has no sleep that needs no console),
      // then del and rmdir; its output goes nowhere.
      const q = (f: string): string => `"${f}"`;
      const script = ['ping -n 3 127.0.0.1 >nul', `del /f /q ${files.map(q).join(' ')}`, ...dirs.map((d) => `rmdir ${q(d)}`)].join(' & ');
      spawn(process.env.ComSpec ?? 'cmd.exe', ['/d', '/c', script], { detached: true, stdio: 'ignore', windowsHide: true, windowsVerbatimArguments: true }).unref();
    },
    hello: probeHello,
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
  };
}
