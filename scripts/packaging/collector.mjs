// The packaged collector (scripts/package): for each Linux target asked for, dnscost-collector-VERSION-TARGET.tar.gz
// holding `dnscost-collector` (collector/main.ts bundled as a Node single-executable application), the migrations it
// applies itself, the public dashboard's files with uPlot's, a README (collector/PACKAGE.md) and the licences. It stores
// in PostgreSQL only: the embedded PGlite (WebAssembly and data files) stays with the checkout.
import { copyFileSync, cpSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { wrongArch } from './arch.mjs';
import { archive, bundle, finishStage, head, inject, log, ROOT, runtime, seaBlob, TARGETS } from './sea.mjs';

/** The collector runs on servers: Linux only. */
const COLLECTOR_TARGETS = ['linux-x64', 'linux-arm64'];

/** Builds the collector archives of the `wanted` Linux targets; returns what it built, as package.mjs lists it. */
export async function packageCollector({ wanted, out, cache, work, version, maker, here, tools }) {
  const targets = TARGETS.filter((t) => COLLECTOR_TARGETS.includes(t.id) && wanted.includes(t.id));
  if (targets.length === 0) return [];
  const bundled = join(work, 'dnscost-collector.cjs');
  log('bundling collector/main.ts');
  // PGlite is left out (the package stores in PostgreSQL; main.ts says so when no database is named); pg's optional
  // native binding and its Cloudflare socket are never loaded on a server.
  await bundle(tools.esbuild, join(ROOT, 'collector', 'main.ts'), bundled, { external: ['@electric-sql/pglite', 'pg-native', 'pg-cloudflare', 'cloudflare:sockets'] });
  const blob = seaBlob(maker, bundled, work, version, 'collector');
  const require = createRequire(join(ROOT, 'collector', 'package.json'));
  const built = [];
  for (const t of targets) {
    const node = runtime(cache, t);
    if (!node) continue;
    const name = `dnscost-collector-${version}-${t.id}`;
    const stage = join(out, name);
    rmSync(stage, { recursive: true, force: true });
    mkdirSync(stage, { recursive: true });
    const exe = join(stage, 'dnscost-collector');
    inject(t, node, exe, blob, tools.postject);
    const wrong = wrongArch(t.id, head(exe));
    if (wrong) throw new Error(`${exe}: ${wrong}`);
    cpSync(join(ROOT, 'collector', 'migrations'), join(stage, 'migrations'), { recursive: true });
    mkdirSync(join(stage, 'dashboard'));
    for (const f of readdirSync(join(ROOT, 'collector', 'dashboard'))) copyFileSync(join(ROOT, 'collector', 'dashboard', f), join(stage, 'dashboard', f));
    copyFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), join(stage, 'dashboard', 'uplot.min.js'));
    copyFileSync(require.resolve('uplot/dist/uPlot.min.css'), join(stage, 'dashboard', 'uplot.min.css'));
    finishStage({ stage, readme: join(ROOT, 'collector', 'PACKAGE.md'), exe, t, here, maker, cache, version });
    const size = `dnscost-collector ${(statSync(exe).size / 1048576).toFixed(1)} MiB`;
    const file = archive(out, name, 'tar.gz');
    rmSync(stage, { recursive: true, force: true });
    built.push({ target: `collector ${t.id}`, file, bytes: statSync(file).size, sizes: size });
  }
  return built;
}
