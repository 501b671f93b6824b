#!/usr/bin/env node
// Builds the extension: type-check (tsc), bundle (webpack) once, then one unpacked build per browser with its own
// manifest derived from the top-level manifest.json (build/extension-chromium: the background as a service worker and
// the `key` that fixes its id; build/extension-firefox: the background as scripts, the gecko id and data-collection
// declaration, no `key`), each packaged for its store: build/dnscost-chromium.zip (without the `key`: the Chrome Web
// Store refuses one and assigns its own id, which `dnscost-host install --extension-id` allows) and
// build/dnscost-firefox.xpi.
// Usage: node extension/build.mjs   (npm run build:extension)
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Resvg } from '@resvg/resvg-js';
import webpack from 'webpack';
import webExt from 'web-ext';
import { webpackConfig } from './webpack.config.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const buildDir = join(root, 'build');
const outDir = join(buildDir, 'extension-chromium');
const firefoxDir = join(buildDir, 'extension-firefox');
/** Static files, from extension/src/ to the same place under each build. */
const STATIC = ['popup/popup.html', 'options/options.html', 'options/options.css', 'dashboard/dashboard.html', 'dashboard/dashboard.css', 'ui/page.css', 'privacy/privacy.html', 'howto/howto.html', 'welcome/welcome.html', 'welcome/welcome.css', 'managed-schema.json'];

/** Icon sizes the manifest names (toolbar 16 and 32, the extensions page 48, stores 128). */
const ICON_SIZES = [16, 32, 48, 128];

const started = Date.now();
const manifest = JSON.parse(readFileSync(join(root, 'manifest.json'), 'utf8'));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
if (manifest.version !== pkg.version) {
  throw new Error(`manifest.json version ${manifest.version} differs from package.json's ${pkg.version}`);
}

execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'extension/tsconfig.json')], { stdio: 'inherit' });

rmSync(join(buildDir, 'extension'), { recursive: true, force: true }); // the single build of earlier versions
rmSync(outDir, { recursive: true, force: true });
rmSync(firefoxDir, { recursive: true, force: true });
const stats = await new Promise((resolve, reject) =>
  webpack(webpackConfig(outDir), (err, s) => (err ? reject(err) : resolve(s))),
);
if (stats.hasErrors() || stats.hasWarnings()) {
  console.error(stats.toString({ all: false, errors: true, warnings: true }));
  if (stats.hasErrors()) process.exit(1);
}
copyFileSync(join(root, 'LICENSE'), join(outDir, 'LICENSE'));
// The messages of every language (manifest.json's default_locale is en): browser.i18n reads them from _locales/.
cpSync(join(root, 'extension/_locales'), join(outDir, '_locales'), { recursive: true });
for (const f of STATIC) {
  mkdirSync(dirname(join(outDir, f)), { recursive: true });
  copyFileSync(join(root, 'extension/src', f), join(outDir, f));
}
// The toolbar and store icons, rendered from one SVG at each size the manifest names.
mkdirSync(join(outDir, 'icons'), { recursive: true });
const svg = readFileSync(join(root, 'extension/src/icons/icon.svg'));
for (const size of ICON_SIZES) {
  const png = new Resvg(svg, { fitTo: { mode: 'width', value: size } }).render().asPng();
  writeFileSync(join(outDir, 'icons', `icon-${size}.png`), png);
}
cpSync(outDir, firefoxDir, { recursive: true });
const json = (m) => `${JSON.stringify(m, null, 2)}\n`;
writeFileSync(join(outDir, 'manifest.json'), json(browserManifest(manifest, 'chromium')));
writeFileSync(join(firefoxDir, 'manifest.json'), json(browserManifest(manifest, 'firefox')));

// The store's Chromium build: the unpacked one without its `key` (kept only while it is zipped).
const storeDir = join(buildDir, 'extension-chromium-store');
rmSync(storeDir, { recursive: true, force: true });
cpSync(outDir, storeDir, { recursive: true });
const { key: _key, ...storeManifest } = browserManifest(manifest, 'chromium');
writeFileSync(join(storeDir, 'manifest.json'), json(storeManifest));

// web-ext writes a zip, named .xpi for Firefox. Source maps stay in the unpacked builds only.
for (const [dir, filename] of [[storeDir, 'dnscost-chromium.zip'], [firefoxDir, 'dnscost-firefox.xpi']]) {
  await webExt.cmd.build(
    { sourceDir: dir, artifactsDir: buildDir, filename, overwriteDest: true, ignoreFiles: ['**/*.map'] },
    { shouldExitProgram: false, showReadyMessage: false },
  );
}
rmSync(storeDir, { recursive: true, force: true });
// The source the stores' reviewers rebuild from (extension/store/listing.md says how): the committed tree.
const sourceZip = join(buildDir, 'dnscost-source.zip');
try {
  execFileSync('git', ['-C', root, 'archive', '--format=zip', '--output', sourceZip, 'HEAD'], { stdio: ['ignore', 'ignore', 'pipe'] });
} catch (err) {
  console.error(`build:extension: no source bundle (not a git checkout? ${String(err.message ?? err).split('\n')[0]})`);
}
console.error(`build:extension: build/extension-chromium, build/extension-firefox, build/dnscost-chromium.zip, build/dnscost-firefox.xpi, build/dnscost-source.zip in ${Date.now() - started} ms`);

/**
 * One browser's manifest from the shared one: Chromium takes the service worker and the `key` (its id, which the
 * host's manifest allows) and no Gecko settings; Firefox takes the background scripts, the Gecko settings, the `dns`
 * permission and `webRequest` as a required one, no key.
 */
function browserManifest(shared, browser) {
  const { key, browser_specific_settings: gecko, background, optional_permissions: optional, ...rest } = shared;
  if (browser === 'chromium') return { ...rest, optional_permissions: optional, key, background: { service_worker: background.service_worker } };
  // `dns` lets Firefox's build time the page's names through Firefox's own resolver (background/firefox-path.ts);
  // Chromium has no such API for extensions and would warn about an unknown permission. Firefox tells through
  // webRequest alone whether a page went through a proxy (then nothing may be resolved in clear text), so there it is
  // required; in Chromium, where the host reads the proxy from policy, it is optional (its grant slows every page).
  const permissions = [...rest.permissions, ...optional.filter((p) => p === 'webRequest'), 'dns'];
  const rested = optional.filter((p) => p !== 'webRequest');
  return { ...rest, permissions, ...(rested.length ? { optional_permissions: rested } : {}), browser_specific_settings: gecko, background: { scripts: background.scripts } };
}
