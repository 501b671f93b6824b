// The native messaging host manifest: the JSON file a browser reads to find the host's launcher and to learn which
// extension may start it (Firefox by add-on id, the Chromium family by exact origin), its bytes on disk, and how to
// tell a manifest of ours from someone else's. Pure.
import { CHROMIUM_ID, GECKO_ID, HOST_NAME } from '../../../common/extension-ids.js';
import type { Browser } from './platform.js';

/** The origin Chromium-family browsers pass and `allowed_origins` must name exactly, trailing slash included. */
export const CHROMIUM_ORIGIN = `chrome-extension://${CHROMIUM_ID}/`;
/** The manifest's file name (Linux and macOS browsers look the host up by it). */
export const MANIFEST_FILE = `${HOST_NAME}.json`;

/** A native messaging host manifest, as both browser families read it. */
export interface HostManifest {
  name: string;
  description: string;
  path: string;
  type: 'stdio';
  allowed_extensions?: string[];
  allowed_origins?: string[];
}

/** Our manifest for `browser`, naming `launcher` (absolute). */
export function manifestFor(browser: Browser, launcher: string): HostManifest {
  const base = { name: HOST_NAME, description: "dnscost: re-resolves your pages' hostnames over each DNS transport", path: launcher, type: 'stdio' as const };
  return browser === 'firefox' ? { ...base, allowed_extensions: [GECKO_ID] } : { ...base, allowed_origins: [CHROMIUM_ORIGIN] };
}

/** The manifest's bytes on disk. */
export function manifestText(browser: Browser, launcher: string): string {
  return JSON.stringify(manifestFor(browser, launcher), null, 2) + '\n';
}

/** True when the manifest text is ours (our host name), and when `launcher` is given, names that launcher. */
export function isOurManifest(text: string | null, launcher?: string): boolean {
  if (text === null) return false;
  try {
    const m = JSON.parse(text) as Partial<HostManifest>;
    return m.name === HOST_NAME && (launcher === undefined || m.path === launcher);
  } catch {
    return false;
  }
}
