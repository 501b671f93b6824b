import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'vitest';
import { HOST_SCRIPT } from './paths.js';
import { DnscostError } from '../../common/errors.js';
import { CHROMIUM_ID, GECKO_ID, HOST_NAME } from '../../common/extension-ids.js';
import { BROWSERS, browserArgs, CHROMIUM_ORIGIN, customTarget, defaultDeps, diagnose, doctor, formatCommand, install, launcherPath, launcherScript, manifestFor, parseHostArgs, parseLauncher, parseRegQuery, placeFor, probeHello, regAdd, regDelete, regQuery, runDoctor, runInstall, targetFor, uninstall, type Browser, type Command, type Deps, type FsLike, type HelloResult, type Observation, type PathState, type Platform, type Target } from './install.js';

const BIN = HOST_SCRIPT;

test('where each browser reads our manifest, per platform (per-user locations)', () => {
  const linux = placeFor('linux', '/home/u', {}, false);
  const mac = placeFor('darwin', '/Users/u', {}, false);
  const win = placeFor('win32', 'C:\\Users\\u', {}, false);
  const S = '/Users/u/Library/Application Support';
  const D = 'C:\\Users\\u\\AppData\\Local\\dnscost\\hosts';
  const cases: [Browser, Platform, string, string | null][] = [
    ['firefox', 'linux', '/home/u/.mozilla/native-messaging-hosts/org.dnscost.host.json', null],
    ['chrome', 'linux', '/home/u/.config/google-chrome/NativeMessagingHosts/org.dnscost.host.json', null],
    ['chromium', 'linux', '/home/u/.config/chromium/NativeMessagingHosts/org.dnscost.host.json', null],
    ['brave', 'linux', '/home/u/.config/BraveSoftware/Brave-Browser/NativeMessagingHosts/org.dnscost.host.json', null],
    ['edge', 'linux', '/home/u/.config/microsoft-edge/NativeMessagingHosts/org.dnscost.host.json', null],
    ['vivaldi', 'linux', '/home/u/.config/vivaldi/NativeMessagingHosts/org.dnscost.host.json', null],
    ['firefox', 'darwin', `${S}/Mozilla/NativeMessagingHosts/org.dnscost.host.json`, null],
    ['chrome', 'darwin', `${S}/Google/Chrome/NativeMessagingHosts/org.dnscost.host.json`, null],
    ['chromium', 'darwin', `${S}/Chromium/NativeMessagingHosts/org.dnscost.host.json`, null],
    ['brave', 'darwin', `${S}/BraveSoftware/Brave-Browser/NativeMessagingHosts/org.dnscost.host.json`, null],
    ['edge', 'darwin', `${S}/Microsoft Edge/NativeMessagingHosts/org.dnscost.host.json`, null],
    ['vivaldi', 'darwin', `${S}/Vivaldi/NativeMessagingHosts/org.dnscost.host.json`, null],
    ['firefox', 'win32', `${D}\\firefox\\org.dnscost.host.json`, 'HKCU\\Software\\Mozilla\\NativeMessagingHosts\\org.dnscost.host'],
    ['chrome', 'win32', `${D}\\chrome\\org.dnscost.host.json`, 'HKCU\\Software\\Google\\Chrome\\NativeMessagingHosts\\org.dnscost.host'],
    ['chromium', 'win32', `${D}\\chromium\\org.dnscost.host.json`, 'HKCU\\Software\\Chromium\\NativeMessagingHosts\\org.dnscost.host'],
    ['brave', 'win32', `${D}\\chrome\\org.dnscost.host.json`, 'HKCU\\Software\\Google\\Chrome\\NativeMessagingHosts\\org.dnscost.host'],
    ['edge', 'win32', `${D}\\edge\\org.dnscost.host.json`, 'HKCU\\Software\\Microsoft\\Edge\\NativeMessagingHosts\\org.dnscost.host'],
    ['vivaldi', 'win32', `${D}\\chrome\\org.dnscost.host.json`, 'HKCU\\Software\\Google\\Chrome\\NativeMessagingHosts\\org.dnscost.host'],
  ];
  const places = { linux, darwin: mac, win32: win };
  for (const [browser, platform, manifest, key] of cases) {
    const t = targetFor(browser, places[platform]);
    assert.equal(t.manifestPath, manifest, `${browser} on ${platform}`);
    assert.equal(t.registryKey, key, `${browser} on ${platform}`);
  }
  assert.equal(launcherPath(linux), '/home/u/.local/share/dnscost/dnscost-host');
  assert.equal(launcherPath(mac), `${S}/dnscost/dnscost-host`);
  assert.equal(launcherPath(win), 'C:\\Users\\u\\AppData\\Local\\dnscost\\dnscost-host.bat');
  assert.equal(customTarget('chromium', '/tmp/udd', 'linux').manifestPath, '/tmp/udd/NativeMessagingHosts/org.dnscost.host.json');
});

test('XDG and Windows variables count for the real home, not for an explicit --home', () => {
  const env = { XDG_CONFIG_HOME: '/xdg/config', XDG_DATA_HOME: '/xdg/data', LOCALAPPDATA: 'relative/ignored' };
  const real = placeFor('linux', '/home/u', env, false);
  assert.equal(targetFor('chrome', real).manifestPath, '/xdg/config/google-chrome/NativeMessagingHosts/org.dnscost.host.json');
  assert.equal(launcherPath(real), '/xdg/data/dnscost/dnscost-host');
  // Firefox ignores XDG_CONFIG_HOME for hosts.
  assert.equal(targetFor('firefox', real).manifestPath, '/home/u/.mozilla/native-messaging-hosts/org.dnscost.host.json');
  const given = placeFor('linux', '/tmp/h', env, true);
  assert.equal(targetFor('chrome', given).manifestPath, '/tmp/h/.config/google-chrome/NativeMessagingHosts/org.dnscost.host.json');
  assert.equal(placeFor('win32', 'C:\\Users\\u', env, false).localAppData, 'C:\\Users\\u\\AppData\\Local');
});

test('manifests: Firefox names the add-on id, the Chromium family the exact origin with its trailing slash', () => {
  assert.equal(CHROMIUM_ORIGIN, `chrome-extension://${CHROMIUM_ID}/`);
  for (const b of BROWSERS) {
    const m = manifestFor(b, '/x/dnscost-host');
    assert.equal(m.name, HOST_NAME);
    assert.equal(m.type, 'stdio');
    assert.equal(m.path, '/x/dnscost-host');
    if (b === 'firefox') {
      assert.deepEqual(m.allowed_extensions, [GECKO_ID]);
      assert.equal(m.allowed_origins, undefined);
    } else {
      assert.deepEqual(m.allowed_origins, [`chrome-extension://${CHROMIUM_ID}/`]);
      assert.equal(m.allowed_extensions, undefined);
    }
  }
  assert.deepEqual(browserArgs(targetFor('firefox', placeFor('linux', '/h', {}, true)), 'linux'), ['/h/.mozilla/native-messaging-hosts/org.dnscost.host.json', GECKO_ID]);
  assert.deepEqual(browserArgs(targetFor('edge', placeFor('linux', '/h', {}, true)), 'linux'), [CHROMIUM_ORIGIN]);
});

test('launchers run the absolute node and script, and parse back (quotes, spaces, percent signs)', () => {
  const cases: [Platform, string, string][] = [
    ['linux', '/usr/bin/node', '/work/main/native-host/bin/dnscost-host.js'],
    ['darwin', '/Users/o\'brien/.nvm/versions/node/v20/bin/node', '/Users/o\'brien/My Code/dnscost/native-host/bin/dnscost-host.js'],
    ['linux', '/opt/a $b `c`/node', '/x/"q"/s.js'],
    ['win32', 'C:\\Program Files\\nodejs\\node.exe', 'C:\\Users\\u\\100% real\\native-host\\bin\\dnscost-host.js'],
  ];
  for (const [platform, node, script] of cases) {
    const text = launcherScript(platform, node, script);
    assert.deepEqual(parseLauncher(platform, text), { node, script }, `${platform} ${node}`);
    if (platform === 'win32') {
      assert.match(text, /^@echo off\r\n/);
      assert.match(text, /%%/);
      assert.match(text, /" %\*\r\n$/);
    } else {
      assert.match(text, /^#!\/bin\/sh\n/);
      assert.match(text, /\nexec '.*' "\$@"\n$/);
    }
  }
  const real = spawnSync('/bin/sh', ['-c', `${launcherScript('linux', '/bin/echo', "it's here").split('\n').slice(3).join('\n')}`, 'sh', 'a b', 'c']);
  assert.equal(real.stdout.toString(), "it's here a b c\n", 'sh runs the exec line with the quoted words intact');
  assert.equal(parseLauncher('linux', '#!/bin/sh\nexec node x.js "$@"\n'), null, 'not ours: no mark');
});

test('reg command lines (run only on Windows) and reading the default value back', () => {
  const key = 'HKCU\\Software\\Mozilla\\NativeMessagingHosts\\org.dnscost.host';
  const file = 'C:\\Users\\A B\\AppData\\Local\\dnscost\\hosts\\firefox\\org.dnscost.host.json';
  const cases: [Command, string[], string][] = [
    [regAdd(key, file), ['add', key, '/ve', '/t', 'REG_SZ', '/d', file, '/f'], `reg add ${key} /ve /t REG_SZ /d "${file}" /f`],
    [regDelete(key), ['delete', key, '/f'], `reg delete ${key} /f`],
    [regQuery(key), ['query', key, '/ve'], `reg query ${key} /ve`],
  ];
  for (const [cmd, args, shown] of cases) {
    assert.equal(cmd.file, 'reg');
    assert.deepEqual(cmd.args, args);
    assert.equal(formatCommand('win32', [cmd.file, ...cmd.args]), shown);
  }
  assert.equal(parseRegQuery(`\r\n${key}\r\n    (Default)    REG_SZ    ${file}\r\n\r\n`), file);
  assert.equal(parseRegQuery(`\r\n${key}\r\n    (Standard)    REG_SZ    C:\\x.json\r\n`), 'C:\\x.json');
  assert.equal(parseRegQuery(`\r\n${key}\r\n    (Default)    REG_SZ    (value not set)\r\n`), '(value not set)');
  assert.equal(parseRegQuery('ERROR: The system was unable to find the specified registry key or value.\r\n'), null);
  assert.equal(formatCommand('linux', ['/usr/bin/node', '/a b/x.js', 'install', '--home', "/it's"]), `/usr/bin/node '/a b/x.js' install --home '/it'\\''s'`);
});

test('arguments: browsers, all, comma lists; bad usage is a bad-request DnscostError', () => {
  const deps = { home: '/home/u', platform: 'linux' as const };
  const o = parseHostArgs('install', ['--browser', 'firefox,chrome', '--browser', 'Chrome', '--dry-run', '--home', '/tmp/h'], deps);
  assert.deepEqual(o.browsers, ['firefox', 'chrome']);
  assert.equal(o.dryRun, true);
  assert.equal(o.home, '/tmp/h');
  assert.equal(o.homeGiven, true);
  assert.deepEqual(parseHostArgs('doctor', ['--browser', 'all'], deps).browsers, [...BROWSERS]);
  const d = parseHostArgs('doctor', [], deps);
  assert.equal(d.browsers, null);
  assert.equal(d.home, '/home/u');
  assert.equal(d.homeGiven, false);
  assert.equal(parseHostArgs('doctor', ['--timeout', '1500'], deps).timeoutMs, 1500);
  const bad: [string, 'install' | 'uninstall' | 'doctor', string[], Platform][] = [
    ['unknown browser', 'install', ['--browser', 'netscape'], 'linux'],
    ['unknown option', 'install', ['--bogus'], 'linux'],
    ['doctor has no --dry-run', 'doctor', ['--dry-run'], 'linux'],
    ['install has no --timeout', 'install', ['--timeout', '5'], 'linux'],
    ['positional', 'uninstall', ['firefox'], 'linux'],
    ['zero timeout', 'doctor', ['--timeout', '0'], 'linux'],
    ['user-data-dir on Windows', 'install', ['--chromium-user-data-dir', 'C:\\x'], 'win32'],
  ];
  for (const [why, cmd, argv, platform] of bad) {
    assert.throws(() => parseHostArgs(cmd, argv, { home: '/h', platform }), (e: unknown) => e instanceof DnscostError && e.code === 'bad-request', why);
  }
});

// The doctor's verdicts, case by case.
const FIX = { install: 'FIX-INSTALL', build: 'FIX-BUILD' };
const ok: PathState = { exists: true, isFile: true, executable: true };
const gone: PathState = { exists: false, isFile: false, executable: false };
const LAUNCHER = '/h/.local/share/dnscost/dnscost-host';
const fxTarget = targetFor('firefox', placeFor('linux', '/h', {}, true));
const crTarget = targetFor('chrome', placeFor('linux', '/h', {}, true));
const healthy = (target: Target): Observation => ({
  target,
  platform: 'linux',
  manifestText: JSON.stringify(manifestFor(target.browser, LAUNCHER)),
  hostPath: ok,
  launcherText: launcherScript('linux', '/usr/bin/node', '/r/native-host/bin/dnscost-host.js'),
  node: ok,
  script: ok,
  built: ok,
  hello: { ok: true, ms: 42, reply: { type: 'hello', version: '0.1.0', protocol: 1 } },
});

test('doctor verdicts: a healthy registration passes every check', () => {
  for (const t of [fxTarget, crTarget]) {
    const checks = diagnose(healthy(t), FIX);
    assert.ok(checks.every((c) => c.ok), JSON.stringify(checks));
    assert.deepEqual(checks.map((c) => c.check), ['manifest', 'name', t.browser === 'firefox' ? 'allowed_extensions' : 'allowed_origins', 'path', 'node', 'script', 'hello']);
  }
});

test('doctor verdicts: each problem names itself and its fix', () => {
  const helloFail: HelloResult = { ok: false, ms: 10000, error: 'no answer within 10000 ms', stderr: 'boom\n' };
  const cases: [string, Observation, string, RegExp, string][] = [
    ['missing', { ...healthy(fxTarget), manifestText: null }, 'manifest', /missing/, FIX.install],
    ['bad JSON', { ...healthy(fxTarget), manifestText: '{"name":' }, 'manifest', /not valid JSON/, FIX.install],
    ['array', { ...healthy(fxTarget), manifestText: '[]' }, 'manifest', /not a JSON object/, FIX.install],
    ['name', { ...healthy(fxTarget), manifestText: JSON.stringify({ ...manifestFor('firefox', LAUNCHER), name: 'org.other' }) }, 'name', /org\.other/, FIX.install],
    ['type', { ...healthy(fxTarget), manifestText: JSON.stringify({ ...manifestFor('firefox', LAUNCHER), type: 'socket' }) }, 'type', /stdio/, FIX.install],
    ['gecko id', { ...healthy(fxTarget), manifestText: JSON.stringify({ ...manifestFor('firefox', LAUNCHER), allowed_extensions: ['x@y'] }) }, 'allowed_extensions', /lacks "dnscost@dnscost\.org"/, FIX.install],
    ['firefox manifest given to chrome', { ...healthy(crTarget), manifestText: JSON.stringify(manifestFor('firefox', LAUNCHER)) }, 'allowed_origins', /lacks/, FIX.install],
    [
      'no trailing slash',
      { ...healthy(crTarget), manifestText: JSON.stringify({ ...manifestFor('chrome', LAUNCHER), allowed_origins: [CHROMIUM_ORIGIN.slice(0, -1)] }) },
      'allowed_origins',
      /without the trailing slash/,
      FIX.install,
    ],
    ['relative path', { ...healthy(fxTarget), manifestText: JSON.stringify(manifestFor('firefox', 'dnscost-host')) }, 'path', /not an absolute path/, FIX.install],
    ['path gone', { ...healthy(fxTarget), hostPath: gone }, 'path', /does not exist/, FIX.install],
    ['path not executable', { ...healthy(fxTarget), hostPath: { ...ok, executable: false } }, 'path', /not executable/, FIX.install],
    ['node gone', { ...healthy(crTarget), node: gone }, 'node', /\/usr\/bin\/node, which is gone/, FIX.install],
    ['script gone', { ...healthy(crTarget), script: gone }, 'script', /is gone/, FIX.install],
    ['not built', { ...healthy(crTarget), built: gone }, 'build', /not compiled/, FIX.build],
    ['no hello', { ...healthy(crTarget), hello: helloFail }, 'hello', /no answer within 10000 ms; stderr: boom/, `${FIX.build} && ${FIX.install}`],
    ['other protocol', { ...healthy(crTarget), hello: { ok: true, ms: 5, reply: { type: 'hello', version: '9', protocol: 9 } } }, 'hello', /protocol 9/, FIX.install],
    ['not a hello', { ...healthy(crTarget), hello: { ok: true, ms: 5, reply: { type: 'error' } } }, 'hello', /instead of a hello/, FIX.install],
  ];
  for (const [why, obs, check, detail, fix] of cases) {
    const checks = diagnose(obs, FIX);
    const last = checks.at(-1)!;
    assert.equal(checks.filter((c) => !c.ok).length, 1, why);
    assert.equal(last.ok, false, why);
    assert.equal(last.check, check, why);
    assert.match(last.detail, detail, why);
    assert.equal(last.fix, fix, why);
  }
  // A foreign executable is started as is (no launcher checks).
  const foreign = diagnose({ ...healthy(fxTarget), launcherText: '#!/bin/sh\nexec something\n' }, FIX);
  assert.ok(foreign.every((c) => c.ok));
  assert.ok(foreign.some((c) => c.check === 'launcher'));
});

test('doctor verdicts on Windows: the registry key must name the manifest', () => {
  const t = targetFor('edge', placeFor('win32', 'C:\\Users\\u', {}, true));
  const base: Observation = { ...healthy(t), platform: 'win32', launcherText: null, manifestText: JSON.stringify(manifestFor('edge', 'C:\\Users\\u\\AppData\\Local\\dnscost\\dnscost-host.bat')) };
  const missing = diagnose({ ...base, registryValue: null }, FIX);
  assert.deepEqual(missing.map((c) => [c.check, c.ok, c.fix]), [['registry', false, FIX.install]]);
  const fine = diagnose({ ...base, registryValue: t.manifestPath }, FIX);
  assert.ok(fine.every((c) => c.ok), JSON.stringify(fine));
  assert.equal(fine[0]!.check, 'registry');
});

/** An in-memory file system, with Windows or POSIX paths. */
function memFs(platform: Platform): FsLike & { files: Map<string, { text: string; mode?: number }>; dirs: Set<string> } {
  const p = platform === 'win32' ? path.win32 : path.posix;
  const files = new Map<string, { text: string; mode?: number }>();
  const dirs = new Set<string>();
  const fs = {
    files,
    dirs,
    async readText(f: string) {
      return files.get(f)?.text ?? null;
    },
    async writeText(f: string, text: string, mode?: number) {
      assert.ok(dirs.has(p.dirname(f)), `parent of ${f} exists`);
      files.set(f, { text, ...(mode === undefined ? {} : { mode }) });
    },
    async mkdirp(d: string) {
      const made: string[] = [];
      for (let x = d; x !== p.dirname(x) && !dirs.has(x); x = p.dirname(x)) made.unshift(x);
      for (const x of made) dirs.add(x);
      return made;
    },
    async removeFile(f: string) {
      return files.delete(f);
    },
    async removeDirIfEmpty(d: string) {
      const busy = [...files.keys(), ...dirs].some((x) => x !== d && x.startsWith(d + p.sep));
      return !busy && dirs.delete(d);
    },
    async stat(f: string): Promise<PathState> {
      const file = files.get(f);
      if (file) return { exists: true, isFile: true, executable: platform === 'win32' || ((file.mode ?? 0) & 0o111) !== 0 };
      return { exists: dirs.has(f), isFile: false, executable: false };
    },
    async chmod(f: string, mode: number) {
      const file = files.get(f);
      if (file) file.mode = mode;
    },
  };
  return fs;
}

function fakeDeps(platform: Platform, home: string, extra: Partial<Deps> = {}): Deps & { ran: Command[]; printed: string[] } {
  const ran: Command[] = [];
  const printed: string[] = [];
  const registry = new Map<string, string>();
  return {
    platform,
    home,
    env: {},
    execPath: platform === 'win32' ? 'C:\\Program Files\\nodejs\\node.exe' : '/usr/bin/node',
    hostScript: platform === 'win32' ? 'C:\\src\\dnscost\\native-host\\bin\\dnscost-host.js' : '/src/dnscost/native-host/bin/dnscost-host.js',
    fs: memFs(platform),
    async run(cmd) {
      ran.push(cmd);
      const [verb, key] = cmd.args;
      if (verb === 'add') registry.set(key!, cmd.args[6]!);
      if (verb === 'delete') registry.delete(key!);
      if (verb === 'query') {
        const v = registry.get(key!);
        return v ? { code: 0, stdout: `\r\n${key}\r\n    (Default)    REG_SZ    ${v}\r\n`, stderr: '' } : { code: 1, stdout: '', stderr: 'ERROR: not found' };
      }
      return { code: 0, stdout: 'The operation completed successfully.', stderr: '' };
    },
    async hello() {
      return { ok: true, ms: 1, reply: { type: 'hello', version: 'test', protocol: 1 } };
    },
    out: (t) => void printed.push(t),
    err: (t) => void printed.push(t),
    ran,
    printed,
    ...extra,
  };
}

const opts = (o: Partial<Parameters<typeof install>[0]> = {}): Parameters<typeof install>[0] => ({
  browsers: null,
  userDataDir: null,
  home: '/h',
  homeGiven: true,
  dryRun: false,
  json: false,
  timeoutMs: 1000,
  ...o,
});

test('Windows (fake fs and registry): a .bat launcher, manifests in LOCALAPPDATA, one reg add per key; uninstall deletes them', async () => {
  const home = 'C:\\Users\\u';
  const deps = fakeDeps('win32', home);
  const fs = deps.fs as ReturnType<typeof memFs>;
  const o = opts({ browsers: ['firefox', 'chrome', 'brave', 'edge'], home });
  const res = await install(o, deps);
  assert.equal(res.ok, true, res.problems.join());
  const bat = 'C:\\Users\\u\\AppData\\Local\\dnscost\\dnscost-host.bat';
  assert.deepEqual(parseLauncher('win32', fs.files.get(bat)!.text), { node: deps.execPath, script: deps.hostScript });
  // Brave shares Chrome's key and manifest on Windows: written once.
  assert.deepEqual(
    deps.ran.map((c) => c.args.slice(0, 2)),
    [
      ['add', 'HKCU\\Software\\Mozilla\\NativeMessagingHosts\\org.dnscost.host'],
      ['add', 'HKCU\\Software\\Google\\Chrome\\NativeMessagingHosts\\org.dnscost.host'],
      ['add', 'HKCU\\Software\\Microsoft\\Edge\\NativeMessagingHosts\\org.dnscost.host'],
    ],
  );
  assert.deepEqual(deps.ran[0]!.args.slice(2), ['/ve', '/t', 'REG_SZ', '/d', 'C:\\Users\\u\\AppData\\Local\\dnscost\\hosts\\firefox\\org.dnscost.host.json', '/f']);
  const fx = JSON.parse(fs.files.get('C:\\Users\\u\\AppData\\Local\\dnscost\\hosts\\firefox\\org.dnscost.host.json')!.text);
  assert.equal(fx.path, bat);
  let report = await doctor({ ...o, browsers: ['firefox', 'edge'] }, deps);
  // The fake disk has no node.exe yet: doctor says so, with the fix.
  assert.deepEqual(report.entries[0]!.checks.filter((c) => !c.ok).map((c) => [c.check, c.detail]), [['node', `the launcher runs ${deps.execPath}, which is gone`]]);
  for (const f of [deps.execPath, deps.hostScript, 'C:\\src\\dnscost\\dist\\native-host\\src\\main.js']) {
    await fs.mkdirp(path.win32.dirname(f));
    await fs.writeText(f, '');
  }
  report = await doctor({ ...o, browsers: ['firefox', 'edge', 'chromium'] }, deps);
  assert.deepEqual(report.entries.map((e) => [e.browser, e.checks.every((c) => c.ok)]), [['firefox', true], ['edge', true], ['chromium', false]]);
  deps.ran.length = 0;
  const un = await uninstall({ ...o, browsers: null }, deps);
  assert.equal(un.ok, true);
  assert.deepEqual(deps.ran.filter((c) => c.args[0] === 'delete').map((c) => c.args[1]), [
    'HKCU\\Software\\Mozilla\\NativeMessagingHosts\\org.dnscost.host',
    'HKCU\\Software\\Google\\Chrome\\NativeMessagingHosts\\org.dnscost.host',
    'HKCU\\Software\\Microsoft\\Edge\\NativeMessagingHosts\\org.dnscost.host',
  ]);
  assert.deepEqual([...fs.files.keys()].filter((f) => f.includes('AppData')), []);
  assert.deepEqual([...fs.dirs].filter((d) => d.includes('AppData')), []);
});

test('macOS layout on a real temp dir, dry run first: prints the plan and writes nothing', async (t) => {
  const home = mkdtempSync(path.join(tmpdir(), 'dnscost-mac-'));
  t.onTestFinished(() => rmSync(home, { recursive: true, force: true }));
  mkdirSync(path.join(home, 'Library', 'Application Support', 'Google', 'Chrome'), { recursive: true });
  const deps = { ...defaultDeps(), platform: 'darwin' as const, out: () => {} };
  const dry = await install(opts({ home, dryRun: true }), deps);
  assert.deepEqual(
    dry.actions.map((a) => [a.what, a.status, path.relative(home, a.path)]),
    [
      ['launcher', 'would create', 'Library/Application Support/dnscost/dnscost-host'],
      ['chrome', 'would create', 'Library/Application Support/Google/Chrome/NativeMessagingHosts/org.dnscost.host.json'],
      ['receipt', 'would create', 'Library/Application Support/dnscost/installed.json'],
    ],
  );
  assert.deepEqual(readdirSync(path.join(home, 'Library', 'Application Support')), ['Google'], 'dry run wrote nothing');
  const real = await install(opts({ home }), deps);
  assert.deepEqual(real.actions.map((a) => a.status), ['created', 'created', 'created']);
  const again = await install(opts({ home }), deps);
  assert.deepEqual(again.actions.map((a) => a.status), ['unchanged', 'unchanged', 'unchanged'], 'idempotent');
  await uninstall(opts({ home }), deps);
  assert.deepEqual(readdirSync(path.join(home, 'Library', 'Application Support', 'Google', 'Chrome')), [], 'the browser dir stays, our files go');
  assert.deepEqual(readdirSync(path.join(home, 'Library', 'Application Support')), ['Google']);
});

test('install with nothing found and nothing named is a problem (exit 1), not a silent no-op', async (t) => {
  const home = mkdtempSync(path.join(tmpdir(), 'dnscost-none-'));
  t.onTestFinished(() => rmSync(home, { recursive: true, force: true }));
  const printed: string[] = [];
  const code = await runInstall(['--home', home], { ...defaultDeps(), out: (s) => void printed.push(s) });
  assert.equal(code, 1);
  assert.match(printed.join(''), /no browser found.*--browser/);
  assert.deepEqual(readdirSync(home), []);
  const dcode = await runDoctor(['--home', home], { ...defaultDeps(), out: (s) => void printed.push(s) });
  assert.equal(dcode, 1);
  assert.match(printed.join(''), /fix: .*install --browser firefox --home/);
});

test('uninstall removes only what install wrote: foreign manifests and pre-existing dirs stay', async (t) => {
  const home = mkdtempSync(path.join(tmpdir(), 'dnscost-only-'));
  t.onTestFinished(() => rmSync(home, { recursive: true, force: true }));
  const nmh = path.join(home, '.config', 'chromium', 'NativeMessagingHosts');
  mkdirSync(nmh, { recursive: true });
  writeFileSync(path.join(nmh, 'com.other.host.json'), '{"name":"com.other.host"}');
  const deps = { ...defaultDeps(), platform: 'linux' as const, out: () => {} };
  await install(opts({ home, browsers: ['chromium', 'firefox'] }), deps);
  // Uninstall one browser: the other's manifest, the launcher and the receipt stay.
  const one = await uninstall(opts({ home, browsers: ['firefox'] }), deps);
  assert.deepEqual(one.actions.filter((a) => a.kind === 'file').map((a) => [a.what, a.status]), [['firefox', 'removed'], ['receipt', 'updated']]);
  assert.ok(statSync(path.join(home, '.local', 'share', 'dnscost', 'dnscost-host')).isFile());
  const rest = await uninstall(opts({ home }), deps);
  assert.ok(rest.ok);
  assert.deepEqual(readdirSync(nmh), ['com.other.host.json']);
  assert.deepEqual(readdirSync(home).sort(), ['.config']);
  // A manifest of ours whose receipt was lost is still found, if it names our launcher.
  await install(opts({ home, browsers: ['chromium'] }), deps);
  rmSync(path.join(home, '.local', 'share', 'dnscost', 'installed.json'));
  const lost = await uninstall(opts({ home }), deps);
  assert.ok(lost.actions.some((a) => a.what === 'chromium' && a.status === 'removed'));
  assert.deepEqual(readdirSync(nmh), ['com.other.host.json']);
});

test('end to end: install into a temp HOME and a Chromium user-data dir, doctor gets a real hello through the launcher, uninstall leaves nothing', async (t) => {
  const root = mkdtempSync(path.join(tmpdir(), 'dnscost-e2e-'));
  t.onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  const home = path.join(root, 'home');
  const udd = path.join(root, 'chromium-profile');
  mkdirSync(home);
  mkdirSync(udd);
  const run = (...args: string[]): { code: number | null; stdout: string; stderr: string } => {
    // PATH without node's directory: the launcher must not need it.
    const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', HOME: home }, timeout: 60_000 });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const inst = run('install', '--home', home, '--browser', 'firefox,chrome', '--json');
  assert.equal(inst.code, 0, inst.stderr);
  const actions = (JSON.parse(inst.stdout) as { actions: { what: string; status: string; path: string }[] }).actions;
  assert.deepEqual(actions.map((a) => [a.what, a.status]), [['launcher', 'created'], ['firefox', 'created'], ['chrome', 'created'], ['receipt', 'created']]);
  const launcher = path.join(home, '.local', 'share', 'dnscost', 'dnscost-host');
  assert.equal(statSync(launcher).mode & 0o777, 0o755);
  assert.deepEqual(parseLauncher('linux', readFileSync(launcher, 'utf8')), { node: process.execPath, script: BIN });
  const chrome = JSON.parse(readFileSync(path.join(home, '.config', 'google-chrome', 'NativeMessagingHosts', 'org.dnscost.host.json'), 'utf8'));
  assert.deepEqual(chrome, manifestFor('chrome', launcher));
  // The launcher needs no PATH at all (a browser's may lack node's directory).
  const bare = await probeHello(launcher, [CHROMIUM_ORIGIN], { HOME: home }, 10_000);
  assert.ok(bare.ok && bare.reply.type === 'hello', JSON.stringify(bare));
  const custom = run('install', '--home', home, '--chromium-user-data-dir', udd);
  assert.equal(custom.code, 0, custom.stderr);
  assert.match(custom.stdout, /chromium\s+created\s+.*chromium-profile\/NativeMessagingHosts\/org\.dnscost\.host\.json/);

  const doc = run('doctor', '--home', home, '--json');
  assert.equal(doc.code, 0, doc.stdout + doc.stderr);
  const report = JSON.parse(doc.stdout) as { ok: boolean; entries: { browser: string; skipped: boolean; checks: { check: string; ok: boolean; detail: string }[] }[] };
  const checked = report.entries.filter((e) => !e.skipped);
  assert.deepEqual(checked.map((e) => e.browser), ['firefox', 'chrome']);
  for (const e of checked) assert.match(e.checks.find((c) => c.check === 'hello')!.detail, /^answered: dnscost-host \d+\.\d+\.\d+, protocol 1/);
  const docCustom = run('doctor', '--home', home, '--chromium-user-data-dir', udd);
  assert.equal(docCustom.code, 0, docCustom.stdout);
  assert.match(docCustom.stdout, /ok {4}hello: answered/);

  // Break one thing: doctor says what and how to fix it, and exits 1.
  const fxManifest = path.join(home, '.mozilla', 'native-messaging-hosts', 'org.dnscost.host.json');
  writeFileSync(fxManifest, JSON.stringify({ ...manifestFor('firefox', launcher), path: path.join(root, 'nowhere') }));
  const broken = run('doctor', '--home', home, '--browser', 'firefox');
  assert.equal(broken.code, 1);
  assert.match(broken.stdout, /FAIL {2}path: .*nowhere does not exist/);
  assert.ok(broken.stdout.includes(`fix: ${process.execPath} ${BIN} install --browser firefox --home ${home}`), broken.stdout);
  assert.equal(run('install', '--home', home, '--browser', 'firefox').code, 0);
  assert.equal(run('doctor', '--home', home, '--browser', 'firefox').code, 0, 'the printed fix fixes it');

  assert.equal(run('doctor', '--browser', 'lynx').code, 2, 'bad usage');
  const un = run('uninstall', '--home', home);
  assert.equal(un.code, 0, un.stderr);
  assert.deepEqual(readdirSync(home), [], un.stdout);
  assert.deepEqual(readdirSync(udd), [], 'the user-data dir is left as it was');
});
