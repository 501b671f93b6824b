// The collector's publication secret: the key of the noise stream (collector/publication.ts). It must stay the same
// across restarts, or a day recomputed after a crash would get fresh noise that could be compared with the first;
// and it must stay private, or anyone could subtract the noise. Generated once (32 random bytes), kept in the data
// directory with mode 0600, or given by the operator (DNSCOST_COLLECTOR_SECRET, e.g. shared by several instances).
import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** The file name of the secret in the data directory. */
export const SECRET_FILE = 'publication.key';

const BYTES = 32;

/** Decodes an operator-given secret: at least 32 bytes as hex or base64url. */
export function parseSecret(text: string): Buffer {
  const t = text.trim();
  const bytes = /^[0-9a-fA-F]+$/.test(t) && t.length % 2 === 0 ? Buffer.from(t, 'hex') : Buffer.from(t, 'base64url');
  if (bytes.length < BYTES) throw new Error(`the publication secret must be at least ${BYTES} bytes (hex or base64url)`);
  return bytes;
}

/**
 * The secret in `dir`/publication.key, created (mode 0600, atomically, flushed to disk) when missing; a file that
 * others may read is narrowed to 0600. Two collectors starting together on one directory read the same secret.
 */
export async function loadOrCreateSecret(dir: string): Promise<Buffer> {
  const path = join(dir, SECRET_FILE);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  try {
    await chmod(path, 0o600);
    return parseSecret(await readFile(path, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  // Written whole under a temporary name, then linked into place: a concurrent reader sees no file or all of it.
  const tmp = `${path}.${randomBytes(6).toString('hex')}`;
  const f = await open(tmp, 'wx', 0o600);
  try {
    await f.writeFile(randomBytes(BYTES).toString('hex') + '\n');
    await f.sync();
  } finally {
    await f.close();
  }
  try {
    await link(tmp, path);
    await syncDir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    await chmod(path, 0o600);
  } finally {
    await unlink(tmp);
  }
  return parseSecret(await readFile(path, 'utf8'));
}

async function syncDir(dir: string): Promise<void> {
  const d = await open(dir, 'r');
  try {
    await d.sync();
  } catch (e) {
    // A directory cannot be fsynced everywhere (Windows); the file's own fsync is what there is.
    if (!['EISDIR', 'EPERM', 'EINVAL', 'EACCES'].includes((e as NodeJS.ErrnoException).code ?? '')) throw e;
  } finally {
    await d.close();
  }
}
