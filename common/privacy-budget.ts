// Privacy per person, not per page (issue 26 item 3). What one person's uploads can add to the published figures is
// bounded on their own machine: at most PERSON_CAP.pagesPerDay pages of a UTC day leave it (a uniform random sample of
// the day's measured pages, extension/src/background/uploader.ts), each with at most PERSON_CAP.resultsPerPage results
// (a random sample of its resolver × transport × mode results; the collector refuses more). Each result falls in
// exactly one published cell, so one person feeds at most CONTRIBUTIONS_PER_DAY (page, cell) pairs a day, at most
// pagesPerDay of them in any one cell.
//
// The collector (collector/publication.ts) spends ε per contribution, split into a share for the cell's noisy page
// count and nine equal shares for its values; a page whose site's count fell under the threshold is counted once more
// in its "other" cell. By sequential composition over the cells a person's day touches (and group privacy within a
// cell, where their pages add up), a person's whole day of uploads is (epsilonPerDay)-differentially private; days
// compose: d days cost d × epsilonPerDay. Every coordinate of a cell comes from a fixed public list (the popular
// sites, the resolver ids, transports, modes, network types), so the noise alone carries the guarantee; the threshold
// adds that one person alone, with every page a day allows in one cell, makes that cell appear with probability at
// most delta. Pure: the extension states these figures, the collector publishes with them.

/** What one installation uploads, at most, per UTC day (of the pages' hours). */
export const PERSON_CAP = {
  /** Pages per UTC day: a uniform random sample of the day's measured pages. */
  pagesPerDay: 3,
  /** Results (resolver × transport × mode) per page: a random sample of the page's. */
  resultsPerPage: 6,
} as const;

/** (page, cell) contributions one person makes per UTC day, at most. */
export const CONTRIBUTIONS_PER_DAY = PERSON_CAP.pagesPerDay * PERSON_CAP.resultsPerPage;

/** The share of a contribution's ε spent on its cell's noisy page count (the release publication hinges on). */
export const COUNT_SHARE = 0.25;
/** The value releases of a cell that share the rest: failure share, 3 lookup and 3 onLoad percentiles, bytes, packets. */
export const VALUE_RELEASES = 9;

/** The collector's defaults: ε per person per UTC day, and δ per cell as above. */
export const DEFAULT_BUDGET = { epsilonPerDay: 4, delta: 1e-6 } as const;

/** Everything the collector derives from the per-person budget. */
export interface CellBudget {
  /** ε per person per UTC day, over every cell. */
  epsilonPerDay: number;
  /** Chance that one person alone, with pagesPerDay pages in a cell, makes it published. */
  delta: number;
  /** ε one contribution (one page's result in a cell) costs, count and values. */
  cellEpsilon: number;
  /** ε of the cell's noisy count, and of each value release. */
  countEpsilon: number;
  valueEpsilon: number;
  /** Laplace scale of the noisy page count. */
  countScale: number;
  /** Noisy page count a cell, and a site's name, needs to be published. */
  minPages: number;
}

/**
 * The cell budget for `epsilonPerDay` per person and `delta`: per contribution ε = epsilonPerDay / (contributions
 * per day × (1 + COUNT_SHARE)) (the extra count share: a page folded into "other" is counted in two cells); the
 * threshold T makes P(pagesPerDay + Laplace(countScale) ≥ T) = ½·exp(−(T − pagesPerDay) / countScale) ≤ delta.
 */
export function cellBudget(epsilonPerDay: number = DEFAULT_BUDGET.epsilonPerDay, delta: number = DEFAULT_BUDGET.delta): CellBudget {
  if (!(epsilonPerDay > 0) || !(delta > 0 && delta < 0.5)) throw new RangeError('needs ε > 0 and 0 < δ < 0.5');
  const cellEpsilon = epsilonPerDay / (CONTRIBUTIONS_PER_DAY * (1 + COUNT_SHARE));
  const countEpsilon = cellEpsilon * COUNT_SHARE;
  const countScale = 1 / countEpsilon;
  const minPages = Math.max(1, Math.ceil(PERSON_CAP.pagesPerDay + countScale * Math.log(1 / (2 * delta))));
  return { epsilonPerDay, delta, cellEpsilon, countEpsilon, valueEpsilon: (cellEpsilon * (1 - COUNT_SHARE)) / VALUE_RELEASES, countScale, minPages };
}

/** The chance that a cell with `pages` true pages is published (its noisy count reaches the threshold). */
export function publishChance(pages: number, b: CellBudget): number {
  const gap = b.minPages - pages;
  return gap > 0 ? 0.5 * Math.exp(-gap / b.countScale) : 1 - 0.5 * Math.exp(gap / b.countScale);
}
