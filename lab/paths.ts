// Where things are in this checkout, for the lab, the tests and the benchmarks: one root finder that works from the
// sources (vitest runs them in place) and from dist/ (the benchmarks and spawned helpers run compiled).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout's root: the nearest directory above this module whose package.json is dnscost's own. */
export const ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));

function findRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'dnscost') return dir;
    if (dirname(dir) === dir) throw new Error(`cannot find the dnscost checkout above ${start}`);
  }
}

/** A lab program built by lab/build.sh (lab/bin/NAME). */
export function labBin(name: string): string {
  return join(ROOT, 'lab', 'bin', name);
}

/** The compiled form of a source file of this checkout (e.g. `lab/site/validation-site.ts`), for spawning under node. */
export function distPath(source: string): string {
  return join(ROOT, 'dist', source.replace(/\.ts$/, '.js'));
}

/**
 * Where the real pages' HAR files are: DNSCOST_HAR_PAGES, else the project's five beside the checkout
 * (../shared/pages), else the two copied into lab/har/pages (so a checkout alone can rebuild a real page).
 */
export function harPagesDir(): string {
  const shared = join(ROOT, '..', 'shared', 'pages');
  return process.env.DNSCOST_HAR_PAGES ?? (existsSync(shared) ? shared : join(ROOT, 'lab', 'har', 'pages'));
}

/** The host's launcher, as a browser starts it (it runs dist/native-host). */
export const HOST_BIN = join(ROOT, 'native-host', 'bin', 'dnscost-host.js');
/** The unpacked extension of each browser (scripts/setup runs `npm run build:extension`): build/extension-NAME. */
export function extensionDir(browser: 'chromium' | 'firefox'): string {
  return join(ROOT, 'build', `extension-${browser}`);
}
/** Where tests leave screenshots and logs for a person to look at. */
export const RUN_DIR = join(ROOT, 'tests', '.run');
