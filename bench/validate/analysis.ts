// The validation experiment's analysis, pure: from a raw run, dnscost's prediction for every Do53 visit (the current
// cost model, common/page-cost.ts measuredPageCost over the visit's page record and replay), the measured change of
// onLoad between transports with a seeded bootstrap interval, and the table's rows (error against target).
import { measuredPageCost, pageCostInput, type PageForCost } from '../../common/page-cost.js';
import { percentile, seededRandom } from '../../common/stats.js';
import type { BrowserTransport, ValidationRun, Visit } from './types.js';

/** The document's own lookup as the browser observed it (Navigation Timing), ms. */
export function documentLookup(page: PageForCost): number {
  const n = pageCostInput(page).navigation;
  return n.domainLookupEnd - n.domainLookupStart;
}

/** One model estimate: the change of onLoad with its bounds (ms). */
export interface Estimate {
  delta: number;
  lower: number;
  upper: number;
}

/** The model's estimate for one Do53 visit, per encrypted transport (null when it could not compare). */
export function predict(visit: Visit): Record<'dot' | 'doh', Estimate | null> {
  const out: Record<'dot' | 'doh', Estimate | null> = { dot: null, doh: null };
  if (!visit.pageRecord || !visit.records) return out;
  for (const cell of measuredPageCost(visit.pageRecord, visit.records)) {
    if ((cell.transport === 'dot' || cell.transport === 'doh') && cell.mode === 'cold' && cell.onLoad.delta !== null) {
      out[cell.transport] = { delta: cell.onLoad.delta, lower: cell.onLoad.lower!, upper: cell.onLoad.upper! };
    }
  }
  return out;
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
/** The median of `xs` (null when empty). */
export const med = (xs: number[]) => percentile(sorted(xs), 50);

/** A seeded bootstrap 95 % interval of median(b) − median(a). */
export function bootstrapDiff(a: number[], b: number[], seed = 1, rounds = 2000): [number, number] | null {
  if (a.length < 2 || b.length < 2) return null;
  const random = seededRandom(seed);
  const draw = (xs: number[]) => med(Array.from({ length: xs.length }, () => xs[Math.floor(random() * xs.length)]!))!;
  const diffs = sorted(Array.from({ length: rounds }, () => draw(b) - draw(a)));
  return [percentile(diffs, 2.5)!, percentile(diffs, 97.5)!];
}

/** One row of the table: a page × profile × encrypted transport. */
export interface Row {
  profile: string;
  rttMs: number;
  page: number;
  transport: 'dot' | 'doh';
  loads: { do53: number; other: number; failed: number };
  onLoad: { do53: [number, number, number]; other: [number, number, number] } | null;
  measured: number | null;
  measuredCi: [number, number] | null;
  predicted: Estimate | null;
  /** The document's lookup (Navigation Timing): measured change of the medians, and the model's median delta. */
  doc: { measured: number | null; predicted: number | null };
  /** Median over Do53 visits of |prediction − measured change|. */
  medianAbsError: number | null;
  target: number | null;
  pass: boolean | null;
}

/** The table's rows from a run, with the current model. */
export function analyse(run: ValidationRun): Row[] {
  const rows: Row[] = [];
  for (const p of run.profiles) {
    for (const page of run.options.pages) {
      const ok = (t: BrowserTransport) => p.visits.filter((v) => v.page === page && v.transport === t && v.onLoad !== null && !v.error).map((v) => v.onLoad!);
      const base = ok('do53');
      const preds = p.visits.filter((v) => v.page === page && v.transport === 'do53').map(predict);
      for (const transport of (['dot', 'doh'] as const).filter((t) => !run.options.transports || run.options.transports.includes(t))) {
        const other = ok(transport);
        const q = (xs: number[]): [number, number, number] => [percentile(sorted(xs), 50)!, percentile(sorted(xs), 25)!, percentile(sorted(xs), 75)!];
        const measured = base.length && other.length ? med(other)! - med(base)! : null;
        const ests = preds.map((x) => x[transport]).filter((x): x is Estimate => x !== null);
        const predicted = ests.length ? { delta: med(ests.map((e) => e.delta))!, lower: med(ests.map((e) => e.lower))!, upper: med(ests.map((e) => e.upper))! } : null;
        const mae = measured !== null && ests.length ? med(ests.map((e) => Math.abs(e.delta - measured))) : null;
        const target = measured !== null ? Math.max(0.1 * Math.abs(measured), p.profile.rttMs) : null;
        const docOf = (t: BrowserTransport) => p.visits.filter((v) => v.page === page && v.transport === t && v.pageRecord && !v.error).map((v) => documentLookup(v.pageRecord!));
        const docPred = p.visits.filter((v) => v.page === page && v.transport === 'do53' && v.records && v.pageRecord)
          .map((v) => measuredPageCost(v.pageRecord!, v.records!).find((c) => c.transport === transport && c.mode === 'cold')?.hosts.find((h) => h.reason === 'document')?.delta)
          .filter((x): x is number => typeof x === 'number');
        const docBase = docOf('do53');
        const docOther = docOf(transport);
        rows.push({
          profile: p.profile.name, rttMs: p.profile.rttMs, page, transport,
          doc: { measured: docBase.length && docOther.length ? med(docOther)! - med(docBase)! : null, predicted: docPred.length ? med(docPred) : null },
          loads: { do53: base.length, other: other.length, failed: p.visits.filter((v) => v.page === page && (v.transport === transport || v.transport === 'do53') && (v.onLoad === null || v.error)).length },
          onLoad: base.length && other.length ? { do53: q(base), other: q(other) } : null,
          measured,
          measuredCi: bootstrapDiff(base, other, page * 7 + (transport === 'dot' ? 1 : 2)),
          predicted,
          medianAbsError: mae,
          target,
          pass: mae !== null && target !== null ? mae <= target : null,
        });
      }
    }
  }
  return rows;
}
