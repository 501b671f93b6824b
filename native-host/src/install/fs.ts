// The file system as the installer needs it: one small interface (read, write text or bytes, mkdir -p that reports
// what it made, remove, remove-if-empty, stat, chmod) so the commands run against the real disk (`realFs`) or, in
// tests, an in-memory Windows or POSIX one.
import { constants as fsConstants } from 'node:fs';
import * as fsp from 'node:fs/promises';
import path from 'node:path';

/** What `stat` saw of a path on disk (doctor reports on it). */
export interface PathState {
  exists: boolean;
  isFile: boolean;
  executable: boolean;
}

/** The file operations the shell needs; `realFs` does them on disk, tests pass an in-memory one. */
export interface FsLike {
  /** The file's text, or null when it does not exist. */
  readText(p: string): Promise<string | null>;
  /** The file's bytes, or null when it does not exist. */
  readBytes(p: string): Promise<Buffer | null>;
  /** Writes bytes to a new file renamed over `p`, so a running copy of an executable there is not overwritten in place. */
  writeBytes(p: string, data: Buffer, mode?: number): Promise<void>;
  /** Writes a file (replacing it), with `mode` when given. */
  writeText(p: string, text: string, mode?: number): Promise<void>;
  /** mkdir -p; returns the directories it created, outermost first. */
  mkdirp(p: string): Promise<string[]>;
  /** Removes a file; false when it was not there. */
  removeFile(p: string): Promise<boolean>;
  /** Removes a directory only when empty; false otherwise. */
  removeDirIfEmpty(p: string): Promise<boolean>;
  stat(p: string): Promise<PathState>;
  chmod(p: string, mode: number): Promise<void>;
}

/** FsLike on the real file system. */
export const realFs: FsLike = {
  async readText(p) {
    try {
      return await fsp.readFile(p, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
      throw err;
    }
  },
  async readBytes(p) {
    try {
      return await fsp.readFile(p);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
      throw err;
    }
  },
  async writeBytes(p, data, mode) {
    // Linux refuses to write into an executable that is running (ETXTBSY); a rename replaces it, the old one runs on.
    const tmp = `${p}.${process.pid}.tmp`;
    await fsp.writeFile(tmp, data, mode === undefined ? {} : { mode });
    if (mode !== undefined) await fsp.chmod(tmp, mode);
    await fsp.rename(tmp, p);
  },
  async writeText(p, text, mode) {
    await fsp.writeFile(p, text, mode === undefined ? {} : { mode });
    if (mode !== undefined) await fsp.chmod(p, mode);
  },
  async mkdirp(p) {
    const missing: string[] = [];
    for (let d = path.resolve(p); ; d = path.dirname(d)) {
      if ((await realFs.stat(d)).exists) break;
      missing.unshift(d);
      if (path.dirname(d) === d) break;
    }
    await fsp.mkdir(p, { recursive: true });
    return missing;
  },
  async removeFile(p) {
    try {
      await fsp.unlink(p);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
  },
  async removeDirIfEmpty(p) {
    try {
      await fsp.rmdir(p);
      return true;
    } catch {
      return false;
    }
  },
  async stat(p) {
    try {
      const s = await fsp.stat(p);
      let executable = false;
      try {
        await fsp.access(p, fsConstants.X_OK);
        executable = s.isFile();
      } catch {
        executable = false;
      }
      return { exists: true, isFile: s.isFile(), executable };
    } catch {
      return { exists: false, isFile: false, executable: false };
    }
  },
  async chmod(p, mode) {
    await fsp.chmod(p, mode);
  },
};
