// The validation experiment's report, pure: the markdown the command prints and writes to --out — the command, the
// verdict against the issue's goal (the share of resolved rows within target), the share per browser, profile,
// scenario, transport and kind of page, the misses, the unresolved rows counted, the checks (report-checks.ts), and
// every row — and the machine-readable rows (--json).
import { analyse, type Row } from './analysis.js';
import { checks, whatRan } from './report-checks.js';
import type { ValidationRun } from './types.js';

/** The issue's goal: this share of resolved rows within target. */
export const GOAL = 0.9;

const f = (x: number | null | undefined, d = 0) => (x === null || x === undefined ? '—' : x.toFixed(d));
const pct = (a: number, b: number) => (b ? `${((100 * a) / b).toFixed(0)} %` : '—');

/** The target's tally over some rows: how many, how many resolved, how many of those within target. */
export interface Tally {
  rows: number;
  resolved: number;
  within: number;
}

/** Tallies `rows`. */
export function tally(rows: readonly Row[]): Tally {
  const resolved = rows.filter((r) => r.resolved);
  return { rows: rows.length, resolved: resolved.length, within: resolved.filter((r) => r.within === true).length };
}

/** The machine-readable form of a run's rows (--json). */
export function rowsJson(run: ValidationRun, command: string, rows: Row[] = analyse(run)): string {
  const t = tally(rows);
  return `${JSON.stringify({
    command, startedAt: run.startedAt, finishedAt: run.finishedAt, machine: run.machine,
    target: 'resolved: the measured change\'s 95 % bootstrap half-width ≤ tolerance; within: |predicted − measured| ≤ tolerance; tolerance = max(10 % of |measured|, 10 ms)',
    goal: GOAL, summary: { ...t, share: t.resolved ? t.within / t.resolved : null },
    rows,
  }, null, 1)}\n`;
}

function breakdown(rows: Row[], label: string, key: (r: Row) => string): string {
  const groups = new Map<string, Row[]>();
  for (const r of rows) (groups.get(key(r)) ?? groups.set(key(r), []).get(key(r))!).push(r);
  return [...groups].map(([k, rs]) => {
    const t = tally(rs);
    return `| ${label} | ${k} | ${t.rows} | ${t.resolved} | ${t.within} | ${pct(t.within, t.resolved)} |`;
  }).join('\n');
}

function rowLine(r: Row): string {
  const q = (x: [number, number, number] | undefined) => (x ? `${f(x[0])} [${f(x[1])}–${f(x[2])}]` : '—');
  const modes = Object.entries(r.modes).map(([m, n]) => `${m} ${n}`).join(', ') || '—';
  const open = r.openBefore ? `${r.openBefore.open}/${r.openBefore.open + r.openBefore.closed}` : '—';
  const qc = r.queries.candidate ? `${r.queries.candidate.complete}/${r.queries.candidate.visits}${r.queries.candidate.otherSchemes.length ? ` (+${r.queries.candidate.otherSchemes.join(',')})` : ''}` : '—';
  return `| ${r.browser} | ${r.profile} | ${r.page} | ${r.transport} | ${r.scenario} | ${r.loads.do53}/${r.loads.candidate}${r.loads.failed ? ` (${r.loads.failed} failed)` : ''} | ` +
    `${q(r.onLoad?.do53)} | ${q(r.onLoad?.candidate)} | **${f(r.measured)}** [${r.interval ? `${f(r.interval[0])}…${f(r.interval[1])}` : '—'}] | ${f(r.halfWidth)} | ${f(r.tolerance, 1)} | ` +
    `${r.resolved ? 'yes' : '**no**'} | **${f(r.predicted?.delta)}** [${f(r.predicted?.lower)}…${f(r.predicted?.upper)}] | ${f(r.error)} | ${r.within === null ? '—' : r.within ? '✓' : '✗'} | ` +
    `${modes} | ${open} | ${f(r.document.measured)} / ${f(r.document.predicted)} | ${f(r.firstByte.measured)} / ${f(r.firstByte.predicted)} | ${qc} |`;
}

/** The markdown report of a run. */
export function report(run: ValidationRun, command: string): string {
  const rows = analyse(run);
  const t = tally(rows);
  const share = t.resolved ? t.within / t.resolved : null;
  const misses = rows.filter((r) => r.resolved && r.within === false);
  const unresolved = rows.filter((r) => !r.resolved);
  const noPrediction = rows.filter((r) => r.resolved && r.within === null);
  const versions = [...new Set(run.profiles.flatMap((p) => Object.entries(p.browserVersions).map(([b, v]) => `${b} ${v}`)))].join(', ');
  const o = run.options;
  const missLine = (r: Row) => `- ${r.browser} · ${r.profile} · ${r.page} · ${r.transport} · ${r.scenario}: measured ${f(r.measured)} ms [${r.interval ? `${f(r.interval[0])}…${f(r.interval[1])}` : '—'}], ` +
    `predicted ${f(r.predicted?.delta)} ms [${f(r.predicted?.lower)}…${f(r.predicted?.upper)}], off by ${f(r.error)} ms against a tolerance of ${f(r.tolerance, 1)} ms` +
    `${Object.keys(r.modes).length > 1 ? ` (priced ${Object.entries(r.modes).map(([m, n]) => `${m} ${n}`).join(', ')})` : ''}; document lookup Δ measured ${f(r.document.measured)} / predicted ${f(r.document.predicted)} ms; first byte Δ measured ${f(r.firstByte.measured)} / predicted ${f(r.firstByte.predicted)} ms`;
  return `# Cost model validation: predicted vs measured onLoad change in real browsers

Command: \`${command}\` (as root)
Run: ${run.startedAt} → ${run.finishedAt}; machine: ${run.machine}; browsers: ${versions || '?'}.
Profiles: ${run.profiles.map((p) => `${p.profile.name} (RTT ${p.profile.rttMs} ms${p.profile.jitterMs ? `, jitter ${p.profile.jitterMs} ms` : ''}${p.profile.lossPct ? `, loss ${p.profile.lossPct} %` : ''}${p.profile.downMbit ? `, ${p.profile.downMbit}/${p.profile.upMbit} Mbit/s` : ''})`).join(', ')}.
Pages: ${[...new Set(run.profiles.flatMap((p) => p.pages.map((pg) => (pg.kind === 'har' ? `${pg.id} (HAR, ${pg.hosts} names)` : `${pg.id} hosts`))))].join(', ')}.
Scenarios: ${o.scenarios.join(', ')}; candidates ${o.transports.join(', ')} against Do53; ${o.minLoads ? `${o.minLoads}–${o.loads} loads per side of a row (stopped once resolved)` : `${o.loads} loads per side of every row (fixed)`}; replay repeats ${o.repeat}; seed ${o.seed}.

## Verdict

Target per row: |predicted − measured| ≤ tolerance = max(10 % of |measured|, 10 ms); a row is *resolved* when the
measured change's 95 % bootstrap interval has a half-width within its tolerance (loads were added, alternating the
sides, until it was or the cap of ${o.loads} per side was reached).

**${t.within} of ${t.resolved} resolved rows within target (${pct(t.within, t.resolved)}; the goal is ≥ ${GOAL * 100} %: ${share === null ? 'no resolved row' : share >= GOAL ? 'met' : 'not met'}).**
${unresolved.length} of ${t.rows} rows unresolved (not counted above; each is in the table below, marked **no**)${noPrediction.length ? `; ${noPrediction.length} resolved row(s) without a prediction` : ''}.

| by | value | rows | resolved | within target | share |
| --- | --- | ---: | ---: | ---: | ---: |
${[breakdown(rows, 'browser', (r) => r.browser), breakdown(rows, 'profile', (r) => r.profile), breakdown(rows, 'scenario', (r) => r.scenario),
  breakdown(rows, 'transport', (r) => r.transport), breakdown(rows, 'page', (r) => (r.pageKind === 'har' ? 'HAR pages' : 'synthetic pages'))].join('\n')}

## Misses

${misses.length ? misses.map(missLine).join('\n') : 'None: every resolved row is within target.'}
${unresolved.length ? `\nUnresolved rows (interval half-width over tolerance at the cap): ${unresolved.map((r) => `${r.browser} · ${r.profile} · ${r.page} · ${r.transport} · ${r.scenario} (±${f(r.halfWidth)} vs ${f(r.tolerance, 1)} ms)`).join('; ')}.` : ''}

${checks(run, rows)}

## What ran

${whatRan(run)}

## Rows

Columns: loads per side (Do53/candidate) that finished; onLoad median [p25–p75] ms; measured Δ = the shift of
candidate against Do53 (Hodges–Lehmann: the median of every candidate − Do53 difference) [bootstrap 95 %]; ± = the interval's half-width; tol = the tolerance; predicted Δ = the same shift with each
priced Do53 load moved by its own prediction (point [lower…upper]; a mix of cold and warm loads shifts as a mixture); error = predicted − measured; modes = the replay mode and how many Do53 visits were
priced in it (a trace: the candidate loads' own modes, from their own gaps, and how many loads were in each; every priced
Do53 visit is priced in each); open = candidate loads whose side had its connection to the resolver open as the navigation started (DoT,
DoH); document = the document lookup's change, measured / predicted; first byte = the change of the document's first
byte (responseStart: a redirect's legs and the document's lookup are paid before it), measured / predicted (the serial
hosts' changes); queries = candidate loads whose every name reached
the resolver over the candidate's scheme (+ other schemes seen).

| browser | profile | page | transport | scenario | loads | onLoad Do53 | onLoad candidate | measured Δ | ± | tol | resolved | predicted Δ | error | within | modes | open | document Δ | first byte Δ | queries |
| --- | --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | :---: | --- | --- | ---: | ---: | --- |
${rows.map(rowLine).join('\n')}
`;
}
