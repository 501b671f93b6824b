// Whether the Chromium-family browser that started the host sends its requests through a proxy (issue 26 item 1).
// Then the proxy resolves the page's names and the person's own DNS never sees them: dnscost must not send them there
// in clear text either. Firefox says so per request (webRequest's proxyInfo: PageRecord.proxied); Chromium does not,
// so the host reads the browser's configuration in Chromium's own order: the proxy policy, else the command line, else
// the system's settings (Linux: GNOME's proxy mode in a GNOME-like desktop, else the proxy environment; macOS:
// `scutil --proxy`; Windows: Internet Settings; KDE's own settings are not read). A fixed proxy or a PAC script counts; auto-detection (WPAD, on by default in Windows) does not:
// it mostly finds none, and counting it would take every such person's baseline away. Pure parsers plus one reader.
import { jsonObject } from './browser-prefs.js';

/** What one source says: a proxy (and where that was read), direct, or nothing (the next source decides). */
export type ProxyFinding = { proxy: string } | 'direct' | null;

/** Chromium's proxy policy values (ProxyMode, ProxyServer, ProxyPacUrl, or their ProxySettings dictionary). */
export function proxyFromPolicy(values: Record<string, unknown> | null, source: string): ProxyFinding {
  if (!values) return null;
  // A JSON file holds the ProxySettings dictionary as an object, the Windows registry as JSON text.
  const settings = typeof values.ProxySettings === 'string' ? jsonObject(values.ProxySettings) : values.ProxySettings;
  const nested = typeof settings === 'object' && settings !== null ? (settings as Record<string, unknown>) : {};
  const pick = (k: string) => (typeof nested[k] === 'string' ? nested[k] : values[k]);
  const mode = pick('ProxyMode');
  const server = pick('ProxyServer');
  const pac = pick('ProxyPacUrl');
  if (mode === 'direct') return 'direct';
  if (mode === 'system' || mode === 'auto_detect') return null;
  if (mode === 'fixed_servers' || mode === 'pac_script') return { proxy: `${source} (ProxyMode ${mode})` };
  if ((typeof server === 'string' && server.trim()) || (typeof pac === 'string' && pac.trim())) return { proxy: `${source} (${typeof server === 'string' && server.trim() ? 'ProxyServer' : 'ProxyPacUrl'})` };
  return null;
}

/** The command line: `--no-proxy-server`, else `--proxy-server=…` or `--proxy-pac-url=…`. */
export function proxyFromFlags(args: readonly string[]): ProxyFinding {
  if (args.includes('--no-proxy-server')) return 'direct';
  for (const flag of ['proxy-server', 'proxy-pac-url']) {
    const v = args.find((a) => a.startsWith(`--${flag}=`))?.slice(flag.length + 3).trim();
    if (v && v !== 'direct://') return { proxy: `the command line (--${flag})` };
  }
  return null;
}

/** The proxy environment Chromium reads on Linux without a desktop's own settings (http_proxy and the like). */
export function proxyFromEnv(env: Record<string, string | undefined>): ProxyFinding {
  for (const name of ['https_proxy', 'http_proxy', 'all_proxy', 'HTTPS_PROXY', 'HTTP_PROXY', 'ALL_PROXY']) {
    if (env[name]?.trim()) return { proxy: `the environment (${name})` };
  }
  return null;
}

/** `gsettings get org.gnome.system.proxy mode`: 'manual' or 'auto' (a PAC URL) is a proxy, 'none' direct. */
export function proxyFromGnome(stdout: string | null): ProxyFinding {
  const mode = stdout?.trim().replace(/^'|'$/g, '');
  if (mode === 'none') return 'direct';
  return mode === 'manual' || mode === 'auto' ? { proxy: `GNOME's proxy settings (${mode})` } : null;
}

/** `scutil --proxy` (macOS): an enabled HTTP, HTTPS or SOCKS proxy, or a PAC URL. */
export function proxyFromScutil(stdout: string | null): ProxyFinding {
  if (!stdout) return null;
  const on = ['HTTPEnable', 'HTTPSEnable', 'SOCKSEnable', 'ProxyAutoConfigEnable'].find((k) => new RegExp(`^\\s*${k}\\s*:\\s*1\\s*$`, 'm').test(stdout));
  return on ? { proxy: `macOS's proxy settings (${on})` } : 'direct';
}

/** `reg query "HKCU\...\Internet Settings"` (Windows): ProxyEnable 0x1, or an AutoConfigURL. */
export function proxyFromInternetSettings(stdout: string | null): ProxyFinding {
  if (!stdout) return null;
  if (/^\s+ProxyEnable\s+REG_DWORD\s+0x0*1\s*$/m.test(stdout)) return { proxy: "Windows' Internet Settings (ProxyEnable)" };
  if (/^\s+AutoConfigURL\s+REG_SZ\s+\S/m.test(stdout)) return { proxy: "Windows' Internet Settings (AutoConfigURL)" };
  return 'direct';
}

/** What finding reads (browser-doh.ts's deps). */
export interface ProxyDeps {
  platform: NodeJS.Platform;
  env: Record<string, string | undefined>;
  run(cmd: string, args: string[]): Promise<string | null>;
}

const INTERNET_SETTINGS = 'HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Internet Settings';

/**
 * Where the Chromium running with `args` was found to use a proxy, or null (direct, or nothing says). `policies`: the
 * proxy findings of its mandatory policies, first in force first (browser-doh.ts reads the same files as for DoH).
 */
export async function chromiumProxy(args: readonly string[], policies: readonly ProxyFinding[], deps: ProxyDeps): Promise<string | null> {
  const system = async (): Promise<ProxyFinding> => {
    if (deps.platform === 'darwin') return proxyFromScutil(await deps.run('scutil', ['--proxy']));
    if (deps.platform === 'win32') return proxyFromInternetSettings(await deps.run('reg', ['query', INTERNET_SETTINGS]));
    // Chromium reads GNOME's settings only in a GNOME-like desktop, the environment otherwise.
    const gnome = /GNOME|Unity|Pantheon|Cinnamon|Budgie/i.test(deps.env.XDG_CURRENT_DESKTOP ?? '');
    return (gnome ? proxyFromGnome(await deps.run('gsettings', ['get', 'org.gnome.system.proxy', 'mode'])) : null) ?? proxyFromEnv(deps.env);
  };
  const found = policies.find((f) => f !== null) ?? proxyFromFlags(args) ?? (await system());
  return found && found !== 'direct' ? found.proxy : null;
}
