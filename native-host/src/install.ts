// `dnscost-host install | uninstall | doctor`: registers the native messaging host with each browser for this user,
// takes exactly that registration away again, and checks one end to end (down to a real `hello`).
//
// Pure parts — where each browser looks, the manifest, the launcher script, the `reg` command lines, the doctor's
// verdicts — are functions of their inputs. The I/O shell (write, spawn, run `reg`) takes its dependencies as a
// second argument, so tests pass fakes (a Windows file system and registry, a canned host) without mocking modules.
//
// Lifecycle of what install writes: a launcher in dnscost's data dir (the manifests' `path`), one manifest per
// browser, on Windows one registry key per browser, and a receipt (`installed.json`, beside the launcher) listing
// every file, key and directory it created. Uninstall removes what the receipt lists (and any manifest of ours at a
// known location that names our launcher, should the receipt be lost), then the launcher, receipt and directories
// once nothing refers to them — and nothing else.
//
// Where browsers read per-user host manifests: Chrome and Chromium — developer.chrome.com "Native messaging: native
// messaging host location" (Linux `~/.config/<dir>/NativeMessagingHosts`, i.e. the user-data dir, which honours
// $XDG_CONFIG_HOME; macOS `~/Library/Application Support/<dir>/NativeMessagingHosts`; Windows the registry).
// Firefox — MDN "Native manifests" (Linux `~/.mozilla/native-messaging-hosts`, macOS
// `~/Library/Application Support/Mozilla/NativeMessagingHosts`, Windows `HKCU\Software\Mozilla\NativeMessagingHosts`).
// Edge — learn.microsoft.com "Native messaging" (`~/.config/microsoft-edge`, `Microsoft Edge`,
// `HKCU\Software\Microsoft\Edge`). Brave and Vivaldi publish no table; their paths follow the user-data dirs they
// create, as KeePassXC's NativeMessageInstaller ships them, and on Windows both read Chrome's registry key (they share
// it with Chrome here). Brave on macOS has been reported to read Chrome's directory instead of its own: installing
// for `chrome` as well covers that.
import { execFile, spawn } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CODES, DnscostError } from '../../common/errors.js';
import { CHROMIUM_ID, GECKO_ID, HOST_NAME } from '../../common/extension-ids.js';
import { PROTOCOL_VERSION } from '../../common/schema.js';
import { encodeFrame, FrameDecoder } from './framing.js';
import { HOST_SCRIPT } from './paths.js';

/** Browsers install, uninstall and doctor know, by the name `--browser` takes. */
export const BROWSERS = ['firefox', 'chrome', 'chromium', 'brave', 'edge', 'vivaldi'] as const;
/** One of BROWSERS. */
export type Browser = (typeof BROWSERS)[number];
/** The three layouts browsers use (every other Unix lays out like Linux). */
export type Platform = 'linux' | 'darwin' | 'win32';

/** The origin Chromium-family browsers pass and `allowed_origins` must name exactly, trailing slash included. */
export const CHROMIUM_ORIGIN = `chrome-extension://${CHROMIUM_ID}/`;
/** The manifest's file name (Linux and macOS browsers look the host up by it). */
export const MANIFEST_FILE = `${HOST_NAME}.json`;
/** PATH of a browser started from the desktop on macOS (launchd's default): doctor starts the host with it. */
export const BROWSER_PATH = '/usr/bin:/bin:/usr/sbin:/sbin';
/** How long doctor waits for the host to answer `hello` (node's start plus the host's module load). */
export const HELLO_TIMEOUT_MS = 10_000;

/** The process's platform as a browser layout. */
export function platformOf(p: NodeJS.Platform): Platform {
  return p === 'darwin' || p === 'win32' ? p : 'linux';
}

const pathFor = (platform: Platform): path.PlatformPath => (platform === 'win32' ? path.win32 : path.posix);

/** The per-user base directories the layouts hang off. */
export interface Place {
  platform: Platform;
  home: string;
  /** Linux: $XDG_CONFIG_HOME or ~/.config (Chromium-family user-data dirs live there). */
  configHome: string;
  /** Linux: $XDG_DATA_HOME or ~/.local/share (dnscost's launcher lives there). */
  dataHome: string;
  /** Windows: %LOCALAPPDATA%. */
  localAppData: string;
  /** Windows: %APPDATA%. */
  appData: string;
}

/** The base directories for HOME; the XDG and Windows variables count only when HOME was not given explicitly. */
export function placeFor(platform: Platform, home: string, env: Record<string, string | undefined>, homeGiven: boolean): Place {
  const p = pathFor(platform);
  const fromEnv = (name: string): string | undefined => {
    const v = homeGiven ? undefined : env[name];
    return v && p.isAbsolute(v) ? v : undefined;
  };
  return {
    platform,
    home,
    configHome: fromEnv('XDG_CONFIG_HOME') ?? p.join(home, '.config'),
    dataHome: fromEnv('XDG_DATA_HOME') ?? p.join(home, '.local', 'share'),
    localAppData: fromEnv('LOCALAPPDATA') ?? p.join(home, 'AppData', 'Local'),
    appData: fromEnv('APPDATA') ?? p.join(home, 'AppData', 'Roaming'),
  };
}

/** Where one browser reads our manifest, and how to tell the browser has run for this user. */
export interface Target {
  browser: Browser;
  /** The manifest file (on Windows a file of ours that the registry key names). */
  manifestPath: string;
  /** Windows: the HKCU key whose default value is the manifest's path; null elsewhere. */
  registryKey: string | null;
  /** Exists once the browser has run for this user: "found". */
  profileDir: string;
  /** Written into a `--chromium-user-data-dir`. */
  custom: boolean;
}

type ChromiumBrowser = Exclude<Browser, 'firefox'>;
// Per Chromium-family browser: its user-data dir under ~/.config (Linux), ~/Library/Application Support (macOS) and
// %LOCALAPPDATA% (Windows), and the HKCU\Software subkey it reads hosts from on Windows.
const CHROMIUM_LAYOUT: Record<ChromiumBrowser, { linux: string[]; darwin: string[]; win32: string[]; winKey: string; winOwner: string }> = {
  chrome: { linux: ['google-chrome'], darwin: ['Google', 'Chrome'], win32: ['Google', 'Chrome', 'User Data'], winKey: 'Google\\Chrome', winOwner: 'chrome' },
  chromium: { linux: ['chromium'], darwin: ['Chromium'], win32: ['Chromium', 'User Data'], winKey: 'Chromium', winOwner: 'chromium' },
  brave: {
    linux: ['BraveSoftware', 'Brave-Browser'],
    darwin: ['BraveSoftware', 'Brave-Browser'],
    win32: ['BraveSoftware', 'Brave-Browser', 'User Data'],
    winKey: 'Google\\Chrome',
    winOwner: 'chrome',
  },
  edge: { linux: ['microsoft-edge'], darwin: ['Microsoft Edge'], win32: ['Microsoft', 'Edge', 'User Data'], winKey: 'Microsoft\\Edge', winOwner: 'edge' },
  vivaldi: { linux: ['vivaldi'], darwin: ['Vivaldi'], win32: ['Vivaldi', 'User Data'], winKey: 'Google\\Chrome', winOwner: 'chrome' },
};

/** dnscost's own per-user directory: the launcher, the receipt and (Windows) the manifests. */
export function dataDir(place: Place): string {
  const p = pathFor(place.platform);
  if (place.platform === 'win32') return p.join(place.localAppData, 'dnscost');
  if (place.platform === 'darwin') return p.join(place.home, 'Library', 'Application Support', 'dnscost');
  return p.join(place.dataHome, 'dnscost');
}

/** The launcher every manifest's `path` names. */
export function launcherPath(place: Place): string {
  return pathFor(place.platform).join(dataDir(place), place.platform === 'win32' ? 'dnscost-host.bat' : 'dnscost-host');
}

/** The receipt of what install wrote. */
export function receiptPath(place: Place): string {
  return pathFor(place.platform).join(dataDir(place), 'installed.json');
}

/** Where `browser` reads our manifest for this user. */
export function targetFor(browser: Browser, place: Place): Target {
  const p = pathFor(place.platform);
  if (browser === 'firefox') {
    if (place.platform === 'win32') {
      return {
        browser,
        manifestPath: p.join(dataDir(place), 'hosts', 'firefox', MANIFEST_FILE),
        registryKey: `HKCU\\Software\\Mozilla\\NativeMessagingHosts\\${HOST_NAME}`,
        profileDir: p.join(place.appData, 'Mozilla', 'Firefox'),
        custom: false,
      };
    }
    if (place.platform === 'darwin') {
      const support = p.join(place.home, 'Library', 'Application Support');
      return { browser, manifestPath: p.join(support, 'Mozilla', 'NativeMessagingHosts', MANIFEST_FILE), registryKey: null, profileDir: p.join(support, 'Firefox'), custom: false };
    }
    return { browser, manifestPath: p.join(place.home, '.mozilla', 'native-messaging-hosts', MANIFEST_FILE), registryKey: null, profileDir: p.join(place.home, '.mozilla'), custom: false };
  }
  const layout = CHROMIUM_LAYOUT[browser];
  if (place.platform === 'win32') {
    return {
      browser,
      manifestPath: p.join(dataDir(place), 'hosts', layout.winOwner, MANIFEST_FILE),
      registryKey: `HKCU\\Software\\${layout.winKey}\\NativeMessagingHosts\\${HOST_NAME}`,
      profileDir: p.join(place.localAppData, ...layout.win32),
      custom: false,
    };
  }
  const profileDir = place.platform === 'darwin' ? p.join(place.home, 'Library', 'Application Support', ...layout.darwin) : p.join(place.configHome, ...layout.linux);
  return { browser, manifestPath: p.join(profileDir, 'NativeMessagingHosts', MANIFEST_FILE), registryKey: null, profileDir, custom: false };
}

/** The target for a Chromium-family browser started with `--user-data-dir=DIR` (it reads DIR/NativeMessagingHosts). */
export function customTarget(browser: ChromiumBrowser, userDataDir: string, platform: Platform): Target {
  const p = pathFor(platform);
  return { browser, manifestPath: p.join(userDataDir, 'NativeMessagingHosts', MANIFEST_FILE), registryKey: null, profileDir: userDataDir, custom: true };
}

/** The options the three commands share, after parsing. */
export interface HostOptions {
  /** Browsers named by --browser; null means "every browser found". */
  browsers: Browser[] | null;
  userDataDir: string | null;
  home: string;
  homeGiven: boolean;
  dryRun: boolean;
  json: boolean;
  timeoutMs: number;
}

/** The targets the options select, deduplicated by manifest (Brave and Vivaldi share Chrome's on Windows). */
export function selectTargets(opts: HostOptions, place: Place): Target[] {
  const out: Target[] = [];
  const add = (t: Target): void => {
    if (!out.some((o) => o.manifestPath === t.manifestPath)) out.push(t);
  };
  const named = opts.browsers ?? (opts.userDataDir ? ['chromium' as const] : [...BROWSERS]);
  for (const b of named) {
    if (opts.userDataDir && b !== 'firefox') add(customTarget(b, opts.userDataDir, place.platform));
    else add(targetFor(b, place));
  }
  return out;
}

/** A native messaging host manifest, as both browser families read it. */
export interface HostManifest {
  name: string;
  description: string;
  path: string;
  type: 'stdio';
  allowed_extensions?: string[];
  allowed_origins?: string[];
}

/** Our manifest for `browser`, naming `launcher` (absolute). */
export function manifestFor(browser: Browser, launcher: string): HostManifest {
  const base = { name: HOST_NAME, description: "dnscost: re-resolves your pages' hostnames over each DNS transport", path: launcher, type: 'stdio' as const };
  return browser === 'firefox' ? { ...base, allowed_extensions: [GECKO_ID] } : { ...base, allowed_origins: [CHROMIUM_ORIGIN] };
}

/** The manifest's bytes on disk. */
export function manifestText(browser: Browser, launcher: string): string {
  return JSON.stringify(manifestFor(browser, launcher), null, 2) + '\n';
}

const LAUNCHER_MARK = 'dnscost native messaging host launcher, written by `dnscost-host install`';

/** Quotes one word for /bin/sh (always, so the launcher's parser has one form to read). */
export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The launcher: browsers start the manifest's `path` with their own environment, where PATH may lack node, so it
 * runs the absolute node with the absolute host script. POSIX: a `#!/bin/sh` exec; Windows: a `.bat` (CRLF; `%`
 * doubled, since cmd expands it even inside quotes).
 */
export function launcherScript(platform: Platform, node: string, script: string): string {
  if (platform === 'win32') {
    const q = (s: string): string => `"${s.replace(/%/g, '%%')}"`;
    return ['@echo off', `rem ${LAUNCHER_MARK}.`, `${q(node)} ${q(script)} %*`, ''].join('\r\n');
  }
  return [
    '#!/bin/sh',
    `# ${LAUNCHER_MARK}.`,
    '# Browsers start this with their own environment (PATH may lack node), so both paths are absolute.',
    `exec ${shQuote(node)} ${shQuote(script)} "$@"`,
    '',
  ].join('\n');
}

/** The node and script a launcher of ours runs, or null when `text` is not one. */
export function parseLauncher(platform: Platform, text: string): { node: string; script: string } | null {
  if (!text.includes(LAUNCHER_MARK)) return null;
  if (platform === 'win32') {
    const m = /^"([^"]*)" "([^"]*)" %\*\r?$/m.exec(text);
    return m ? { node: m[1]!.replace(/%%/g, '%'), script: m[2]!.replace(/%%/g, '%') } : null;
  }
  const word = `((?:'[^']*'|\\\\')+)`;
  const m = new RegExp(`^exec ${word} ${word} "\\$@"$`, 'm').exec(text);
  const unquote = (w: string): string => w.replace(/'([^']*)'|\\'/g, (_all, inner: string | undefined) => inner ?? "'");
  return m ? { node: unquote(m[1]!), script: unquote(m[2]!) } : null;
}

/** A program and its arguments, run without a shell. */
export interface Command {
  file: string;
  args: string[];
}

/** `reg add KEY /ve /t REG_SZ /d MANIFEST /f`: the key's default value names the manifest. */
export function regAdd(key: string, manifest: string): Command {
  return { file: 'reg', args: ['add', key, '/ve', '/t', 'REG_SZ', '/d', manifest, '/f'] };
}

/** `reg delete KEY /f`. */
export function regDelete(key: string): Command {
  return { file: 'reg', args: ['delete', key, '/f'] };
}

/** `reg query KEY /ve`: prints the key's default value. */
export function regQuery(key: string): Command {
  return { file: 'reg', args: ['query', key, '/ve'] };
}

/** The default value `reg query KEY /ve` printed, or null. The value's label is localised ("(Default)", "(Standard)"). */
export function parseRegQuery(stdout: string): string | null {
  const m = /^\s+\([^)]*\)\s+REG_(?:EXPAND_)?SZ\s+(.*?)\s*$/m.exec(stdout);
  return m ? m[1]! : null;
}

/** A command line for a person to paste: words quoted only where the platform's shell needs it. */
export function formatCommand(platform: Platform, words: string[]): string {
  return words
    .map((w) => {
      if (/^[A-Za-z0-9_\/.,:=@+\\-]+$/.test(w)) return w;
      return platform === 'win32' ? `"${w}"` : shQuote(w);
    })
    .join(' ');
}

/** Arguments a browser starts the host with: Firefox the manifest path and add-on id, Chromium the origin. */
export function browserArgs(target: Target, platform: Platform): string[] {
  if (target.browser === 'firefox') return [target.manifestPath, GECKO_ID];
  // Chromium on Windows also passes the calling window's handle.
  return platform === 'win32' ? [CHROMIUM_ORIGIN, '--parent-window=0'] : [CHROMIUM_ORIGIN];
}

// ---------------------------------------------------------------------------------------------------------------
// The doctor's verdicts (pure).

/** What doctor saw of a path on disk. */
export interface PathState {
  exists: boolean;
  isFile: boolean;
  executable: boolean;
}

/** The host's answer to a framed hello, or why there was none. */
export type HelloResult =
  | { ok: true; ms: number; reply: { type?: unknown; version?: unknown; protocol?: unknown } }
  | { ok: false; ms: number; error: string; stderr: string };

/** Everything doctor gathered about one target; the verdicts follow from it alone. */
export interface Observation {
  target: Target;
  platform: Platform;
  /** Windows: the manifest path the registry key names; null when the key is absent. */
  registryValue?: string | null;
  /** The manifest's text, or null when absent. */
  manifestText: string | null;
  /** The manifest's `path` on disk (absent when the manifest names none). */
  hostPath?: PathState;
  /** The text of the file `path` names, when small enough to be a launcher. */
  launcherText?: string | null;
  node?: PathState;
  script?: PathState;
  /** The compiled host the script imports (dist/native-host/src/main.js). */
  built?: PathState;
  hello?: HelloResult;
}

/** One line of the doctor's report. */
export interface Check {
  check: string;
  ok: boolean;
  detail: string;
  /** The command that fixes it. */
  fix?: string;
}

/** The fix commands doctor offers for one target. */
export interface Fixes {
  install: string;
  build: string;
}

/** The doctor's verdicts on one target, in order; checks that depend on a failed one are left out. */
export function diagnose(obs: Observation, fixes: Fixes): Check[] {
  const checks: Check[] = [];
  const pass = (check: string, detail: string): void => void checks.push({ check, ok: true, detail });
  const fail = (check: string, detail: string, fix: string): Check[] => {
    checks.push({ check, ok: false, detail, fix });
    return checks;
  };
  const { target } = obs;
  if (target.registryKey) {
    if (obs.registryValue == null) return fail('registry', `no key ${target.registryKey}`, fixes.install);
    if (obs.registryValue !== target.manifestPath) pass('registry', `${target.registryKey} names ${obs.registryValue} (not dnscost's ${target.manifestPath}); checking that one`);
    else pass('registry', `${target.registryKey} names the manifest`);
  }
  const where = target.registryKey ? (obs.registryValue ?? target.manifestPath) : target.manifestPath;
  if (obs.manifestText === null) return fail('manifest', `missing: ${where}`, fixes.install);
  let m: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(obs.manifestText);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not a JSON object');
    m = parsed as Record<string, unknown>;
  } catch (err) {
    return fail('manifest', `not valid JSON (${(err as Error).message}): ${where}`, fixes.install);
  }
  pass('manifest', 'present, valid JSON');
  if (m.name !== HOST_NAME) return fail('name', `is ${JSON.stringify(m.name)}, must be ${JSON.stringify(HOST_NAME)}`, fixes.install);
  pass('name', HOST_NAME);
  if (m.type !== 'stdio') return fail('type', `is ${JSON.stringify(m.type)}, must be "stdio"`, fixes.install);
  if (target.browser === 'firefox') {
    const ids = m.allowed_extensions;
    if (!Array.isArray(ids) || !ids.includes(GECKO_ID)) return fail('allowed_extensions', `${JSON.stringify(ids)} lacks ${JSON.stringify(GECKO_ID)}`, fixes.install);
    pass('allowed_extensions', GECKO_ID);
  } else {
    const origins = m.allowed_origins;
    if (!Array.isArray(origins) || !origins.includes(CHROMIUM_ORIGIN)) {
      // Chromium compares origins exactly: a missing trailing slash is the usual near miss.
      const near = Array.isArray(origins) && origins.includes(CHROMIUM_ORIGIN.slice(0, -1)) ? ' (it has the origin without the trailing slash, which Chromium rejects)' : '';
      return fail('allowed_origins', `${JSON.stringify(origins)} lacks ${JSON.stringify(CHROMIUM_ORIGIN)}${near}`, fixes.install);
    }
    pass('allowed_origins', CHROMIUM_ORIGIN);
  }
  const hostPath = m.path;
  if (typeof hostPath !== 'string' || !pathFor(obs.platform).isAbsolute(hostPath)) {
    return fail('path', `${JSON.stringify(hostPath)} is not an absolute path (browsers need one)`, fixes.install);
  }
  const hp = obs.hostPath;
  if (!hp?.exists) return fail('path', `${hostPath} does not exist`, fixes.install);
  if (!hp.isFile) return fail('path', `${hostPath} is not a file`, fixes.install);
  if (!hp.executable) return fail('path', `${hostPath} is not executable`, fixes.install);
  pass('path', `${hostPath} (executable)`);
  const launcher = obs.launcherText ? parseLauncher(obs.platform, obs.launcherText) : null;
  if (launcher) {
    if (!obs.node?.exists || !obs.node.executable) return fail('node', `the launcher runs ${launcher.node}, which is ${obs.node?.exists ? 'not executable' : 'gone'}`, fixes.install);
    pass('node', launcher.node);
    if (!obs.script?.exists) return fail('script', `the launcher runs ${launcher.script}, which is gone`, fixes.install);
    pass('script', launcher.script);
    if (obs.built && !obs.built.exists) return fail('build', 'the host is not compiled (dist/native-host/src/main.js is missing)', fixes.build);
  } else {
    pass('launcher', `${hostPath} is not a dnscost launcher; starting it as is`);
  }
  const hello = obs.hello;
  if (!hello) return checks;
  if (!hello.ok) {
    const tail = hello.stderr.trim().split('\n').slice(-3).join(' | ');
    return fail('hello', `${hello.error}${tail ? `; stderr: ${tail}` : ''}`, launcher ? `${fixes.build} && ${fixes.install}` : fixes.install);
  }
  const r = hello.reply;
  if (r.type !== 'hello') return fail('hello', `answered ${JSON.stringify(r)} instead of a hello`, fixes.install);
  if (r.protocol !== PROTOCOL_VERSION) {
    return fail('hello', `speaks protocol ${String(r.protocol)}, this dnscost speaks ${PROTOCOL_VERSION} (an older or newer install)`, fixes.install);
  }
  pass('hello', `answered: dnscost-host ${String(r.version)}, protocol ${String(r.protocol)}, in ${Math.round(hello.ms)} ms`);
  return checks;
}

// ---------------------------------------------------------------------------------------------------------------
// The I/O shell.

/** The file operations the shell needs; `realFs` does them on disk, tests pass an in-memory one. */
export interface FsLike {
  /** The file's text, or null when it does not exist. */
  readText(p: string): Promise<string | null>;
  /** Writes a file (replacing it), with `mode` when given. */
  writeText(p: string, text: string, mode?: number): Promise<void>;
  /** mkdir -p; returns the directories it created, outermost first. */
  mkdirp(p: string): Promise<string[]>;
  /** Removes a file; false when it was not there. */
  removeFile(p: string): Promise<boolean>;
  /** Removes a directory only when empty; false otherwise. */
  removeDirIfEmpty(p: string): Promise<boolean>;
  stat(p: string): Promise<PathState>;
  chmod(p: string, mode: number): Promise<void>;
}

/** FsLike on the real file system. */
export const realFs: FsLike = {
  async readText(p) {
    try {
      return await fsp.readFile(p, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
      throw err;
    }
  },
  async writeText(p, text, mode) {
    await fsp.writeFile(p, text, mode === undefined ? {} : { mode });
    if (mode !== undefined) await fsp.chmod(p, mode);
  },
  async mkdirp(p) {
    const missing: string[] = [];
    for (let d = path.resolve(p); ; d = path.dirname(d)) {
      if ((await realFs.stat(d)).exists) break;
      missing.unshift(d);
      if (path.dirname(d) === d) break;
    }
    await fsp.mkdir(p, { recursive: true });
    return missing;
  },
  async removeFile(p) {
    try {
      await fsp.unlink(p);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
  },
  async removeDirIfEmpty(p) {
    try {
      await fsp.rmdir(p);
      return true;
    } catch {
      return false;
    }
  },
  async stat(p) {
    try {
      const s = await fsp.stat(p);
      let executable = false;
      try {
        await fsp.access(p, fsConstants.X_OK);
        executable = s.isFile();
      } catch {
        executable = false;
      }
      return { exists: true, isFile: s.isFile(), executable };
    } catch {
      return { exists: false, isFile: false, executable: false };
    }
  },
  async chmod(p, mode) {
    await fsp.chmod(p, mode);
  },
};

/** Everything the shell touches; `defaultDeps()` is the real machine. */
export interface Deps {
  platform: Platform;
  /** HOME when --home is not given. */
  home: string;
  env: Record<string, string | undefined>;
  /** The node that launchers run (absolute). */
  execPath: string;
  /** native-host/bin/dnscost-host.js (absolute). */
  hostScript: string;
  fs: FsLike;
  /** Runs `reg` (Windows only). */
  run(cmd: Command): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Starts the host like a browser and asks hello. */
  hello(file: string, args: string[], env: Record<string, string>, timeoutMs: number): Promise<HelloResult>;
  out(text: string): void;
  err(text: string): void;
}

/** The real machine's dependencies. */
export function defaultDeps(): Deps {
  return {
    platform: platformOf(process.platform),
    home: homedir(),
    env: process.env,
    execPath: process.execPath,
    hostScript: HOST_SCRIPT,
    fs: realFs,
    run: (cmd) =>
      new Promise((resolve) => {
        execFile(cmd.file, cmd.args, { windowsHide: true }, (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          resolve({ code, stdout: String(stdout), stderr: String(stderr) || (error && !stderr ? error.message : '') });
        });
      }),
    hello: probeHello,
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
  };
}

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

/** What one install or uninstall step did (or, with --dry-run, would do). */
export interface Action {
  what: Browser | 'launcher' | 'receipt' | 'directory';
  kind: 'file' | 'registry' | 'directory';
  /** A file or directory path, or a registry key. */
  path: string;
  status: 'created' | 'updated' | 'unchanged' | 'removed' | 'absent' | 'kept' | 'would create' | 'would update' | 'would remove' | 'failed';
  detail?: string;
}

/** The outcome of install or uninstall. */
export interface Outcome {
  ok: boolean;
  dryRun: boolean;
  actions: Action[];
  problems: string[];
}

interface ReceiptEntry {
  browser: Browser;
  manifest: string;
  registryKey: string | null;
  /** Directories install created for this manifest, outermost first. */
  dirs: string[];
}
interface Receipt {
  version: 1;
  launcher: string;
  /** Directories install created for the launcher and receipt, outermost first. */
  dirs: string[];
  entries: ReceiptEntry[];
}

async function readReceipt(fs: FsLike, file: string): Promise<Receipt | null> {
  const text = await fs.readText(file);
  if (text === null) return null;
  try {
    const r = JSON.parse(text) as Receipt;
    return r && r.version === 1 && Array.isArray(r.entries) && Array.isArray(r.dirs) ? r : null;
  } catch {
    return null;
  }
}

/** True when the manifest text is ours (our host name), and when `launcher` is given, names that launcher. */
function isOurManifest(text: string | null, launcher?: string): boolean {
  if (text === null) return false;
  try {
    const m = JSON.parse(text) as Partial<HostManifest>;
    return m.name === HOST_NAME && (launcher === undefined || m.path === launcher);
  } catch {
    return false;
  }
}

async function found(t: Target, deps: Deps): Promise<boolean> {
  return (await deps.fs.stat(t.profileDir)).exists || (await deps.fs.stat(t.manifestPath)).exists;
}

/** Writes the launcher, the manifests and (Windows) the registry keys; records them in the receipt. */
export async function install(opts: HostOptions, deps: Deps = defaultDeps()): Promise<Outcome> {
  const place = placeFor(deps.platform, opts.home, deps.env, opts.homeGiven);
  const p = pathFor(deps.platform);
  const explicit = opts.browsers !== null || opts.userDataDir !== null;
  const targets: Target[] = [];
  for (const t of selectTargets(opts, place)) if (explicit || (await found(t, deps))) targets.push(t);
  const outcome: Outcome = { ok: true, dryRun: opts.dryRun, actions: [], problems: [] };
  if (targets.length === 0) {
    outcome.ok = false;
    outcome.problems.push(`no browser found for ${opts.home}: none of ${BROWSERS.join(', ')} has a profile there; name one with --browser`);
    return outcome;
  }
  const launcher = launcherPath(place);
  const receiptFile = receiptPath(place);
  const receipt: Receipt = (await readReceipt(deps.fs, receiptFile)) ?? { version: 1, launcher, dirs: [], entries: [] };
  receipt.launcher = launcher;
  const union = (a: string[], b: string[]): string[] => [...a, ...b.filter((d) => !a.includes(d))];

  // Writes `text` unless the file already holds it; statuses say which.
  const put = async (what: Action['what'], file: string, text: string, mode?: number): Promise<string[]> => {
    const before = await deps.fs.readText(file);
    const status = before === null ? 'created' : before === text ? 'unchanged' : 'updated';
    if (opts.dryRun) {
      outcome.actions.push({ what, kind: 'file', path: file, status: status === 'unchanged' ? status : (`would ${status === 'created' ? 'create' : 'update'}` as Action['status']) });
      return [];
    }
    const dirs = await deps.fs.mkdirp(p.dirname(file));
    if (status !== 'unchanged') await deps.fs.writeText(file, text, mode);
    else if (mode !== undefined) await deps.fs.chmod(file, mode);
    outcome.actions.push({ what, kind: 'file', path: file, status });
    return dirs;
  };
  try {
    receipt.dirs = union(receipt.dirs, await put('launcher', launcher, launcherScript(deps.platform, deps.execPath, deps.hostScript), deps.platform === 'win32' ? undefined : 0o755));
    for (const t of targets) {
      const dirs = await put(t.browser, t.manifestPath, manifestText(t.browser, launcher));
      if (t.registryKey) {
        const cmd = regAdd(t.registryKey, t.manifestPath);
        const shown = formatCommand('win32', [cmd.file, ...cmd.args]);
        if (opts.dryRun) outcome.actions.push({ what: t.browser, kind: 'registry', path: t.registryKey, status: 'would create', detail: shown });
        else {
          const r = await deps.run(cmd);
          const status = r.code === 0 ? 'created' : 'failed';
          outcome.actions.push({ what: t.browser, kind: 'registry', path: t.registryKey, status, detail: shown });
          if (r.code !== 0) outcome.problems.push(`${shown} failed (exit ${r.code}): ${r.stderr.trim()}`);
        }
      }
      const prior = receipt.entries.find((e) => e.manifest === t.manifestPath);
      if (prior) {
        prior.dirs = union(prior.dirs, dirs);
        prior.registryKey = t.registryKey;
      } else receipt.entries.push({ browser: t.browser, manifest: t.manifestPath, registryKey: t.registryKey, dirs });
    }
    await put('receipt', receiptFile, JSON.stringify(receipt, null, 2) + '\n');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    outcome.problems.push(`cannot write${e.path ? ` ${e.path}` : ''}: ${e.code ?? e.message}`);
  }
  outcome.ok = outcome.problems.length === 0;
  return outcome;
}

/** Removes what install wrote for the selected browsers (all, without --browser), and only that. */
export async function uninstall(opts: HostOptions, deps: Deps = defaultDeps()): Promise<Outcome> {
  const place = placeFor(deps.platform, opts.home, deps.env, opts.homeGiven);
  const launcher = launcherPath(place);
  const receiptFile = receiptPath(place);
  const receipt = await readReceipt(deps.fs, receiptFile);
  const outcome: Outcome = { ok: true, dryRun: opts.dryRun, actions: [], problems: [] };
  const everything = opts.browsers === null && opts.userDataDir === null;
  const selected = selectTargets(opts, place);
  const entries = receipt?.entries ?? [];
  const chosen = everything ? [...entries] : entries.filter((e) => selected.some((t) => t.manifestPath === e.manifest));
  // Manifests of ours at the selected known places the receipt does not list (it was lost): only those naming our launcher.
  for (const t of selected) {
    if (chosen.some((e) => e.manifest === t.manifestPath)) continue;
    if (isOurManifest(await deps.fs.readText(t.manifestPath), launcher)) chosen.push({ browser: t.browser, manifest: t.manifestPath, registryKey: t.registryKey, dirs: [] });
  }
  // Directories install created, deepest first, once their files are gone; returns those still in use.
  const removeDirs = async (dirs: string[]): Promise<string[]> => {
    const left: string[] = [];
    const depth = (d: string): number => d.split(/[\\/]/).length;
    for (const d of [...new Set(dirs)].sort((a, b) => depth(b) - depth(a))) {
      if (!opts.dryRun && (await deps.fs.removeDirIfEmpty(d))) outcome.actions.push({ what: 'directory', kind: 'directory', path: d, status: 'removed' });
      else left.push(d);
    }
    return left;
  };
  const removeFile = async (what: Action['what'], file: string, ours: (text: string) => boolean): Promise<void> => {
    const text = await deps.fs.readText(file);
    if (text === null) return void outcome.actions.push({ what, kind: 'file', path: file, status: 'absent' });
    if (!ours(text)) return void outcome.actions.push({ what, kind: 'file', path: file, status: 'kept', detail: 'not written by dnscost-host install' });
    if (!opts.dryRun) await deps.fs.removeFile(file);
    outcome.actions.push({ what, kind: 'file', path: file, status: opts.dryRun ? 'would remove' : 'removed' });
  };
  try {
    for (const e of chosen) {
      await removeFile(e.browser, e.manifest, (t) => isOurManifest(t));
      if (e.registryKey && deps.platform === 'win32') {
        // Only a key that still names our manifest: another installer may have taken it over since.
        const q = await deps.run(regQuery(e.registryKey));
        const value = q.code === 0 ? parseRegQuery(q.stdout) : null;
        const cmd = regDelete(e.registryKey);
        const shown = formatCommand('win32', [cmd.file, ...cmd.args]);
        if (value === null) outcome.actions.push({ what: e.browser, kind: 'registry', path: e.registryKey, status: 'absent' });
        else if (value !== e.manifest) outcome.actions.push({ what: e.browser, kind: 'registry', path: e.registryKey, status: 'kept', detail: `names ${value}` });
        else if (opts.dryRun) outcome.actions.push({ what: e.browser, kind: 'registry', path: e.registryKey, status: 'would remove', detail: shown });
        else {
          const r = await deps.run(cmd);
          outcome.actions.push({ what: e.browser, kind: 'registry', path: e.registryKey, status: r.code === 0 ? 'removed' : 'failed', detail: shown });
          if (r.code !== 0) outcome.problems.push(`${shown} failed (exit ${r.code}): ${r.stderr.trim()}`);
        }
      }
    }
    // One entry's directories may hold another's (Windows: hosts\firefox and hosts\chrome), so all at once.
    const left = await removeDirs(chosen.flatMap((e) => e.dirs));
    const remaining = entries.filter((e) => !chosen.includes(e));
    if (remaining.length === 0) {
      await removeFile('launcher', launcher, (t) => parseLauncher(deps.platform, t) !== null);
      if (receipt) {
        if (!opts.dryRun) await deps.fs.removeFile(receiptFile);
        outcome.actions.push({ what: 'receipt', kind: 'file', path: receiptFile, status: opts.dryRun ? 'would remove' : 'removed' });
        await removeDirs([...left, ...receipt.dirs]);
      }
    } else if (receipt && chosen.length > 0) {
      // Directories still in use by the remaining manifests stay on the receipt, so a later uninstall removes them.
      const dirs = [...receipt.dirs, ...left.filter((d) => !receipt.dirs.includes(d))];
      if (!opts.dryRun) await deps.fs.writeText(receiptFile, JSON.stringify({ ...receipt, dirs, entries: remaining }, null, 2) + '\n');
      outcome.actions.push({ what: 'receipt', kind: 'file', path: receiptFile, status: opts.dryRun ? 'would update' : 'updated', detail: `${remaining.length} manifest(s) still installed` });
    }
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    outcome.problems.push(`cannot remove${e.path ? ` ${e.path}` : ''}: ${e.code ?? e.message}`);
  }
  if (chosen.length === 0 && outcome.problems.length === 0) outcome.actions.push({ what: 'receipt', kind: 'file', path: receiptFile, status: 'absent', detail: 'nothing of dnscost installed here' });
  outcome.ok = outcome.problems.length === 0;
  return outcome;
}

/** One browser's doctor report. */
export interface DoctorEntry {
  browser: Browser;
  manifest: string;
  /** Not found (no profile, no manifest) and not named: skipped. */
  skipped: boolean;
  checks: Check[];
}

/** The doctor's whole report. */
export interface DoctorReport {
  ok: boolean;
  entries: DoctorEntry[];
  problems: Check[];
}

/** The command that reinstalls for `target` with the same --home and --chromium-user-data-dir. */
export function fixesFor(target: Target, opts: HostOptions, deps: Pick<Deps, 'platform' | 'execPath' | 'hostScript'>): Fixes {
  const p = pathFor(deps.platform);
  const words = [deps.execPath, deps.hostScript, 'install', '--browser', target.browser];
  if (opts.homeGiven) words.push('--home', opts.home);
  if (target.custom && opts.userDataDir) words.push('--chromium-user-data-dir', opts.userDataDir);
  const repo = p.resolve(p.dirname(deps.hostScript), '..', '..');
  return { install: formatCommand(deps.platform, words), build: `cd ${formatCommand(deps.platform, [repo])} && npx tsc -p tsconfig.json` };
}

/** Checks every selected (or found) browser's registration, down to a real hello through the launcher. */
export async function doctor(opts: HostOptions, deps: Deps = defaultDeps()): Promise<DoctorReport> {
  const place = placeFor(deps.platform, opts.home, deps.env, opts.homeGiven);
  const p = pathFor(deps.platform);
  const explicit = opts.browsers !== null || opts.userDataDir !== null;
  const report: DoctorReport = { ok: true, entries: [], problems: [] };
  for (const target of selectTargets(opts, place)) {
    const fixes = fixesFor(target, opts, deps);
    const obs: Observation = { target, platform: deps.platform, manifestText: null };
    let manifestFile = target.manifestPath;
    if (target.registryKey && deps.platform === 'win32') {
      const q = await deps.run(regQuery(target.registryKey));
      obs.registryValue = q.code === 0 ? parseRegQuery(q.stdout) : null;
      if (obs.registryValue) manifestFile = obs.registryValue;
    }
    obs.manifestText = await deps.fs.readText(manifestFile);
    if (!explicit && obs.manifestText === null && !obs.registryValue && !(await deps.fs.stat(target.profileDir)).exists) {
      report.entries.push({ browser: target.browser, manifest: target.manifestPath, skipped: true, checks: [] });
      continue;
    }
    let hostPath: string | null = null;
    try {
      const m = JSON.parse(obs.manifestText ?? 'null') as Partial<HostManifest> | null;
      if (m && typeof m.path === 'string' && p.isAbsolute(m.path)) hostPath = m.path;
    } catch {
      // diagnose reports it
    }
    if (hostPath) {
      obs.hostPath = await deps.fs.stat(hostPath);
      if (obs.hostPath.isFile) {
        obs.launcherText = await deps.fs.readText(hostPath).catch(() => null);
        if (obs.launcherText && obs.launcherText.length > 65536) obs.launcherText = null;
        const l = obs.launcherText ? parseLauncher(deps.platform, obs.launcherText) : null;
        if (l) {
          obs.node = await deps.fs.stat(l.node);
          obs.script = await deps.fs.stat(l.script);
          obs.built = await deps.fs.stat(p.resolve(p.dirname(l.script), '..', '..', 'dist', 'native-host', 'src', 'main.js'));
        }
      }
      const before = diagnose(obs, fixes);
      if (before.every((c) => c.ok)) {
        // A browser's environment: a GUI app's PATH is launchd's default on macOS (no Homebrew, no nvm), so node is
        // often not on it; HOME is the user's. Windows browsers pass the user's environment.
        const env: Record<string, string> =
          deps.platform === 'win32'
            ? Object.fromEntries(Object.entries(deps.env).filter((kv): kv is [string, string] => kv[1] !== undefined))
            : { HOME: opts.home, PATH: BROWSER_PATH };
        obs.hello = await deps.hello(hostPath, browserArgs({ ...target, manifestPath: manifestFile }, deps.platform), env, opts.timeoutMs);
      }
    }
    report.entries.push({ browser: target.browser, manifest: manifestFile, skipped: false, checks: diagnose(obs, fixes) });
  }
  const checked = report.entries.filter((e) => !e.skipped);
  if (checked.length === 0) {
    report.problems.push({
      check: 'browsers',
      ok: false,
      detail: `no browser found for ${opts.home} and no dnscost manifest installed`,
      fix: formatCommand(deps.platform, [deps.execPath, deps.hostScript, 'install', '--browser', 'firefox', ...(opts.homeGiven ? ['--home', opts.home] : [])]),
    });
  }
  report.ok = report.problems.length === 0 && checked.every((e) => e.checks.every((c) => c.ok));
  return report;
}

// ---------------------------------------------------------------------------------------------------------------
// Command lines.

/** Parses the arguments of `install`, `uninstall` or `doctor`; bad usage is a `bad-request` DnscostError. */
export function parseHostArgs(command: 'install' | 'uninstall' | 'doctor', argv: string[], deps: Pick<Deps, 'home' | 'platform'>): HostOptions {
  const bad = (message: string): never => {
    throw new DnscostError(CODES.BAD_REQUEST, `${command}: ${message}`);
  };
  const options: NonNullable<ParseArgsConfig['options']> = {
    browser: { type: 'string', multiple: true },
    'chromium-user-data-dir': { type: 'string' },
    home: { type: 'string' },
    json: { type: 'boolean' },
    ...(command === 'doctor' ? { timeout: { type: 'string' } } : { 'dry-run': { type: 'boolean' } }),
  };
  let parsed: { values: Record<string, string | string[] | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args: argv, options, strict: true, allowPositionals: true }) as typeof parsed;
  } catch (err) {
    return bad((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (positionals.length) bad(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const p = pathFor(deps.platform);
  let browsers: Browser[] | null = null;
  const named = (values.browser as string[] | undefined)?.flatMap((s) => s.split(',')).map((s) => s.trim().toLowerCase()).filter(Boolean);
  if (named?.length) {
    browsers = [];
    for (const b of named) {
      if (b === 'all') browsers.push(...BROWSERS);
      else if ((BROWSERS as readonly string[]).includes(b)) browsers.push(b as Browser);
      else bad(`unknown browser ${JSON.stringify(b)}; known: ${BROWSERS.join(', ')}, all`);
    }
    browsers = [...new Set(browsers)];
  }
  const udd = values['chromium-user-data-dir'] as string | undefined;
  if (udd !== undefined && deps.platform === 'win32') bad('--chromium-user-data-dir: Chromium on Windows reads hosts from the registry only');
  if (udd !== undefined && !udd) bad('--chromium-user-data-dir needs a directory');
  const home = values.home as string | undefined;
  if (home !== undefined && !home) bad('--home needs a directory');
  let timeoutMs = HELLO_TIMEOUT_MS;
  if (values.timeout !== undefined) {
    if (!/^\d+$/.test(values.timeout as string) || Number(values.timeout) === 0) bad(`--timeout takes milliseconds, not ${JSON.stringify(values.timeout)}`);
    timeoutMs = Number(values.timeout);
  }
  return {
    browsers,
    userDataDir: udd ? p.resolve(udd) : null,
    home: home ? p.resolve(home) : deps.home,
    homeGiven: home !== undefined,
    dryRun: (values['dry-run'] as boolean | undefined) ?? false,
    json: (values.json as boolean | undefined) ?? false,
    timeoutMs,
  };
}

/** Human lines for install/uninstall actions. */
export function formatOutcome(o: Outcome): string {
  const width = Math.max(9, ...o.actions.map((a) => a.what.length));
  const lines = o.actions.map((a) => `${a.what.padEnd(width)}  ${a.status.padEnd(12)}  ${a.kind === 'registry' ? `${a.detail ?? a.path}` : a.path}${a.kind !== 'registry' && a.detail ? `  (${a.detail})` : ''}`);
  for (const p of o.problems) lines.push(`problem: ${p}`);
  return lines.length ? lines.join('\n') + '\n' : '';
}

/** Human lines for the doctor's report. */
export function formatDoctor(r: DoctorReport): string {
  const lines: string[] = [];
  const width = Math.max(8, ...r.entries.map((e) => e.browser.length));
  for (const e of r.entries) {
    if (e.skipped) {
      lines.push(`${e.browser.padEnd(width)}  skipped: not found (no profile, no manifest)`);
      continue;
    }
    lines.push(`${e.browser.padEnd(width)}  ${e.manifest}`);
    for (const c of e.checks) {
      lines.push(`  ${c.ok ? 'ok  ' : 'FAIL'}  ${c.check}: ${c.detail}`);
      if (c.fix) lines.push(`        fix: ${c.fix}`);
    }
  }
  for (const c of r.problems) lines.push(`FAIL  ${c.check}: ${c.detail}`, `        fix: ${c.fix}`);
  lines.push(r.ok ? 'all good' : 'problems found');
  return lines.join('\n') + '\n';
}

/** `dnscost-host install ARGS`: exit 0 when everything was written, 1 when something could not be. */
export async function runInstall(argv: string[], deps: Deps = defaultDeps()): Promise<number> {
  const opts = parseHostArgs('install', argv, deps);
  const o = await install(opts, deps);
  deps.out(opts.json ? JSON.stringify(o) + '\n' : formatOutcome(o));
  return o.ok ? 0 : 1;
}

/** `dnscost-host uninstall ARGS`: exit 0 when everything of ours is gone, 1 when something could not be removed. */
export async function runUninstall(argv: string[], deps: Deps = defaultDeps()): Promise<number> {
  const opts = parseHostArgs('uninstall', argv, deps);
  const o = await uninstall(opts, deps);
  deps.out(opts.json ? JSON.stringify(o) + '\n' : formatOutcome(o));
  return o.ok ? 0 : 1;
}

/** `dnscost-host doctor ARGS`: exit 0 when every checked browser is fine, 1 when a problem was found. */
export async function runDoctor(argv: string[], deps: Deps = defaultDeps()): Promise<number> {
  const opts = parseHostArgs('doctor', argv, deps);
  const r = await doctor(opts, deps);
  deps.out(opts.json ? JSON.stringify(r) + '\n' : formatDoctor(r));
  return r.ok ? 0 : 1;
}
