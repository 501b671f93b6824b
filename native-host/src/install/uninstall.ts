// `dnscost-host uninstall`: removes what install wrote for the selected browsers (all, without --browser): the
// manifests and registry keys the receipt lists, and manifests of ours that still name our launcher when the receipt
// was lost; then the launcher (or the packaged executable and the files copied beside it), the receipt and the
// directories install created, once nothing refers to them. Nothing else is touched: a manifest or registry key
// another installer has taken over since is kept. Run from the installed executable it removes that too: POSIX lets a
// running file be unlinked; Windows does not, so there a detached cmd.exe deletes it once this process has exited.
import type { HostOptions } from './args.js';
import { installedHostPath, launcherPath, selectTargets } from './browsers.js';
import { defaultDeps, type Deps } from './deps.js';
import { parseLauncher } from './launcher.js';
import { isOurManifest } from './manifest.js';
import type { Action, Outcome } from './outcome.js';
import { placeFor } from './platform.js';
import { readReceipt, receiptPath } from './receipt.js';
import { formatCommand } from './shell-words.js';
import { parseRegQuery, regDelete, regQuery } from './windows-registry.js';

/** Removes what install wrote for the selected browsers (all, without --browser), and only that. */
export async function uninstall(opts: HostOptions, deps: Deps = defaultDeps()): Promise<Outcome> {
  const place = placeFor(deps.platform, opts.home, deps.env, opts.homeGiven);
  const receiptFile = receiptPath(place);
  const receipt = await readReceipt(deps.fs, receiptFile);
  const launcher = receipt?.launcher ?? (deps.packaged ? installedHostPath(place) : launcherPath(place));
  const outcome: Outcome = { ok: true, dryRun: opts.dryRun, actions: [], problems: [] };
  const everything = opts.browsers === null && opts.userDataDir === null;
  // Files this process cannot remove while it runs (itself, on Windows), handed to deps.removeAfterExit at the end.
  const deferred: string[] = [];
  const selected = selectTargets(opts, place);
  const entries = receipt?.entries ?? [];
  const chosen = everything ? [...entries] : entries.filter((e) => selected.some((t) => t.manifestPath === e.manifest));
  // Manifests of ours at the selected known places the receipt does not list (it was lost): only those naming our launcher.
  for (const t of selected) {
    if (chosen.some((e) => e.manifest === t.manifestPath)) continue;
    if (isOurManifest(await deps.fs.readText(t.manifestPath), launcher)) chosen.push({ browser: t.browser, manifest: t.manifestPath, registryKey: t.registryKey, dirs: [] });
  }
  // Directories install created, deepest first, once their files are gone; returns those still in use.
  const removeDirs = async (dirs: string[]): Promise<string[]> => {
    const left: string[] = [];
    const depth = (d: string): number => d.split(/[\\/]/).length;
    for (const d of [...new Set(dirs)].sort((a, b) => depth(b) - depth(a))) {
      if (!opts.dryRun && (await deps.fs.removeDirIfEmpty(d))) outcome.actions.push({ what: 'directory', kind: 'directory', path: d, status: 'removed' });
      else left.push(d);
    }
    return left;
  };
  const removeFile = async (what: Action['what'], file: string, ours: ((text: string) => boolean) | 'listed'): Promise<void> => {
    // A file the receipt lists as copied (an executable) is ours by the receipt: no need to read it.
    const text = ours === 'listed' ? ((await deps.fs.stat(file)).exists ? '' : null) : await deps.fs.readText(file);
    if (text === null) return void outcome.actions.push({ what, kind: 'file', path: file, status: 'absent' });
    if (ours !== 'listed' && !ours(text)) return void outcome.actions.push({ what, kind: 'file', path: file, status: 'kept', detail: 'not written by dnscost-host install' });
    if (!opts.dryRun) await deps.fs.removeFile(file);
    outcome.actions.push({ what, kind: 'file', path: file, status: opts.dryRun ? 'would remove' : 'removed' });
  };
  try {
    for (const e of chosen) {
      await removeFile(e.browser, e.manifest, (t) => isOurManifest(t));
      for (const f of e.files ?? []) await removeFile('host-file', f, 'listed');
      if (e.registryKey && deps.platform === 'win32') {
        // Only a key that still names our manifest: another installer may have taken it over since.
        const q = await deps.run(regQuery(e.registryKey));
        const value = q.code === 0 ? parseRegQuery(q.stdout) : null;
        const cmd = regDelete(e.registryKey);
        const shown = formatCommand('win32', [cmd.file, ...cmd.args]);
        if (value === null) outcome.actions.push({ what: e.browser, kind: 'registry', path: e.registryKey, status: 'absent' });
        else if (value !== e.manifest) outcome.actions.push({ what: e.browser, kind: 'registry', path: e.registryKey, status: 'kept', detail: `names ${value}` });
        else if (opts.dryRun) outcome.actions.push({ what: e.browser, kind: 'registry', path: e.registryKey, status: 'would remove', detail: shown });
        else {
          const r = await deps.run(cmd);
          outcome.actions.push({ what: e.browser, kind: 'registry', path: e.registryKey, status: r.code === 0 ? 'removed' : 'failed', detail: shown });
          if (r.code !== 0) outcome.problems.push(`${shown} failed (exit ${r.code}): ${r.stderr.trim()}`);
        }
      }
    }
    // One entry's directories may hold another's (Windows: hosts\firefox and hosts\chrome), so all at once.
    const left = await removeDirs(chosen.flatMap((e) => e.dirs));
    const remaining = entries.filter((e) => !chosen.includes(e));
    if (remaining.length === 0) {
      const self = deps.packaged !== null && deps.platform === 'win32' && deps.packaged.exe.toLowerCase() === launcher.toLowerCase();
      if (receipt?.packaged && self && !opts.dryRun) {
        deferred.push(launcher);
        outcome.actions.push({ what: 'host', kind: 'file', path: launcher, status: 'scheduled', detail: 'deleted once this process exits: Windows keeps a running executable' });
      } else if (receipt?.packaged) await removeFile('host', launcher, 'listed');
      else await removeFile('launcher', launcher, (t) => parseLauncher(deps.platform, t) !== null);
      for (const f of receipt?.files ?? []) await removeFile('host-file', f, 'listed');
      if (receipt) {
        if (!opts.dryRun) await deps.fs.removeFile(receiptFile);
        outcome.actions.push({ what: 'receipt', kind: 'file', path: receiptFile, status: opts.dryRun ? 'would remove' : 'removed' });
        const busy = await removeDirs([...left, ...receipt.dirs]);
        if (deferred.length) deps.removeAfterExit(deferred, busy.filter((d) => deferred.some((f) => f.startsWith(d))));
      }
    } else if (receipt && chosen.length > 0) {
      // Directories still in use by the remaining manifests stay on the receipt, so a later uninstall removes them.
      const dirs = [...receipt.dirs, ...left.filter((d) => !receipt.dirs.includes(d))];
      if (!opts.dryRun) await deps.fs.writeText(receiptFile, JSON.stringify({ ...receipt, dirs, entries: remaining }, null, 2) + '\n');
      outcome.actions.push({ what: 'receipt', kind: 'file', path: receiptFile, status: opts.dryRun ? 'would update' : 'updated', detail: `${remaining.length} manifest(s) still installed` });
    }
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    outcome.problems.push(`cannot remove${e.path ? ` ${e.path}` : ''}: ${e.code ?? e.message}`);
  }
  if (chosen.length === 0 && outcome.problems.length === 0) outcome.actions.push({ what: 'receipt', kind: 'file', path: receiptFile, status: 'absent', detail: 'nothing of dnscost installed here' });
  outcome.ok = outcome.problems.length === 0;
  return outcome;
}
