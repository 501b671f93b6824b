// The native messaging host manifest: the JSON file a browser reads to find the host's launcher and to learn which
// extension may start it (Firefox by add-on id, the Chromium family by exact origin), its bytes on disk, and how to
// tell a manifest of ours from someone else's. Besides dnscost's own ids it may allow others the person added with
// `install --extension-id` (the store's build of the extension in Chromium, which the store gives an id of its own; a
// build they loaded themselves): kept from the manifest on disk, so installing again never drops them. Pure.
import { CHROMIUM_ID, GECKO_ID, HOST_NAME, isChromiumId, isGeckoId } from '../../../common/extension-ids.js';
import type { Browser } from './platform.js';

/** The origin Chromium-family browsers pass for extension `id`; `allowed_origins` must name it exactly, trailing slash included. */
export const chromiumOrigin = (id: string): string => `chrome-extension://${id}/`;
/** dnscost's own origin in the Chromium family (the development and packaged builds, whose `key` fixes the id). */
export const CHROMIUM_ORIGIN = chromiumOrigin(CHROMIUM_ID);
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

/**
 * Our manifest for `browser`, naming `launcher` (absolute): dnscost's own id first, then each of `extraIds` that is
 * an id of this browser's family (Chromium ids for the Chromium family, add-on ids for Firefox), once.
 */
export function manifestFor(browser: Browser, launcher: string, extraIds: readonly string[] = []): HostManifest {
  const base = { name: HOST_NAME, description: "dnscost: re-resolves your pages' hostnames over each DNS transport", path: launcher, type: 'stdio' as const };
  if (browser === 'firefox') return { ...base, allowed_extensions: [...new Set([GECKO_ID, ...extraIds.filter(isGeckoId)])] };
  return { ...base, allowed_origins: [...new Set([CHROMIUM_ID, ...extraIds.filter(isChromiumId)].map(chromiumOrigin))] };
}

/** The manifest's bytes on disk. */
export function manifestText(browser: Browser, launcher: string, extraIds: readonly string[] = []): string {
  return JSON.stringify(manifestFor(browser, launcher, extraIds), null, 2) + '\n';
}

/** The ids a manifest of ours on disk allows besides dnscost's own (none when the text is not ours or not JSON). */
export function addedIds(text: string | null): string[] {
  if (!isOurManifest(text)) return [];
  const m = JSON.parse(text!) as Partial<HostManifest>;
  const ids = [
    ...(Array.isArray(m.allowed_extensions) ? m.allowed_extensions : []),
    ...(Array.isArray(m.allowed_origins) ? m.allowed_origins.map((o) => /^chrome-extension:\/\/([a-p]{32})\/$/.exec(String(o))?.[1] ?? '') : []),
  ];
  return ids.filter((id) => typeof id === 'string' && id !== GECKO_ID && id !== CHROMIUM_ID && (isChromiumId(id) || isGeckoId(id)));
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
