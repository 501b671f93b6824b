// Who and where, before any one browser's layout: the browsers the installer knows by name, the three platform
// layouts and the path flavour of each, and the per-user base directories (HOME, the XDG directories, %LOCALAPPDATA%,
// %APPDATA%) that every location in browsers.ts hangs off. Pure: a function of the platform, HOME and environment given.
import path from 'node:path';

/** Browsers install, uninstall and doctor know, by the name `--browser` takes. */
export const BROWSERS = ['firefox', 'chrome', 'chromium', 'brave', 'edge', 'vivaldi'] as const;
/** One of BROWSERS. */
export type Browser = (typeof BROWSERS)[number];
/** The three layouts browsers use (every other Unix lays out like Linux). */
export type Platform = 'linux' | 'darwin' | 'win32';

/** The process's platform as a browser layout. */
export function platformOf(p: NodeJS.Platform): Platform {
  return p === 'darwin' || p === 'win32' ? p : 'linux';
}

/** The path functions of `platform`'s layout (Windows paths on win32, POSIX elsewhere), whatever this machine runs. */
export const pathFor = (platform: Platform): path.PlatformPath => (platform === 'win32' ? path.win32 : path.posix);

/** The per-user base directories the layouts hang off. */
export interface Place {
  platform: Platform;
  home: string;
  /** Linux: $XDG_CONFIG_HOME or ~/.config (Chromium-family user-data dirs live there). */
  configHome: string;
  /** Linux: $XDG_DATA_HOME or ~/.local/share (dnscost's launcher lives there). */
  dataHome: string;
  /** Windows: %LOCALAPPDATA%. */
  localAppData: string;
  /** Windows: %APPDATA%. */
  appData: string;
}

/** The base directories for HOME; the XDG and Windows variables count only when HOME was not given explicitly. */
export function placeFor(platform: Platform, home: string, env: Record<string, string | undefined>, homeGiven: boolean): Place {
  const p = pathFor(platform);
  const fromEnv = (name: string): string | undefined => {
    const v = homeGiven ? undefined : env[name];
    return v && p.isAbsolute(v) ? v : undefined;
  };
  return {
    platform,
    home,
    configHome: fromEnv('XDG_CONFIG_HOME') ?? p.join(home, '.config'),
    dataHome: fromEnv('XDG_DATA_HOME') ?? p.join(home, '.local', 'share'),
    localAppData: fromEnv('LOCALAPPDATA') ?? p.join(home, 'AppData', 'Local'),
    appData: fromEnv('APPDATA') ?? p.join(home, 'AppData', 'Roaming'),
  };
}
