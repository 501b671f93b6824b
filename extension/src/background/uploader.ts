// The opt-in upload (extension/src/background/upload-build.ts for what a batch holds). Off until the person turns it on with a
// collector address. Each finished measurement's history entry becomes an upload page in `pending`; pending pages are
// sealed, each into its own batch (one page per batch: common/upload-batch.ts) — fixed bytes, a random key (the
// collector's idempotency key) and a random deletion token — when 20 are pending, when the oldest has waited an hour,
// or when the person asks for the preview (so the preview is byte for byte what goes out). Batches wait in a queue in storage.local and are sent one at a time, oldest first:
// acknowledged (2xx, including "duplicate": an earlier try had arrived) → the list of sent batches, whose tokens let
// the person delete them later; refused for what they are (4xx other than 408/429) → the refused list, with the
// collector's code, never retried; anything else (offline, 5xx, 429, timeout) → retried with exponential backoff and
// jitter, honouring Retry-After. A retry sends the same key and bytes, so nothing is counted twice; the queue lives in
// storage, so nothing is lost offline, on a browser restart or a killed worker. Pausing holds the queue. What was
// queued for one collector goes there or nowhere: a change of collector drops it.
import { DELETION_TOKEN_HEADER } from '../../../common/upload-batch.js';
import { buildBatches, uploadPage } from './upload-build.js';
import type { HistoryEntry } from '../history.js';
import type { UploadPage } from '../../../common/upload-batch.js';
import type { Settings } from '../settings.js';
import type { UploadStatus } from '../messages/upload.js';
import { QueuedArea, type StorageArea } from './storage.js';

export const UPLOAD_KEYS = { pending: 'upload:pending', queue: 'upload:queue', sent: 'upload:sent', refused: 'upload:refused' } as const;
export const UPLOAD_TIMING = { sealPages: 20, sealAfterMs: 3_600_000, retryBaseMs: 15_000, retryMaxMs: 3_600_000, requestTimeoutMs: 30_000, gapMs: { min: 6_000, max: 90_000 } } as const;
export const UPLOAD_CAPS = { pending: 2_000, queue: 200, sent: 5_000, refused: 100 } as const;

interface Pending {
  page: UploadPage;
  at: number;
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

interface State {
  pending: Pending[];
  queue: QueuedBatch[];
  sent: SentBatch[];
  refused: RefusedBatch[];
}

export class Uploader {
  private readonly lock: QueuedArea;
  private sending: string | null = null;
  private timer: unknown = null;

  constructor(private readonly deps: UploaderDeps) {
    this.lock = new QueuedArea(deps.area, (err) => deps.log(`upload: ${String(err)}`));
  }

  /** A finished measurement's history entry: queued as a page when uploads are on. */
  onHistory(entry: HistoryEntry): Promise<void> {
    return this.serial(async (s, settings) => {
      if (!settings.upload.enabled) return;
      const page = uploadPage(entry);
      if (!page) return;
      s.pending.push({ page, at: this.deps.now(), host: entry.host, collector: settings.upload.collector });
      if (s.pending.length > UPLOAD_CAPS.pending) s.pending.splice(0, s.pending.length - UPLOAD_CAPS.pending);
      if (s.pending.length >= UPLOAD_TIMING.sealPages) this.seal(s, settings);
    }).then(() => this.kick());
  }

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

  /** upload-preview: the next batch exactly as it will be sent (pending pages are sealed for it), or null. */
  preview(): Promise<{ ok: true; batch: { key: string; pages: number; body: string } | null }> {
    return this.serial(async (s, settings) => {
      this.dropOthers(s, settings.upload.collector);
      if (s.pending.length > 0 && settings.upload.enabled) this.seal(s, settings);
      const head = s.queue[0];
      return { ok: true as const, batch: head ? { key: head.key, pages: head.pages, body: head.body } : null };
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
      queued: s.queue.map(({ token: _t, body, ...q }) => ({ ...q, bytes: new TextEncoder().encode(body).length })),
      sent: s.sent.map(({ token: _t, ...b }) => b),
      refused: s.refused,
      sending: this.sending,
    }), false);
  }

  /** upload-flush: seal what is pending and send now: the first batch at once, the others spaced as always (retry times reset). */
  async flush(): Promise<UploadStatus> {
    await this.serial(async (s, settings) => {
      if (s.pending.length > 0 && settings.upload.enabled) this.seal(s, settings);
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
        const sealDue = s.pending.length > 0 && s.pending[0]!.at + UPLOAD_TIMING.sealAfterMs <= this.deps.now();
        if (sealDue && settings.upload.enabled) this.seal(s, settings);
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
   * A random gap between two batches' sends, longer than the collector's keep-alive (5 s): batches sealed together do
   * not go out back to back on one connection, where a proxy's log in front of the collector would link them.
   */
  private gap(): number {
    const { min, max } = UPLOAD_TIMING.gapMs;
    return min + (this.deps.random ?? Math.random)() * (max - min);
  }

  private seal(s: State, settings: Settings): void {
    const pending = s.pending;
    s.pending = [];
    const now = this.deps.now();
    // Each batch a random gap after the one queued before it (a lone batch goes at once).
    let at = s.queue.length ? Math.max(now, s.queue[s.queue.length - 1]!.nextAt) + this.gap() : now;
    for (const p of pending) {
      const hosts = typeof p.host === 'string' ? [p.host] : [];
      for (const { batch, body } of buildBatches([p.page], settings.upload.network, () => this.deps.randomToken(24), () => now)) {
        const collector = p.collector ?? settings.upload.collector;
        s.queue.push({ key: batch.key, hosts, collector, token: this.deps.randomToken(32), body, pages: batch.pages.length, createdAt: now, attempts: 0, nextAt: at, lastError: null });
        at += this.gap();
      }
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
      if (s.pending.length > 0) times.push(s.pending[0]!.at + UPLOAD_TIMING.sealAfterMs);
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
      const s: State = { pending: list(UPLOAD_KEYS.pending), queue: list(UPLOAD_KEYS.queue), sent: list(UPLOAD_KEYS.sent), refused: list(UPLOAD_KEYS.refused) };
      const out = await fn(s, settings);
      if (write) await area.set({ [UPLOAD_KEYS.pending]: s.pending, [UPLOAD_KEYS.queue]: s.queue, [UPLOAD_KEYS.sent]: s.sent, [UPLOAD_KEYS.refused]: s.refused });
      return out;
    });
  }
}

type Outcome =
  | { kind: 'sent' }
  | { kind: 'refused'; status: number; code: string; message: string }
  | { kind: 'retry'; code: string; message: string; afterMs: number | null };
