// A measured page's answer in one sentence, and the toolbar badge that goes with it: which encrypted choice is best
// and which worst for this page, in the connection state this visit would have had, and how much sooner or later the
// page would finish than with the person's current DNS; failures come first. Pure: the popup builds it from the cost
// model's cells, the background from the history entry it has just written (both carry the same fields).
import { INDISTINGUISHABLE_MS, type CellCost } from '../../common/cost-model.js';
import { TRANSPORTS, type Mode, type TransportId } from '../../common/transports.js';
import type { I18n } from './i18n.js';

/** What the verdict needs of one resolver × transport × mode (a HistoryCell has these fields). */
export interface VerdictCell {
  resolver: string;
  transport: TransportId;
  mode: Mode;
  onLoad: { delta: number } | null;
  verdict: CellCost['verdict'];
  /** This mode is the state the visit would have had; only these cells decide the verdict. */
  expected?: boolean;
}

export type VerdictKind = 'fails' | 'slower' | 'same' | 'faster' | 'unknown';

export interface PageVerdict {
  kind: VerdictKind;
  sentence: string;
  /** The best encrypted choice that resolved every host, when there is one. */
  best: { resolver: string; transport: TransportId } | null;
  /** Toolbar badge: '!' fails, '+N' slower by N ms, '=' no difference you would notice, '−N' faster; '' unknown. */
  badge: string;
}

/** A change one can notice starts around a tenth of a second (the usual limit for "instant"). */
export const NOTICEABLE_MS = 100;

const about = (ms: number): number => (Math.abs(ms) >= 20 ? Math.round(Math.abs(ms) / 10) * 10 : Math.round(Math.abs(ms)));

/** The verdict over `cells` in the words of `i18n`; `name` gives a resolver's name. */
export function pageVerdict(cells: readonly VerdictCell[], name: (resolver: string) => string, i18n: I18n): PageVerdict {
  const { t } = i18n;
  const candidates = cells.filter((c) => c.expected && TRANSPORTS[c.transport]?.encrypted);
  const choice = (c: VerdictCell) => t('verdict_choice', name(c.resolver), TRANSPORTS[c.transport].short);
  const failing = candidates.filter((c) => c.verdict === 'fails');
  const known = candidates.filter((c) => c.verdict !== 'fails' && c.verdict !== 'unknown' && c.onLoad !== null)
    .sort((a, b) => a.onLoad!.delta - b.onLoad!.delta);
  const failed = failing.length ? t('verdict_failed', i18n.list(failing.map(choice))) : '';
  if (known.length === 0) {
    if (failing.length) return { kind: 'fails', sentence: failed, badge: '!', best: null };
    return { kind: 'unknown', sentence: t('verdict_unknown'), badge: '', best: null };
  }
  const best = known[0]!;
  const worst = known[known.length - 1]!;
  // One message per case (verdict_best_later_slight, verdict_worst_same…): each language builds its own sentence.
  const phrase = (which: 'best' | 'worst', c: VerdictCell): string => {
    const d = c.onLoad!.delta;
    if (c.verdict === 'indistinguishable') return t(`verdict_${which}_same`, choice(c), t('unit_ms', i18n.num(INDISTINGUISHABLE_MS)));
    const slight = Math.abs(d) < NOTICEABLE_MS ? '_slight' : '';
    return t(`verdict_${which}_${d > 0 ? 'later' : 'sooner'}${slight}`, choice(c), t('unit_ms', i18n.num(about(d))));
  };
  let sentence = phrase('best', best);
  if (worst !== best && !(best.verdict === 'indistinguishable' && worst.verdict === 'indistinguishable')) sentence += ` ${phrase('worst', worst)}`;
  if (failed) sentence = `${failed} ${sentence}`;
  const kind: VerdictKind = best.verdict === 'slower' ? 'slower' : best.verdict === 'faster' ? 'faster' : 'same';
  // The badge has room for four characters: digits without separators in every language.
  const badge = kind === 'same' ? '=' : `${kind === 'slower' ? '+' : '−'}${about(best.onLoad!.delta)}`;
  return { kind, sentence, badge, best: { resolver: best.resolver, transport: best.transport } };
}
