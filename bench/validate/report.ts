// The validation experiment's report, pure: the markdown the command prints and writes to --out — the command, the
// verdict against the issue's goal (the share of resolved rows within target), the share per browser, profile,
// scenario, transport and kind of page, the misses, the unresolved rows counted, the checks (report-checks.ts), and
// every row — and the machine-readable rows (--json).
import { analyse, type Row } from './analysis.js';
import { checks, whatRan } from './report-checks.js';
import type { ValidationRun } from './types.js';

/** The goals (issue 24): shares of rows, and the model's error against the naive rule's. */
export const GOAL = 0.9;
/** Calibration: the prediction inside the measured change's 95 % interval in at least this share of all rows. */
export const CALIBRATION_GOAL = 0.9;
/** A/A: 0 inside the interval in at least this share of at least CONTROL_ROWS control rows. */
export const CONTROL_GOAL = 0.9;
export const CONTROL_ROWS = 30;
/** The aim for the share of rows resolved. */
export const RESOLVED_AIM = 0.4;
/** Per lookup: the share of the browser's own lookups (median over a row's loads) within max(10 %, 5 ms) of the replay's. */
export const LOOKUP_GOAL = 0.9;

/** The per-lookup layers of rows that carry one, summed: [within, compared, slower, faster]. */
function lookupSums(rows: readonly Row[]): [number, number, number, number] {
  return rows.reduce<[number, number, number, number]>((a, r) => [a[0] + r.lookups!.within, a[1] + r.lookups!.n, a[2] + r.lookups!.slower, a[3] + r.lookups!.faster], [0, 0, 0, 0]);
}

/** The per-lookup layer over `rows`: names × modes compared and within target, summed; per browser × transport. */
function lookupSummary(rows: readonly Row[]): string {
  const withLayer = rows.filter((r) => r.lookups && r.lookups.n > 0);
  if (!withLayer.length) return '- **Per lookup**: not measured (no load carried the browser\'s own lookups: Chromium\'s NetLog or Firefox\'s MOZ_LOG, runs from 2026-11-26).';
  const [w, n, slower, faster] = lookupSums(withLayer);
  const groups = new Map<string, Row[]>();
  for (const r of withLayer) (groups.get(`${r.browser} ${r.transport}`) ?? groups.set(`${r.browser} ${r.transport}`, []).get(`${r.browser} ${r.transport}`)!).push(r);
  const per = [...groups].map(([k, rs]) => { const [gw, gn, gs, gf] = lookupSums(rs); return `${k} ${gw}/${gn} (${gs} slower, ${gf} faster)`; }).join(', ');
  return `- **Per lookup** (the browser's own lookup of each name, median over a row's loads, against the replay's over the same transport and mode): **${w} of ${n}** within max(10 %, 5 ms) (${pct(w, n)}; goal ≥ ${LOOKUP_GOAL * 100} %: ${w / n >= LOOKUP_GOAL ? 'met' : '**not met**'}); of the ${n - w} outside, the browser was slower than the replay in ${slower} (the replay under-predicts) and faster in ${faster} (it over-predicts); by browser and transport, within/compared (slower, faster): ${per}.`;
}

/**
 * The per-lookup layer by profile × browser × path, A/A controls included: where the replay's lookups and the
 * browser's part. On a Do53 control the browser and the replay make the same plain exchange, so its share says what
 * the comparison itself reaches on that profile with nothing encrypted; '' when no row carries lookups.
 */
export function lookupTable(rows: readonly Row[]): string {
  const groups = new Map<string, Row[]>();
  for (const r of rows.filter((x) => x.lookups?.n)) {
    const k = `| ${r.profile} | ${r.browser} | ${r.transport} |`;
    (groups.get(k) ?? groups.set(k, []).get(k)!).push(r);
  }
  if (!groups.size) return '';
  const lines = [...groups].sort(([a], [b]) => a.localeCompare(b)).map(([k, rs]) => {
    const [w, n, s, q] = lookupSums(rs);
    return `${k} ${w}/${n} | ${pct(w, n)} | ${s} | ${q} |`;
  });
  return `
## Per lookup by profile

The browser's own lookups (median over a row's loads) within max(10 %, 5 ms) of the replay's, summed over the rows of
each profile, browser and compared path; slower / faster: of those outside, the browser's longer / shorter. On the
Do53 A/A rows (\`do53-aa\`) the browser and the replay make the same plain exchange: what the comparison reaches there.

| profile | browser | path | within / compared | share | slower | faster |
| --- | --- | --- | ---: | ---: | ---: | ---: |
${lines.join('\n')}
`;
}

const f = (x: number | null | undefined, d = 0) => (x === null || x === undefined ? '—' : x.toFixed(d));
const pct = (a: number, b: number) => (b ? `${((100 * a) / b).toFixed(0)} %` : '—');

/** The target's tally over some rows. */
export interface Tally {
  rows: number;
  /** Rows with a prediction and an interval, and of them those whose prediction lies inside it (calibration). */
  calibrated: number;
  inside: number;
  resolved: number;
  /** Resolved rows within target, by the model and by the naive rule. */
  within: number;
  naiveWithin: number;
  /** Mean |error| over the resolved rows with both predictions, the model's and the naive rule's (ms). */
  mae: number | null;
  naiveMae: number | null;
  /** Σ|error| / Σ|measured| over every row with a prediction: the error weighted by the size of the change. */
  weighted: number | null;
  naiveWeighted: number | null;
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

/** Tallies `rows`. */
export function tally(rows: readonly Row[]): Tally {
  const resolved = rows.filter((r) => r.resolved);
  const calibrated = rows.filter((r) => r.inside !== null);
  const both = resolved.filter((r) => r.error !== null && r.naive?.error != null);
  const priced = rows.filter((r) => r.error !== null && r.measured !== null);
  const sumAbs = (xs: readonly number[]) => xs.reduce((a, b) => a + Math.abs(b), 0);
  const measuredSum = sumAbs(priced.map((r) => r.measured!));
  const naivePriced = priced.filter((r) => r.naive?.error != null);
  return {
    rows: rows.length,
    calibrated: calibrated.length,
    inside: calibrated.filter((r) => r.inside).length,
    resolved: resolved.length,
    within: resolved.filter((r) => r.within === true).length,
    naiveWithin: resolved.filter((r) => r.naive?.within === true).length,
    mae: mean(both.map((r) => Math.abs(r.error!))),
    naiveMae: mean(both.map((r) => Math.abs(r.naive!.error!))),
    weighted: measuredSum ? sumAbs(priced.map((r) => r.error!)) / measuredSum : null,
    naiveWeighted: naivePriced.length && measuredSum ? sumAbs(naivePriced.map((r) => r.naive!.error!)) / sumAbs(naivePriced.map((r) => r.measured!)) : null,
  };
}

/** The machine-readable form of a run's rows (--json). */
export function rowsJson(run: ValidationRun, command: string, rows: Row[] = analyse(run)): string {
  const t = tally(rows.filter((r) => !r.control));
  const c = tally(rows.filter((r) => r.control));
  return `${JSON.stringify({
    command, startedAt: run.startedAt, finishedAt: run.finishedAt, machine: run.machine,
    target: 'resolved: the measured change\'s 95 % interval (Moses, distribution-free) has a half-width ≤ tolerance; within: |predicted − measured| ≤ tolerance; ' +
      'inside: the prediction lies inside that interval; tolerance = max(10 % of |measured|, 10 ms); control rows (A/A) predict 0',
    goal: GOAL, calibrationGoal: CALIBRATION_GOAL, controlGoal: CONTROL_GOAL,
    summary: { ...t, share: t.resolved ? t.within / t.resolved : null, calibration: t.calibrated ? t.inside / t.calibrated : null },
    controls: { ...c, coverage: c.calibrated ? c.inside / c.calibrated : null },
    lookups: rows.reduce((a, r) => ({ n: a.n + (r.lookups?.n ?? 0), within: a.within + (r.lookups?.within ?? 0) }), { n: 0, within: 0 }),
    rows,
  }, null, 1)}\n`;
}

function breakdown(rows: Row[], label: string, key: (r: Row) => string): string {
  const groups = new Map<string, Row[]>();
  for (const r of rows) (groups.get(key(r)) ?? groups.set(key(r), []).get(key(r))!).push(r);
  return [...groups].map(([k, rs]) => {
    const t = tally(rs);
    return `| ${label} | ${k} | ${t.rows} | ${t.inside}/${t.calibrated} (${pct(t.inside, t.calibrated)}) | ${t.resolved} (${pct(t.resolved, t.rows)}) | ` +
      `${t.within}/${t.resolved} | ${t.naiveWithin}/${t.resolved} | ${f(t.mae, 1)} / ${f(t.naiveMae, 1)} | ${f(t.weighted, 2)} / ${f(t.naiveWeighted, 2)} |`;
  }).join('\n');
}

/** A row's per-lookup cell: within/compared, and the furthest miss (name, mode: browser vs replay ms). */
function lookupCell(r: Row): string {
  if (!r.lookups) return '—';
  const w = r.lookups.worst[0];
  return `${r.lookups.within}/${r.lookups.n}, ${r.lookups.slower} slower, ${r.lookups.faster} faster${w ? ` (${w.name} ${w.mode}: ${f(w.browser)} vs ${f(w.replay)})` : ''}`;
}

function rowLine(r: Row): string {
  const q = (x: [number, number, number] | undefined) => (x ? `${f(x[0])} [${f(x[1])}–${f(x[2])}]` : '—');
  const modes = Object.entries(r.modes).map(([m, n]) => `${m} ${n}`).join(', ') || '—';
  const open = r.openBefore ? `${r.openBefore.open}/${r.openBefore.open + r.openBefore.closed}` : '—';
  const qc = r.queries.candidate ? `${r.queries.candidate.complete}/${r.queries.candidate.visits}${r.queries.candidate.otherSchemes.length ? ` (+${r.queries.candidate.otherSchemes.join(',')})` : ''}` : '—';
  return `| ${r.browser} | ${r.profile} | ${r.page} | ${r.transport} | ${r.scenario} | ${r.loads.do53}/${r.loads.candidate}${r.loads.failed ? ` (${r.loads.failed} failed)` : ''} | ` +
    `${q(r.onLoad?.do53)} | ${q(r.onLoad?.candidate)} | **${f(r.measured)}** [${r.interval ? `${f(r.interval[0])}…${f(r.interval[1])}` : '—'}] | ${f(r.halfWidth)} | ${f(r.tolerance, 1)} | ` +
    `${r.resolved ? 'yes' : '**no**'} | **${f(r.predicted?.delta)}** [${f(r.predicted?.lower)}…${f(r.predicted?.upper)}] | ${r.inside === null ? '—' : r.inside ? '✓' : '✗'} | ${f(r.error)} | ${r.within === null ? '—' : r.within ? '✓' : '✗'} | ${f(r.naive?.delta)} | ` +
    `${modes} | ${open} | ${f(r.document.measured)} / ${f(r.document.predicted)} | ${f(r.firstByte.measured)} / ${f(r.firstByte.predicted)} | ${qc} | ${lookupCell(r)} |`;
}

/** The markdown report of a run; `model` names the code whose model made the predictions (run.ts codeAt). */
/** The expected rows split by the state each candidate load had (Row.byState), as a section; '' when none. */
function byStateTable(rows: readonly Row[]): string {
  const lines = rows.flatMap((r) => Object.entries(r.byState ?? {}).map(([mode, s]) =>
    `| ${r.browser} | ${r.profile} | ${r.page} | ${r.transport} | ${mode} | ${s.loads} | ${f(s.measured)} | ${s.interval ? `${f(s.interval[0])}…${f(s.interval[1])}` : '—'} | ${f(s.predicted)} | ${s.inside === null ? '—' : s.inside ? '✓' : '✗'} |`));
  if (!lines.length) return '';
  const split = rows.flatMap((r) => Object.values(r.byState ?? {})).filter((s) => s.inside !== null);
  return `
## Expected rows by the state each load had

Each expected row's candidate loads in the state they had (from their own gap), each group against every Do53 load of
the row: the prediction inside the measured interval in ${split.filter((s) => s.inside).length} of ${split.length} groups.

| browser | profile | page | transport | state | loads | measured Δ | interval | predicted Δ | in |
| --- | --- | --- | --- | --- | ---: | ---: | --- | ---: | :---: |
${lines.join('\n')}
`;
}

export function report(run: ValidationRun, command: string, model = 'this checkout'): string {
  const all = analyse(run);
  const rows = all.filter((r) => !r.control);
  const controls = all.filter((r) => r.control);
  const t = tally(rows);
  const c = tally(controls);
  const share = t.resolved ? t.within / t.resolved : null;
  const calibration = t.calibrated ? t.inside / t.calibrated : null;
  const coverage = c.calibrated ? c.inside / c.calibrated : null;
  const misses = rows.filter((r) => r.resolved && r.within === false);
  const outside = rows.filter((r) => r.inside === false);
  const unresolved = rows.filter((r) => !r.resolved);
  const noPrediction = rows.filter((r) => r.resolved && r.within === null);
  const versions = [...new Set(run.profiles.flatMap((p) => Object.entries(p.browserVersions).map(([b, v]) => `${b} ${v}`)))].join(', ');
  const o = run.options;
  const met = (ok: boolean | null) => (ok === null ? 'not measured' : ok ? 'met' : '**not met**');
  const name = (r: Row) => `${r.browser} · ${r.profile} · ${r.page} · ${r.transport} · ${r.scenario}`;
  const missLine = (r: Row) => `- ${name(r)}: measured ${f(r.measured)} ms [${r.interval ? `${f(r.interval[0])}…${f(r.interval[1])}` : '—'}], ` +
    `predicted ${f(r.predicted?.delta)} ms [${f(r.predicted?.lower)}…${f(r.predicted?.upper)}], off by ${f(r.error)} ms against a tolerance of ${f(r.tolerance, 1)} ms` +
    `${Object.keys(r.modes).length > 1 ? ` (priced ${Object.entries(r.modes).map(([m, n]) => `${m} ${n}`).join(', ')})` : ''}; document lookup Δ measured ${f(r.document.measured)} / predicted ${f(r.document.predicted)} ms; first byte Δ measured ${f(r.firstByte.measured)} / predicted ${f(r.firstByte.predicted)} ms`;
  const axes = (rs: Row[]) => [breakdown(rs, 'browser', (r) => r.browser), breakdown(rs, 'profile', (r) => r.profile), breakdown(rs, 'scenario', (r) => r.scenario),
    breakdown(rs, 'transport', (r) => r.transport), breakdown(rs, 'kind of page', (r) => (r.pageKind === 'har' ? 'HAR pages' : 'synthetic pages')), breakdown(rs, 'page', (r) => r.page)].join('\n');
  return `# Cost model validation: predicted vs measured onLoad change in real browsers

Command: \`${command}\` (as root)
Run: ${run.startedAt} → ${run.finishedAt}; machine: ${run.machine}; browsers: ${versions || '?'}.
Code: the loads were made by ${run.code ? `the code at ${run.code}` : 'code not recorded (runs before 2026-11-26)'}; the predictions below are the model at ${model}.
Profiles: ${run.profiles.map((p) => `${p.profile.name} (RTT ${p.profile.rttMs} ms${p.profile.jitterMs ? `, jitter ${p.profile.jitterMs} ms` : ''}${p.profile.lossPct ? `, loss ${p.profile.lossPct} %` : ''}${p.profile.downMbit ? `, ${p.profile.downMbit}/${p.profile.upMbit} Mbit/s` : ''})`).join(', ')}.
Pages: ${[...new Set(run.profiles.flatMap((p) => p.pages.map((pg) => (pg.kind === 'har' ? `${pg.id} (HAR, ${pg.hosts} names)` : `${pg.id} hosts`))))].join(', ')}.
Scenarios: ${o.scenarios.join(', ')}; candidates ${o.transports.join(', ')} against Do53${o.controls?.length ? `; A/A controls ${o.controls.join(', ')}` : ''}; ${o.minLoads ? `${o.minLoads}–${o.loads} loads per side of a row (stopped once resolved)` : `${o.loads} loads per side of every row (fixed)`}; replay repeats ${o.repeat}; seed ${o.seed}.

## Verdict

The measured change of a row is the Hodges–Lehmann shift of the candidate's onLoads against Do53's with its 95 %
distribution-free interval (Moses, from Mann–Whitney's U); the tolerance is max(10 % of |measured|, 10 ms); a row is
*resolved* when its interval's half-width is within the tolerance, and *within target* when |predicted − measured| is.
The naive rule beside the model: a cold DoT or DoH lookup costs 2 RTT, a cold DoQ lookup 1 RTT, a warm one nothing.

- **Calibration** (every row): the prediction inside the measured 95 % interval in **${t.inside} of ${t.calibrated}** rows (${pct(t.inside, t.calibrated)}; goal ≥ ${CALIBRATION_GOAL * 100} %: ${met(calibration === null ? null : calibration >= CALIBRATION_GOAL)}).
- **Resolved**: ${t.resolved} of ${t.rows} rows (${pct(t.resolved, t.rows)}; aim ≥ ${RESOLVED_AIM * 100} %).
- **Within target** (resolved rows): **${t.within} of ${t.resolved}** (${pct(t.within, t.resolved)}; goal ≥ ${GOAL * 100} %: ${met(share === null ? null : share >= GOAL)}); the naive rule ${t.naiveWithin} of ${t.resolved}.
- **Mean absolute error** over the resolved rows: the model ${f(t.mae, 1)} ms, the naive rule ${f(t.naiveMae, 1)} ms (goal: the model's at most half: ${met(t.mae === null || t.naiveMae === null ? null : t.mae <= t.naiveMae / 2)}).
- **Error weighted by the change** (Σ|error| / Σ|measured| over every row with a prediction): the model ${f(t.weighted, 2)}, the naive rule ${f(t.naiveWeighted, 2)}.
- **A/A controls** (the same path twice; true change 0): 0 inside the interval in **${c.inside} of ${c.calibrated}** control rows (${pct(c.inside, c.calibrated)}; goal ≥ ${CONTROL_GOAL * 100} % of ≥ ${CONTROL_ROWS}: ${met(c.calibrated < CONTROL_ROWS ? null : coverage! >= CONTROL_GOAL)}${c.calibrated < CONTROL_ROWS ? `, ${c.calibrated} of the ${CONTROL_ROWS} needed` : ''}).
${lookupSummary(all)}
${noPrediction.length ? `- ${noPrediction.length} resolved row(s) without a prediction.\n` : ''}
Columns: rows; prediction inside the interval / rows with both; resolved (share); within target, model / naive, of the
resolved; mean |error| over the resolved rows, model / naive (ms); Σ|error| / Σ|measured|, model / naive.

| by | value | rows | inside | resolved | within (model) | within (naive) | MAE ms model / naive | weighted model / naive |
| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
${axes(rows)}
${controls.length ? `\nA/A controls by axis (their prediction is 0):\n\n| by | value | rows | inside | resolved | within (model) | within (naive) | MAE ms model / naive | weighted model / naive |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n${axes(controls)}\n` : ''}
## Outside the interval

${outside.length ? outside.map(missLine).join('\n') : 'None: every prediction lies inside its row\'s measured 95 % interval.'}

## Misses (resolved rows outside target)

${misses.length ? misses.map(missLine).join('\n') : 'None: every resolved row is within target.'}
${unresolved.length ? `\nUnresolved rows (interval half-width over tolerance): ${unresolved.map((r) => `${name(r)} (±${f(r.halfWidth)} vs ${f(r.tolerance, 1)} ms)`).join('; ')}.` : ''}

${checks(run, rows)}
${lookupTable(all)}${byStateTable(rows)}
## What ran

${whatRan(run)}

## Rows

Columns: loads per side (baseline/compared: Do53, or DoT for the DoT control) that finished; onLoad median [p25–p75]
ms; measured Δ = the shift of the compared side against its baseline (Hodges–Lehmann: the median of every difference)
[Moses 95 %]; ± = the interval's half-width; tol = the tolerance; predicted Δ = the same shift with each priced Do53
load moved by its own prediction (point [lower…upper]; a mix of cold and warm loads shifts as a mixture; 0 for a
control); in = the prediction inside the interval; error = predicted − measured; naive = the naive rule's prediction;
modes = the replay mode and how many Do53 visits were
priced in it (a trace: the candidate loads' own modes, from their own gaps, and how many loads were in each; every priced
Do53 visit is priced in each); open = candidate loads whose side had its connection to the resolver open as the navigation started (DoT,
DoH); document = the document lookup's change, measured / predicted; first byte = the change of the document's first
byte (responseStart: a redirect's legs and the document's lookup are paid before it), measured / predicted (the serial
hosts' changes); queries = candidate loads whose every name reached
the resolver over the candidate's scheme (+ other schemes seen); lookups = the page's names (× modes) whose browser lookup
(median over the compared loads) lies within max(10 %, 5 ms) of the replay's, of those compared; of those outside, how
many the browser took longer (slower: the replay under-predicts) and shorter (faster: it over-predicts); the furthest miss.

| browser | profile | page | transport | scenario | loads | onLoad baseline | onLoad compared | measured Δ | ± | tol | resolved | predicted Δ | in | error | within | naive | modes | open | document Δ | first byte Δ | queries | lookups |
| --- | --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | :---: | ---: | :---: | ---: | --- | --- | ---: | ---: | --- | --- |
${all.map(rowLine).join('\n')}
`;
}
