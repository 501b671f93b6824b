// Where the host's own files are in a checkout: found from this module whether it runs from native-host/src (tests)
// or dist/native-host/src (the launcher), by walking up to the directory that holds native-host/bin/dnscost-host.js.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const LAUNCHER = join('native-host', 'bin', 'dnscost-host.js');

function checkoutRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, LAUNCHER))) return dir;
    if (dirname(dir) === dir) throw new Error(`dnscost-host: cannot find ${LAUNCHER} above ${start}`);
  }
}

/** The checkout the host runs from. */
export const CHECKOUT = checkoutRoot(dirname(fileURLToPath(import.meta.url)));
/** The host's launcher (`node native-host/bin/dnscost-host.js`), as the installer registers it. */
export const HOST_SCRIPT = join(CHECKOUT, LAUNCHER);
/** The QUIC companion as native-host/quic/build.sh builds it. */
export const COMPANION = join(CHECKOUT, 'native-host', 'quic', 'bin', 'dnscost-quic');
/** dnscost's version (package.json). */
export const VERSION: string = (JSON.parse(readFileSync(join(CHECKOUT, 'package.json'), 'utf8')) as { version: string }).version;
