// The opt-in upload (extension/src/background/upload-build.ts for what a batch holds). Off until the person turns it on with a
// collector address. Each finished measurement's history entry becomes an upload page, with at most
// PERSON_CAP.resultsPerPage of its results (a random sample), built into its own batch at once (one page per batch:
// common/upload-batch.ts): fixed bytes, a random key (the collector's idempotency key) and a random deletion token, so
// the preview is byte for byte what goes out. Of a UTC day's pages at most PERSON_CAP.pagesPerDay are kept, a uniform
// random sample (reservoir sampling as they arrive: common/privacy-budget.ts states what that cap buys); they wait in
// `pending` until the day is over (or the person sends now), then go to the queue in storage.local and are sent one at
// a time, a random gap apart, oldest first:
// acknowledged (2xx, including "duplicate": an earlier try had arrived) → the list of sent batches, whose tokens let
// the person delete them later; refused for what they are (4xx other than 408/429) → the refused list, with the
// collector's code, never retried; anything else (offline, 5xx, 429, timeout) → retried with exponential backoff and
// jitter, honouring Retry-After. A retry sends the same key and bytes, so nothing is counted twice; the queue lives in
// storage, so nothing is lost offline, on a browser restart or a killed worker. Pausing holds the queue. What was
// queued for one collector goes there or nowhere: a change of collector drops it.
import { DELETION_TOKEN_HEADER } from '../../../common/upload-batch.js';
import { PERSON_CAP } from '../../../common/privacy-budget.js';
import { buildBatch, sampleResults, uploadPage } from './upload-build.js';
import type { HistoryEntry } from '../history.js';
import type { UploadPage } from '../../../common/upload-batch.js';
import type { Settings } from '../settings.js';
import type { UploadStatus } from '../messages/upload.js';
import { QueuedArea, type StorageArea } from './storage.js';

export const UPLOAD_KEYS = { pending: 'upload:pending', queue: 'upload:queue', sent: 'upload:sent', refused: 'upload:refused', days: 'upload:days' } as const;
export const UPLOAD_TIMING = { retryBaseMs: 15_000, retryMaxMs: 3_600_000, requestTimeoutMs: 30_000, gapMs: { min: 360_000, max: 3_600_000 }, afterDayMs: { min: 0, max: 3_600_000 } } as const;
export const UPLOAD_CAPS = { queue: 200, sent: 5_000, refused: 100 } as const;

/** The UTC day of an upload hour ("2026-11-21T14Z") or of a time. */
export function dayOf(at: string | number): string {
  return typeof at === 'string' ? at.slice(0, 10) : new Date(at).toISOString().slice(0, 10);
}

/** A page kept for upload, its batch already built (the preview shows these bytes). */
interface Pending {
  page: UploadPage;
  at: number;
  /** dayOf(page.hour). */
  day: string;
  key: string;
  token: string;
  body: string;
  /** The page's host: kept here only (an upload names a popular site or "other"), so an exclusion can purge it. */
  host?: string;
  /** The collector uploads were on for when it was queued: it goes there or nowhere (absent: stored before 2026-11-26). */
  collector?: string;
}
export interface QueuedBatch {
  key: string;
  /** The hosts of its pages, kept here only (never sent), so an exclusion can purge the batch. */
  hosts?: string[];
  /** The collector its pages were queued for (absent: stored before 2026-11-26). */
  collector?: string;
  token: string;
  body: string;
  pages: number;
  createdAt: number;
  attempts: number;
  nextAt: number;
  lastError: { code: string; message: string } | null;
}
export interface SentBatch {
  key: string;
  token: string;
  pages: number;
  at: number;
  collector: string;
}
interface RefusedBatch {
  key: string;
  pages: number;
  at: number;
  status: number;
  code: string;
  message: string;
}

export interface UploaderDeps {
  area: StorageArea;
  loadSettings(): Promise<Settings>;
  fetch(url: string, init: { method: string; headers: Record<string, string>; body?: string; signal: AbortSignal }): Promise<{ status: number; headers: { get(name: string): string | null }; text(): Promise<string> }>;
  /** `bytes` random bytes as base64url. */
  randomToken(bytes: number): string;
  /** A uniform number in [0, 1) for the gaps between batches (default Math.random). */
  random?(): number;
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
  log(message: string): void;
}

/** Per UTC day: pages measured while uploads were on, and how many of the day's kept pages were sealed already. */
interface DayCount {
  seen: number;
  sealed: number;
}

interface State {
  pending: Pending[];
  queue: QueuedBatch[];
  sent: SentBatch[];
  refused: RefusedBatch[];
  /** Today's and yesterday's counts only: a page of an older day is not uploaded (its day is published by then). */
  days: Record<string, DayCount>;
}

export class Uploader {
  private readonly lock: QueuedArea;
  private sending: string | null = null;
  private timer: unknown = null;

  constructor(private readonly deps: UploaderDeps) {
    this.lock = new QueuedArea(deps.area, (err) => deps.log(`upload: ${String(err)}`));
  }

  /** A finished measurement's history entry: offered to its day's sample when uploads are on. */
  onHistory(entry: HistoryEntry): Promise<void> {
    return this.serial(async (s, settings) => {
      if (!settings.upload.enabled) return;
      const whole = uploadPage(entry);
      if (!whole) return;
      const page = sampleResults(whole, PERSON_CAP.resultsPerPage, this.random);
      const day = dayOf(page.hour);
      const now = this.deps.now();
      if (day < dayOf(now - 86_400_000)) return; // older than yesterday: published (or about to be) without it
      const { batch, body } = buildBatch(page, settings.upload.network, this.deps.randomToken(24), () => now);
      this.admit(s, { page, at: now, day, key: batch.key, token: this.deps.randomToken(32), body, host: entry.host, collector: settings.upload.collector });
    }).then(() => this.kick());
  }

  /**
   * Reservoir sampling (Algorithm R) of a day's pages into PERSON_CAP.pagesPerDay slots: the first ones fill the free
   * slots; the n-th takes slot j, a uniform draw from [0, n), when j is a slot, else it is dropped. A slot whose page
   * was sealed already (the person sent early) is not taken back: the cap holds either way.
   */
  private admit(s: State, p: Pending): void {
    const count = (s.days[p.day] ??= { seen: 0, sealed: 0 });
    count.seen++;
    for (const d of Object.keys(s.days)) if (d < dayOf(this.deps.now() - 86_400_000)) delete s.days[d];
    const mine = s.pending.filter((x) => x.day === p.day);
    if (count.sealed + mine.length < PERSON_CAP.pagesPerDay) {
      s.pending.push(p);
      return;
    }
    const slot = Math.floor(this.random() * count.seen) - count.sealed;
    if (slot >= 0 && slot < mine.length) s.pending[s.pending.indexOf(mine[slot]!)] = p;
  }

  private readonly random = (): number => (this.deps.random ?? Math.random)();

  /**
   * A site was excluded: its pages waiting to be uploaded are dropped, and so is every sealed batch holding one (the
   * batch's other pages with it: a batch is signed as a whole). How many pages and batches.
   */
  purge(excluded: (host: string) => boolean): Promise<{ pages: number; batches: number }> {
    return this.serial(async (s) => {
      const before = { pages: s.pending.length, batches: s.queue.length };
      s.pending = s.pending.filter((p) => !(p.host !== undefined && excluded(p.host)));
      s.queue = s.queue.filter((b) => b.key === this.sending || !(b.hosts ?? []).some(excluded));
      return { pages: before.pages - s.pending.length, batches: before.batches - s.queue.length };
    });
  }

  /**
   * upload-preview: the next batch exactly as it will be sent, or null: the queue's head, else the first page kept for
   * upload (its bytes are fixed; a later page of its day may still take its place in the day's sample).
   */
  preview(): Promise<{ ok: true; batch: { key: string; pages: number; body: string } | null }> {
    return this.serial(async (s, settings) => {
      this.dropOthers(s, settings.upload.collector);
      const head = s.queue[0] ?? (settings.upload.enabled ? s.pending[0] : undefined);
      return { ok: true as const, batch: head ? { key: head.key, pages: 1, body: head.body } : null };
    });
  }

  /** upload-status. */
  status(): Promise<UploadStatus> {
    return this.serial(async (s, settings) => ({
      ok: true as const,
      enabled: settings.upload.enabled,
      paused: settings.upload.paused,
      collector: settings.upload.collector,
      pendingPages: s.pending.length,
      today: this.today(s),
      queued: s.queue.map(({ token: _t, body, ...q }) => ({ ...q, bytes: new TextEncoder().encode(body).length })),
      sent: s.sent.map(({ token: _t, ...b }) => b),
      refused: s.refused,
      sending: this.sending,
    }), false);
  }

  /** Today's pages: measured while uploads were on, kept for upload (sealed or waiting), and the cap. */
  private today(s: State): UploadStatus['today'] {
    const day = dayOf(this.deps.now());
    const count = s.days[day] ?? { seen: 0, sealed: 0 };
    return { day, measured: count.seen, kept: count.sealed + s.pending.filter((p) => p.day === day).length, cap: PERSON_CAP.pagesPerDay };
  }

  /**
   * upload-flush: seal what is pending, today's pages too (today's sample is then final), and send now: the first
   * batch at once, the others spaced as always (retry times reset).
   */
  async flush(): Promise<UploadStatus> {
    await this.serial(async (s, settings) => {
      if (s.pending.length > 0 && settings.upload.enabled) this.seal(s, () => true, 0);
      let at = this.deps.now();
      for (const [i, q] of s.queue.entries()) {
        if (i > 0) at += this.gap();
        q.nextAt = at;
      }
    });
    await this.kick();
    return this.status();
  }

  /** upload-delete: asks the collector to delete every batch sent; returns how many were deleted and which failed. */
  async deleteSent(): Promise<{ ok: true; deleted: number; failed: Array<{ key: string; message: string }> }> {
    const { sent } = await this.serial(async (s) => ({ sent: [...s.sent] }), false);
    const gone = new Set<string>();
    const failed: Array<{ key: string; message: string }> = [];
    for (const b of sent) {
      try {
        const res = await this.request(`${b.collector.replace(/\/$/, '')}/v1/batches/${encodeURIComponent(b.key)}`, { method: 'DELETE', headers: { [DELETION_TOKEN_HEADER]: b.token } });
        // 404: the collector has no such batch (already deleted): nothing left to delete either way.
        if (res.status === 200 || res.status === 204 || res.status === 404) gone.add(b.key);
        else failed.push({ key: b.key, message: `HTTP ${res.status}` });
      } catch (err) {
        failed.push({ key: b.key, message: String((err as Error).message ?? err) });
      }
    }
    await this.serial(async (s) => {
      s.sent = s.sent.filter((b) => !gone.has(b.key));
    });
    return { ok: true, deleted: gone.size, failed };
  }

  /** Sends due batches, one at a time, until none is due; then sets a timer for the next one. */
  async kick(): Promise<void> {
    if (this.sending !== null) return;
    for (let round = 0; round < UPLOAD_CAPS.queue; round++) {
      const due = await this.serial(async (s, settings) => {
        this.dropOthers(s, settings.upload.collector);
        const today = dayOf(this.deps.now());
        if (settings.upload.enabled) this.seal(s, (p) => p.day < today, this.afterDay());
        if (!settings.upload.enabled || settings.upload.paused) return null;
        const head = s.queue[0];
        return head && head.nextAt <= this.deps.now() ? { batch: { ...head }, collector: settings.upload.collector } : null;
      });
      if (!due) break;
      this.sending = due.batch.key;
      let outcome: Outcome;
      try {
        outcome = await this.post(due.collector, due.batch);
      } finally {
        this.sending = null;
      }
      await this.serial(async (s) => this.apply(s, due.batch.key, due.collector, outcome));
      if (outcome.kind === 'retry') break;
    }
    await this.schedule();
  }

  /**
   * Pages and batches queued while uploads were on for another collector: the person agreed to send them there, not
   * here, so they are dropped (with a log line), never sent to the collector set now.
   */
  private dropOthers(s: State, collector: string): void {
    const mine = (c: string | undefined) => c === undefined || c === collector;
    const before = { pages: s.pending.length, batches: s.queue.length };
    s.pending = s.pending.filter((p) => mine(p.collector));
    s.queue = s.queue.filter((b) => b.key === this.sending || mine(b.collector));
    const pages = before.pages - s.pending.length;
    const batches = before.batches - s.queue.length;
    if (pages || batches) this.deps.log(`upload: ${pages} pages and ${batches} batches queued for another collector were dropped`);
  }

  /**
   * A random gap between two batches' sends, 6 to 60 minutes: longer than the collector keeps an idle connection (5 s)
   * and than the front proxies people put before it do (nginx 75 s, Caddy 5 min), so batches do not go on one
   * connection a proxy's log would tie to one client. A day's three batches still arrive before it is published.
   */
  private gap(): number {
    const { min, max } = UPLOAD_TIMING.gapMs;
    return min + this.random() * (max - min);
  }

  /** A random wait after a day ends before its pages go, so that not every client sends at midnight. */
  private afterDay(): number {
    const { min, max } = UPLOAD_TIMING.afterDayMs;
    return min + this.random() * (max - min);
  }

  /**
   * Moves the pending pages `due` says to the queue: the first `lead` ms from now (or a gap after the queue's last),
   * each next a random gap after the one before it.
   */
  private seal(s: State, due: (p: Pending) => boolean, lead: number): void {
    const sealing = s.pending.filter(due);
    if (sealing.length === 0) return;
    s.pending = s.pending.filter((p) => !due(p));
    const now = this.deps.now();
    let at = s.queue.length ? Math.max(now, s.queue[s.queue.length - 1]!.nextAt) + this.gap() : now + lead;
    for (const p of sealing) {
      (s.days[p.day] ??= { seen: 1, sealed: 0 }).sealed++;
      const hosts = typeof p.host === 'string' ? [p.host] : [];
      s.queue.push({ key: p.key, hosts, collector: p.collector, token: p.token, body: p.body, pages: 1, createdAt: now, attempts: 0, nextAt: at, lastError: null });
      at += this.gap();
    }
    if (s.queue.length > UPLOAD_CAPS.queue) {
      const dropped = s.queue.splice(0, s.queue.length - UPLOAD_CAPS.queue);
      this.deps.log(`upload: the queue is full; the ${dropped.length} oldest batches were dropped`);
    }
  }

  private async post(collector: string, b: QueuedBatch): Promise<Outcome> {
    try {
      const res = await this.request(`${collector.replace(/\/$/, '')}/v1/batches`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [DELETION_TOKEN_HEADER]: b.token },
        body: b.body,
      });
      const text = await res.text().catch(() => '');
      let reply: { code?: unknown; message?: unknown } = {};
      try {
        reply = JSON.parse(text) as typeof reply;
      } catch {
        // not JSON (a proxy's error page): the status decides
      }
      const code = typeof reply.code === 'string' ? reply.code.slice(0, 64) : `http-${res.status}`;
      const message = typeof reply.message === 'string' ? reply.message.slice(0, 300) : `HTTP ${res.status}`;
      if (res.status >= 200 && res.status < 300) return { kind: 'sent' };
      if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) return { kind: 'refused', status: res.status, code, message };
      const retryAfter = Number(res.headers.get('retry-after'));
      return { kind: 'retry', code, message, afterMs: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : null };
    } catch (err) {
      return { kind: 'retry', code: 'unreachable', message: String((err as Error).message ?? err).slice(0, 300), afterMs: null };
    }
  }

  private apply(s: State, key: string, collector: string, o: Outcome): void {
    const i = s.queue.findIndex((q) => q.key === key);
    if (i === -1) return; // cleared meanwhile
    const b = s.queue[i]!;
    const now = this.deps.now();
    if (o.kind === 'sent') {
      s.queue.splice(i, 1);
      s.sent.push({ key: b.key, token: b.token, pages: b.pages, at: now, collector });
      if (s.sent.length > UPLOAD_CAPS.sent) s.sent.splice(0, s.sent.length - UPLOAD_CAPS.sent);
    } else if (o.kind === 'refused') {
      s.queue.splice(i, 1);
      s.refused.push({ key: b.key, pages: b.pages, at: now, status: o.status, code: o.code, message: o.message });
      if (s.refused.length > UPLOAD_CAPS.refused) s.refused.splice(0, s.refused.length - UPLOAD_CAPS.refused);
      this.deps.log(`upload: the collector refused batch ${b.key}: ${o.code}: ${o.message}`);
    } else {
      b.attempts++;
      const backoff = Math.min(UPLOAD_TIMING.retryMaxMs, UPLOAD_TIMING.retryBaseMs * 2 ** Math.min(b.attempts - 1, 20));
      // Full jitter over the upper half, so many clients coming back online do not retry in step.
      const wait = Math.max(o.afterMs ?? 0, backoff / 2 + Math.random() * (backoff / 2));
      b.nextAt = now + Math.min(wait, UPLOAD_TIMING.retryMaxMs);
      b.lastError = { code: o.code, message: o.message };
    }
  }

  private async schedule(): Promise<void> {
    const next = await this.serial(async (s, settings) => {
      if (!settings.upload.enabled || settings.upload.paused) return null;
      const times = s.queue.map((q) => q.nextAt);
      // The pending pages are sealed when their day is over: the next UTC midnight.
      if (s.pending.length > 0) times.push(Date.parse(`${dayOf(this.deps.now())}T00:00:00Z`) + 86_400_000);
      return times.length ? Math.min(...times) : null;
    }, false);
    if (this.timer !== null) this.deps.clearTimer(this.timer);
    this.timer = next === null ? null : this.deps.setTimer(() => {
      this.timer = null;
      void this.kick();
    }, Math.max(0, next - this.deps.now()));
  }

  private request(url: string, init: { method: string; headers: Record<string, string>; body?: string }) {
    return this.deps.fetch(url, { ...init, signal: AbortSignal.timeout(UPLOAD_TIMING.requestTimeoutMs) });
  }

  /** Runs `fn` on the stored state, one at a time; writes the state back when `write`. */
  private serial<T>(fn: (s: State, settings: Settings) => Promise<T>, write = true): Promise<T> {
    return this.lock.run(async (area) => {
      const [got, settings] = await Promise.all([area.get(Object.values(UPLOAD_KEYS)), this.deps.loadSettings()]);
      const list = <X>(k: string) => (Array.isArray(got[k]) ? (got[k] as X[]) : []);
      const days = got[UPLOAD_KEYS.days];
      const s: State = {
        // Pages stored by an earlier version (no batch built, no day sample) are not uploaded.
        pending: list<Pending>(UPLOAD_KEYS.pending).filter((p) => typeof p.body === 'string' && typeof p.day === 'string'),
        queue: list(UPLOAD_KEYS.queue), sent: list(UPLOAD_KEYS.sent), refused: list(UPLOAD_KEYS.refused),
        days: typeof days === 'object' && days !== null && !Array.isArray(days) ? (days as Record<string, DayCount>) : {},
      };
      const out = await fn(s, settings);
      if (write) await area.set({ [UPLOAD_KEYS.pending]: s.pending, [UPLOAD_KEYS.queue]: s.queue, [UPLOAD_KEYS.sent]: s.sent, [UPLOAD_KEYS.refused]: s.refused, [UPLOAD_KEYS.days]: s.days });
      return out;
    });
  }
}

type Outcome =
  | { kind: 'sent' }
  | { kind: 'refused'; status: number; code: string; message: string }
  | { kind: 'retry'; code: string; message: string; afterMs: number | null };
