// scripts/package: one archive per platform holding the host as a single executable (the esbuild bundle of
// native-host/src/main.ts as a Node single-executable application: a SEA blob injected with postject into the Node
// runtime the npm registry publishes for that platform as `node-<os>-<arch>`), the QUIC companion cross-compiled with
// CGO off, on Linux koffi's native module (TCP_INFO), a README and the licences. Every executable's header is checked
// against its platform before it is archived. Downloads (the runtimes, koffi's per-platform package, esbuild and
// postject) go through npm into a cache outside the checkout, so a second run downloads nothing.
//   scripts/package [--target linux-x64,win-x64,…] [--out DIR]
import { execFileSync } from 'node:child_process';
import { copyFileSync, chmodSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, closeSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { machoLoadCommands, wrongArch } from './arch.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The Node runtime every archive carries; the registry publishes it for each platform below but darwin-arm64. */
const NODE_VERSION = '20.20.2';
/** Build tools, pinned; installed into the cache, not the checkout's node_modules. */
const TOOLS = { esbuild: '0.28.2', postject: '1.0.0-alpha.6' };
/** The sentinel Node's runtime carries and postject flips (node/src/node_sea.cc). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/** The platforms: npm package of the runtime, Go's names, the executable suffix and the archive format. */
const TARGETS = [
  { id: 'linux-x64', os: 'linux', arch: 'x64', goos: 'linux', goarch: 'amd64', exe: '', archive: 'tar.gz' },
  { id: 'linux-arm64', os: 'linux', arch: 'arm64', goos: 'linux', goarch: 'arm64', exe: '', archive: 'tar.gz' },
  { id: 'darwin-x64', os: 'darwin', arch: 'x64', goos: 'darwin', goarch: 'amd64', exe: '', archive: 'tar.gz' },
  { id: 'darwin-arm64', os: 'darwin', arch: 'arm64', goos: 'darwin', goarch: 'arm64', exe: '', archive: 'tar.gz' },
  { id: 'win-x64', os: 'win', arch: 'x64', goos: 'windows', goarch: 'amd64', exe: '.exe', archive: 'zip' },
];

const log = (s) => process.stderr.write(`package: ${s}\n`);
const run = (file, args, opts = {}) => execFileSync(file, args, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', ...opts });

/** The first `n` bytes of a file (headers). */
function head(file, n = 4096) {
  const fd = openSync(file, 'r');
  try {
    const b = Buffer.alloc(n);
    return b.subarray(0, readSync(fd, b, 0, n, 0));
  } finally {
    closeSync(fd);
  }
}

/** esbuild and postject in the cache (npm install --prefix), installed once. */
function tools(cache) {
  const dir = join(cache, 'tools');
  const have = (name) => {
    try {
      return JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')).version === TOOLS[name];
    } catch {
      return false;
    }
  };
  if (!have('esbuild') || !have('postject')) {
    mkdirSync(dir, { recursive: true });
    if (!existsSync(join(dir, 'package.json'))) writeFileSync(join(dir, 'package.json'), '{ "private": true }\n');
    log(`installing esbuild ${TOOLS.esbuild} and postject ${TOOLS.postject} into ${dir}`);
    run('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', '--save-exact', ...Object.entries(TOOLS).map(([n, v]) => `${n}@${v}`)], { stdio: ['ignore', 'inherit', 'inherit'] });
  }
  return { esbuild: join(dir, 'node_modules', 'esbuild', 'lib', 'main.js'), postject: join(dir, 'node_modules', 'postject', 'dist', 'cli.js') };
}

/** Unpacks `files` (paths inside the npm tarball of `spec`) into `dir`, fetching the tarball with `npm pack` once. */
function fromNpm(cache, spec, dir, files) {
  if (files.every((f) => existsSync(join(dir, f)))) return;
  const tarballs = join(cache, 'tarballs');
  mkdirSync(tarballs, { recursive: true });
  // npm pack names the tarball NAME-VERSION.tgz, a scope's @ dropped and its / a dash.
  const tgz = join(tarballs, `${spec.replace(/^@/, '').replace('/', '-').replace(/@(?=[^@]*$)/, '-')}.tgz`);
  if (!existsSync(tgz)) {
    log(`fetching ${spec}`);
    run('npm', ['pack', '--silent', '--pack-destination', tarballs, spec], { cwd: tarballs });
  }
  mkdirSync(dir, { recursive: true });
  run('tar', ['-xzf', tgz, '-C', dir, '--strip-components=1', ...files.map((f) => `package/${f}`)]);
}

/** Whether the registry has `name@version` (one look-up). */
function published(name, version) {
  try {
    return run('npm', ['view', `${name}@${version}`, 'version'], { stdio: ['ignore', 'pipe', 'ignore'] }).trim() === version;
  } catch {
    return false;
  }
}

/** The Node runtime of `t` (its `node` or `node.exe`), unpacked into the cache; null when the registry has none. */
function runtime(cache, t) {
  const dir = join(cache, 'runtimes', `node-${t.id}-${NODE_VERSION}`);
  const bin = join(dir, 'bin', `node${t.exe}`);
  if (existsSync(bin)) return bin;
  const name = `node-${t.os}-${t.arch}`;
  if (!published(name, NODE_VERSION)) return null;
  fromNpm(cache, `${name}@${NODE_VERSION}`, dir, [`bin/node${t.exe}`]);
  return bin;
}

/** koffi's native module for a Linux target (the glibc build: tcp-info.ts loads libc.so.6), from its npm package. */
function koffiModule(cache, t) {
  const version = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'koffi', 'package.json'), 'utf8')).version;
  const dir = join(cache, 'koffi', `${t.id}-${version}`);
  const file = `linux_${t.arch}/koffi.node`;
  fromNpm(cache, `@koromix/koffi-linux-${t.arch}@${version}`, dir, [file]);
  return join(dir, file);
}

/** Bundles the host into one CommonJS file (SEA runs CommonJS), leaving out what a packaged host finds elsewhere. */
async function bundle(esbuildPath, outfile) {
  const esbuild = await import(pathToFileURL(esbuildPath).href);
  const packagedOnly = {
    name: 'dnscost-packaged',
    setup(build) {
      // dns-wire.ts requires dns-packet through createRequire to keep node's CommonJS lexer out of the checkout's
      // host; the bundle needs a require esbuild can see, or dns-packet would be looked up beside the executable.
      build.onLoad({ filter: /native-host[\\/]src[\\/]dns-wire\.ts$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8');
        const call = "createRequire(import.meta.url)('dns-packet')";
        if (!text.includes(call)) throw new Error(`${args.path} no longer has ${call}: update scripts/packaging/package.mjs`);
        return { contents: text.replace(call, "require('dns-packet')"), loader: 'ts' };
      });
      // The lab (CoreDNS, certificates) runs from a checkout; lab-command.ts says so when packaged.
      build.onResolve({ filter: /[\\/]lab[\\/]/ }, (args) => ({ path: args.path, external: true }));
    },
  };
  await esbuild.build({
    entryPoints: [join(ROOT, 'native-host', 'src', 'main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // koffi's JavaScript is not bundled: packaged, tcp-info.ts loads its native module from beside the executable.
    external: ['koffi'],
    define: { 'import.meta.url': '__dnscostModuleUrl' },
    banner: { js: "var __dnscostModuleUrl = require('node:url').pathToFileURL(process.execPath).href;" },
    plugins: [packagedOnly],
    logLevel: 'warning',
  });
}

/** Packs `dir` (inside `out`) as `name`.tar.gz or `name`.zip, entries owned by no one in particular. */
function archive(out, dir, kind) {
  const file = join(out, `${dir}.${kind}`);
  rmSync(file, { force: true });
  if (kind === 'zip') run('zip', ['-q', '-r', '-X', file, dir], { cwd: out });
  else run('tar', ['--owner=0', '--group=0', '--numeric-owner', '-czf', file, dir], { cwd: out });
  return file;
}

async function main() {
  const { values } = parseArgs({ options: { target: { type: 'string', multiple: true }, out: { type: 'string' } } });
  const wanted = values.target?.flatMap((s) => s.split(',')) ?? TARGETS.map((t) => t.id);
  for (const w of wanted) if (!TARGETS.some((t) => t.id === w)) throw new Error(`unknown target ${w}; known: ${TARGETS.map((t) => t.id).join(', ')}`);
  const out = resolve(values.out ?? join(ROOT, 'build', 'package'));
  const cache = process.env.DNSCOST_PACKAGE_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'dnscost-package');
  const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
  const go = existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
  mkdirSync(out, { recursive: true });
  const work = join(out, '.work');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });

  const t0 = tools(cache);
  const bundled = join(work, 'dnscost-host.cjs');
  log(`bundling native-host/src/main.ts (esbuild ${TOOLS.esbuild})`);
  await bundle(t0.esbuild, bundled);

  // One blob serves every platform: no snapshot and no code cache, the two parts that are specific to one. It must be
  // made by a node of the runtimes' version, so by this machine's runtime of that version, not whatever node runs us.
  const here = TARGETS.find((t) => t.os === (process.platform === 'win32' ? 'win' : process.platform) && t.arch === process.arch);
  const maker = here && runtime(cache, here);
  if (!maker) throw new Error(`no node-${process.platform}-${process.arch}@${NODE_VERSION} to make the SEA blob with`);
  writeFileSync(join(work, 'version'), `${version}\n`);
  const blob = join(work, 'sea-prep.blob');
  const seaConfig = { main: bundled, output: blob, disableExperimentalSEAWarning: true, useSnapshot: false, useCodeCache: false, assets: { version: join(work, 'version') } };
  writeFileSync(join(work, 'sea-config.json'), JSON.stringify(seaConfig, null, 2));
  run(maker, ['--experimental-sea-config', join(work, 'sea-config.json')], { stdio: ['ignore', 'ignore', 'inherit'] });

  const built = [];
  const skipped = [];
  for (const t of TARGETS.filter((x) => wanted.includes(x.id))) {
    const node = runtime(cache, t);
    if (!node) {
      skipped.push(`${t.id}: the npm registry has no node-${t.os}-${t.arch}@${NODE_VERSION} (no runtime of that Node version to inject the host into)`);
      log(`skipping ${skipped.at(-1)}`);
      continue;
    }
    const name = `dnscost-${version}-${t.id}`;
    const stage = join(out, name);
    rmSync(stage, { recursive: true, force: true });
    mkdirSync(stage, { recursive: true });
    const host = join(stage, `dnscost-host${t.exe}`);
    copyFileSync(node, host);
    chmodSync(host, 0o755);
    log(`${t.id}: injecting the blob into node ${NODE_VERSION}`);
    const macho = t.os === 'darwin' ? ['--macho-segment-name', 'NODE_SEA'] : [];
    // postject's LIEF warns about every ELF note section it cannot name ("Can't find string offset"), harmlessly:
    // its output is shown only when it fails.
    try {
      run(process.execPath, [t0.postject, host, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', SEA_FUSE, ...macho], { stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      throw new Error(`postject failed on ${host}: ${err.stdout ?? ''}${err.stderr ?? ''}`);
    }
    if (!readFileSync(host).includes(`${SEA_FUSE}:1`)) throw new Error(`${t.id}: postject left the fuse unflipped`);
    if (t.os === 'darwin') {
      // postject (LIEF) drops Node's signature, which the blob invalidated: the result is unsigned, never stale-signed
      // (a stale signature under the hardened runtime gets the process killed; unsigned x86_64 code runs).
      const lc = machoLoadCommands(head(host, 65536));
      if (!lc?.segments.includes('NODE_SEA')) throw new Error(`${t.id}: no NODE_SEA segment after postject`);
      if (lc.signed) throw new Error(`${t.id}: a stale code signature is left after postject`);
    }
    log(`${t.id}: building the QUIC companion (GOOS=${t.goos} GOARCH=${t.goarch})`);
    const quic = join(stage, `dnscost-quic${t.exe}`);
    run(go, ['build', '-trimpath', '-ldflags=-s -w', '-o', quic, '.'], {
      cwd: join(ROOT, 'native-host', 'quic'),
      env: { ...process.env, CGO_ENABLED: '0', GOOS: t.goos, GOARCH: t.goarch, GOFLAGS: '-mod=readonly', GOTOOLCHAIN: 'local' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const files = [host, quic];
    if (t.os === 'linux') {
      files.push(join(stage, 'koffi.node'));
      copyFileSync(koffiModule(cache, t), files.at(-1));
    }
    for (const f of files) {
      const wrong = wrongArch(t.id, head(f));
      if (wrong) throw new Error(`${f}: ${wrong}`);
    }
    copyFileSync(join(ROOT, 'native-host', 'PACKAGE.md'), join(stage, 'README.md'));
    copyFileSync(join(ROOT, 'LICENSE'), join(stage, 'LICENSE'));
    // Node's own licence (the runtime and the libraries it bundles); the unix packages have it, win's does not.
    const nodeDir = dirname(dirname(maker));
    fromNpm(cache, `node-${here.os}-${here.arch}@${NODE_VERSION}`, nodeDir, ['LICENSE']);
    copyFileSync(join(nodeDir, 'LICENSE'), join(stage, 'LICENSE.node'));
    if (t.id === here.id) {
      const said = run(host, ['--version']).trim();
      if (said !== version) throw new Error(`${host} --version said ${JSON.stringify(said)}, not ${version}`);
    }
    const sizes = files.map((f) => `${f.slice(stage.length + 1)} ${(statSync(f).size / 1048576).toFixed(1)} MiB`).join(', ');
    const file = archive(out, name, t.archive);
    rmSync(stage, { recursive: true, force: true });
    built.push({ target: t.id, file, bytes: statSync(file).size, sizes });
  }
  rmSync(work, { recursive: true, force: true });
  // Every archive of this version in `out`, whether this run or an earlier one (--target) built it.
  const archives = readdirSync(out).filter((f) => f.startsWith(`dnscost-${version}-`) && /\.(tar\.gz|zip)$/.test(f)).sort();
  const sums = archives.map((f) => `${run('sha256sum', [join(out, f)]).split(' ')[0]}  ${f}`);
  writeFileSync(join(out, 'SHA256SUMS'), sums.join('\n') + '\n');
  for (const b of built) process.stdout.write(`${b.target.padEnd(13)} ${(b.bytes / 1048576).toFixed(1).padStart(6)} MiB  ${b.file}  (${b.sizes})\n`);
  for (const s of skipped) process.stdout.write(`skipped ${s}\n`);
  if (built.length === 0) process.exitCode = 1;
}

main().catch((err) => {
  process.stderr.write(`package: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
