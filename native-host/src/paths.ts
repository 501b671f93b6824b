// Where the host's own files are. Two ways to run: from a checkout (native-host/bin/dnscost-host.js, found from this
// module whether it runs from native-host/src (tests) or dist/native-host/src (the launcher), by walking up to the
// directory that holds the launcher), or packaged (scripts/package: a Node single-executable application, whose
// companion files sit beside the executable, process.execPath, and whose version is an asset of the executable).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { getAsset, isSea } from 'node:sea';
import { fileURLToPath } from 'node:url';

const LAUNCHER = join('native-host', 'bin', 'dnscost-host.js');

function checkoutRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, LAUNCHER))) return dir;
    if (dirname(dir) === dir) throw new Error(`dnscost-host: cannot find ${LAUNCHER} above ${start}`);
  }
}

/** True when this host is the packaged single executable (scripts/package) rather than a checkout's script. */
export const PACKAGED: boolean = isSea();

/** The file names the packaged host keeps beside its executable (scripts/package lays them out, install copies them). */
export function besideNames(platform: NodeJS.Platform): { companion: string; ffi: string | null } {
  // koffi's native module: TCP_INFO (tcp-info.ts) is read on Linux only, so only Linux archives carry it.
  return { companion: platform === 'win32' ? 'dnscost-quic.exe' : 'dnscost-quic', ffi: platform === 'linux' ? 'koffi.node' : null };
}

/** The checkout the host runs from; null when packaged. */
export const CHECKOUT: string | null = PACKAGED ? null : checkoutRoot(dirname(fileURLToPath(import.meta.url)));
/** The host's launcher (`node native-host/bin/dnscost-host.js`), as the installer registers it; null when packaged. */
export const HOST_SCRIPT: string | null = CHECKOUT === null ? null : join(CHECKOUT, LAUNCHER);
/** The QUIC companion: as native-host/quic/build.sh builds it, or beside the packaged executable. */
export const COMPANION: string =
  CHECKOUT === null ? join(dirname(process.execPath), besideNames(process.platform).companion) : join(CHECKOUT, 'native-host', 'quic', 'bin', 'dnscost-quic');
/** koffi's native module beside the packaged executable (Linux); null from a checkout, which requires the package. */
export const PACKAGED_FFI: string | null = PACKAGED && besideNames(process.platform).ffi ? join(dirname(process.execPath), besideNames(process.platform).ffi!) : null;
/** dnscost's version (package.json; packaged: the `version` asset scripts/package wrote from it). */
export const VERSION: string =
  CHECKOUT === null ? getAsset('version', 'utf8').trim() : (JSON.parse(readFileSync(join(CHECKOUT, 'package.json'), 'utf8')) as { version: string }).version;
