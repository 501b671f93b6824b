// The validation command's options (scripts/validate, node dist/bench/validate/main.js): parsed and checked into
// ValidationOptions plus what to do with the result, with the usage text. The old spellings still work (--profiles,
// --browser chromium, --transports do53,dot,doh: Do53 is always the baseline).
import { parseArgs } from 'node:util';
import type { RecordingBrowser } from '../../common/browser-queries.js';
import { parseProfileList } from '../../lab/profiles.js';
import { SMOKE_OPTION } from '../smoke.js';
import { BROWSERS, CANDIDATES, CONTROLS, DOT_STUBS, SCENARIOS, type Candidate, type Control, type DotStub, type Scenario, type ValidationOptions } from './types.js';

/** The usage text. */
export const USAGE = `usage: scripts/validate [options]          (as root; runs scripts/setup first, then dist/bench/validate/main.js)
  --browser chromium,firefox      browsers (default both)
  --pages 1,10,30,100|none        synthetic pages by host count (default all four; none when only --har is given)
  --har FILE,FILE…                HAR files, each page rebuilt in the lab (may be repeated)
  --profile NAME,NAME…|SPEC       network profiles (default fiber,dsl,4g,3g); a custom one as
                                  rtt=MS,jitter=MS,loss=PCT,down=MBIT,up=MBIT, one per --profile (may be repeated)
  --scenario cold,warm,expected   connection states (default all three)
  --transports dot,doh,doq        candidates, each against the Do53 baseline (default all three)
  --controls do53,dot             A/A controls: a second series of Do53 loads against Do53, of DoT against DoT (true
                                  change 0: they test the interval); default none
  --loads N                       loads per side of every row, fixed before the run (default 20)
  --dot-stub unbound|stubby       the machine's DoT stub (default unbound)
  --stub-nodelay                  force TCP_NODELAY on the DoT stub's sockets (an LD_PRELOAD shim; needs gcc)
  --server-idle S                 the lab resolver's idle timeout for encrypted connections (default: 1.5 × the DoT
                                  stub's own when a trace runs DoT, else 20 s)
  --repeat N --seed N             replay repeats per Do53 visit (default 1); the seed of every order (default 1)
  --out REPORT.md --json ROWS.json --raw RAW.json[.gz]   (a raw file named .gz is gzipped)
  --from RAW.json[,RAW.json…]     recompute predictions, rows and the report from raw files, merged (no loads;
                                  runs of one profile count as one, so a later run can add loads to its rows)
  --queue FILE [--chunks N]       run a queue of chunks: each line of FILE holds one chunk's options (with --raw
                                  RAW.json.gz; # starts a comment); chunks whose raw file exists are done and skipped,
                                  so a stopped queue resumes where it was; at most N chunks this time (default all)
  --smoke                         Chromium, fiber, the 1-host page, cold, every candidate and control, 2 loads a
                                  side: shows the validation still runs (tests/browser/bench-smoke.test.ts); writes
                                  nothing
`;

/** What the command does: run (or re-read) and where the results go. */
export interface Command {
  options: ValidationOptions;
  from?: string;
  raw?: string;
  out?: string;
  json?: string;
  help: boolean;
  /** --smoke: fail when any load failed. */
  smoke: boolean;
  /** --queue: the file of chunks, and how many to run now (null: all). */
  queue?: { file: string; chunks: number | null };
}

const csv = (s: string | undefined): string[] => (s ?? '').split(',').map((x) => x.trim()).filter(Boolean);
const all = (v: string | string[] | undefined): string[] => [v ?? []].flat().flatMap(csv);

function picks<T extends string>(what: string, values: string[], known: readonly T[]): T[] {
  for (const v of values) if (!(known as readonly string[]).includes(v)) throw new Error(`${what}: unknown "${v}" (${known.join(', ')})`);
  return [...new Set(values)] as T[];
}

function count(what: string, v: string | undefined, fallback: number, min = 1): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`${what}: "${v}" is not a whole number ≥ ${min}`);
  return n;
}

/** Parses the command line (throws with a clear message on a bad option). */
export function parseCommand(argv: string[]): Command {
  const { values } = parseArgs({
    args: argv,
    options: {
      browser: { type: 'string', multiple: true }, browsers: { type: 'string', multiple: true },
      pages: { type: 'string' }, har: { type: 'string', multiple: true },
      profile: { type: 'string', multiple: true }, profiles: { type: 'string', multiple: true },
      scenario: { type: 'string', multiple: true }, scenarios: { type: 'string', multiple: true },
      transports: { type: 'string', multiple: true }, controls: { type: 'string', multiple: true },
      loads: { type: 'string' }, 'min-loads': { type: 'string' }, repeat: { type: 'string' }, seed: { type: 'string' },
      'dot-stub': { type: 'string' }, 'stub-nodelay': { type: 'boolean', default: false }, 'server-idle': { type: 'string' },
      raw: { type: 'string' }, from: { type: 'string' }, out: { type: 'string' }, json: { type: 'string' },
      queue: { type: 'string' }, chunks: { type: 'string' },
      help: { type: 'boolean', default: false },
      ...SMOKE_OPTION,
    },
  });
  if (values.smoke) {
    if (values.out || values.json || values.raw || values.from) throw new Error('--smoke writes nothing: no --out, --json, --raw or --from with it');
    Object.assign(values, { browser: ['chromium'], browsers: [], profile: ['fiber'], profiles: [], pages: '1', har: [], scenario: ['cold'], scenarios: [], transports: [], controls: ['do53', 'dot'], loads: '2' });
  }
  const browsers = picks<RecordingBrowser>('--browser', all([...(values.browser ?? []), ...(values.browsers ?? [])]), BROWSERS);
  const hars = all(values.har);
  const pages = values.pages === 'none' ? [] : csv(values.pages ?? (hars.length ? '' : '1,10,30,100')).map((p) => {
    const n = Number(p);
    if (!Number.isInteger(n) || n < 1 || n > 500) throw new Error(`--pages: "${p}" is not a host count 1…500`);
    return n;
  });
  const profileValues = [...(values.profile ?? []), ...(values.profiles ?? [])];
  const profiles = (profileValues.length ? profileValues : ['fiber,dsl,4g,3g']).flatMap(parseProfileList);
  const scenarios = picks<Scenario>('--scenario', all([...(values.scenario ?? []), ...(values.scenarios ?? [])]), SCENARIOS);
  // Do53 is the baseline of every row: naming it (the old spelling) is allowed and changes nothing.
  const transports = picks<Candidate>('--transports', all(values.transports).filter((t) => t !== 'do53'), CANDIDATES);
  if (values['min-loads'] !== undefined) throw new Error('--min-loads is gone: every row gets exactly --loads loads a side, fixed before the run');
  const loads = count('--loads', values.loads, 20, 2);
  // A control is named by its path (do53, dot) or its side (do53-aa, dot-aa).
  const controls = picks<Control>('--controls', all(values.controls).map((c) => (c.endsWith('-aa') ? c : `${c}-aa`)), CONTROLS);
  const dotStub = picks<DotStub>('--dot-stub', csv(values['dot-stub'] ?? 'unbound'), DOT_STUBS)[0]!;
  const options: ValidationOptions = {
    browsers: browsers.length ? browsers : [...BROWSERS],
    profiles,
    pages,
    hars,
    scenarios: scenarios.length ? scenarios : [...SCENARIOS],
    transports: transports.length ? transports : [...CANDIDATES],
    controls,
    loads,
    repeat: count('--repeat', values.repeat, 1),
    seed: count('--seed', values.seed, 1, 0),
    dotStub,
    stubNoDelay: values['stub-nodelay'] ?? false,
    ...(values['server-idle'] !== undefined ? { serverIdleS: count('--server-idle', values['server-idle'], 0) } : {}),
  };
  if (!options.pages.length && !options.hars.length && !values.from && !values.help && !values.queue) throw new Error('nothing to load: give --pages or --har');
  if (values.chunks !== undefined && !values.queue) throw new Error('--chunks goes with --queue');
  return {
    options, help: values.help ?? false, smoke: values.smoke ?? false,
    ...(values.from ? { from: values.from } : {}), ...(values.raw ? { raw: values.raw } : {}),
    ...(values.out ? { out: values.out } : {}), ...(values.json ? { json: values.json } : {}),
    ...(values.queue ? { queue: { file: values.queue, chunks: values.chunks === undefined ? null : count('--chunks', values.chunks, 1) } } : {}),
  };
}
