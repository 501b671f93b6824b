// scripts/package: one archive per platform holding the host as a single executable (the esbuild bundle of
// native-host/src/main.ts as a Node single-executable application: a SEA blob injected with postject into the Node
// runtime the npm registry publishes for that platform as `node-<os>-<arch>`), the QUIC companion cross-compiled with
// CGO off, on Linux koffi's native module (TCP_INFO), a README and the licences. Every executable's header is checked
// against its platform before it is archived. Downloads (the runtimes, koffi's per-platform package, esbuild and
// postject) go through npm into a cache outside the checkout, so a second run downloads nothing.
// Beside them, the collector for Linux servers (collector.mjs): dnscost-collector-VERSION-linux-{x64,arm64}.tar.gz.
//   scripts/package [--target linux-x64,win-x64,…] [--out DIR]
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { wrongArch } from './arch.mjs';
import { packageCollector } from './collector.mjs';
import { archive, bundle, finishStage, fromNpm, head, inject, log, NODE_VERSION, ROOT, run, runtime, seaBlob, TARGETS, tools, TOOLS } from './sea.mjs';

/** koffi's native module for a Linux target (the glibc build: tcp-info.ts loads libc.so.6), from its npm package. */
function koffiModule(cache, t) {
  const version = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'koffi', 'package.json'), 'utf8')).version;
  const dir = join(cache, 'koffi', `${t.id}-${version}`);
  const file = `linux_${t.arch}/koffi.node`;
  fromNpm(cache, `@koromix/koffi-linux-${t.arch}@${version}`, dir, [file]);
  return join(dir, file);
}

/** Bundles the host into one CommonJS file (SEA runs CommonJS), leaving out what a packaged host finds elsewhere. */
async function bundleHost(esbuildPath, outfile) {
  const packagedOnly = {
    name: 'dnscost-packaged',
    setup(build) {
      // dns-wire.ts, the one module that loads dns-packet (the probe takes it from there), requires it through
      // createRequire to keep node's CommonJS lexer out of the checkout's host; the bundle needs a require esbuild
      // can see, or dns-packet would be looked up beside the executable.
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
  // koffi's JavaScript is not bundled: packaged, tcp-info.ts loads its native module from beside the executable.
  await bundle(esbuildPath, join(ROOT, 'native-host', 'src', 'main.ts'), outfile, { external: ['koffi'], plugins: [packagedOnly] });
  // Any other module requiring an npm package at run time would look for it beside the executable and fail there.
  const stray = readFileSync(outfile, 'utf8').match(/createRequire\([^)]*\)\(["'](?!koffi)[^"']+["']\)/);
  if (stray) throw new Error(`the host bundle requires ${stray[0]} at run time: load it through dns-wire.ts or an import`);
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
  await bundleHost(t0.esbuild, bundled);

  // One blob serves every platform: no snapshot and no code cache, the two parts that are specific to one. It must be
  // made by a node of the runtimes' version, so by this machine's runtime of that version, not whatever node runs us.
  const here = TARGETS.find((t) => t.os === (process.platform === 'win32' ? 'win' : process.platform) && t.arch === process.arch);
  const maker = here && runtime(cache, here);
  if (!maker) throw new Error(`no node-${process.platform}-${process.arch}@${NODE_VERSION} to make the SEA blob with`);
  const blob = seaBlob(maker, bundled, work, version, 'host');

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
    inject(t, node, host, blob, t0.postject);
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
    finishStage({ stage, readme: join(ROOT, 'native-host', 'PACKAGE.md'), exe: host, t, here, maker, cache, version });
    const sizes = files.map((f) => `${f.slice(stage.length + 1)} ${(statSync(f).size / 1048576).toFixed(1)} MiB`).join(', ');
    const file = archive(out, name, t.archive);
    rmSync(stage, { recursive: true, force: true });
    built.push({ target: t.id, file, bytes: statSync(file).size, sizes });
  }
  built.push(...(await packageCollector({ wanted, out, cache, work, version, maker, here, tools: t0 })));
  rmSync(work, { recursive: true, force: true });
  // Every archive of this version in `out`, whether this run or an earlier one (--target) built it.
  const archives = readdirSync(out).filter((f) => (f.startsWith(`dnscost-${version}-`) || f.startsWith(`dnscost-collector-${version}-`)) && /\.(tar\.gz|zip)$/.test(f)).sort();
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
