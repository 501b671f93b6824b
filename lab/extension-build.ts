// Whether the built extension is there (scripts/setup runs `npm run build:extension`), for the lint and browser tests.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EXTENSION_DIR } from './paths.js';

/** Throws with the command to run when the extension has not been built; the unpacked extension's directory. */
export function requireBuiltExtension(): string {
  if (!existsSync(join(EXTENSION_DIR, 'manifest.json'))) {
    throw new Error(`no built extension in ${EXTENSION_DIR}: run \`npm run build:extension\` (scripts/setup does)`);
  }
  return EXTENSION_DIR;
}
