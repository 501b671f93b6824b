// The host's version, read from package.json once.
import { readFileSync } from 'node:fs';

/** dnscost's version (package.json). */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
