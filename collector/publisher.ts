// What /v1/aggregates serves: per epoch (a UTC day), the ε-differentially-private figures of collector/publication.ts,
// computed once when the day has closed and a delay has passed, stored (publications table) and held in memory.
// Requests only filter what was published; no request, filter or restart computes anything again.
// Lifecycle: a Publisher is created by server.ts with the store and the secret. answer() first brings the published
// epochs up to date when there may be something new (update(); after the first, waited for at most answerWaitMs: a
// big day's rollup takes seconds); a day's first publication is its only one. One update runs at a time.
import { randomBytes } from 'node:crypto';
import { UPLOAD_LIMITS } from '../common/upload-batch.js';
import { addTally, cellRule, emptyTally, noisyCount, PUBLICATION, publishCell, tallyOf, type CellTally, type PageValues } from './publication.js';
import { cellKey, cellLabel, type CellKey, type EpochResult, type EpochTally, type PublishedRow, type Store, type StoredPublication } from './store.js';

/** How publication is tuned; every field has a default. */
export interface PublicationOptions {
  /** Key of the noise; keep it (collector/secret.ts). Default: random per process, fit only for tests. */
  secret: Buffer;
  /** ε per person per epoch (UTC day), over every cell (common/privacy-budget.ts). */
  epsilon: number;
  /** Noisy page count a cell (and a site's name) needs to be published; default: from ε and PUBLICATION.delta. */
  minPages: number;
  /** Time after an epoch's end before it is published (late uploads of the day can still arrive). */
  delayMs: number;
  /** Longest time before uploads stored by other instances are noticed for a due, unpublished day. */
  recheckMs: number;
  /**
   * Longest a request waits for days being published (a day's rollup takes seconds on a big store); past it the
   * request is answered with what was published before, and the new day appears once stored. Only the very first
   * update (what is stored already) is always waited for.
   */
  answerWaitMs: number;
  now: () => number;
}

/** Filters of /v1/aggregates; each absent one means all. */
export interface AggregateFilter {
  epoch?: string;
  resolver?: string;
  transport?: string;
  network?: string;
  site?: string;
}

/** The answer of /v1/aggregates (without `ok`). */
export interface PublishedAnswer {
  /** ε per person per day and the threshold new epochs are published with; each epoch states its own below. */
  epsilon: number;
  minPages: number;
  /** Hours after a day's end (UTC) before it is published. */
  delayHours: number;
  /** The published epochs the answer draws on, oldest first. */
  epochs: Array<{ epoch: string; publishedAt: string; epsilon: number; minPages: number }>;
  cells: PublishedRow[];
}

const DAY_MS = 86_400_000;

/** The epoch (YYYY-MM-DD, UTC) of an upload hour like 2026-11-21T14Z. */
export function epochOf(hour: string): string {
  return hour.slice(0, 10);
}

/** The epochs due at `now`: the days of the last maxAgeDays whose end plus `delayMs` has passed, oldest first. */
export function dueEpochs(now: number, delayMs: number, maxAgeDays: number = UPLOAD_LIMITS.maxAgeDays): string[] {
  const today = Math.floor(now / DAY_MS);
  const out: string[] = [];
  for (let d = today - maxAgeDays - 1; d <= today; d++) {
    if ((d + 1) * DAY_MS + delayMs <= now) out.push(new Date(d * DAY_MS).toISOString().slice(0, 10));
  }
  return out;
}

/** Where publishEpoch reads an epoch: the store (in SQL), or results in memory (resultsSource). */
export type EpochSource = Pick<Store, 'epochCounts' | 'epochValues'>;

/** An epoch's results in memory as an EpochSource, tallied as the store's SQL tallies them (tests, benchmarks). */
export function resultsSource(results: readonly EpochResult[]): EpochSource {
  const tallies = (rows: readonly EpochResult[]) => {
    const cells = new Map<string, { key: CellKey; pages: PageValues[] }>();
    for (const r of rows) {
      const label = cellLabel(r);
      let c = cells.get(label);
      if (!c) cells.set(label, (c = { key: cellKey(r), pages: [] }));
      c.pages.push({ medianMs: r.median_ms, onloadMs: r.onload_ms, bytes: r.bytes, packets: r.packets, failureShare: r.lookups > 0 ? r.failures / r.lookups : 0 });
    }
    return [...cells.values()].map((c) => ({ ...c.key, tally: tallyOf(c.pages) }));
  };
  return {
    epochCounts: async () => tallies(results).map((t) => ({ ...t, tally: { ...emptyTally(), pages: t.tally.pages, failureSum: t.tally.failureSum } })),
    epochValues: async (_epoch, named, cells) => {
      const keep = new Set(named.map((c) => cellLabel(c)));
      const wanted = new Set(cells.map((c) => cellLabel(c)));
      const folded = results.map((r) => (keep.has(cellLabel(r)) ? r : { ...r, site: 'other' }));
      return tallies(folded).filter((t) => wanted.has(cellLabel(t))).map((t) => ({ ...t, tally: { ...t.tally, pages: 0, failureSum: 0 } }));
    },
  };
}

/**
 * The published cells of one epoch (the same source and secret, the same cells), read in two steps: every cell's page
 * count, which decides what is published, then the values of the published cells only.
 * Sites: a site's cell (resolver × transport × mode × network type × site) is named when its noisy page count reaches
 * the threshold; otherwise its pages join that resolver × transport × mode × network's "other" cell, which is
 * published by the same rule. The site's count draw is the one publishCell would make for the cell (same key), so a
 * page costs a contribution's ε in the cell it is published in, plus its count share for its own site's count when
 * it was folded into "other" (common/privacy-budget.ts counts both).
 */
export async function publishEpoch(epoch: string, source: EpochSource, opts: Pick<PublicationOptions, 'secret' | 'epsilon' | 'minPages'>): Promise<PublishedRow[]> {
  const rule = cellRule(opts.epsilon, opts.minPages);
  const label = (c: CellKey) => [epoch, c.resolver, c.transport, c.mode, c.network, c.site].join('/');
  const published = (t: EpochTally) => noisyCount(t.tally.pages, opts.secret, label(t), rule) >= rule.minPages;
  const others = new Map<string, EpochTally>();
  const otherOf = (c: CellKey) => {
    const key = { ...cellKey(c), site: 'other' };
    let o = others.get(label(key));
    if (!o) others.set(label(key), (o = { ...key, tally: emptyTally() }));
    return o.tally;
  };
  const counts = await source.epochCounts(epoch);
  const named: EpochTally[] = [];
  // Named sites first: a site under the threshold moves its pages to its "other" cell before that is published.
  for (const c of counts) {
    if (c.site === 'other') addTally(otherOf(c), c.tally);
    else if (published(c)) named.push(c);
    else addTally(otherOf(c), c.tally);
  }
  const cells = [...named, ...[...others.values()].filter(published)];
  if (cells.length === 0) return [];
  const values = new Map((await source.epochValues(epoch, named.map(cellKey), cells.map(cellKey))).map((v) => [cellLabel(v), v.tally.counts]));
  const rows = cells.map((c) => {
    const tally: CellTally = { pages: c.tally.pages, failureSum: c.tally.failureSum, counts: values.get(cellLabel(c)) ?? emptyTally().counts };
    return { epoch, ...cellKey(c), ...publishCell(tally, opts.secret, label(c), rule)! };
  });
  const key = (c: PublishedRow) => [c.resolver, c.transport, c.mode, c.network, c.site].join('\u0000');
  return rows.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** Publishes due epochs once and answers filters from what was published; see the lifecycle note above. */
export class Publisher {
  readonly opts: PublicationOptions;
  private readonly published = new Map<string, StoredPublication>();
  private updating: Promise<void> | null = null;
  private checkedAt = -Infinity;
  private lastDue = '';
  private dirty = false;
  /** An update has completed: what the store had published is loaded. */
  private loaded = false;
  /** Answers by filter, kept until the published days change (the same object: routes.ts keeps its JSON). */
  private readonly answers = new Map<string, PublishedAnswer>();

  constructor(
    private readonly store: Store,
    opts: Partial<PublicationOptions> = {},
  ) {
    this.opts = {
      secret: opts.secret ?? randomBytes(32),
      epsilon: opts.epsilon ?? PUBLICATION.epsilon,
      minPages: opts.minPages ?? cellRule(opts.epsilon ?? PUBLICATION.epsilon).minPages,
      delayMs: opts.delayMs ?? 6 * 3_600_000,
      recheckMs: opts.recheckMs ?? 60_000,
      answerWaitMs: opts.answerWaitMs ?? 1_000,
      now: opts.now ?? Date.now,
    };
  }

  /** Tells the publisher a page of `hour` was stored here: if its day is due and unpublished, the next answer publishes it. */
  noteStored(hour: string): void {
    // Called for every stored upload: arithmetic on the day's start, not the list of due days.
    const epoch = epochOf(hour);
    if (this.dirty || this.published.has(epoch)) return;
    const start = Date.parse(`${epoch}T00:00:00Z`);
    if (start + DAY_MS + this.opts.delayMs <= this.opts.now()) this.dirty = true;
  }

  /** The published cells that match `filter`, with ε, the threshold and the epochs they come from. */
  async answer(filter: AggregateFilter): Promise<PublishedAnswer> {
    if (!this.loaded) await this.update();
    else {
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.opts.answerWaitMs)));
      // A failed update is the next request's to retry (update() marks it); this answer is what was published.
      await Promise.race([this.update().catch(() => {}), waited]);
      clearTimeout(timer);
    }
    const key = [filter.epoch, filter.resolver, filter.transport, filter.network, filter.site].join('\u0000');
    const kept = this.answers.get(key);
    if (kept) return kept;
    const epochs = [...this.published.values()]
      .filter((p) => filter.epoch === undefined || p.epoch === filter.epoch)
      .sort((a, b) => (a.epoch < b.epoch ? -1 : 1));
    const match = (c: PublishedRow) =>
      (filter.resolver === undefined || c.resolver === filter.resolver) &&
      (filter.transport === undefined || c.transport === filter.transport) &&
      (filter.network === undefined || c.network === filter.network) &&
      (filter.site === undefined || c.site === filter.site);
    const answer: PublishedAnswer = {
      epsilon: this.opts.epsilon,
      minPages: this.opts.minPages,
      delayHours: this.opts.delayMs / 3_600_000,
      epochs: epochs.map(({ epoch, publishedAt, epsilon, minPages }) => ({ epoch, publishedAt, epsilon, minPages })),
      cells: epochs.flatMap((p) => p.cells.filter(match)),
    };
    // Filters come from fixed lists, so the kept answers are bounded; a cap all the same.
    if (this.answers.size >= 1_000) this.answers.clear();
    this.answers.set(key, answer);
    return answer;
  }

  /** Resolves once every due day with pages is published (as answer() does before it answers). */
  ready(): Promise<void> {
    return this.update();
  }

  /**
   * Brings the published epochs up to date when there may be something new: at the first request, when another day
   * has become due, when an upload for a due but unpublished day was stored here (noteStored), or at most every
   * recheckMs (uploads stored by other instances). One update runs at a time.
   */
  private async update(): Promise<void> {
    // Bounded: one update, and at most one more for what was noticed while it ran.
    for (let round = 0; round < 2; round++) {
      if (this.updating) await this.updating.catch(() => {});
      const now = this.opts.now();
      const due = dueEpochs(now, this.opts.delayMs);
      const latest = due[due.length - 1] ?? '';
      if (!this.dirty && latest === this.lastDue && now - this.checkedAt < this.opts.recheckMs) return;
      this.dirty = false;
      this.lastDue = latest;
      this.checkedAt = now;
      this.updating = this.publishDue(due)
        .catch((err: unknown) => {
          this.dirty = true; // the store failed: the next request tries again
          throw err;
        })
        .finally(() => (this.updating = null));
      await this.updating;
    }
  }

  /**
   * Bringing up to date loads what the store already has for the due days of the last UPLOAD_LIMITS.maxAgeDays and
   * publishes each due day that has pages but no publication; a day's first publication is its only one (a page of
   * that day arriving later is stored, never published).
   */
  private async publishDue(due: readonly string[]): Promise<void> {
    const before = this.published.size;
    const keep = new Set(due);
    for (const epoch of this.published.keys()) if (!keep.has(epoch)) this.published.delete(epoch);
    if (this.published.size !== before) this.answers.clear();
    const missing = due.filter((e) => !this.published.has(e));
    for (const p of await this.store.publications(missing)) {
      this.published.set(p.epoch, p);
      this.answers.clear();
    }
    const unpublished = missing.filter((e) => !this.published.has(e));
    for (const epoch of await this.store.epochsWithData(unpublished)) {
      const cells = await publishEpoch(epoch, this.store, this.opts);
      this.published.set(epoch, await this.store.publish({ epoch, epsilon: this.opts.epsilon, minPages: this.opts.minPages, cells }));
      this.answers.clear();
    }
    this.loaded = true;
  }
}
