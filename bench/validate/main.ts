// The cost model's validation experiment (issue 4, part 2): real headless Chromium loads the validation site's pages
// (lab/site/validation-site.ts: 1, 10, 30, 100 hostnames, some chained) under the lab's network profiles, really
// resolving every name through the lab resolver over Do53, DoT (through Debian's `stubby`) and DoH (Chromium's
// secure-DNS policy); from each Do53 visit dnscost predicts the change of onLoad (the native host's replay of that
// page over udp, dot and doh under the same profile, fed to common/cost-model.ts), and the table compares it with
// the measured change (median onLoad with DoT/DoH minus median with Do53).
//
//   node dist/bench/validate/main.js [--profiles fiber,dsl,4g,3g] [--loads 20] [--pages 1,10,30,100]
//        [--browser chromium] [--repeat 1] [--seed 1] [--transports do53,dot,doh] [--dot-stub stubby|unbound]
//        [--stub-nodelay] [--raw FILE] --out bench/results/cost-model-validation.md
//   node dist/bench/validate/main.js --from FILE --out …   (recomputes predictions and the table from a raw file)
//
// This entry only wires: it parses the options, runs the outer half (run.ts) or re-reads a raw file, and prints the
// report (report.ts over analysis.ts). Started with DNSCOST_VALIDATION_INNER set (run.ts does, inside the lab's
// namespaces), it is the inner half instead (inner.ts: browser.ts loads, stubs.ts DoT stubs, dnscost's replay).
// It also re-exports what the browser test drives (tests/browser/cost-model-validation.test.ts).
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { profileByName } from '../../lab/profiles.js';
import { inner } from './inner.js';
import { report } from './report.js';
import { runValidation } from './run.js';
import { BROWSER_TRANSPORTS, DOT_STUBS, type BrowserTransport, type DotStub, type ValidationRun } from './types.js';

export { analyse, predict } from './analysis.js';
export { runValidation } from './run.js';
export { BROWSER_TRANSPORTS, SCHEME_OF } from './types.js';

const USAGE = `usage: node dist/bench/validate/main.js [--profiles fiber,dsl,4g,3g] [--loads 20] [--pages 1,10,30,100]
         [--browser chromium] [--repeat 1] [--seed 1] [--transports do53,dot,doh] [--dot-stub stubby|unbound]
         [--stub-nodelay] [--raw FILE] [--out FILE]          (as root, after scripts/setup and npx tsc -p tsconfig.json)
       node dist/bench/validate/main.js --from FILE [--out FILE]   (recomputes predictions and the table from a raw file)
`;

function csv(s: string): string[] {
  return s.split(',').map((x) => x.trim()).filter(Boolean);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      profiles: { type: 'string', default: 'fiber,dsl,4g,3g' },
      loads: { type: 'string', default: '20' },
      pages: { type: 'string', default: '1,10,30,100' },
      browser: { type: 'string', default: 'chromium' },
      repeat: { type: 'string', default: '1' },
      transports: { type: 'string', default: 'do53,dot,doh' },
      'stub-nodelay': { type: 'boolean', default: false },
      'dot-stub': { type: 'string', default: 'stubby' },
      seed: { type: 'string', default: '1' },
      raw: { type: 'string' },
      from: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  let run: ValidationRun;
  let command = `node dist/bench/validate/main.js ${process.argv.slice(2).join(' ')}`.trim();
  if (values.from) {
    run = JSON.parse(readFileSync(values.from, 'utf8')) as ValidationRun;
    command = `${run.command ?? '(the run\'s command was not recorded)'}\`, analysed with the current model by \`${command}`;
  }
  else {
    if (values.browser !== 'chromium') throw new Error(`--browser ${values.browser}: only chromium is implemented (see the bench's header)`);
    for (const p of csv(values.profiles)) profileByName(p);
    if (!(DOT_STUBS as readonly string[]).includes(values['dot-stub']!)) throw new Error(`--dot-stub: unknown ${values['dot-stub']} (${DOT_STUBS.join(', ')})`);
    for (const t of csv(values.transports)) if (!(BROWSER_TRANSPORTS as readonly string[]).includes(t)) throw new Error(`--transports: unknown ${t} (${BROWSER_TRANSPORTS.join(', ')})`);
    const raw = values.raw ?? join(tmpdir(), `dnscost-validation-${Date.now()}.json`);
    process.stderr.write(`raw data (written after each profile): ${raw}\n`);
    run = await runValidation({
      profiles: csv(values.profiles), pages: csv(values.pages).map(Number), loads: Number(values.loads), browser: 'chromium',
      repeat: Number(values.repeat), seed: Number(values.seed), transports: csv(values.transports) as BrowserTransport[], stubNoDelay: values['stub-nodelay'], dotStub: values['dot-stub'] as DotStub, onProfile: (r) => writeFileSync(raw, JSON.stringify({ command, ...r })),
    });
    run.command = command;
    writeFileSync(raw, JSON.stringify(run));
  }
  const text = report(run, command);
  process.stdout.write(text);
  if (values.out) writeFileSync(values.out, text);
}

if (process.env.DNSCOST_VALIDATION_INNER) await inner(process.env.DNSCOST_VALIDATION_INNER);
else if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
