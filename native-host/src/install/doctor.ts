// `dnscost-host doctor`: checks every selected (or found) browser's registration end to end. It gathers what is there
// (the registry value, the manifest, the launcher it names, node, the host script, the compiled host), hands that to
// the pure verdicts (diagnose.ts) and, when every check so far passes, starts the host as that browser would and asks
// for a real `hello`; each problem comes with the command that fixes it.
import type { HostOptions } from './args.js';
import { presenceDirs, selectTargets, type BrowserTarget } from './browsers.js';
import { besideNames } from '../paths.js';
import { defaultDeps, selfCommand, type Deps } from './deps.js';
import { diagnose, type Check, type Fixes, type Observation } from './diagnose.js';
import { BROWSER_PATH, browserArgs } from './hello-probe.js';
import { parseLauncher } from './launcher.js';
import type { HostManifest } from './manifest.js';
import { pathFor, placeFor, type Browser } from './platform.js';
import { formatCommand } from './shell-words.js';
import { parseRegQuery, regQuery } from './windows-registry.js';

/** One browser's doctor report. */
export interface DoctorEntry {
  browser: Browser;
  manifest: string;
  /** Not found (no profile, no manifest) and not named: skipped. */
  skipped: boolean;
  /** A Flatpak build's app id. */
  flatpak?: string;
  checks: Check[];
}

/** The doctor's whole report. */
export interface DoctorReport {
  ok: boolean;
  entries: DoctorEntry[];
  problems: Check[];
}

/** The command that reinstalls for `target` with the same --home and --chromium-user-data-dir. */
export function fixesFor(target: BrowserTarget, opts: HostOptions, deps: Pick<Deps, 'platform' | 'execPath' | 'hostScript' | 'packaged'>): Fixes {
  const p = pathFor(deps.platform);
  const words = [...selfCommand(deps), 'install', '--browser', target.browser];
  if (opts.homeGiven) words.push('--home', opts.home);
  if (target.custom && opts.userDataDir) words.push('--chromium-user-data-dir', opts.userDataDir);
  const install = formatCommand(deps.platform, words);
  // Packaged, nothing is compiled here: installing again from the archive is the fix.
  if (deps.packaged || !deps.hostScript) return { install, build: install };
  const repo = p.resolve(p.dirname(deps.hostScript), '..', '..');
  return { install, build: `cd ${formatCommand(deps.platform, [repo])} && npx tsc -p tsconfig.json` };
}

/** Checks every selected (or found) browser's registration, down to a real hello through the launcher. */
export async function doctor(opts: HostOptions, deps: Deps = defaultDeps()): Promise<DoctorReport> {
  const place = placeFor(deps.platform, opts.home, deps.env, opts.homeGiven);
  const p = pathFor(deps.platform);
  const explicit = opts.browsers !== null || opts.userDataDir !== null;
  const report: DoctorReport = { ok: true, entries: [], problems: [] };
  for (const target of selectTargets(opts, place)) {
    const fixes = fixesFor(target, opts, deps);
    const obs: Observation = { target, platform: deps.platform, manifestText: null };
    let manifestFile = target.manifestPath;
    if (target.registryKey && deps.platform === 'win32') {
      const q = await deps.run(regQuery(target.registryKey));
      obs.registryValue = q.code === 0 ? parseRegQuery(q.stdout) : null;
      if (obs.registryValue) manifestFile = obs.registryValue;
    }
    obs.manifestText = await deps.fs.readText(manifestFile);
    const flatpak = target.flatpak ? { flatpak: target.flatpak.app } : {};
    // A Flatpak that is not installed is skipped even when its browser is named.
    const present = async (): Promise<boolean> => {
      for (const dir of presenceDirs(target)) if ((await deps.fs.stat(dir)).exists) return true;
      return false;
    };
    if ((!explicit || target.flatpak) && obs.manifestText === null && !obs.registryValue && !(await present())) {
      report.entries.push({ browser: target.browser, manifest: target.manifestPath, skipped: true, checks: [], ...flatpak });
      continue;
    }
    let hostPath: string | null = null;
    try {
      const m = JSON.parse(obs.manifestText ?? 'null') as Partial<HostManifest> | null;
      if (m && typeof m.path === 'string' && p.isAbsolute(m.path)) hostPath = m.path;
    } catch {
      // diagnose reports it
    }
    if (hostPath) {
      obs.hostPath = await deps.fs.stat(hostPath);
      if (obs.hostPath.isFile) {
        obs.launcherText = await deps.fs.readText(hostPath).catch(() => null);
        if (obs.launcherText && obs.launcherText.length > 65536) obs.launcherText = null;
        const l = obs.launcherText ? parseLauncher(deps.platform, obs.launcherText) : null;
        if (l) {
          obs.node = await deps.fs.stat(l.node);
          obs.script = await deps.fs.stat(l.script);
          obs.built = await deps.fs.stat(p.resolve(p.dirname(l.script), '..', '..', 'dist', 'native-host', 'src', 'main.js'));
        } else {
          // The packaged executable: its QUIC companion sits beside it (install copied both).
          obs.companionPath = p.join(p.dirname(hostPath), besideNames(deps.platform).companion);
          obs.companion = await deps.fs.stat(obs.companionPath);
        }
      }
      const before = diagnose(obs, fixes);
      if (before.every((c) => c.ok)) {
        // A browser's environment: a GUI app's PATH is launchd's default on macOS (no Homebrew, no nvm), so node is
        // often not on it; HOME is the user's. Windows browsers pass the user's environment.
        const env: Record<string, string> =
          deps.platform === 'win32'
            ? Object.fromEntries(Object.entries(deps.env).filter((kv): kv is [string, string] => kv[1] !== undefined))
            : { HOME: opts.home, PATH: BROWSER_PATH };
        obs.hello = await deps.hello(hostPath, browserArgs({ ...target, manifestPath: manifestFile }, deps.platform), env, opts.timeoutMs);
      }
    }
    report.entries.push({ browser: target.browser, manifest: manifestFile, skipped: false, checks: diagnose(obs, fixes), ...flatpak });
  }
  const checked = report.entries.filter((e) => !e.skipped);
  if (checked.length === 0) {
    report.problems.push({
      check: 'browsers',
      ok: false,
      detail: `no browser found for ${opts.home} and no dnscost manifest installed`,
      fix: formatCommand(deps.platform, [...selfCommand(deps), 'install', '--browser', 'firefox', ...(opts.homeGiven ? ['--home', opts.home] : [])]),
    });
  }
  report.ok = report.problems.length === 0 && checked.every((e) => e.checks.every((c) => c.ok));
  return report;
}

/** Human lines for the doctor's report. */
export function formatDoctor(r: DoctorReport): string {
  const lines: string[] = [];
  const label = (e: DoctorEntry): string => (e.flatpak ? `${e.browser} (Flatpak ${e.flatpak})` : e.browser);
  const width = Math.max(8, ...r.entries.map((e) => label(e).length));
  for (const e of r.entries) {
    if (e.skipped) {
      lines.push(`${label(e).padEnd(width)}  skipped: not found (no profile, no manifest)`);
      continue;
    }
    lines.push(`${label(e).padEnd(width)}  ${e.manifest}`);
    for (const c of e.checks) {
      lines.push(`  ${c.ok ? 'ok  ' : 'FAIL'}  ${c.check}: ${c.detail}`);
      if (c.fix) lines.push(`        fix: ${c.fix}`);
    }
  }
  for (const c of r.problems) lines.push(`FAIL  ${c.check}: ${c.detail}`, `        fix: ${c.fix}`);
  lines.push(r.ok ? 'all good' : 'problems found');
  return lines.join('\n') + '\n';
}
