// What install and uninstall report: one action per file, registry key or directory they touched (or, with
// --dry-run, would touch) and its status, the problems that make the command fail, and the human lines for both.
import type { Browser } from './platform.js';

/** What one install or uninstall step did (or, with --dry-run, would do). */
export interface Action {
  /** `host` and `host-file`: the packaged executable and a file beside it, copied into the data dir. */
  what: Browser | 'launcher' | 'host' | 'host-file' | 'receipt' | 'directory';
  kind: 'file' | 'registry' | 'directory';
  /** A file or directory path, or a registry key. */
  path: string;
  status: 'created' | 'updated' | 'unchanged' | 'removed' | 'scheduled' | 'absent' | 'kept' | 'skipped' | 'would create' | 'would update' | 'would remove' | 'failed';
  detail?: string;
}

/** The outcome of install or uninstall. */
export interface Outcome {
  ok: boolean;
  dryRun: boolean;
  actions: Action[];
  problems: string[];
}

/** Human lines for install/uninstall actions. */
export function formatOutcome(o: Outcome): string {
  const width = Math.max(9, ...o.actions.map((a) => a.what.length));
  const lines = o.actions.map((a) => `${a.what.padEnd(width)}  ${a.status.padEnd(12)}  ${a.kind === 'registry' ? `${a.detail ?? a.path}` : a.path}${a.kind !== 'registry' && a.detail ? `  (${a.detail})` : ''}`);
  for (const p of o.problems) lines.push(`problem: ${p}`);
  return lines.length ? lines.join('\n') + '\n' : '';
}
