// The pieces every packaged executable is made of (scripts/package: the host, package.mjs; the collector,
// collector.mjs): the platforms, the Node runtime of each from the npm registry, esbuild and postject in a cache outside
// the checkout, a bundle, a SEA blob, the injection, the archive.
import { execFileSync } from 'node:child_process';
import { copyFileSync, chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { machoLoadCommands } from './arch.mjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The Node runtime every archive carries; the registry publishes it for each platform below but darwin-arm64. */
export const NODE_VERSION = '20.20.2';
/** Build tools, pinned; installed into the cache, not the checkout's node_modules. */
export const TOOLS = { esbuild: '0.28.2', postject: '1.0.0-alpha.6' };
/** The sentinel Node's runtime carries and postject flips (node/src/node_sea.cc). */
export const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/** The platforms: npm package of the runtime, Go's names, the executable suffix and the archive format. */
export const TARGETS = [
  { id: 'linux-x64', os: 'linux', arch: 'x64', goos: 'linux', goarch: 'amd64', exe: '', archive: 'tar.gz' },
  { id: 'linux-arm64', os: 'linux', arch: 'arm64', goos: 'linux', goarch: 'arm64', exe: '', archive: 'tar.gz' },
  { id: 'darwin-x64', os: 'darwin', arch: 'x64', goos: 'darwin', goarch: 'amd64', exe: '', archive: 'tar.gz' },
  { id: 'darwin-arm64', os: 'darwin', arch: 'arm64', goos: 'darwin', goarch: 'arm64', exe: '', archive: 'tar.gz' },
  { id: 'win-x64', os: 'win', arch: 'x64', goos: 'windows', goarch: 'amd64', exe: '.exe', archive: 'zip' },
];

export const log = (s) => process.stderr.write(`package: ${s}\n`);
export const run = (file, args, opts = {}) => execFileSync(file, args, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', ...opts });

/** The first `n` bytes of a file (headers). */
export function head(file, n = 4096) {
  const fd = openSync(file, 'r');
  try {
    const b = Buffer.alloc(n);
    return b.subarray(0, readSync(fd, b, 0, n, 0));
  } finally {
    closeSync(fd);
  }
}

/** esbuild and postject in the cache (npm install --prefix), installed once. */
export function tools(cache) {
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
export function fromNpm(cache, spec, dir, files) {
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
export function runtime(cache, t) {
  const dir = join(cache, 'runtimes', `node-${t.id}-${NODE_VERSION}`);
  const bin = join(dir, 'bin', `node${t.exe}`);
  if (existsSync(bin)) return bin;
  const name = `node-${t.os}-${t.arch}`;
  if (!published(name, NODE_VERSION)) return null;
  fromNpm(cache, `${name}@${NODE_VERSION}`, dir, [`bin/node${t.exe}`]);
  return bin;
}

/** Bundles `entry` into one CommonJS file for a SEA: import.meta.url is the executable's URL. */
export async function bundle(esbuildPath, entry, outfile, extra = {}) {
  const esbuild = await import(pathToFileURL(esbuildPath).href);
  await esbuild.build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    define: { 'import.meta.url': '__dnscostModuleUrl' },
    banner: { js: "var __dnscostModuleUrl = require('node:url').pathToFileURL(process.execPath).href;" },
    logLevel: 'warning',
    ...extra,
  });
}

/** Makes a SEA blob of `bundled` (with the `version` asset) by `maker`, a node of the runtimes' version. */
export function seaBlob(maker, bundled, work, version, name) {
  writeFileSync(join(work, 'version'), `${version}\n`);
  const blob = join(work, `${name}.blob`);
  const seaConfig = { main: bundled, output: blob, disableExperimentalSEAWarning: true, useSnapshot: false, useCodeCache: false, assets: { version: join(work, 'version') } };
  writeFileSync(join(work, `${name}-sea-config.json`), JSON.stringify(seaConfig, null, 2));
  run(maker, ['--experimental-sea-config', join(work, `${name}-sea-config.json`)], { stdio: ['ignore', 'ignore', 'inherit'] });
  return blob;
}

/** Copies `node` to `exe` and injects `blob` into it; checks the fuse flipped (and, on macOS, no stale signature). */
export function inject(t, node, exe, blob, postject) {
  copyFileSync(node, exe);
  chmodSync(exe, 0o755);
  log(`${t.id}: injecting the blob into node ${NODE_VERSION}`);
  const macho = t.os === 'darwin' ? ['--macho-segment-name', 'NODE_SEA'] : [];
  // postject's LIEF warns about every ELF note section it cannot name ("Can't find string offset"), harmlessly:
  // its output is shown only when it fails.
  try {
    run(process.execPath, [postject, exe, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', SEA_FUSE, ...macho], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    throw new Error(`postject failed on ${exe}: ${err.stdout ?? ''}${err.stderr ?? ''}`);
  }
  if (!readFileSync(exe).includes(`${SEA_FUSE}:1`)) throw new Error(`${t.id}: postject left the fuse unflipped`);
  if (t.os === 'darwin') {
    // postject (LIEF) drops Node's signature, which the blob invalidated: the result is unsigned, never stale-signed
    // (a stale signature under the hardened runtime gets the process killed; unsigned x86_64 code runs).
    const lc = machoLoadCommands(head(exe, 65536));
    if (!lc?.segments.includes('NODE_SEA')) throw new Error(`${t.id}: no NODE_SEA segment after postject`);
    if (lc.signed) throw new Error(`${t.id}: a stale code signature is left after postject`);
  }
}

/** Packs `dir` (inside `out`) as `name`.tar.gz or `name`.zip, entries owned by no one in particular. */
export function archive(out, dir, kind) {
  const file = join(out, `${dir}.${kind}`);
  rmSync(file, { force: true });
  if (kind === 'zip') run('zip', ['-q', '-r', '-X', file, dir], { cwd: out });
  else run('tar', ['--owner=0', '--group=0', '--numeric-owner', '-czf', file, dir], { cwd: out });
  return file;
}


/**
 * The files every archive carries beside its executable — `readme` as README.md, dnscost's LICENSE, Node's as
 * LICENSE.node (the runtime and the libraries it bundles) — and, on this machine's own platform, the executable's
 * `--version` checked against `version`.
 */
export function finishStage({ stage, readme, exe, t, here, maker, cache, version }) {
  copyFileSync(readme, join(stage, 'README.md'));
  copyFileSync(join(ROOT, 'LICENSE'), join(stage, 'LICENSE'));
  const nodeDir = dirname(dirname(maker));
  fromNpm(cache, `node-${here.os}-${here.arch}@${NODE_VERSION}`, nodeDir, ['LICENSE']);
  copyFileSync(join(nodeDir, 'LICENSE'), join(stage, 'LICENSE.node'));
  if (t.id === here.id) {
    const said = run(exe, ['--version']).trim();
    if (said !== version) throw new Error(`${exe} --version said ${JSON.stringify(said)}, not ${version}`);
  }
}
