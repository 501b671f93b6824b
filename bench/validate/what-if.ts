// What-if networks checked against the validation (issue 29 item 8). The cost panel prices a person's recorded page on
// another network by scaling every time of the page and its replay by the ratio of round trips
// (common/what-if-network.ts). Here the same estimate is made from each Do53 load a page had on one lab profile and
// compared with that page's rows measured on another: inside the measured change's 95 % interval, what the
// validation's calibration asks of the model on the network itself. Beside it, the model on the other network's own
// loads (what the validation reports there) and a naive rule: the change measured on the first network times the ratio
// of the profiles' round trips. Every row is reported.
//   node dist/bench/validate/what-if.js --from RAW[,RAW…] --to RAW[,RAW…] [--out FILE.md] [--json FILE]
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { scaledPage, scaledRecords, scaleFactor } from '../../common/what-if-network.js';
import { analyse, med, type Row } from './analysis.js';
import { readRuns } from './legacy.js';
import type { ProfileRun, ValidationRun } from './types.js';

/** `from`'s loads as if made on `to`'s network: each Do53 visit's page and replay scaled as the panel scales them. */
export function asIfOn(from: ProfileRun, to: ProfileRun): ProfileRun & { factors: number[] } {
  const factors: number[] = [];
  const visits = from.visits.map((v) => {
    if (!v.records || !v.pageRecord) return v;
    const k = scaleFactor(v.records, { rttMs: to.profile.rttMs });
    if (k === null) return { ...v, records: [] };
    factors.push(k);
    return { ...v, pageRecord: scaledPage(v.pageRecord, k), records: scaledRecords(v.records, k) };
  });
  return { ...from, profile: to.profile, serverIdleS: to.serverIdleS, visits, factors };
}

/** One row measured on `to`, with the three estimates of its change and whether each lies inside its interval. */
export interface WhatIfRow {
  browser: string;
  page: string;
  transport: string;
  scenario: string;
  from: string;
  to: string;
  measured: number;
  interval: [number, number];
  /** The model on `to`'s own loads (the validation's prediction there). */
  model: number | null;
  /** The panel's what-if: the model on `from`'s loads scaled to `to`'s round trip. */
  whatIf: number | null;
  /** The change measured on `from` times the ratio of round trips. */
  naive: number | null;
}

const key = (r: Pick<Row, 'browser' | 'page' | 'transport' | 'scenario'>) => `${r.browser} ${r.page} ${r.transport} ${r.scenario}`;

/** Every candidate row of `to` that `from` has the page, browser, transport and scenario of, for each pair of profiles. */
export function whatIfRows(from: ValidationRun, to: ValidationRun): { rows: WhatIfRow[]; factors: Record<string, number | null> } {
  const rows: WhatIfRow[] = [];
  const factors: Record<string, number | null> = {};
  for (const a of from.profiles) {
    const here = new Map(analyse({ ...from, profiles: [a] }).map((r) => [key(r), r]));
    for (const b of to.profiles) {
      if (a.profile.name === b.profile.name) continue;
      const scaled = asIfOn(a, b);
      factors[`${a.profile.name} → ${b.profile.name}`] = med(scaled.factors);
      const estimated = new Map(analyse({ ...from, profiles: [scaled] }).map((r) => [key(r), r]));
      for (const r of analyse({ ...to, profiles: [b] })) {
        const e = estimated.get(key(r));
        if (r.control || !e || r.measured === null || !r.interval) continue;
        const before = here.get(key(r))?.measured ?? null;
        rows.push({
          browser: r.browser, page: r.page, transport: r.transport, scenario: r.scenario, from: a.profile.name, to: b.profile.name,
          measured: r.measured, interval: r.interval, model: r.predicted?.delta ?? null, whatIf: e.predicted?.delta ?? null,
          naive: before === null ? null : (before * b.profile.rttMs) / a.profile.rttMs,
        });
      }
    }
  }
  return { rows, factors };
}

const inside = (x: number | null, [lo, hi]: [number, number]) => x !== null && lo <= x && x <= hi;
const ms = (x: number | null) => (x === null ? '–' : String(Math.round(x)));

/** The report: the counts, then every row. */
export function whatIfReport(result: ReturnType<typeof whatIfRows>, command: string): string {
  const { rows } = result;
  const count = (of: (r: WhatIfRow) => number | null) => rows.filter((r) => inside(of(r), r.interval)).length;
  const share = (n: number) => `${n} of ${rows.length}${rows.length ? ` (${Math.round((100 * n) / rows.length)} %)` : ''}`;
  const lines = [
    '# What-if networks against the validation', '', `\`${command}\``, '',
    `Factors (median over the Do53 loads, the target's round trip over the baseline's warm lookups): ${Object.entries(result.factors).map(([k, v]) => `${k} ${v === null ? '–' : v.toFixed(2)}`).join('; ')}.`, '',
    'Inside the change measured on the target network (95 % interval):', '',
    `- **what-if** (the model on the first network's loads, scaled): **${share(count((r) => r.whatIf))}**`,
    `- the model on the target network's own loads: ${share(count((r) => r.model))}`,
    `- naive (the change measured on the first network × the ratio of round trips): ${share(count((r) => r.naive))}`, '',
    '| browser | page | transport | scenario | from → to | measured [95 %] | model there | what-if | naive |',
    '| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: |',
    ...rows.map((r) => {
      const cell = (x: number | null) => (inside(x, r.interval) ? `**${ms(x)}** ✓` : ms(x));
      return `| ${r.browser} | ${r.page} | ${r.transport} | ${r.scenario} | ${r.from} → ${r.to} | ${ms(r.measured)} [${ms(r.interval[0])}…${ms(r.interval[1])}] | ${cell(r.model)} | ${cell(r.whatIf)} | ${cell(r.naive)} |`;
    }),
  ];
  return `${lines.join('\n')}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { from: { type: 'string' }, to: { type: 'string' }, out: { type: 'string' }, json: { type: 'string' } } });
  if (!values.from || !values.to) {
    process.stderr.write('usage: node dist/bench/validate/what-if.js --from RAW[,RAW…] --to RAW[,RAW…] [--out FILE.md] [--json FILE]\n');
    process.exit(2);
  }
  const result = whatIfRows(readRuns(values.from.split(',')), readRuns(values.to.split(',')));
  const text = whatIfReport(result, `node dist/bench/validate/what-if.js ${process.argv.slice(2).join(' ')}`);
  process.stdout.write(text);
  if (values.out) writeFileSync(values.out, text);
  if (values.json) writeFileSync(values.json, `${JSON.stringify(result, null, 1)}\n`);
}
