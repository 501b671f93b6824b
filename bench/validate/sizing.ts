// How many loads per side each page of the final matrix gets, fixed before it runs, from a pilot's rows (issue 24
// item 3): a row's interval half-width shrinks as 1/√loads, so the pilot's half-width at its loads says what 10 and 20
// loads a side would give. A page gets 20 when at least two of its pilot rows would resolve (half-width ≤ tolerance)
// at 20 and not at 10 — the extra loads buy resolution there — and 10 (the least the issue allows) otherwise: where 10
// already resolve, and where not even 20 would, more loads buy nothing. Pages the pilot never ran get 10.
//   node dist/bench/validate/sizing.js bench/results/validation/rows.json
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** The fields of a rows file's row that sizing reads. */
export interface PilotRow {
  browser: string;
  profile: string;
  page: string;
  control: boolean;
  loads: { do53: number; candidate: number };
  halfWidth: number | null;
  tolerance: number;
}

export const MIN_LOADS = 10;
export const MORE_LOADS = 20;
/** Rows that must gain resolution from MORE_LOADS before a page gets them. */
const GAINING_ROWS = 2;

/** Per `browser profile page`: the loads a side, and the pilot rows' count per outcome (10, 20, never). */
export function sizing(rows: readonly PilotRow[]): Map<string, { loads: number; at10: number; at20: number; never: number }> {
  const out = new Map<string, { loads: number; at10: number; at20: number; never: number }>();
  for (const r of rows) {
    if (r.control || r.halfWidth === null) continue;
    const key = `${r.browser} ${r.profile} ${r.page}`;
    const e = out.get(key) ?? { loads: MIN_LOADS, at10: 0, at20: 0, never: 0 };
    out.set(key, e);
    const n = Math.min(r.loads.do53, r.loads.candidate);
    const at = (loads: number) => r.halfWidth! * Math.sqrt(n / loads) <= r.tolerance;
    if (at(MIN_LOADS)) e.at10++;
    else if (at(MORE_LOADS)) e.at20++;
    else e.never++;
    e.loads = e.at20 >= GAINING_ROWS ? MORE_LOADS : MIN_LOADS;
  }
  return out;
}

function main(file: string | undefined): void {
  if (!file) throw new Error('usage: node dist/bench/validate/sizing.js ROWS.json');
  const { rows } = JSON.parse(readFileSync(file, 'utf8')) as { rows: PilotRow[] };
  console.log('| browser | profile | page | pilot rows resolving at 10 | only at 20 | at neither | loads a side |');
  console.log('| --- | --- | --- | ---: | ---: | ---: | ---: |');
  for (const [key, e] of [...sizing(rows)].sort(([a], [b]) => a.localeCompare(b))) {
    console.log(`| ${key.split(' ').join(' | ')} | ${e.at10} | ${e.at20} | ${e.never} | ${e.loads} |`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main(process.argv[2]);
