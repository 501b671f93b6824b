// Where the collector's own files are. Two ways to run: from a checkout (found from this module whether it runs from
// collector/ (tests) or dist/collector/ (the command), by walking up to the directory that holds collector/migrations),
// or packaged (scripts/package: a Node single-executable application whose migrations/ and dashboard/ sit beside the
// executable, and whose version is an asset of the executable).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { getAsset, isSea } from 'node:sea';
import { fileURLToPath } from 'node:url';

function checkoutRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'collector', 'migrations'))) return dir;
    if (dirname(dir) === dir) throw new Error(`dnscost-collector: cannot find collector/migrations above ${start}`);
  }
}

/** The checkout the collector runs from; null when packaged. */
const CHECKOUT: string | null = isSea() ? null : checkoutRoot(dirname(fileURLToPath(import.meta.url)));
const HOME = CHECKOUT === null ? dirname(process.execPath) : join(CHECKOUT, 'collector');
/** The SQL migrations, applied in name order. */
export const MIGRATIONS_DIR = join(HOME, 'migrations');
/** The public dashboard's static files (packaged, uPlot's two files beside them). */
export const DASHBOARD_DIR = join(HOME, 'dashboard');
/** dnscost's version (package.json; packaged: the `version` asset scripts/package wrote from it). */
export const VERSION: string =
  CHECKOUT === null ? getAsset('version', 'utf8').trim() : (JSON.parse(readFileSync(join(CHECKOUT, 'package.json'), 'utf8')) as { version: string }).version;
