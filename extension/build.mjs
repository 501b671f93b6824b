#!/usr/bin/env node
// Builds the extension: type-check (tsc), bundle (webpack) into build/extension/ with the top-level manifest.json and
// the pages' static files, then package the same files as build/dnscost-chromium.zip and build/dnscost-firefox.xpi.
// Usage: node extension/build.mjs   (npm run build:extension)
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import webpack from 'webpack';
import webExt from 'web-ext';
import { webpackConfig } from './webpack.config.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const buildDir = join(root, 'build');
const outDir = join(buildDir, 'extension');
/** Static files, from extension/src/ to the same place under build/extension/. */
const STATIC = ['popup/popup.html', 'options/options.html', 'options/options.css', 'dashboard/dashboard.html', 'dashboard/dashboard.css', 'ui/page.css', 'managed-schema.json'];

const started = Date.now();
const manifest = JSON.parse(readFileSync(join(root, 'manifest.json'), 'utf8'));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
if (manifest.version !== pkg.version) {
  throw new Error(`manifest.json version ${manifest.version} differs from package.json's ${pkg.version}`);
}

execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'extension/tsconfig.json')], { stdio: 'inherit' });

rmSync(outDir, { recursive: true, force: true });
const stats = await new Promise((resolve, reject) =>
  webpack(webpackConfig(outDir), (err, s) => (err ? reject(err) : resolve(s))),
);
if (stats.hasErrors() || stats.hasWarnings()) {
  console.error(stats.toString({ all: false, errors: true, warnings: true }));
  if (stats.hasErrors()) process.exit(1);
}
copyFileSync(join(root, 'manifest.json'), join(outDir, 'manifest.json'));
copyFileSync(join(root, 'LICENSE'), join(outDir, 'LICENSE'));
for (const f of STATIC) {
  mkdirSync(dirname(join(outDir, f)), { recursive: true });
  copyFileSync(join(root, 'extension/src', f), join(outDir, f));
}

// One archive serves both stores (the manifest carries both background forms); web-ext writes a zip, named .xpi for
// Firefox. Source maps stay in the unpacked build only.
for (const filename of ['dnscost-chromium.zip', 'dnscost-firefox.xpi']) {
  await webExt.cmd.build(
    { sourceDir: outDir, artifactsDir: buildDir, filename, overwriteDest: true, ignoreFiles: ['**/*.map'] },
    { shouldExitProgram: false, showReadyMessage: false },
  );
}
console.error(`build:extension: build/extension, build/dnscost-chromium.zip, build/dnscost-firefox.xpi in ${Date.now() - started} ms`);
