// `dnscost-host lab`: the lab is a component of its own (lab/), which the host does not import; from a checkout this
// runs the lab's command (dist/lab/lab-command.js) as a child with the same arguments and terminal. The packaged host
// ships no lab (it needs CoreDNS and certificates from a checkout's scripts/setup).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CHECKOUT } from './paths.js';

/** Runs the lab's own command with `argv`; its exit code (2 when there is no lab to run). */
export async function runLab(argv: string[]): Promise<number> {
  const script = CHECKOUT === null ? null : join(CHECKOUT, 'dist', 'lab', 'lab-command.js');
  if (script === null || !existsSync(script)) {
    process.stderr.write(`dnscost-host: the lab runs from a checkout after scripts/setup (${script ?? 'the packaged host has no lab'})\n`);
    return 2;
  }
  // The child has a process group of its own, so Ctrl-C reaches it once, passed on from here, and it stops its servers.
  const child = spawn(process.execPath, [script, ...argv], { stdio: 'inherit', detached: true });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (c, s) => resolve([c, s])));
  process.off('SIGINT', forward);
  process.off('SIGTERM', forward);
  return code ?? (signal ? 1 : 0);
}
