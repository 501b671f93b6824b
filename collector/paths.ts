// Where the collector's own files are in a checkout: found from this module whether it runs from collector/ (tests)
// or dist/collector/ (the command), by walking up to the directory that holds collector/migrations.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function checkoutRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'collector', 'migrations'))) return dir;
    if (dirname(dir) === dir) throw new Error(`dnscost-collector: cannot find collector/migrations above ${start}`);
  }
}

const CHECKOUT = checkoutRoot(dirname(fileURLToPath(import.meta.url)));
/** The SQL migrations, applied in name order. */
export const MIGRATIONS_DIR = join(CHECKOUT, 'collector', 'migrations');
/** The public dashboard's static files. */
export const DASHBOARD_DIR = join(CHECKOUT, 'collector', 'dashboard');
