// Whether the browser that started the host already does DNS over HTTPS: then its lookups do not go to the current
// DNS in plain text, and pricing a switch to DoH would price one that already happened.
import { readlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { BROWSER_DOH_LIMITS, type BrowserDoh, type CurrentDns } from '../../../common/schema.js';
import { targetFor } from '../install/browsers.js';
import { pathFor, placeFor, platformOf, type Browser } from '../install/platform.js';
import { chromiumLocalState, chromiumPolicyValues, firefoxIniProfile, firefoxPolicy, flagValue, jsonObject, macWords, parsePrefsJs, parseRegValues, trrMode, windowsWords, type ChromiumDohFields, type FirefoxDohPolicy, type PrefValue } from './browser-prefs.js';
import { realDeps, type DiscoverDeps } from './discover.js';
import { chromiumUpgrade } from './doh-upgrade.js';
import { chromiumProxy, proxyFromPolicy } from './browser-proxy.js';

/**
 * What finding the browser reads, replaceable in tests. Every read goes through `deps` (tests: browser-doh.test.ts
 * with fixtures); nothing here throws.
 */
export interface BrowserDohDeps extends Pick<DiscoverDeps, 'platform' | 'read' | 'list' | 'run'> {
  /** A symbolic link's target (`/proc/PID/exe`, `/proc/PID/fd/N`), or null. */
  readlink(path: string): string | null;
  env: Record<string, string | undefined>;
  home: string;
  /** The host's parent process id. */
  ppid: number;
}

/** The real machine's reads. */
export const realBrowserDohDeps: BrowserDohDeps = {
  platform: realDeps.platform,
  read: realDeps.read,
  list: realDeps.list,
  run: realDeps.run,
  readlink: (path) => {
    try {
      return readlinkSync(path);
    } catch {
      return null;
    }
  },
  env: process.env,
  home: homedir(),
  ppid: process.ppid,
};

/** Processes looked at, from the parent up. */
export const MAX_ANCESTORS = 5;

/** A process as the walk sees it. */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** Its executable's path (argv[0] where the real path cannot be read). */
  exe: string;
  args: string[];
}

/** The browser that started the host: which, which flavour (install/platform.ts's names) and its process. */
export interface LaunchingBrowser {
  browser: BrowserDoh['browser'];
  flavour: Browser;
  product: string;
  process: ProcessInfo;
}

/** The browser an executable is, by its file name; null for anything else (a shell, node, cmd.exe). */
export function browserOf(exe: string): Omit<LaunchingBrowser, 'process'> | null {
  const path = exe.replace(/\\/g, '/');
  const base = path.slice(path.lastIndexOf('/') + 1).toLowerCase().replace(/\.exe$/, '');
  const chromium = (flavour: Browser, product: string) => ({ browser: 'chromium' as const, flavour, product });
  if (/^firefox(-bin|-esr)?$/.test(base)) return { browser: 'firefox', flavour: 'firefox', product: 'Firefox' };
  if (/^chromium(-browser)?$/.test(base)) return chromium('chromium', 'Chromium');
  // Chrome's binary is `chrome` as is a Chromium build's (and Windows Chromium's chrome.exe): the path tells.
  if (base === 'chrome') return /google/i.test(path) ? chromium('chrome', 'Google Chrome') : chromium('chromium', 'Chromium');
  if (/^google[- ]chrome(-stable|-beta|-unstable| for testing)?$/.test(base)) return chromium('chrome', 'Google Chrome');
  if (/^(msedge|microsoft[- ]edge(-stable|-beta|-dev)?)$/.test(base)) return chromium('edge', 'Microsoft Edge');
  if (/^brave([- ]browser)?$/.test(base)) return chromium('brave', 'Brave');
  if (/^vivaldi(-bin)?$/.test(base)) return chromium('vivaldi', 'Vivaldi');
  return null;
}

function linuxProcess(deps: BrowserDohDeps, pid: number): ProcessInfo | null {
  const stat = deps.read(`/proc/${pid}/stat`);
  const cmdline = deps.read(`/proc/${pid}/cmdline`);
  if (stat === null || cmdline === null) return null;
  // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so count from the last `)`.
  const ppid = Number(stat.slice(stat.lastIndexOf(')') + 1).trim().split(/\s+/)[1]);
  const argv = cmdline.split('\0');
  if (argv.at(-1) === '') argv.pop();
  const exe = deps.readlink(`/proc/${pid}/exe`)?.replace(/ \(deleted\)$/, '') ?? argv[0] ?? '';
  return { pid, ppid: Number.isInteger(ppid) ? ppid : 0, exe, args: argv.slice(1) };
}

async function macProcess(deps: BrowserDohDeps, pid: number): Promise<ProcessInfo | null> {
  const m = /^\s*(\d+)\s+(.*\S)/s.exec((await deps.run('ps', ['-o', 'ppid=,command=', '-p', String(pid)])) ?? '');
  return m ? { pid, ppid: Number(m[1]), ...macWords(m[2]!) } : null;
}

/** The PowerShell walk: one line of JSON per process from `pid` up (one PowerShell start instead of one per level). */
export function windowsWalkScript(pid: number): string {
  return (
    `$p=${pid}; for($i=0; $i -lt ${MAX_ANCESTORS} -and $p -gt 0; $i++){ ` +
    `$w=Get-CimInstance Win32_Process -Filter ('ProcessId=' + $p); if(-not $w){ break }; ` +
    `[pscustomobject]@{pid=$p; ppid=[int]$w.ParentProcessId; exe=$w.ExecutablePath; cmd=$w.CommandLine} | ConvertTo-Json -Compress; ` +
    `$p=[int]$w.ParentProcessId }`
  );
}

/** The processes the PowerShell walk printed. */
export function parseWindowsWalk(stdout: string): ProcessInfo[] {
  const out: ProcessInfo[] = [];
  for (const line of stdout.split(/\r?\n/)) {
    try {
      const o = JSON.parse(line) as { pid?: unknown; ppid?: unknown; exe?: unknown; cmd?: unknown };
      const words = typeof o.cmd === 'string' ? windowsWords(o.cmd) : [];
      if (typeof o.pid !== 'number') continue;
      out.push({ pid: o.pid, ppid: typeof o.ppid === 'number' ? o.ppid : 0, exe: typeof o.exe === 'string' && o.exe ? o.exe : (words[0] ?? ''), args: words.slice(1) });
    } catch {
      // Not a line of the walk (a PowerShell warning).
    }
  }
  return out;
}

/**
 * The browser among the host's parent and its ancestors (at most MAX_ANCESTORS), or null. Which browser: the host's
 * parent, or an ancestor up to MAX_ANCESTORS up (a launcher script or cmd.exe may sit between), whose executable is
 * Chromium, Chrome, Edge, Brave, Vivaldi or Firefox — Linux from /proc/PID/{stat,cmdline,exe}, macOS from `ps`,
 * Windows from one PowerShell walk over Win32_Process.
 */
export async function findLaunchingBrowser(deps: BrowserDohDeps = realBrowserDohDeps): Promise<LaunchingBrowser | null> {
  const found = (p: ProcessInfo): LaunchingBrowser | null => {
    const b = browserOf(p.exe);
    return b ? { ...b, process: p } : null;
  };
  if (deps.platform === 'win32') {
    const out = await deps.run('powershell', ['-NoProfile', '-NonInteractive', '-Command', windowsWalkScript(deps.ppid)]);
    for (const p of parseWindowsWalk(out ?? '')) {
      const b = found(p);
      if (b) return b;
    }
    return null;
  }
  let pid = deps.ppid;
  for (let i = 0; i < MAX_ANCESTORS && pid > 1; i++) {
    const p = deps.platform === 'darwin' ? await macProcess(deps, pid) : linuxProcess(deps, pid);
    if (!p) return null;
    const b = found(p);
    if (b) return b;
    pid = p.ppid;
  }
  return null;
}

/** Where each Chromium flavour's Linux policies live (its documentation's paths; Vivaldi documents none). */
const LINUX_POLICY_DIRS: Record<Exclude<Browser, 'firefox'>, string[]> = {
  chromium: ['/etc/chromium/policies', '/etc/chromium-browser/policies'],
  chrome: ['/etc/opt/chrome/policies'],
  edge: ['/etc/opt/edge/policies'],
  brave: ['/etc/brave/policies'],
  vivaldi: [],
};
/** Each flavour's Windows policy key under HKLM/HKCU\SOFTWARE\Policies. */
const WINDOWS_POLICY_KEYS: Record<Exclude<Browser, 'firefox'>, string | null> = {
  chromium: 'Chromium',
  chrome: 'Google\\Chrome',
  edge: 'Microsoft\\Edge',
  brave: 'BraveSoftware\\Brave',
  vivaldi: null,
};

/** One setting and where it was read. */
interface Found<T> {
  value: T;
  source: string;
  setBy: BrowserDoh['setBy'];
}

/** Each field from the first source that sets it. */
function firstOf(sources: Array<{ fields: ChromiumDohFields; source: string; setBy: BrowserDoh['setBy'] }>): { mode?: Found<NonNullable<ChromiumDohFields['mode']>>; templates?: Found<string[]> } {
  const mode = sources.find((s) => s.fields.mode !== undefined);
  const templates = sources.find((s) => s.fields.templates !== undefined);
  return {
    ...(mode ? { mode: { value: mode.fields.mode!, source: mode.source, setBy: mode.setBy } } : {}),
    ...(templates ? { templates: { value: templates.fields.templates!, source: templates.source, setBy: templates.setBy } } : {}),
  };
}

/** The policy files of one Linux level (`managed` or `recommended`), the last file by name first (it wins). */
/** A Chromium policy, as read: its values (null when unreadable) and where. */
interface Policy {
  values: Record<string, unknown> | null;
  source: string;
}

/** The policy files of one Linux level (`managed` or `recommended`), the last file by name first (it wins). */
function linuxPolicies(deps: BrowserDohDeps, flavour: Exclude<Browser, 'firefox'>, level: 'managed' | 'recommended'): Policy[] {
  return LINUX_POLICY_DIRS[flavour]
    .flatMap((dir) => deps.list(`${dir}/${level}`).filter((f) => f.endsWith('.json')).map((f) => `${dir}/${level}/${f}`))
    .reverse()
    .map((path) => ({ values: jsonObject(deps.read(path)), source: path }));
}

/** The mandatory policies in force first: Linux's managed files, Windows' HKLM then HKCU keys; none elsewhere. */
async function mandatoryPolicies(deps: BrowserDohDeps, flavour: Exclude<Browser, 'firefox'>): Promise<Policy[]> {
  if (deps.platform === 'linux') return linuxPolicies(deps, flavour, 'managed');
  const key = deps.platform === 'win32' ? WINDOWS_POLICY_KEYS[flavour] : null;
  if (!key) return [];
  const out: Policy[] = [];
  for (const hive of ['HKLM', 'HKCU']) {
    const path = `${hive}\\SOFTWARE\\Policies\\${key}`;
    out.push({ values: parseRegValues((await deps.run('reg', ['query', path])) ?? ''), source: path });
  }
  return out;
}

const dohFields = (policies: Policy[]) => policies.map((p) => ({ fields: chromiumPolicyValues(p.values), source: p.source, setBy: 'policy' as const }));

/** What the DNS servers Chromium itself sees are: the stub behind a local one, else the current DNS's servers. */
function serversChromiumSees(current: Pick<CurrentDns, 'servers' | 'stub'> | null): string[] {
  if (!current) return [];
  return current.stub ? [current.stub.address] : current.servers.map((s) => s.address);
}

/**
 * A Chromium-family browser's settings, in the browser's own order of precedence: the mandatory policy (Linux
 * /etc/<flavour>/policies/managed/*.json, the last file by name winning; Windows HKLM then
 * HKCU\SOFTWARE\Policies\<vendor>; macOS managed preferences are binary plists and are not read), else
 * `Local State` in the user-data dir (`--user-data-dir`, else the flavour's default), else the recommended policy
 * (Linux), else Chromium's default, `automatic`. Automatic without templates upgrades only when a DNS server it sees
 * is in its table (doh-upgrade.ts); behind a local stub it sees the stub, never upgraded.
 */
async function chromiumDoh(b: LaunchingBrowser, current: Pick<CurrentDns, 'servers' | 'stub'> | null, mandatory: Policy[], deps: BrowserDohDeps): Promise<BrowserDoh> {
  const flavour = b.flavour as Exclude<Browser, 'firefox'>;
  const platform = platformOf(deps.platform);
  const p = pathFor(platform);
  const userDataDir = flagValue(b.process.args, 'user-data-dir') ?? targetFor(flavour, placeFor(platform, deps.home, deps.env, false)).profileDir;
  const localState = p.join(userDataDir, 'Local State');
  const fields = firstOf([
    ...dohFields(mandatory),
    { fields: chromiumLocalState(deps.read(localState)), source: localState, setBy: 'settings' },
    ...(platform === 'linux' ? dohFields(linuxPolicies(deps, flavour, 'recommended')) : []),
  ]);
  const mode = fields.mode?.value ?? 'automatic';
  const where = { source: fields.mode?.source ?? 'default', setBy: fields.mode?.setBy ?? ('default' as const) };
  const base = { browser: 'chromium' as const, product: b.product, mode, ...where, upgradedFrom: null };
  const templates = fields.templates?.value ?? [];
  if (mode === 'off') return { ...base, active: false, templates: [], fallback: false };
  if (mode === 'secure') return { ...base, active: true, templates, fallback: false };
  if (templates.length) return { ...base, active: true, templates, fallback: true };
  const upgrade = chromiumUpgrade(serversChromiumSees(current));
  return { ...base, active: upgrade !== null, templates: upgrade?.templates ?? [], fallback: true, upgradedFrom: upgrade?.from ?? null };
}

/** Firefox's directory of profiles (where profiles.ini is) for this user. */
function firefoxRoot(deps: BrowserDohDeps): string {
  const platform = platformOf(deps.platform);
  const p = pathFor(platform);
  const place = placeFor(platform, deps.home, deps.env, false);
  if (platform === 'win32') return p.join(place.appData, 'Mozilla', 'Firefox');
  if (platform === 'darwin') return p.join(deps.home, 'Library', 'Application Support', 'Firefox');
  return p.join(deps.home, '.mozilla', 'firefox');
}

/** The profile directory the Firefox process runs with, or null when it cannot be told. */
export function firefoxProfile(b: LaunchingBrowser, deps: BrowserDohDeps): string | null {
  const p = pathFor(platformOf(deps.platform));
  const given = flagValue(b.process.args, 'profile');
  if (given) return given;
  const root = firefoxRoot(deps);
  const ini = deps.read(p.join(root, 'profiles.ini'));
  const named = flagValue(b.process.args, 'P');
  const resolve = (e: { path: string; relative: boolean } | null) => (e ? (e.relative ? p.join(root, e.path) : e.path) : null);
  if (named) return resolve(firefoxIniProfile(ini, named));
  if (deps.platform === 'linux') {
    // Firefox holds its profile's .parentlock open (fcntl lock) while it runs.
    for (const fd of deps.list(`/proc/${b.process.pid}/fd`)) {
      const target = deps.readlink(`/proc/${b.process.pid}/fd/${fd}`);
      if (target?.endsWith('/.parentlock')) return p.dirname(target);
    }
  }
  return resolve(firefoxIniProfile(ini));
}

/** The DNSOverHTTPS policy in force and its file: the system one on Linux when present, else the install's. */
function firefoxPolicies(b: LaunchingBrowser, deps: BrowserDohDeps): { policy: FirefoxDohPolicy | null; source: string } | null {
  const p = pathFor(platformOf(deps.platform));
  const dir = p.dirname(b.process.exe);
  // A macOS bundle keeps distribution/ in Contents/Resources, beside Contents/MacOS where the executable is.
  const install = deps.platform === 'darwin' && p.basename(dir) === 'MacOS' ? p.join(dir, '..', 'Resources') : dir;
  const files = [...(deps.platform === 'linux' ? ['/etc/firefox/policies/policies.json'] : []), p.join(install, 'distribution', 'policies.json')];
  for (const source of files) {
    const text = deps.read(source);
    // The first file that exists is the one Firefox reads, even when it says nothing of DNS.
    if (text !== null) return { policy: firefoxPolicy(text), source };
  }
  return null;
}

/**
 * Firefox's settings, in the browser's own order of precedence: the profile (`-profile DIR`, `-P NAME`, on Linux the
 * profile whose `.parentlock` the process holds open, else profiles.ini's default) and its `prefs.js` then `user.js`;
 * the DNSOverHTTPS policy (Linux /etc/firefox/policies/policies.json, else `distribution/policies.json` beside the
 * executable; the Windows registry form is not read) sets Firefox's *default* values, which the person's own prefs
 * override unless the policy is Locked. Mode 0 defers to Mozilla's rollout (`doh-rollout.mode`); the server is
 * `network.trr.uri`, else `doh-rollout.uri`, else the policy's; Firefox's built-in default server is not guessed.
 */
function firefoxDoh(b: LaunchingBrowser, deps: BrowserDohDeps): BrowserDoh {
  const p = pathFor(platformOf(deps.platform));
  const profile = firefoxProfile(b, deps);
  const files = profile ? [p.join(profile, 'user.js'), p.join(profile, 'prefs.js')] : [];
  // user.js is read after prefs.js, so its values win: look there first.
  const prefs = files.map((source) => ({ source, values: parsePrefsJs(deps.read(source)) }));
  const pref = (name: string): Found<PrefValue> | undefined => {
    const hit = prefs.find((f) => f.values.has(name));
    return hit ? { value: hit.values.get(name)!, source: hit.source, setBy: name.startsWith('doh-rollout.') ? 'rollout' : 'settings' } : undefined;
  };
  const pol = firefoxPolicies(b, deps);
  const policy = pol?.policy ?? null;
  const policyMode = policy?.enabled === undefined ? undefined : policy.enabled ? (policy.fallback === false ? 3 : 2) : 5;
  const byPolicy = <T>(value: T | undefined): Found<T> | undefined => (value === undefined ? undefined : { value, source: pol!.source, setBy: 'policy' });
  const own = pref('network.trr.mode');
  let mode: Found<0 | 2 | 3 | 5> | undefined = policy?.locked && policyMode !== undefined ? byPolicy(policyMode) : own ? { ...own, value: trrMode(own.value)! } : byPolicy(policyMode);
  if (!mode || mode.value === 0) {
    const rollout = pref('doh-rollout.mode');
    const rolled = rollout ? trrMode(rollout.value)! : 0;
    if (rollout && rolled !== 0) mode = { ...rollout, value: rolled };
  }
  const ownUri = pref('network.trr.uri');
  const rolloutUri = pref('doh-rollout.uri');
  const uri = policy?.locked && policy.providerUrl ? policy.providerUrl : [ownUri?.value, rolloutUri?.value, policy?.providerUrl].find((u): u is string => typeof u === 'string' && /^https:\/\//i.test(u));
  const m = mode?.value ?? 0;
  const base = { browser: 'firefox' as const, product: b.product, source: mode?.source ?? 'default', setBy: mode?.setBy ?? ('default' as const), upgradedFrom: null };
  if (m === 2) return { ...base, mode: 'automatic', active: true, templates: uri ? [uri] : [], fallback: true };
  if (m === 3) return { ...base, mode: 'secure', active: true, templates: uri ? [uri] : [], fallback: false };
  return { ...base, mode: 'off', active: false, templates: [], fallback: false };
}

/** A BrowserDoh within the hello's limits (common/schema.ts), so no odd setting can make the hello invalid. */
function bounded(d: BrowserDoh): BrowserDoh {
  const L = BROWSER_DOH_LIMITS;
  return {
    ...d,
    product: d.product.slice(0, L.product),
    templates: d.templates.filter((t) => t.length > 0 && t.length <= L.template).slice(0, L.templates),
    source: d.source.length > L.source ? `…${d.source.slice(-(L.source - 1))}` : d.source || 'default',
    ...(d.proxy ? { proxy: d.proxy.length > L.source ? `…${d.proxy.slice(-(L.source - 1))}` : d.proxy } : {}),
  };
}

/** The DoH settings of a browser found by findLaunchingBrowser, given the current DNS (for Chromium's upgrade). */
export async function readBrowserDoh(b: LaunchingBrowser, current: Pick<CurrentDns, 'servers' | 'stub'> | null, deps: BrowserDohDeps = realBrowserDohDeps): Promise<BrowserDoh> {
  if (b.browser === 'firefox') return bounded(firefoxDoh(b, deps));
  // The mandatory policies, read once: they set both the DoH mode and the proxy.
  const mandatory = await mandatoryPolicies(deps, b.flavour as Exclude<Browser, 'firefox'>);
  const proxy = await chromiumProxy(b.process.args, mandatory.map((p) => proxyFromPolicy(p.values, p.source)), deps).catch(() => null);
  return bounded({ ...(await chromiumDoh(b, current, mandatory, deps)), ...(proxy ? { proxy } : {}) });
}

/**
 * The DNS over HTTPS of the browser that started this host; null when no browser did (a terminal, doctor, a test) or
 * it could not be told. Never throws: anything unexpected is null.
 */
export async function discoverBrowserDoh(current: Promise<CurrentDns | null> | CurrentDns | null, deps: BrowserDohDeps = realBrowserDohDeps): Promise<BrowserDoh | null> {
  try {
    const [b, dns] = await Promise.all([findLaunchingBrowser(deps), current]);
    return b ? await readBrowserDoh(b, dns, deps) : null;
  } catch {
    return null;
  }
}
