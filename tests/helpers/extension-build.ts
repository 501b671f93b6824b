// Where the built extension is (scripts/setup runs `npm run build:extension`), for the lint and browser tests.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The unpacked extension both browsers load. */
export const EXTENSION_DIR = fileURLToPath(new URL('../../../build/extension/', import.meta.url));

/** Throws with the command to run when the extension has not been built. */
export function requireBuiltExtension(): string {
  if (!existsSync(`${EXTENSION_DIR}manifest.json`)) {
    throw new Error(`no built extension in ${EXTENSION_DIR}: run \`npm run build:extension\` (scripts/setup does)`);
  }
  return EXTENSION_DIR;
}
