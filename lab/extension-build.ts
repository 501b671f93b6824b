// Whether the built extension is there (scripts/setup runs `npm run build:extension`), for the lint and browser tests.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { extensionDir } from './paths.js';

/** Throws with the command to run when the extension has not been built; the browser's unpacked extension. */
export function requireBuiltExtension(browser: 'chromium' | 'firefox'): string {
  const dir = extensionDir(browser);
  if (!existsSync(join(dir, 'manifest.json'))) {
    throw new Error(`no built extension in ${dir}: run \`npm run build:extension\` (scripts/setup does)`);
  }
  return dir;
}
