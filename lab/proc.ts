// Processes as Linux's /proc shows them, for benchmarks and tests that count a service's processes (a browser's tree,
// a collector's workers): who is below whom, and how much CPU each has used.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** The fields of /proc/PID/stat after the command, which is in parentheses and may itself hold spaces. */
function statFields(pid: number | string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** `pid` and every process below it. */
export function processTree(pid: number): Set<number> {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const ppid = Number(statFields(name)[1]);
      (children.get(ppid) ?? children.set(ppid, []).get(ppid)!).push(Number(name));
    } catch { /* it exited */ }
  }
  const tree = new Set<number>([pid]);
  for (const p of tree) for (const c of children.get(p) ?? []) tree.add(c);
  return tree;
}

let tickMs: number | null = null;

/** CPU time (user + system) of process `pid` so far, in ms; throws when it is gone. */
export function cpuMs(pid: number): number {
  tickMs ??= 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  const f = statFields(pid);
  return (Number(f[11]) + Number(f[12])) * tickMs;
}

/** CPU time of `pid` and every process below it so far, in ms (a process gone meanwhile counts nothing). */
export function treeCpuMs(pid: number): number {
  let total = 0;
  for (const p of processTree(pid)) {
    try {
      total += cpuMs(p);
    } catch { /* it exited */ }
  }
  return total;
}
