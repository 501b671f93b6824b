// The packaged host as a person without a checkout gets it: the linux-x64 archive scripts/package built is unpacked
// into a fresh HOME inside a mount namespace of its own where no node, no go and no checkout can be seen (each is
// covered by an empty bind mount, PATH is /usr/bin:/bin and `command -v node` must fail there); `install` runs from
// the archive, the archive is deleted, and the installed copy's `doctor` passes (its last check a real hello) and it
// answers a native-messaging hello and measures one name against the lab resolver on loopback; then it uninstalls
// itself. Every archive's executables are checked for the right ELF, Mach-O or PE machine. The win-x64 executable runs
// under wine (Debian's wine64) and the linux-arm64 one under qemu-user, each test skipped with its reason where the
// archive or the emulator is missing. Real browsers reaching the installed host: tests/browser/installed-host.test.ts.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { attachHost } from '../../lab/host-process.js';
import { noCheckoutPrelude } from '../../lab/no-checkout.js';
import { ROOT } from '../../lab/paths.js';
import { startCoreDNS, type LabResolver } from '../../lab/resolver.js';
import { parseEndpoint } from '../../native-host/src/endpoints.js';
import { machoLoadCommands, wrongArch } from '../../scripts/packaging/arch.mjs';
import { PROTOCOL_VERSION } from '../../common/schema.js';

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const OUT = join(ROOT, 'build', 'package');
const LINUX = join(OUT, `dnscost-${VERSION}-linux-x64.tar.gz`);
const notBuilt = existsSync(LINUX) ? null : `${LINUX} is not built: run scripts/package first`;
const notRoot = process.getuid?.() === 0 ? null : 'needs root: unshare -m hides node, go and the checkout';

describe('the packaged linux-x64 host, with no node, go or checkout in sight', () => {
  let root: string;
  let home: string;
  let lab: LabResolver;
  let prelude: string;
  const installed = (): string => join(home, '.local', 'share', 'dnscost', 'dnscost-host');

  /** Runs `script` (sh) in a new mount namespace after the prelude, with only HOME and PATH=/usr/bin:/bin. */
  const inNamespace = (script: string): { code: number | null; stdout: string; stderr: string } => {
    const r = spawnSync('/usr/bin/unshare', ['-m', 'sh', '-c', `${prelude}\n${script}`], { cwd: root, env: { HOME: home, PATH: '/usr/bin:/bin' }, encoding: 'utf8', timeout: 120_000 });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  beforeAll(async () => {
    if (notBuilt || notRoot) return;
    root = mkdtempSync(join(tmpdir(), 'dnscost-package-'));
    home = join(root, 'home');
    // A fresh home where Firefox and Chromium have run (so install finds them) and nothing of dnscost is.
    mkdirSync(join(home, '.mozilla'), { recursive: true });
    mkdirSync(join(home, '.config', 'chromium'), { recursive: true });
    mkdirSync(join(root, 'download'));
    copyFileSync(LINUX, join(root, 'download', 'dnscost.tar.gz'));
    prelude = noCheckoutPrelude(root);
    lab = await startCoreDNS();
  });
  afterAll(async () => {
    await lab?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  test('every archive scripts/package built has executables for its own platform', (t) => {
    if (notBuilt) return t.skip(notBuilt);
    // The host's archives (dnscost-VERSION-…); the collector's are tests/integration/collector-package.test.ts's.
    const archives = readdirSync(OUT).filter((f) => /^dnscost-\d[^-]*-.*\.(tar\.gz|zip)$/.test(f));
    // scripts/setup builds every platform the registry has a Node 20 runtime for (darwin-arm64: none).
    const platforms = ['darwin-x64.tar.gz', 'linux-arm64.tar.gz', 'linux-x64.tar.gz', 'win-x64.zip'].map((p) => `dnscost-${VERSION}-${p}`);
    assert.deepEqual(platforms.filter((a) => !archives.includes(a)), [], 'every platform is built (scripts/package)');
    for (const a of archives) {
      const target = /^dnscost-[^-]+-(.+)\.(tar\.gz|zip)$/.exec(a)![1]!;
      const dir = mkdtempSync(join(tmpdir(), 'dnscost-arch-'));
      try {
        if (a.endsWith('.zip')) execFileSync('unzip', ['-q', join(OUT, a), '-d', dir]);
        else execFileSync('tar', ['-xzf', join(OUT, a), '-C', dir]);
        const top = join(dir, `dnscost-${VERSION}-${target}`);
        const names = readdirSync(top).sort();
        const exe = target.startsWith('win') ? '.exe' : '';
        const binaries = [`dnscost-host${exe}`, `dnscost-quic${exe}`, ...(target.startsWith('linux') ? ['koffi.node'] : [])];
        assert.deepEqual(names, ['LICENSE', 'LICENSE.node', 'README.md', ...binaries].sort(), a);
        for (const b of binaries) assert.equal(wrongArch(target, readFileSync(join(top, b)).subarray(0, 4096)), null, `${a}: ${b}`);
        const host = readFileSync(join(top, `dnscost-host${exe}`));
        assert.ok(host.includes('NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2:1'), `${a}: the SEA blob is injected`);
        // macOS: the blob in a NODE_SEA segment, and Node's signature gone rather than stale (nothing signs it here).
        if (target.startsWith('darwin')) assert.deepEqual(machoLoadCommands(host.subarray(0, 65536)), { segments: ['__PAGEZERO', '__TEXT', '__DATA_CONST', '__DATA', 'NODE_SEA', '__LINKEDIT'], signed: false });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });

  test('installed from the archive, which is then deleted: doctor passes from the installed copy', { timeout: 180_000 }, (t) => {
    if (notBuilt || notRoot) return t.skip((notBuilt ?? notRoot)!);
    const inst = inNamespace(
      ['mkdir unpacked', 'tar -xzf download/dnscost.tar.gz -C unpacked', `unpacked/dnscost-${VERSION}-linux-x64/dnscost-host install --json`, 'rm -rf unpacked download'].join('\n'),
    );
    assert.equal(inst.code, 0, inst.stdout + inst.stderr);
    const actions = (JSON.parse(inst.stdout) as { actions: { what: string; status: string; path: string }[] }).actions;
    assert.deepEqual(actions.map((a) => [a.what, a.status, a.path.slice(home.length)]), [
      ['host', 'created', '/.local/share/dnscost/dnscost-host'],
      ['host-file', 'created', '/.local/share/dnscost/dnscost-quic'],
      ['host-file', 'created', '/.local/share/dnscost/koffi.node'],
      ['firefox', 'created', '/.mozilla/native-messaging-hosts/org.dnscost.host.json'],
      ['chromium', 'created', '/.config/chromium/NativeMessagingHosts/org.dnscost.host.json'],
      ['receipt', 'created', '/.local/share/dnscost/installed.json'],
    ]);
    assert.deepEqual(readdirSync(root).sort(), ['empty', 'empty-file', 'home'], 'the download and the unpacked archive are gone');

    const doc = inNamespace(`${installed()} doctor --json`);
    assert.equal(doc.code, 0, doc.stdout + doc.stderr);
    const report = JSON.parse(doc.stdout) as { ok: boolean; entries: { browser: string; skipped: boolean; checks: { check: string; ok: boolean; detail: string }[] }[] };
    assert.equal(report.ok, true);
    const checked = report.entries.filter((e) => !e.skipped);
    assert.deepEqual(checked.map((e) => e.browser), ['firefox', 'chromium']);
    for (const e of checked) {
      assert.ok(e.checks.every((c) => c.ok), JSON.stringify(e.checks));
      assert.match(e.checks.find((c) => c.check === 'hello')!.detail, new RegExp(`^answered: dnscost-host ${VERSION.replace(/\./g, '\\.')}, protocol ${PROTOCOL_VERSION}`));
    }
    console.log(`package: doctor from the installed copy: ${checked.map((e) => `${e.browser} ${e.checks.at(-1)!.detail}`).join('; ')}`);
  });

  test('the installed copy answers hello and measures a name against the lab resolver on loopback', { timeout: 120_000 }, async (t) => {
    if (notBuilt || notRoot) return t.skip((notBuilt ?? notRoot)!);
    if (!existsSync(installed())) return t.skip('the install test did not run');
    const child = spawn('/usr/bin/unshare', ['-m', 'sh', '-c', `${prelude}\nexec ${installed()} native`], { cwd: root, env: { HOME: home, PATH: '/usr/bin:/bin' }, stdio: 'pipe' });
    const host = attachHost(child as ChildProcessWithoutNullStreams);
    try {
      host.send({ id: 1, type: 'hello' });
      const hello = await host.next(20_000);
      assert.equal(hello.type, 'hello', JSON.stringify(hello));
      assert.equal(hello.version, VERSION);
      // The companion beside the installed executable: DoQ and DoH3 are offered.
      assert.deepEqual(hello.transports, ['udp', 'tcp', 'dot', 'doh', 'doh1', 'doq', 'doh3']);

      const e = lab.endpoints;
      const connect = new Map([['dns.test', lab.address]]);
      const endpoints = [e.udp, e.tcp, e.dot, e.doh, e.doq!].map((url) => parseEndpoint(url, { connect }));
      const resolver = { id: 'lab', name: 'Lab CoreDNS', ca: lab.certs.caPem, endpoints };
      host.send({ id: 'm', type: 'measure', hosts: ['h1.test'], resolvers: [resolver], modes: ['cold'], repeat: 1, lab: true });
      const replies = await host.until((r) => r.type === 'done' || r.type === 'error', 60_000);
      assert.equal(replies.at(-1)!.type, 'done', JSON.stringify(replies.at(-1)));
      const records = replies.filter((r) => r.type === 'records').flatMap((r) => r.records as Array<Record<string, unknown>>);
      assert.deepEqual(records.map((r) => r.transport).sort(), ['doh', 'doq', 'dot', 'tcp', 'udp']);
      for (const r of records) assert.equal(r.ok, true, JSON.stringify(r.error));
      // koffi's native module beside the executable: TCP bytes and packets come from the kernel, not the model.
      const tcp = records.find((r) => r.transport === 'tcp')!;
      assert.deepEqual(tcp.provenance, { bytes: 'counted', packets: 'counted' }, JSON.stringify(tcp.provenance));
      assert.doesNotMatch(host.stderr(), /TCP_INFO unavailable/);
      console.log(`package: measured h1.test from the installed copy: ${records.map((r) => `${String(r.transport)} ${Math.round((r.timings as { total: number }).total)} ms`).join(', ')}`);
    } finally {
      await host.exit();
    }
  });

  test('uninstall from the installed copy removes it and everything install wrote, and nothing else', { timeout: 60_000 }, (t) => {
    if (notBuilt || notRoot) return t.skip((notBuilt ?? notRoot)!);
    if (!existsSync(installed())) return t.skip('the install test did not run');
    const un = inNamespace(`${installed()} uninstall`);
    assert.equal(un.code, 0, un.stdout + un.stderr);
    assert.match(un.stdout, /^host\s+removed\s+.*\/\.local\/share\/dnscost\/dnscost-host$/m);
    const left = (dir: string): string[] => readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
    assert.deepEqual(left(home), ['.config', '.config/chromium', '.mozilla'], un.stdout);
  });
});

const WIN = join(OUT, `dnscost-${VERSION}-win-x64.zip`);
/** Debian's wine64 package installs its loader here (the `wine` wrapper comes with the `wine` package). */
const WINE = ['/usr/lib/wine/wine64', '/usr/bin/wine64', '/usr/bin/wine'].find((f) => existsSync(f)) ?? null;

describe('the packaged win-x64 host under wine', () => {
  test('prints its version, plans an install with --dry-run, installs, passes doctor and measures from the installed copy, and uninstalls', { timeout: 400_000 }, async (t) => {
    if (!existsSync(WIN)) return t.skip(`${WIN} is not built: run scripts/package first`);
    if (!WINE) return t.skip('wine is not installed (apt-get install wine64)');
    const dir = mkdtempSync(join(tmpdir(), 'dnscost-wine-'));
    try {
      execFileSync('unzip', ['-q', WIN, '-d', dir]);
      const exe = join(dir, `dnscost-${VERSION}-win-x64`, 'dnscost-host.exe');
      const env = { ...process.env, WINEPREFIX: join(dir, 'prefix'), WINEDEBUG: '-all', WINEDLLOVERRIDES: 'mscoree,mshtml=' };
      // A new prefix says Windows 7, which Node 20 refuses; Windows 10 is what it supports.
      execFileSync(WINE, ['winecfg', '/v', 'win10'], { env, stdio: 'ignore', timeout: 180_000 });
      // Node under wine cannot open a pipe as stdout (libuv: EBADF), so its output goes to a file.
      const wine = (...args: string[]): { code: number | null; out: string; err: string } => {
        const out = join(dir, 'out.txt');
        const err = join(dir, 'err.txt');
        const r = spawnSync('sh', ['-c', `exec "$0" "$@" >"${out}" 2>"${err}"`, WINE, ...args], { env, timeout: 120_000 });
        return { code: r.status, out: readFileSync(out, 'utf8').replace(/\r/g, ''), err: readFileSync(err, 'utf8') };
      };
      const log: string[] = [];
      const v = wine(exe, '--version');
      assert.equal(v.code, 0, v.err);
      assert.equal(v.out.trim(), VERSION);
      const plan = wine(exe, 'install', '--dry-run', '--browser', 'all');
      assert.equal(plan.code, 0, plan.out + plan.err);
      const lines = plan.out.trim().split('\n');
      assert.match(lines[0]!, /^host\s+would create\s+C:\\users\\[^\\]+\\AppData\\Local\\dnscost\\dnscost-host\.exe$/);
      assert.match(lines[1]!, /^host-file\s+would create\s+.*\\dnscost\\dnscost-quic\.exe$/);
      assert.ok(lines.some((l) => /^firefox\s+would create\s+reg add HKCU\\Software\\Mozilla\\NativeMessagingHosts\\org\.dnscost\.host /.test(l)), plan.out);
      assert.ok(lines.some((l) => /^edge\s+would create\s+reg add HKCU\\Software\\Microsoft\\Edge\\NativeMessagingHosts\\org\.dnscost\.host /.test(l)), plan.out);
      const user = readdirSync(join(env.WINEPREFIX, 'drive_c', 'users')).find((u) => u !== 'Public')!;
      const data = join(env.WINEPREFIX, 'drive_c', 'users', user, 'AppData', 'Local', 'dnscost');
      assert.ok(!existsSync(data), 'a dry run writes nothing');
      log.push(`$ dnscost-host.exe --version\n${v.out}`, `$ dnscost-host.exe install --dry-run --browser all\n${plan.out}`);

      // For real, for a Firefox that has run: then the archive goes and the installed copy carries on alone.
      mkdirSync(join(env.WINEPREFIX, 'drive_c', 'users', user, 'AppData', 'Roaming', 'Mozilla', 'Firefox'), { recursive: true });
      const inst = wine(exe, 'install');
      assert.equal(inst.code, 0, inst.out + inst.err);
      rmSync(join(dir, `dnscost-${VERSION}-win-x64`), { recursive: true });
      const copy = `C:\\users\\${user}\\AppData\\Local\\dnscost\\dnscost-host.exe`;
      const doc = wine(copy, 'doctor');
      assert.equal(doc.code, 0, doc.out + doc.err);
      assert.match(doc.out, /ok {4}registry: HKCU\\Software\\Mozilla\\NativeMessagingHosts\\org\.dnscost\.host names the manifest/);
      assert.match(doc.out, new RegExp(`ok {4}hello: answered: dnscost-host \\d+\\.\\d+\\.\\d+, protocol ${PROTOCOL_VERSION}`));
      // The installed copy measures against the lab on loopback (wine shares the machine's network): the lab's CA by
      // its Z: path. DoQ needs the companion, which wine 8 cannot start (Go asks for bcryptprimitives.dll, which it
      // lacks): reported unavailable, not failed.
      const lab = await startCoreDNS();
      let measured: { code: number | null; out: string; err: string };
      try {
        const e = lab.endpoints;
        const ca = `Z:${lab.certs.caFile.replace(/\//g, '\\')}`;
        measured = wine(copy, 'measure', ...[e.udp, e.tcp, e.dot, e.doh, e.doq!].flatMap((u) => ['--endpoint', u]), '--connect', `dns.test=${lab.address}`, '--ca', ca, '--repeat', '3', 'h1.test');
      } finally {
        await lab.stop();
      }
      assert.equal(measured.code, 0, measured.out + measured.err);
      for (const tr of ['udp', 'tcp', 'dot', 'doh']) assert.match(measured.out, new RegExp(`^cli\\s+\\S+\\s+${tr}\\s+cold\\s+A\\s+3\\s+0\\s`, 'm'), measured.out);
      const doq = /^unavailable: quic:.*$/m.exec(measured.err)?.[0] ?? 'doq measured';
      const un = wine(copy, 'uninstall');
      assert.equal(un.code, 0, un.out + un.err);
      assert.match(un.out, /^host\s+scheduled\s+/m);
      // The running executable is deleted by a cmd.exe after it exits (ping waits about two seconds first).
      for (let i = 0; i < 60 && existsSync(data); i++) await new Promise((r) => setTimeout(r, 500));
      assert.ok(!existsSync(data), `${data} is gone after uninstall`);
      log.push(`$ dnscost-host.exe install\n${inst.out}`, `(the unpacked archive deleted)\n$ ${copy} doctor\n${doc.out}`);
      log.push(`$ ${copy} measure (udp, tcp, dot, doh, doq of the lab) --repeat 3 h1.test\n${measured.out}${doq}\n`, `$ ${copy} uninstall\n${un.out}`);
      console.log(`wine (${execFileSync(WINE, ['--version'], { encoding: 'utf8' }).trim()}):\n${log.join('\n')}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const ARM = join(OUT, `dnscost-${VERSION}-linux-arm64.tar.gz`);
/** Debian's qemu-user-static, and the arm64 glibc and libstdc++ of its cross packages (libc6-arm64-cross, …). */
const QEMU = ['/usr/bin/qemu-aarch64-static', '/usr/bin/qemu-aarch64'].find((f) => existsSync(f)) ?? null;
const ARM_ROOT = '/usr/aarch64-linux-gnu';

describe('the packaged linux-arm64 host under qemu-user', () => {
  test('prints its version, answers hello, loads the arm64 koffi module and measures against the lab', { timeout: 180_000 }, async (t) => {
    if (!existsSync(ARM)) return t.skip(`${ARM} is not built: run scripts/package first`);
    if (!QEMU || !existsSync(join(ARM_ROOT, 'lib', 'libstdc++.so.6'))) return t.skip('needs qemu-user-static and libc6-arm64-cross, libstdc++6-arm64-cross');
    const dir = mkdtempSync(join(tmpdir(), 'dnscost-arm64-'));
    const lab = await startCoreDNS();
    try {
      execFileSync('tar', ['-xzf', ARM, '-C', dir]);
      const exe = join(dir, `dnscost-${VERSION}-linux-arm64`, 'dnscost-host');
      assert.equal(execFileSync(QEMU, ['-L', ARM_ROOT, exe, '--version'], { encoding: 'utf8' }).trim(), VERSION);
      const child = spawn(QEMU, ['-L', ARM_ROOT, exe, 'native'], { env: { HOME: dir, PATH: '/usr/bin:/bin' }, stdio: 'pipe' });
      const host = attachHost(child as ChildProcessWithoutNullStreams);
      try {
        host.send({ id: 1, type: 'hello' });
        const hello = await host.next(60_000);
        assert.equal(hello.version, VERSION, JSON.stringify(hello));
        // DoQ and DoH3 are left out here: qemu-user runs the host, but the kernel cannot start the arm64 companion
        // the host spawns (no binfmt_misc registration on this machine).
        const connect = new Map([['dns.test', lab.address]]);
        const e = lab.endpoints;
        const resolver = { id: 'lab', name: 'Lab CoreDNS', ca: lab.certs.caPem, endpoints: [e.udp, e.tcp, e.dot, e.doh].map((u) => parseEndpoint(u, { connect })) };
        host.send({ id: 'm', type: 'measure', hosts: ['h1.test'], resolvers: [resolver], modes: ['cold'], repeat: 1, lab: true, timeoutMs: 20_000 });
        const replies = await host.until((r) => r.type === 'done' || r.type === 'error', 120_000);
        assert.equal(replies.at(-1)!.type, 'done', JSON.stringify(replies.at(-1)));
        const records = replies.filter((r) => r.type === 'records').flatMap((r) => r.records as Array<Record<string, unknown>>);
        assert.deepEqual(records.map((r) => r.transport).sort(), ['doh', 'dot', 'tcp', 'udp']);
        for (const r of records) assert.equal(r.ok, true, JSON.stringify(r.error));
        // koffi's arm64 module loaded and called getsockopt (the host says so when it cannot); qemu-user copies back
        // only 4 bytes of TCP_INFO, as for an int option, so the figures fall back to estimates under emulation.
        assert.doesNotMatch(host.stderr(), /TCP_INFO unavailable/);
        console.log(`qemu-aarch64: measured h1.test: ${records.map((r) => `${String(r.transport)} ${Math.round((r.timings as { total: number }).total)} ms`).join(', ')} (emulated, so slow)`);
      } finally {
        await host.exit();
      }
    } finally {
      await lab.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
