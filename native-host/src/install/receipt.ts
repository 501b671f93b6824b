// The install receipt (`installed.json`, beside the launcher) and the lifecycle it records. Install writes a launcher
// in dnscost's data dir (the manifests' `path`) or, run from the packaged archive, copies the executable and the files
// beside it there, one manifest per browser and, on Windows, one registry key per
// browser, and lists every file, key and directory it created here. Uninstall removes what the receipt lists (and any
// manifest of ours at a known location that names our launcher, should the receipt be lost), then the launcher,
// receipt and directories once nothing refers to them — and nothing else.
import { dataDir } from './browsers.js';
import type { FsLike } from './fs.js';
import { pathFor, type Browser, type Place } from './platform.js';

/** The receipt of what install wrote. */
export function receiptPath(place: Place): string {
  return pathFor(place.platform).join(dataDir(place), 'installed.json');
}

/** One manifest install wrote, with its registry key and the directories it created for it. */
export interface ReceiptEntry {
  browser: Browser;
  manifest: string;
  registryKey: string | null;
  /** Directories install created for this manifest, outermost first. */
  dirs: string[];
  /** Files copied for this manifest alone: a Flatpak's own copy of the packaged host, inside its sandbox. */
  files?: string[];
}

/** The receipt's contents: the launcher, and every manifest, key and directory install created. */
export interface Receipt {
  version: 1;
  /** The manifests' `path`: the launcher script, or the packaged executable install copied. */
  launcher: string;
  /** True when `launcher` is the packaged executable (install copied it from an archive). */
  packaged?: boolean;
  /** Files install copied beside the packaged executable (its QUIC companion, koffi's native module). */
  files?: string[];
  /** Directories install created for the launcher and receipt, outermost first. */
  dirs: string[];
  entries: ReceiptEntry[];
}

/** The receipt in `file`, or null when it is absent or not one we can read. */
export async function readReceipt(fs: FsLike, file: string): Promise<Receipt | null> {
  const text = await fs.readText(file);
  if (text === null) return null;
  try {
    const r = JSON.parse(text) as Receipt;
    return r && r.version === 1 && Array.isArray(r.entries) && Array.isArray(r.dirs) ? r : null;
  } catch {
    return null;
  }
}
