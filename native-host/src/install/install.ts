// `dnscost-host install`: writes the launcher (from a checkout) or copies the packaged executable and the files beside
// it into dnscost's data dir (from the archive, which can be deleted then), one manifest per selected (or found)
// browser naming that, on Windows each browser's registry key, and records every one of them in the receipt
// (receipt.ts has the lifecycle). A file that already holds the same bytes is left as it is, so installing twice
// changes nothing.
import type { HostOptions } from './args.js';
import { installedHostPath, launcherPath, presenceDirs, selectTargets, SNAP_REFUSAL, UNSUPPORTED_SNAPS, type BrowserTarget } from './browsers.js';
import { defaultDeps, type Deps, type PackagedHost } from './deps.js';
import { launcherScript } from './launcher.js';
import { addedIds, manifestText } from './manifest.js';
import type { Action, Outcome } from './outcome.js';
import { BROWSERS, pathFor, placeFor } from './platform.js';
import { readReceipt, receiptPath, type Receipt } from './receipt.js';
import { formatCommand } from './shell-words.js';
import { regAdd } from './windows-registry.js';

async function found(t: BrowserTarget, deps: Deps): Promise<boolean> {
  for (const f of [...presenceDirs(t), t.manifestPath]) if ((await deps.fs.stat(f)).exists) return true;
  return false;
}

/** Writes the launcher, the manifests and (Windows) the registry keys; records them in the receipt. */
export async function install(opts: HostOptions, deps: Deps = defaultDeps()): Promise<Outcome> {
  const place = placeFor(deps.platform, opts.home, deps.env, opts.homeGiven);
  const p = pathFor(deps.platform);
  const explicit = opts.browsers !== null || opts.userDataDir !== null;
  const targets: BrowserTarget[] = [];
  // A Flatpak only where it is installed, even when its browser is named.
  for (const t of selectTargets(opts, place)) if ((explicit && !t.flatpak) || (await found(t, deps))) targets.push(t);
  const outcome: Outcome = { ok: true, dryRun: opts.dryRun, actions: [], problems: [] };
  // Snaps that cannot be registered, said plainly (not a failure: the person may have other browsers).
  for (const browser of UNSUPPORTED_SNAPS) {
    const dir = p.join(opts.home, 'snap', browser);
    if (deps.platform === 'linux' && (opts.browsers ?? [browser]).includes(browser) && (await deps.fs.stat(dir)).exists) {
      outcome.actions.push({ what: browser, kind: 'directory', path: dir, status: 'skipped', detail: SNAP_REFUSAL });
    }
  }
  if (targets.length === 0) {
    outcome.ok = false;
    outcome.problems.push(`no browser found for ${opts.home}: none of ${BROWSERS.join(', ')} has a profile there; name one with --browser`);
    return outcome;
  }
  const launcher = deps.packaged ? installedHostPath(place) : launcherPath(place);
  const receiptFile = receiptPath(place);
  const receipt: Receipt = (await readReceipt(deps.fs, receiptFile)) ?? { version: 1, launcher, dirs: [], entries: [] };
  receipt.launcher = launcher;
  if (deps.packaged) receipt.packaged = true;
  else delete receipt.packaged;
  const union = (a: string[], b: string[]): string[] => [...a, ...b.filter((d) => !a.includes(d))];

  // Writes `data` (text, or the bytes of a file to copy) unless the file already holds it; statuses say which.
  const put = async (what: Action['what'], file: string, data: string | { from: string }, mode?: number): Promise<string[]> => {
    const bytes = typeof data === 'string' ? null : await deps.fs.readBytes(data.from);
    if (typeof data !== 'string' && bytes === null) throw Object.assign(new Error(`${data.from} is missing`), { code: 'ENOENT', path: data.from });
    const before = bytes ? await deps.fs.readBytes(file) : await deps.fs.readText(file);
    const same = before !== null && (bytes ? bytes.equals(before as Buffer) : before === data);
    const status = before === null ? 'created' : same ? 'unchanged' : 'updated';
    if (opts.dryRun) {
      outcome.actions.push({ what, kind: 'file', path: file, status: status === 'unchanged' ? status : (`would ${status === 'created' ? 'create' : 'update'}` as Action['status']) });
      return [];
    }
    const dirs = await deps.fs.mkdirp(p.dirname(file));
    if (status !== 'unchanged') await (bytes ? deps.fs.writeBytes(file, bytes, mode) : deps.fs.writeText(file, data as string, mode));
    else if (mode !== undefined) await deps.fs.chmod(file, mode);
    outcome.actions.push({ what, kind: 'file', path: file, status });
    return dirs;
  };
  try {
    const exec = deps.platform === 'win32' ? undefined : 0o755;
    // Copies the packaged executable to `exe` and the files beside it into its directory: the directories made, the files.
    const copyPackaged = async (pkg: PackagedHost, exe: string): Promise<{ dirs: string[]; files: string[] }> => {
      const dirs = await put('host', exe, { from: pkg.exe }, exec);
      const files = pkg.files.map((f) => p.join(p.dirname(exe), p.basename(f)));
      for (const [i, f] of pkg.files.entries()) await put('host-file', files[i]!, { from: f }, exec);
      return { dirs, files };
    };
    if (deps.packaged) {
      // The copy the manifests name: the archive it came from can go once this is done.
      const copied = await copyPackaged(deps.packaged, launcher);
      receipt.dirs = union(receipt.dirs, copied.dirs);
      receipt.files = copied.files;
    } else {
      receipt.dirs = union(receipt.dirs, await put('launcher', launcher, launcherScript(deps.platform, deps.execPath, deps.hostScript!), exec));
    }
    for (const t of targets) {
      // A Flatpak gets its own copy of the packaged host inside its sandbox; the manifest names that copy.
      let host = launcher;
      const dirs: string[] = [];
      const copies: string[] = [];
      if (t.flatpak) {
        if (!deps.packaged) {
          outcome.actions.push({ what: t.browser, kind: 'file', path: t.manifestPath, status: 'skipped', detail: `Flatpak ${t.flatpak.app}: its sandbox has no node; install the packaged host (scripts/package) to register it` });
          continue;
        }
        host = p.join(t.flatpak.hostDir, p.basename(launcher));
        const copied = await copyPackaged(deps.packaged, host);
        dirs.push(...copied.dirs);
        copies.push(host, ...copied.files);
      }
      // Ids added before (install --extension-id) stay allowed; new ones join them.
      const added = [...addedIds(await deps.fs.readText(t.manifestPath)), ...opts.extensionIds];
      dirs.push(...(await put(t.browser, t.manifestPath, manifestText(t.browser, host, added))));
      if (t.registryKey) {
        const cmd = regAdd(t.registryKey, t.manifestPath);
        const shown = formatCommand('win32', [cmd.file, ...cmd.args]);
        if (opts.dryRun) outcome.actions.push({ what: t.browser, kind: 'registry', path: t.registryKey, status: 'would create', detail: shown });
        else {
          const r = await deps.run(cmd);
          const status = r.code === 0 ? 'created' : 'failed';
          outcome.actions.push({ what: t.browser, kind: 'registry', path: t.registryKey, status, detail: shown });
          if (r.code !== 0) outcome.problems.push(`${shown} failed (exit ${r.code}): ${r.stderr.trim()}`);
        }
      }
      const prior = receipt.entries.find((e) => e.manifest === t.manifestPath);
      const own = copies.length ? { files: copies } : {};
      if (prior) {
        prior.dirs = union(prior.dirs, dirs);
        prior.registryKey = t.registryKey;
        Object.assign(prior, own);
      } else receipt.entries.push({ browser: t.browser, manifest: t.manifestPath, registryKey: t.registryKey, dirs, ...own });
    }
    await put('receipt', receiptFile, JSON.stringify(receipt, null, 2) + '\n');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    outcome.problems.push(`cannot write${e.path ? ` ${e.path}` : ''}: ${e.code ?? e.message}`);
  }
  outcome.ok = outcome.problems.length === 0;
  return outcome;
}
