// A machine without node, go or this checkout, for the packaged host's tests: a shell prelude that, run first in a new
// mount namespace (`unshare -m`, root), covers each of them with an empty bind mount and proves they are gone. What
// runs after it in that namespace (the installer, the installed host, a browser that starts the host) sees a person's
// machine that only has the downloaded archive.
import { chmodSync, existsSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { ROOT } from './paths.js';

/** What the namespace must not show: node, npm and go wherever this PATH has them, the checkout, /work, our HOME. */
function hidden(): { dirs: string[]; files: string[] } {
  const files = new Set<string>([realpathSync(process.execPath)]);
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    for (const name of ['node', 'nodejs', 'npm', 'npx', 'go', 'gofmt']) {
      const f = join(dir, name);
      if (dir && existsSync(f)) files.add(f).add(realpathSync(f));
    }
  }
  const dirs = [...new Set([ROOT, '/work', '/usr/local/go', homedir()].filter((d) => existsSync(d)))];
  // A file inside a hidden directory is hidden with it (and could not be a mount point once that is covered).
  return { dirs, files: [...files].filter((f) => !dirs.some((d) => f.startsWith(`${d}/`))) };
}

/** `s` quoted for sh. */
export const shQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The prelude (sh, `set -e`) that hides node, go and the checkout; `scratch` (outside everything hidden) gets the empty
 * directory and file the bind mounts use. It exits 90–92 if any of them can still be found.
 */
export function noCheckoutPrelude(scratch: string): string {
  const empty = join(scratch, 'empty');
  const emptyFile = join(scratch, 'empty-file');
  mkdirSync(empty, { recursive: true });
  writeFileSync(emptyFile, '');
  chmodSync(emptyFile, 0o644);
  const { dirs, files } = hidden();
  return [
    'set -e',
    ...dirs.map((d) => `mount --bind ${shQuote(empty)} ${shQuote(d)}`),
    ...files.map((f) => `mount --bind ${shQuote(emptyFile)} ${shQuote(f)}`),
    // The proof that this is a machine without them: none can be found or run.
    'if command -v node >/dev/null 2>&1 || command -v go >/dev/null 2>&1; then echo "node or go is still on PATH" >&2; exit 90; fi',
    `if [ -e ${shQuote(join(ROOT, 'package.json'))} ]; then echo "the checkout is still visible" >&2; exit 91; fi`,
    `if [ -s ${shQuote(realpathSync(process.execPath))} ]; then echo "this node's binary is still visible" >&2; exit 92; fi`,
  ].join('\n');
}

/**
 * Writes `dir/NAME` (sh): runs `executable` with its arguments in a new mount namespace after the prelude, with
 * PATH=/usr/bin:/bin — a browser started through it, and the native host that browser starts, see no node, go or
 * checkout. The process keeps the wrapper's pid (each step execs), so whoever started it can stop it.
 */
export function writeNoCheckoutWrapper(dir: string, name: string, prelude: string, executable: string): string {
  const path = join(dir, name);
  const inner = `${prelude}\nexport PATH=/usr/bin:/bin\nexec ${shQuote(executable)} "$@"`;
  writeFileSync(path, `#!/bin/sh\nexec /usr/bin/unshare -m /bin/sh -c ${shQuote(inner)} sh "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}
