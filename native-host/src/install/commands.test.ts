// install, uninstall and doctor as a whole: on a fake Windows (in-memory files and registry), on real temp
// directories laid out as macOS and Linux, and end to end through the real launcher and host.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'vitest';
import { HOST_SCRIPT } from '../paths.js';
import { runDoctor, runInstall } from './commands.js';
import { defaultDeps, type Deps } from './deps.js';
import { doctor } from './doctor.js';
import type { FsLike, PathState } from './fs.js';
import { probeHello } from './hello-probe.js';
import { install } from './install.js';
import { parseLauncher } from './launcher.js';
import { CHROMIUM_ORIGIN, manifestFor } from './manifest.js';
import { GECKO_ID } from '../../../common/extension-ids.js';
import type { Platform } from './platform.js';
import { uninstall } from './uninstall.js';
import type { Command } from './windows-registry.js';
import { PROTOCOL_VERSION } from '../../../common/schema.js';

const BIN = HOST_SCRIPT!;

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
    async readBytes(f: string) {
      const file = files.get(f);
      return file ? Buffer.from(file.text, 'latin1') : null;
    },
    async writeBytes(f: string, data: Buffer, mode?: number) {
      assert.ok(dirs.has(p.dirname(f)), `parent of ${f} exists`);
      files.set(f, { text: data.toString('latin1'), ...(mode === undefined ? {} : { mode }) });
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

function fakeDeps(platform: Platform, home: string, extra: Partial<Deps> = {}): Deps & { ran: Command[]; printed: string[]; later: { files: string[]; dirs: string[] }[] } {
  const ran: Command[] = [];
  const later: { files: string[]; dirs: string[] }[] = [];
  const printed: string[] = [];
  const registry = new Map<string, string>();
  return {
    platform,
    home,
    env: {},
    execPath: platform === 'win32' ? 'C:\\Program Files\\nodejs\\node.exe' : '/usr/bin/node',
    hostScript: platform === 'win32' ? 'C:\\src\\dnscost\\native-host\\bin\\dnscost-host.js' : '/src/dnscost/native-host/bin/dnscost-host.js',
    packaged: null,
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
      return { ok: true, ms: 1, reply: { type: 'hello', version: 'test', protocol: PROTOCOL_VERSION } };
    },
    removeAfterExit: (files, dirs) => void later.push({ files, dirs }),
    later,
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
  extensionIds: [],
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
  for (const f of [deps.execPath, deps.hostScript!, 'C:\\src\\dnscost\\dist\\native-host\\src\\main.js']) {
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

test('packaged (fake Linux and Windows): install copies the executable and the files beside it, manifests name the copy; doctor checks the companion; uninstall removes them', async () => {
  for (const platform of ['linux', 'win32'] as const) {
    const p = platform === 'win32' ? path.win32 : path.posix;
    const home = platform === 'win32' ? 'C:\\Users\\u' : '/home/u';
    const from = platform === 'win32' ? 'C:\\Downloads\\dnscost-0.1.0-win-x64' : '/tmp/dnscost-0.1.0-linux-x64';
    const exe = p.join(from, platform === 'win32' ? 'dnscost-host.exe' : 'dnscost-host');
    const companion = p.join(from, platform === 'win32' ? 'dnscost-quic.exe' : 'dnscost-quic');
    const deps = fakeDeps(platform, home, { packaged: { exe, files: [companion] }, hostScript: null });
    const fs = deps.fs as ReturnType<typeof memFs>;
    await fs.mkdirp(from);
    await fs.writeBytes(exe, Buffer.from('\x7fELF host'), 0o755);
    await fs.writeBytes(companion, Buffer.from('\x7fELF quic'), 0o755);
    const o = opts({ browsers: ['firefox', 'chrome'], home });
    const dry = await install({ ...o, dryRun: true }, deps);
    assert.deepEqual(dry.actions.map((a) => [a.what, a.status]).slice(0, 2), [['host', 'would create'], ['host-file', 'would create']]);
    assert.equal([...fs.files.keys()].filter((f) => f.startsWith(home)).length, 0, 'a dry run writes nothing');
    const res = await install(o, deps);
    assert.equal(res.ok, true, res.problems.join());
    const data = platform === 'win32' ? 'C:\\Users\\u\\AppData\\Local\\dnscost' : '/home/u/.local/share/dnscost';
    const installed = p.join(data, platform === 'win32' ? 'dnscost-host.exe' : 'dnscost-host');
    assert.equal(fs.files.get(installed)?.text, '\x7fELF host');
    assert.equal(fs.files.get(p.join(data, p.basename(companion)))?.text, '\x7fELF quic');
    const fxManifest = res.actions.find((a) => a.what === 'firefox' && a.kind === 'file')!.path;
    assert.equal(JSON.parse(fs.files.get(fxManifest)!.text).path, installed);
    assert.deepEqual((await install(o, deps)).actions.filter((a) => a.kind === 'file').map((a) => a.status), ['unchanged', 'unchanged', 'unchanged', 'unchanged', 'unchanged'], 'idempotent');
    // The download goes: nothing installed refers to it.
    fs.files.delete(exe);
    fs.files.delete(companion);
    let report = await doctor(o, deps);
    assert.ok(report.ok, JSON.stringify(report));
    assert.ok(report.entries[0]!.checks.some((c) => c.check === 'companion' && c.ok));
    fs.files.delete(p.join(data, p.basename(companion)));
    report = await doctor(o, deps);
    const failed = report.entries[0]!.checks.find((c) => !c.ok)!;
    assert.equal(failed.check, 'companion');
    assert.match(failed.fix!, /dnscost-host(\.exe)?"? install --browser firefox --home/, 'the fix runs the packaged executable, not node');
    const un = await uninstall(opts({ home }), deps);
    assert.equal(un.ok, true, un.problems.join());
    assert.deepEqual([...fs.files.keys()].filter((f) => f.startsWith(home)), [], `${platform}: everything of ours is gone`);
    if (platform !== 'win32') continue;
    // Run from the installed copy, Windows will not delete the running executable: it is left to a process after us.
    await fs.writeBytes(exe, Buffer.from('\x7fELF host'), 0o755);
    await fs.writeBytes(companion, Buffer.from('\x7fELF quic'), 0o755);
    await install(o, deps);
    const self = await uninstall(opts({ home }), { ...deps, packaged: { exe: installed, files: [] } });
    assert.equal(self.ok, true, self.problems.join());
    assert.deepEqual(self.actions.filter((a) => a.what === 'host').map((a) => a.status), ['scheduled']);
    // Then the directories install made, deepest first (here the fake disk had none of the home's either).
    assert.deepEqual(deps.later.map((l) => [l.files, l.dirs[0]]), [[[installed], data]]);
    assert.deepEqual([...fs.files.keys()].filter((f) => f.startsWith(home)), [installed], 'only the running executable is left, for later');
  }
});

test('Flatpak and snap builds (fake Linux): each Flatpak gets its own copy of the packaged host inside its sandbox; Firefox\'s snap reads the usual manifest; a Chromium snap is said plainly not to be registered', async () => {
  const home = '/home/u';
  const from = '/tmp/dnscost-0.1.0-linux-x64';
  const exe = `${from}/dnscost-host`;
  const companion = `${from}/dnscost-quic`;
  const deps = fakeDeps('linux', home, { packaged: { exe, files: [companion] }, hostScript: null });
  const fs = deps.fs as ReturnType<typeof memFs>;
  await fs.mkdirp(from);
  await fs.writeBytes(exe, Buffer.from('\x7fELF host'), 0o755);
  await fs.writeBytes(companion, Buffer.from('\x7fELF quic'), 0o755);
  // Installed here: Firefox and Chromium from Flathub, Firefox and Chromium as snaps; no browser from the distribution.
  const present = ['.var/app/org.mozilla.firefox', '.var/app/org.chromium.Chromium', 'snap/firefox', 'snap/chromium'].map((d) => `${home}/${d}`);
  for (const d of present) await fs.mkdirp(d);
  const o = opts({ home });
  const res = await install(o, deps);
  assert.equal(res.ok, true, res.problems.join());
  const fx = `${home}/.var/app/org.mozilla.firefox`;
  const cr = `${home}/.var/app/org.chromium.Chromium`;
  assert.deepEqual(res.actions.map((a) => [a.what, a.status, a.path]), [
    ['chromium', 'skipped', `${home}/snap/chromium`],
    ['host', 'created', `${home}/.local/share/dnscost/dnscost-host`],
    ['host-file', 'created', `${home}/.local/share/dnscost/dnscost-quic`],
    // Firefox's snap asks the desktop portal, which reads the usual place.
    ['firefox', 'created', `${home}/.mozilla/native-messaging-hosts/org.dnscost.host.json`],
    ['host', 'created', `${fx}/data/dnscost/dnscost-host`],
    ['host-file', 'created', `${fx}/data/dnscost/dnscost-quic`],
    ['firefox', 'created', `${fx}/.mozilla/native-messaging-hosts/org.dnscost.host.json`],
    ['host', 'created', `${cr}/data/dnscost/dnscost-host`],
    ['host-file', 'created', `${cr}/data/dnscost/dnscost-quic`],
    ['chromium', 'created', `${cr}/config/chromium/NativeMessagingHosts/org.dnscost.host.json`],
    ['receipt', 'created', `${home}/.local/share/dnscost/installed.json`],
  ]);
  assert.match(res.actions[0]!.detail!, /^not registered: a Chromium-family snap cannot start a native messaging host/);
  // Each Flatpak's manifest names the copy its sandbox can see.
  assert.equal(JSON.parse(fs.files.get(`${fx}/.mozilla/native-messaging-hosts/org.dnscost.host.json`)!.text).path, `${fx}/data/dnscost/dnscost-host`);
  assert.equal(JSON.parse(fs.files.get(`${cr}/config/chromium/NativeMessagingHosts/org.dnscost.host.json`)!.text).path, `${cr}/data/dnscost/dnscost-host`);
  assert.equal(fs.files.get(`${cr}/data/dnscost/dnscost-quic`)!.text, '\x7fELF quic');

  const report = await doctor(o, deps);
  assert.ok(report.ok, JSON.stringify(report));
  assert.deepEqual(report.entries.filter((e) => !e.skipped).map((e) => `${e.browser}${e.flatpak ? ` ${e.flatpak}` : ''}`), ['firefox', 'firefox org.mozilla.firefox', 'chromium org.chromium.Chromium']);
  // Naming a browser does not invent its Flatpak: Brave's is not installed, so it is skipped, not failed.
  const brave = await doctor({ ...o, browsers: ['brave'] }, deps);
  assert.deepEqual(brave.entries.map((e) => [e.flatpak ?? '', e.skipped]), [['', false], ['com.brave.Browser', true]]);

  // From a checkout (a launcher that runs node), a Flatpak cannot be served: said so, the rest installs.
  const checkout = fakeDeps('linux', '/home/v');
  for (const d of ['/home/v/.var/app/org.mozilla.firefox', '/home/v/.mozilla']) await checkout.fs.mkdirp(d);
  const fromCheckout = await install(opts({ home: '/home/v' }), checkout);
  assert.equal(fromCheckout.ok, true, fromCheckout.problems.join());
  assert.deepEqual(fromCheckout.actions.filter((a) => a.what === 'firefox').map((a) => a.status), ['created', 'skipped']);
  assert.match(fromCheckout.actions.find((a) => a.status === 'skipped')!.detail!, /its sandbox has no node; install the packaged host/);

  const un = await uninstall(o, deps);
  assert.equal(un.ok, true, un.problems.join());
  assert.deepEqual([...fs.files.keys()].filter((f) => f.startsWith(home)), [], 'every copy and manifest is gone');
  assert.deepEqual([...fs.dirs].filter((d) => d.startsWith(`${home}/`)).sort(), [`${home}/.var`, `${home}/.var/app`, fx, cr, `${home}/snap`, `${home}/snap/chromium`, `${home}/snap/firefox`].sort(), 'the browsers\' own directories stay');
});

test('install --extension-id: the manifests allow that id beside dnscost\'s own, in its browser family only; installing again keeps it', async () => {
  const home = '/home/u';
  const deps = fakeDeps('linux', home);
  const fs = deps.fs as ReturnType<typeof memFs>;
  const store = 'b'.repeat(32);
  const o = opts({ browsers: ['firefox', 'chromium'], home });
  const res = await install({ ...o, extensionIds: [store, 'beta@example.org'] }, deps);
  assert.equal(res.ok, true, res.problems.join());
  const manifest = (what: string) => JSON.parse(fs.files.get(res.actions.find((a) => a.what === what && a.kind === 'file')!.path)!.text);
  assert.deepEqual(manifest('chromium').allowed_origins, [CHROMIUM_ORIGIN, `chrome-extension://${store}/`]);
  assert.deepEqual(manifest('firefox').allowed_extensions, [GECKO_ID, 'beta@example.org']);
  const again = await install(o, deps);
  assert.deepEqual(again.actions.filter((a) => a.kind === 'file').map((a) => a.status), ['unchanged', 'unchanged', 'unchanged', 'unchanged'], 'a plain install keeps the added ids');
  const more = await install({ ...o, extensionIds: ['c'.repeat(32)] }, deps);
  assert.ok(more.ok);
  assert.deepEqual(manifest('chromium').allowed_origins, [CHROMIUM_ORIGIN, `chrome-extension://${store}/`, `chrome-extension://${'c'.repeat(32)}/`]);
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
  for (const e of checked) assert.match(e.checks.find((c) => c.check === 'hello')!.detail, new RegExp(`^answered: dnscost-host \\d+\\.\\d+\\.\\d+, protocol ${PROTOCOL_VERSION}`));
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
