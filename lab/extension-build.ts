// Whether the built extension is there (scripts/setup runs `npm run build:extension`), for the lint and browser tests;
// the build as a person who granted its optional webRequest permission runs it, and other variants of its manifest.
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
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

/**
 * A copy of `browser`'s build in `dir` whose manifest requires webRequest, the permission Chromium's build only asks
 * for when a person ticks it in the options (a test cannot click the browser's prompt): the same extension and id,
 * recording every request as it does once granted. Firefox's build requires it already (the copy is the same).
 */
export function extensionWithWebRequest(browser: 'chromium' | 'firefox', dir: string): string {
  return extensionVariant(browser, dir, (m: { permissions: string[]; optional_permissions?: string[] }) => {
    if (!m.permissions.includes('webRequest')) m.permissions = [...m.permissions, 'webRequest'];
    m.optional_permissions = (m.optional_permissions ?? []).filter((p) => p !== 'webRequest');
  });
}

/** A copy of `browser`'s build in `dir` whose manifest `edit` changed (in place); the same extension and id. */
export function extensionVariant<M>(browser: 'chromium' | 'firefox', dir: string, edit: (manifest: M) => void): string {
  cpSync(requireBuiltExtension(browser), dir, { recursive: true });
  const file = join(dir, 'manifest.json');
  const m = JSON.parse(readFileSync(file, 'utf8')) as M;
  edit(m);
  writeFileSync(file, JSON.stringify(m, null, 2));
  return dir;
}
