// Where things are in this checkout, for the lab, the tests and the benchmarks: one root finder that works from the
// sources (vitest runs them in place) and from dist/ (the benchmarks and spawned helpers run compiled).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
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
 * The real pages' HAR files, by name: those in DNSCOST_HAR_PAGES (a directory) when set; else those in lab/har/pages
 * (checked in, so a checkout alone rebuilds real pages) and the project's beside the checkout (../shared/pages), one
 * file per name (the shared copy where both have it).
 */
export function harPages(): Map<string, string> {
  const dirs = process.env.DNSCOST_HAR_PAGES ? [process.env.DNSCOST_HAR_PAGES] : [join(ROOT, 'lab', 'har', 'pages'), join(ROOT, '..', 'shared', 'pages')];
  const pages = new Map<string, string>();
  for (const dir of dirs.filter((d) => existsSync(d))) for (const f of readdirSync(dir).filter((n) => n.endsWith('.har'))) pages.set(f, join(dir, f));
  return new Map([...pages].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** The path of the real page `name` (www.izettle.com.har); throws, naming where it looked, when there is none. */
export function harPage(name: string): string {
  const path = harPages().get(name);
  if (!path) throw new Error(`no HAR page ${name} in lab/har/pages, ../shared/pages or DNSCOST_HAR_PAGES`);
  return path;
}

/** The host's launcher, as a browser starts it (it runs dist/native-host). */
export const HOST_BIN = join(ROOT, 'native-host', 'bin', 'dnscost-host.js');
/** The unpacked extension of each browser (scripts/setup runs `npm run build:extension`): build/extension-NAME. */
export function extensionDir(browser: 'chromium' | 'firefox'): string {
  return join(ROOT, 'build', `extension-${browser}`);
}
/** Where tests leave screenshots and logs for a person to look at. */
export const RUN_DIR = join(ROOT, 'tests', '.run');
