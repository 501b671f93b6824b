// What /v1/aggregates serves: per epoch (a UTC day), the ε-differentially-private figures of collector/publication.ts,
// computed once when the day has closed and a delay has passed, stored (publications table) and held in memory.
// Requests only filter what was published; no request, filter or restart computes anything again.
// Lifecycle: a Publisher is created by server.ts with the store and the secret. answer() first brings the published
// epochs up to date when there may be something new (update()); a day's first publication is its only one. One
// update runs at a time.
import { randomBytes } from 'node:crypto';
import { UPLOAD_LIMITS } from '../common/upload-batch.js';
import { cellRule, noisyCount, PUBLICATION, publishCell, type PageValues } from './publication.js';
import type { EpochResult, PublishedRow, Store, StoredPublication } from './store.js';

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

type Coords = Pick<PublishedRow, 'epoch' | 'resolver' | 'transport' | 'mode' | 'network' | 'site'>;

/**
 * The published cells of one epoch from its pages' results (pure: the same input and secret, the same cells).
 * Sites: a site's cell (resolver × transport × mode × network type × site) is named when its noisy page count reaches
 * the threshold; otherwise its pages join that resolver × transport × mode × network's "other" cell, which is
 * published by the same rule. The site's count draw is the one publishCell would make for the cell (same key), so a
 * page costs a contribution's ε in the cell it is published in, plus its count share for its own site's count when
 * it was folded into "other" (common/privacy-budget.ts counts both).
 */
export function publishEpoch(epoch: string, results: readonly EpochResult[], opts: Pick<PublicationOptions, 'secret' | 'epsilon' | 'minPages'>): PublishedRow[] {
  const rule = cellRule(opts.epsilon, opts.minPages);
  const groups = new Map<string, { coords: Coords; pages: PageValues[] }>();
  const groupOf = (coords: Coords) => {
    const label = [coords.epoch, coords.resolver, coords.transport, coords.mode, coords.network, coords.site].join('/');
    let g = groups.get(label);
    if (!g) groups.set(label, (g = { coords, pages: [] }));
    return g;
  };
  for (const r of results) {
    groupOf({ epoch, resolver: r.resolver, transport: r.transport, mode: r.mode, network: r.network, site: r.site }).pages.push({
      medianMs: r.median_ms,
      onloadMs: r.onload_ms,
      bytes: r.bytes,
      packets: r.packets,
      failureShare: r.lookups > 0 ? r.failures / r.lookups : 0,
    });
  }
  const cells: PublishedRow[] = [];
  // Named sites first: a site under the threshold moves its pages to its "other" cell before that is published.
  for (const [label, g] of [...groups]) {
    if (g.coords.site === 'other') continue;
    groups.delete(label);
    if (noisyCount(g.pages.length, opts.secret, label, rule) < rule.minPages) groupOf({ ...g.coords, site: 'other' }).pages.push(...g.pages);
    else cells.push({ ...g.coords, ...publishCell(g.pages, opts.secret, label, rule)! });
  }
  for (const [label, g] of groups) {
    const cell = publishCell(g.pages, opts.secret, label, rule);
    if (cell) cells.push({ ...g.coords, ...cell });
  }
  const key = (c: PublishedRow) => [c.resolver, c.transport, c.mode, c.network, c.site].join('\u0000');
  return cells.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** Publishes due epochs once and answers filters from what was published; see the lifecycle note above. */
export class Publisher {
  readonly opts: PublicationOptions;
  private readonly published = new Map<string, StoredPublication>();
  private updating: Promise<void> | null = null;
  private checkedAt = -Infinity;
  private lastDue = '';
  private dirty = false;

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
    await this.update();
    const epochs = [...this.published.values()]
      .filter((p) => filter.epoch === undefined || p.epoch === filter.epoch)
      .sort((a, b) => (a.epoch < b.epoch ? -1 : 1));
    const match = (c: PublishedRow) =>
      (filter.resolver === undefined || c.resolver === filter.resolver) &&
      (filter.transport === undefined || c.transport === filter.transport) &&
      (filter.network === undefined || c.network === filter.network) &&
      (filter.site === undefined || c.site === filter.site);
    return {
      epsilon: this.opts.epsilon,
      minPages: this.opts.minPages,
      delayHours: this.opts.delayMs / 3_600_000,
      epochs: epochs.map(({ epoch, publishedAt, epsilon, minPages }) => ({ epoch, publishedAt, epsilon, minPages })),
      cells: epochs.flatMap((p) => p.cells.filter(match)),
    };
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
    const keep = new Set(due);
    for (const epoch of this.published.keys()) if (!keep.has(epoch)) this.published.delete(epoch);
    const missing = due.filter((e) => !this.published.has(e));
    for (const p of await this.store.publications(missing)) this.published.set(p.epoch, p);
    const unpublished = missing.filter((e) => !this.published.has(e));
    for (const epoch of await this.store.epochsWithData(unpublished)) {
      const cells = publishEpoch(epoch, await this.store.epochResults(epoch), this.opts);
      this.published.set(epoch, await this.store.publish({ epoch, epsilon: this.opts.epsilon, minPages: this.opts.minPages, cells }));
    }
  }
}
