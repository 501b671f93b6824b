// Quoting words for a shell: the POSIX quoting the launcher's exec line is written in, and the command lines the
// installer prints for a person to paste (a `reg` call, the doctor's fixes), quoted only where the platform needs it.
// Pure.
import type { Platform } from './platform.js';

/** Quotes one word for /bin/sh (always, so the launcher's parser has one form to read). */
export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A command line for a person to paste: words quoted only where the platform's shell needs it. */
export function formatCommand(platform: Platform, words: string[]): string {
  return words
    .map((w) => {
      if (/^[A-Za-z0-9_\/.,:=@+\\-]+$/.test(w)) return w;
      return platform === 'win32' ? `"${w}"` : shQuote(w);
    })
    .join(' ');
}
