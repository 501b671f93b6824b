// Where each browser reads dnscost's host manifest for this user, per platform, and which browsers a command selects;
// pure. Chrome and Chromium — developer.chrome.com "Native messaging: native messaging host location" (Linux
// `~/.config/<dir>/NativeMessagingHosts`, i.e. the user-data dir, which honours $XDG_CONFIG_HOME; macOS
// `~/Library/Application Support/<dir>/NativeMessagingHosts`; Windows the registry). Firefox — MDN "Native manifests"
// (Linux `~/.mozilla/native-messaging-hosts`, macOS `~/Library/Application Support/Mozilla/NativeMessagingHosts`,
// Windows `HKCU\Software\Mozilla\NativeMessagingHosts`). Edge — learn.microsoft.com "Native messaging"
// (`~/.config/microsoft-edge`, `Microsoft Edge`, `HKCU\Software\Microsoft\Edge`). Brave and Vivaldi publish no table;
// their paths follow the user-data dirs they create, as KeePassXC's NativeMessageInstaller ships them, and on Windows
// both read Chrome's registry key (they share it with Chrome here). Brave on macOS has been reported to read Chrome's
// directory instead of its own: installing for `chrome` as well covers that.
import { HOST_NAME } from '../../../common/extension-ids.js';
import { MANIFEST_FILE } from './manifest.js';
import { BROWSERS, pathFor, type Browser, type Place, type Platform } from './platform.js';

/** Where one browser reads our manifest, and how to tell the browser has run for this user. */
export interface BrowserTarget {
  browser: Browser;
  /** The manifest file (on Windows a file of ours that the registry key names). */
  manifestPath: string;
  /** Windows: the HKCU key whose default value is the manifest's path; null elsewhere. */
  registryKey: string | null;
  /** Exists once the browser has run for this user: "found". */
  profileDir: string;
  /** Written into a `--chromium-user-data-dir`. */
  custom: boolean;
  /**
   * A Flatpak build: its app id, and the directory inside its sandbox where the host is copied (a sandboxed browser
   * can only start a program it can see, and node is not in there: only the packaged host runs).
   */
  flatpak?: { app: string; hostDir: string };
  /** Linux Firefox: its snap's directory. The snap reads this same manifest through the desktop portal. */
  snapDir?: string;
}

type ChromiumBrowser = Exclude<Browser, 'firefox'>;
// Per Chromium-family browser: its user-data dir under ~/.config (Linux), ~/Library/Application Support (macOS) and
// %LOCALAPPDATA% (Windows), and the HKCU\Software subkey it reads hosts from on Windows.
const CHROMIUM_LAYOUT: Record<ChromiumBrowser, { linux: string[]; darwin: string[]; win32: string[]; winKey: string; winOwner: string }> = {
  chrome: { linux: ['google-chrome'], darwin: ['Google', 'Chrome'], win32: ['Google', 'Chrome', 'User Data'], winKey: 'Google\\Chrome', winOwner: 'chrome' },
  chromium: { linux: ['chromium'], darwin: ['Chromium'], win32: ['Chromium', 'User Data'], winKey: 'Chromium', winOwner: 'chromium' },
  brave: {
    linux: ['BraveSoftware', 'Brave-Browser'],
    darwin: ['BraveSoftware', 'Brave-Browser'],
    win32: ['BraveSoftware', 'Brave-Browser', 'User Data'],
    winKey: 'Google\\Chrome',
    winOwner: 'chrome',
  },
  edge: { linux: ['microsoft-edge'], darwin: ['Microsoft Edge'], win32: ['Microsoft', 'Edge', 'User Data'], winKey: 'Microsoft\\Edge', winOwner: 'edge' },
  vivaldi: { linux: ['vivaldi'], darwin: ['Vivaldi'], win32: ['Vivaldi', 'User Data'], winKey: 'Google\\Chrome', winOwner: 'chrome' },
};

// Flatpak builds (Flathub's app ids). Each sees its own ~/.var/app/ID at the same path: config/ is its
// $XDG_CONFIG_HOME, data/ its $XDG_DATA_HOME, and Firefox keeps ~/.mozilla there as .mozilla/.
const FLATPAK_APPS: Record<Browser, string> = {
  firefox: 'org.mozilla.firefox',
  chrome: 'com.google.Chrome',
  chromium: 'org.chromium.Chromium',
  brave: 'com.brave.Browser',
  edge: 'com.microsoft.Edge',
  vivaldi: 'com.vivaldi.Vivaldi',
};

/**
 * Snap builds (each snap named as its browser, in ~/snap/NAME) that are not registered, and why. Firefox's snap is (`snapDir`): it asks the desktop portal
 * (xdg-desktop-portal's WebExtensions interface, Ubuntu 22.04 and later), which reads ~/.mozilla/native-messaging-hosts
 * and starts the host outside the sandbox after asking the person once. Chromium's snap has no such route: its
 * confinement keeps it from starting a program outside, and its maintainers say native messaging is unsupported;
 * Brave's snap and Vivaldi's are built the same way (not tried).
 */
export const UNSUPPORTED_SNAPS: readonly Browser[] = ['chromium', 'brave', 'vivaldi'];

/** Why a Chromium-family snap is not registered, and what works instead. */
export const SNAP_REFUSAL = 'not registered: a Chromium-family snap cannot start a native messaging host (its confinement); use the distribution package or the Flatpak';

/** dnscost's own per-user directory: the launcher or packaged host, the receipt and (Windows) the manifests. */
export function dataDir(place: Place): string {
  const p = pathFor(place.platform);
  if (place.platform === 'win32') return p.join(place.localAppData, 'dnscost');
  if (place.platform === 'darwin') return p.join(place.home, 'Library', 'Application Support', 'dnscost');
  return p.join(place.dataHome, 'dnscost');
}

/** The launcher every manifest's `path` names. */
export function launcherPath(place: Place): string {
  return pathFor(place.platform).join(dataDir(place), place.platform === 'win32' ? 'dnscost-host.bat' : 'dnscost-host');
}

/** Where install puts the packaged executable (the manifests' `path` then): the launcher's place, `.exe` on Windows. */
export function installedHostPath(place: Place): string {
  return pathFor(place.platform).join(dataDir(place), place.platform === 'win32' ? 'dnscost-host.exe' : 'dnscost-host');
}

/** Where `browser` reads our manifest for this user. */
export function targetFor(browser: Browser, place: Place): BrowserTarget {
  const p = pathFor(place.platform);
  if (browser === 'firefox') {
    if (place.platform === 'win32') {
      return {
        browser,
        manifestPath: p.join(dataDir(place), 'hosts', 'firefox', MANIFEST_FILE),
        registryKey: `HKCU\\Software\\Mozilla\\NativeMessagingHosts\\${HOST_NAME}`,
        profileDir: p.join(place.appData, 'Mozilla', 'Firefox'),
        custom: false,
      };
    }
    if (place.platform === 'darwin') {
      const support = p.join(place.home, 'Library', 'Application Support');
      return { browser, manifestPath: p.join(support, 'Mozilla', 'NativeMessagingHosts', MANIFEST_FILE), registryKey: null, profileDir: p.join(support, 'Firefox'), custom: false };
    }
    return { browser, manifestPath: p.join(place.home, '.mozilla', 'native-messaging-hosts', MANIFEST_FILE), registryKey: null, profileDir: p.join(place.home, '.mozilla'), custom: false, snapDir: p.join(place.home, 'snap', 'firefox') };
  }
  const layout = CHROMIUM_LAYOUT[browser];
  if (place.platform === 'win32') {
    return {
      browser,
      manifestPath: p.join(dataDir(place), 'hosts', layout.winOwner, MANIFEST_FILE),
      registryKey: `HKCU\\Software\\${layout.winKey}\\NativeMessagingHosts\\${HOST_NAME}`,
      profileDir: p.join(place.localAppData, ...layout.win32),
      custom: false,
    };
  }
  const profileDir = place.platform === 'darwin' ? p.join(place.home, 'Library', 'Application Support', ...layout.darwin) : p.join(place.configHome, ...layout.linux);
  return { browser, manifestPath: p.join(profileDir, 'NativeMessagingHosts', MANIFEST_FILE), registryKey: null, profileDir, custom: false };
}

/** The directories whose existence says the browser has run for this user (its profile, Firefox's snap). */
export function presenceDirs(t: BrowserTarget): string[] {
  return t.snapDir ? [t.profileDir, t.snapDir] : [t.profileDir];
}

/** Where `browser`'s Flatpak build reads our manifest and where its copy of the host goes (Linux only). */
export function flatpakTarget(browser: Browser, place: Place): BrowserTarget | null {
  if (place.platform !== 'linux') return null;
  const p = pathFor(place.platform);
  const app = FLATPAK_APPS[browser];
  const appDir = p.join(place.home, '.var', 'app', app);
  const hosts = browser === 'firefox' ? p.join(appDir, '.mozilla', 'native-messaging-hosts') : p.join(appDir, 'config', ...CHROMIUM_LAYOUT[browser].linux, 'NativeMessagingHosts');
  return { browser, manifestPath: p.join(hosts, MANIFEST_FILE), registryKey: null, profileDir: appDir, custom: false, flatpak: { app, hostDir: p.join(appDir, 'data', 'dnscost') } };
}

/** The target for a Chromium-family browser started with `--user-data-dir=DIR` (it reads DIR/NativeMessagingHosts). */
export function customTarget(browser: ChromiumBrowser, userDataDir: string, platform: Platform): BrowserTarget {
  const p = pathFor(platform);
  return { browser, manifestPath: p.join(userDataDir, 'NativeMessagingHosts', MANIFEST_FILE), registryKey: null, profileDir: userDataDir, custom: true };
}

/** Which browsers a command names: the part of its options that selects targets. */
export interface TargetSelection {
  /** Browsers named by --browser; null means "every browser found". */
  browsers: Browser[] | null;
  userDataDir: string | null;
}

/**
 * The targets the options select, deduplicated by manifest (Brave and Vivaldi share Chrome's on Windows); on Linux each
 * browser's Flatpak build after the others (callers keep it only where that Flatpak is installed).
 */
export function selectTargets(opts: TargetSelection, place: Place): BrowserTarget[] {
  const out: BrowserTarget[] = [];
  const add = (t: BrowserTarget): void => {
    if (!out.some((o) => o.manifestPath === t.manifestPath)) out.push(t);
  };
  const named = opts.browsers ?? (opts.userDataDir ? ['chromium' as const] : [...BROWSERS]);
  for (const b of named) {
    if (opts.userDataDir && b !== 'firefox') add(customTarget(b, opts.userDataDir, place.platform));
    else add(targetFor(b, place));
  }
  if (!opts.userDataDir) for (const b of named) {
    const t = flatpakTarget(b, place);
    if (t) add(t);
  }
  return out;
}
