// The cost model's validation in real browsers (issue 11): Chromium and Firefox load synthetic pages
// (lab/site/validation-site.ts) and real pages rebuilt from HAR files (lab/har/) under the lab's network profiles,
// really resolving every name through the lab resolver over Do53, DoT (the machine's stub), DoH (the browser's own) and
// DoQ (dnsproxy as the stub), cold, warm and along a browsing trace; from each Do53 visit dnscost predicts the change
// of onLoad (its replay of that page, common/cost-model.ts through measuredPageCost), and each row compares it with the
// measured change (median onLoad with the candidate minus median with Do53).
//   scripts/validate [options]        (setup, then this file; see options.ts USAGE, or --help)
//   node dist/bench/validate/main.js [options]   the same without the setup; the old options still work
//   node dist/bench/validate/main.js --from RAW.json[,RAW2.json…] [--out …] [--json …]   (recomputes from raw files)
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inner } from './inner.js';
import { readRuns } from './legacy.js';
import { parseCommand, USAGE } from './options.js';
import { report, rowsJson } from './report.js';
import { codeAt, runValidation } from './run.js';
import { sideWorker } from './side.js';
import type { ValidationRun } from './types.js';

// It also re-exports what the browser test drives (tests/browser/cost-model-validation.test.ts).
export { analyse, predict } from './analysis.js';
export { missingFor, runValidation } from './run.js';
export { CANDIDATES, SCHEME_OF, SIDES } from './types.js';

// Raw files named *.gz are written gzipped (legacy.ts readRuns reads either).
const writeRaw = (f: string, run: ValidationRun) => writeFileSync(f, f.endsWith('.gz') ? gzipSync(JSON.stringify(run)) : JSON.stringify(run));

/** The chunks of a queue file: one chunk's options per line (whitespace-separated), blank lines and # comments skipped. */
export function queueChunks(text: string): string[][] {
  return text.split('\n').map((l) => l.replace(/#.*$/, '').trim()).filter(Boolean).map((l) => l.split(/\s+/));
}

/**
 * Runs a queue's chunks in order, each alone: a chunk whose raw file exists is done and skipped; one runs into
 * RAW.partial (RAW.partial.gz for a gzipped RAW.gz) and is renamed when it finishes, so a queue stopped anywhere (a session's end, a killed process)
 * resumes at the chunk it was in, from its start. At most `limit` chunks run this time.
 */
async function runQueue(file: string, limit: number | null, prefix: string): Promise<void> {
  const chunks = queueChunks(readFileSync(file, 'utf8'));
  let ran = 0;
  for (const [i, args] of chunks.entries()) {
    const cmd = parseCommand(args);
    if (!cmd.raw) throw new Error(`${file}: chunk ${i + 1} has no --raw FILE (its raw file is how the queue knows it is done)`);
    if (existsSync(cmd.raw)) continue;
    if (limit !== null && ran >= limit) break;
    const command = `${prefix} ${args.join(' ')}`;
    // RAW.partial.gz for RAW.gz: written gzipped, as the name it is renamed to says.
    const partial = cmd.raw.replace(/(\.gz)?$/, '.partial$1');
    process.stderr.write(`queue ${file}: chunk ${i + 1} of ${chunks.length}: ${args.join(' ')}\n`);
    const run = await runValidation({ ...cmd.options, onProfile: (r) => writeRaw(partial, { ...r, command }) });
    run.command = command;
    writeRaw(partial, run);
    renameSync(partial, cmd.raw);
    ran++;
  }
  const left = chunks.filter((args) => !existsSync(parseCommand(args).raw!)).length;
  process.stderr.write(`queue ${file}: ${ran} chunk(s) run now, ${chunks.length - left} of ${chunks.length} done\n`);
}

/**
 * This entry only wires: it parses the options (options.ts), runs the outer half (run.ts) or re-reads a raw file
 * (legacy.ts reads the first form's), and writes the report (report.ts) and rows.
 */
async function main(): Promise<void> {
  const cmd = parseCommand(process.argv.slice(2));
  if (cmd.help) {
    process.stdout.write(USAGE);
    return;
  }
  // scripts/validate names itself; run directly, this file is the command.
  // An experiment's extra Firefox prefs (browser.ts) are part of the command that made the loads.
  const prefs = process.env.DNSCOST_FIREFOX_PREFS ? `DNSCOST_FIREFOX_PREFS='${process.env.DNSCOST_FIREFOX_PREFS}' ` : '';
  const prefix = `${prefs}${process.env.DNSCOST_VALIDATE_COMMAND ?? 'node dist/bench/validate/main.js'}`;
  if (cmd.queue) return runQueue(cmd.queue.file, cmd.queue.chunks, prefix);
  let command = `${prefix} ${process.argv.slice(2).join(' ')}`.trim();
  let run: ValidationRun;
  if (cmd.from) {
    run = readRuns(cmd.from.split(',').filter(Boolean));
    command = `${run.command ?? "(the run's command was not recorded)"}\`, analysed with the current model by \`${command}`;
  } else {
    const raw = cmd.raw ?? join(tmpdir(), `dnscost-validation-${Date.now()}.json`);
    process.stderr.write(`raw data (written after each profile): ${raw}\n`);
    run = await runValidation({ ...cmd.options, onProfile: (r) => writeRaw(raw, { ...r, command }) });
    run.command = command;
    writeRaw(raw, run);
  }
  const text = report(run, command, codeAt());
  process.stdout.write(text);
  if (cmd.out) writeFileSync(cmd.out, text);
  if (cmd.json) writeFileSync(cmd.json, rowsJson(run, command));
  const failed = run.profiles.flatMap((p) => p.visits.filter((v) => v.error));
  if (cmd.smoke && !run.profiles.some((p) => p.visits.length)) throw new Error('--smoke: no load ran');
  if (cmd.smoke && failed.length) throw new Error(`--smoke: ${failed.length} load(s) failed: ${failed.slice(0, 3).map((v) => `${v.browser} ${v.transport} ${v.page}: ${v.error}`).join('; ')}`);
}

// Started with DNSCOST_VALIDATION_INNER set (run.ts does, inside the lab's namespaces) it is the inner half (inner.ts);
// with DNSCOST_VALIDATION_SIDE set (inner.ts's side workers) a side worker (side.ts).
if (process.env.DNSCOST_VALIDATION_SIDE) await sideWorker(process.env.DNSCOST_VALIDATION_SIDE);
else if (process.env.DNSCOST_VALIDATION_INNER) await inner(process.env.DNSCOST_VALIDATION_INNER);
else if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main().catch((e: unknown) => {
    process.stderr.write(`validate: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  });
}
