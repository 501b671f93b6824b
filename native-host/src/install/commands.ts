// `dnscost-host install | uninstall | doctor`: registers the native messaging host with each browser for this user,
// takes exactly that registration away again, and checks one end to end (down to a real `hello`). These are the entry
// points main.ts wires: each parses its arguments, runs its command, prints the outcome (human lines or --json) and
// returns the exit code. The rest of this folder is one file per role; this file only connects them.
import { parseHostArgs } from './args.js';
import { defaultDeps, type Deps } from './deps.js';
import { doctor, formatDoctor } from './doctor.js';
import { install } from './install.js';
import { formatOutcome } from './outcome.js';
import { uninstall } from './uninstall.js';

/** `dnscost-host install ARGS`: exit 0 when everything was written, 1 when something could not be. */
export async function runInstall(argv: string[], deps: Deps = defaultDeps()): Promise<number> {
  const opts = parseHostArgs('install', argv, deps);
  const o = await install(opts, deps);
  deps.out(opts.json ? JSON.stringify(o) + '\n' : formatOutcome(o));
  return o.ok ? 0 : 1;
}

/** `dnscost-host uninstall ARGS`: exit 0 when everything of ours is gone, 1 when something could not be removed. */
export async function runUninstall(argv: string[], deps: Deps = defaultDeps()): Promise<number> {
  const opts = parseHostArgs('uninstall', argv, deps);
  const o = await uninstall(opts, deps);
  deps.out(opts.json ? JSON.stringify(o) + '\n' : formatOutcome(o));
  return o.ok ? 0 : 1;
}

/** `dnscost-host doctor ARGS`: exit 0 when every checked browser is fine, 1 when a problem was found. */
export async function runDoctor(argv: string[], deps: Deps = defaultDeps()): Promise<number> {
  const opts = parseHostArgs('doctor', argv, deps);
  const r = await doctor(opts, deps);
  deps.out(opts.json ? JSON.stringify(r) + '\n' : formatDoctor(r));
  return r.ok ? 0 : 1;
}
