// The measurement scheduler of the background: on demand (measure-start from the popup or any extension page) it
// sends the native host one `measure` request for a tab's current page and stores what streams back in storage.local
// as it arrives; an automatic sampler measures some pages on its own (sample()).
// Lifecycle: `ready` reads stored measurements back (one left `running` becomes `interrupted`); one measurement runs
// at a time (the host is asked for one page at once); `done` → `done` (or `cancelled`), `error` → `failed`, the port
// closing → `interrupted`.
import type { MessageSender } from '../messages/index.js';
import { type MeasureCode, type MeasurementMeta, type MeasureStatus } from '../messages/measure.js';
import type { PageReplies } from '../messages/page.js';
import { MAX_FRAME_BYTES, networkInfo } from '../../../common/schema.js';
import type { Settings } from '../settings.js';
import type { RoutedReply } from './host-connection.js';
import type { planMeasurement } from './measure-plan.js';
import { hostProblem, measureGate, planFor, type MeasureHost } from './measure-gate.js';
import { noteStart, SAMPLER_KEY, samplerStateOf, startsWithinHour, type SamplerState } from './sampler-state.js';
import { revivedRecord, storedRecord, type StoredRecord } from '../../../common/stored-record.js';
import { advertisedBy } from '../../../common/svcb.js';
import { CODES, failure, type Failure } from '../../../common/errors.js';
import { QueuedArea, type StorageArea } from './storage.js';
import { CHUNK_CHARS, MEASURE_CAPS, MEASURE_KEYS, PROGRESS_WRITE_MS, type IndexEntry } from './measure-keys.js';

export type { MeasureHost } from './measure-gate.js';

/**
 * What the scheduler needs from its surroundings. This module touches no browser global: storage, the host
 * connection, settings, page reports and the clock come in through deps, so it runs under Node with fakes
 * (extension/src/background/measurements.test.ts).
 */
export interface SchedulerDeps {
  /** storage.local. */
  area: StorageArea;
  host: MeasureHost;
  /** The settings in force (settings-store's loadSettings()). */
  loadSettings(): Promise<Settings>;
  /** The tab's current page record (page-records.ts report(), which applies the private-window and exclusion gate). */
  pageReport(tabId: number, sender: MessageSender): Promise<PageReplies['page-report']>;
  /** Whether the tab is in a private window; null when the tab is gone. */
  isIncognitoTab(tabId: number): Promise<boolean | null>;
  now(): number;
  newId(): string;
  log(message: string): void;
  /** Who the sampler asks page reports as (the extension's own origin: page-records answers only its pages). */
  selfSender: MessageSender;
  /** Told of each measurement that finished `done`, once it is stored with all its records (the history). */
  onDone?(meta: MeasurementMeta, records: StoredRecord[]): Promise<void>;
  /**
   * After the host's replays, the page's hosts through the browser's own resolver (Firefox: firefox-path.ts), stored
   * with the replays' records before `done`; absent where the browser offers no resolver to extensions. Never for a
   * page that went through a proxy: the browser did not resolve its names, so asking its resolver would send them
   * where the page's load never did.
   */
  ownPath?(hosts: MeasurementMeta['plan']['hosts']): Promise<StoredRecord[]>;
  /** Timers for the stall watchdog (default setTimeout/clearTimeout). */
  setTimer?(fn: () => void, ms: number): unknown;
  clearTimer?(handle: unknown): void;
  /** The stall watchdog's limit (default HOST_STALL_MS; tests with a host whose heartbeat is shortened shorten it too). */
  stallMs?: number;
}

/**
 * A running measurement that hears nothing from the host for this long has a host that stopped (a stopped process,
 * a frame that never ends): it fails with `host-stalled` and the host is restarted. The host repeats its progress at
 * least every 10 s while it measures (native-host/src/native.ts HEARTBEAT_MS), so a minute of silence is never a
 * live host, however long its lookups wait.
 */
export const HOST_STALL_MS = 60_000;

/** Why the sampler did or did not measure a page (for tests and the log). */
export type SampleOutcome = { started: true; hosts: number } | { started: false; reason: string };

interface Running {
  requestId: string;
  /** The stall watchdog (reset by every reply). */
  stall: unknown;
  meta: MeasurementMeta;
  /** Records of the open (last) chunk, rewritten as frames arrive. */
  open: StoredRecord[];
  openChars: number;
  /** Chunks (by number) whose content changed since the last write. */
  dirty: Map<number, StoredRecord[]>;
  lastMetaWrite: number;
  cancelId: string | null;
  /** Records received from the host; `meta.records` counts those whose write to storage completed. */
  received: number;
  /** A write is queued and has not started (later changes ride on it). */
  writeQueued: boolean;
  /** Fields of the meta to apply with the next write (the final state). */
  final: Partial<MeasurementMeta>;
}


/** The measurement scheduler (see the lifecycle note at the top, and load(), append(), prune(), sample()). */
export class MeasurementScheduler {
  /** Resolves once stored measurements are read back (and unfinished ones marked interrupted). */
  readonly ready: Promise<void>;
  private index: IndexEntry[] = [];
  private readonly metas = new Map<string, MeasurementMeta>();
  private running: Running | null = null;
  /** Storage writes, in order (a later state never lands before an earlier one). */
  private readonly writes: QueuedArea;

  constructor(private readonly deps: SchedulerDeps) {
    this.writes = new QueuedArea(deps.area, (err) => deps.log(`measurements: a storage write failed: ${String(err)}`));
    this.ready = this.load().catch((err) => this.deps.log(`measurements: could not read stored measurements: ${String(err)}`));
  }

  /** measure-start: starts measuring the tab's current page; its status, or why not (stable codes). */
  async start(tabId: number, sender: MessageSender): Promise<MeasureStatus | Failure<MeasureCode>> {
    await this.ready;
    const gate = await measureGate(this.deps, tabId, sender);
    if (!gate.ok) return gate;
    const { page, settings } = gate;
    if (this.running) {
      if (this.running.meta.pageId === page.pageId) return this.status(tabId, sender, false);
      return failure(CODES.BUSY, `another page (${this.running.meta.host}) is being measured; try again when it finished`);
    }
    const plan = planFor(this.deps.host, page, settings);
    if ('ok' in plan) return plan;
    const begun = await this.begin(tabId, page, plan);
    if (!begun.ok) return begun;
    return this.status(tabId, sender, false);
  }

  /**
   * The automatic sampler: measures the tab's page when consent was given, the hourly budget allows, nothing else
   * runs, and some of its hosts were not measured within the re-measure window (only those are sent).
   * It is called a few seconds after a top-level page finished loading. The budget: at most `budget.pagesPerHour`
   * pages per rolling hour (0: off); the window: hosts measured (automatically or on demand) within
   * `budget.remeasureAfterHours` are not sent again; it never interrupts a running measurement.
   */
  async sample(tabId: number): Promise<SampleOutcome> {
    await this.ready;
    if (this.running) return { started: false, reason: CODES.BUSY };
    const settings = await this.deps.loadSettings();
    if (!settings.consent.given) return { started: false, reason: CODES.NO_CONSENT };
    if (settings.budget.pagesPerHour <= 0) return { started: false, reason: 'sampler-off' };
    const now = this.deps.now();
    const state = await this.samplerState();
    if (startsWithinHour(state, now).length >= settings.budget.pagesPerHour) return { started: false, reason: 'budget' };
    const gate = await measureGate(this.deps, tabId, this.deps.selfSender);
    if (!gate.ok) return { started: false, reason: gate.code };
    if (this.running) return { started: false, reason: CODES.BUSY };
    const windowMs = settings.budget.remeasureAfterHours * 3600_000;
    const fresh = gate.page.hosts.filter((h) => !(now - (state.hosts[h.name] ?? -Infinity) < windowMs));
    const plan = planFor(this.deps.host, { ...gate.page, hosts: fresh }, gate.settings);
    if ('ok' in plan) return { started: false, reason: fresh.length ? CODES.NO_MEASURABLE_HOSTS : 'recently-measured' };
    const begun = await this.begin(tabId, gate.page, plan, 'auto');
    return begun.ok ? { started: true, hosts: plan.summary.hosts.length } : { started: false, reason: begun.code };
  }

  /**
   * Sends the request and records the new measurement (memory at once, storage through the queue). The request is
   * for the page's hosts at the offsets the page first needed them, the resolvers in force, A and AAAA, cold and
   * warm, schedule `replay`, MEASURE_REPEAT repeats, priming.
   */
  private async begin(
    tabId: number,
    page: MeasurementMeta['page'],
    plan: NonNullable<ReturnType<typeof planMeasurement>>,
    trigger: MeasurementMeta['trigger'] = 'manual',
  ): Promise<{ ok: true } | Failure<MeasureCode>> {
    const requestId = `measure-${this.deps.newId()}`;
    // The host ends itself on a frame over 1 MiB (the stream is out of step): sending one would only interrupt this
    // measurement, and every one after it with the same settings (16 resolvers × 64 KiB CAs is possible).
    const bytes = new TextEncoder().encode(JSON.stringify({ ...plan.request, id: requestId })).length;
    if (bytes > MAX_FRAME_BYTES) return failure(CODES.FRAME_TOO_LARGE, `the measure request would be ${bytes} bytes, over the native host's ${MAX_FRAME_BYTES}-byte limit: fewer resolvers, or smaller extra CA certificates, in the options`);
    const now = this.deps.now();
    const meta: MeasurementMeta = {
      version: 1, pageId: page.pageId, tabId, url: page.url, host: page.host, state: 'running', trigger, startedAt: now, updatedAt: now, finishedAt: null,
      done: 0, total: 0, records: 0, chunks: 0, chars: 0, plan: plan.summary, page, seed: null, primed: null, summary: null, error: null,
    };
    const run: Running = { requestId, stall: null, meta, open: [], openChars: 0, dirty: new Map(), lastMetaWrite: now, cancelId: null, received: 0, writeQueued: false, final: {} };
    const sent = this.deps.host.request({ ...plan.request, id: requestId }, (reply) => this.onReply(run, reply));
    if (!sent) return failure(CODES.HOST_NOT_CONNECTED, hostProblem(this.deps.host));
    this.running = run;
    this.watch(run);
    // A measurement of this page made before is replaced: its keys go (before any of the new run's writes, which
    // the write queue orders after this one).
    const old = this.metas.get(page.pageId);
    this.metas.set(page.pageId, meta);
    this.index = this.index.filter((e) => e.pageId !== page.pageId);
    this.index.push({ pageId: page.pageId, tabId, startedAt: now, chars: 0 });
    await this.writes.run(async () => {
      if (old) await this.deps.area.remove(Array.from({ length: old.chunks }, (_, i) => MEASURE_KEYS.chunk(page.pageId, i)));
      await this.prune();
      const sampler = noteStart(await this.samplerState(), now, plan.summary.hosts.map((h) => h.name), trigger === 'auto');
      await this.deps.area.set({ [MEASURE_KEYS.meta(page.pageId)]: { ...meta }, [MEASURE_KEYS.index]: this.index.map((e) => ({ ...e })), [SAMPLER_KEY]: sampler });
    });
    return { ok: true };
  }

  private async samplerState(): Promise<SamplerState> {
    return samplerStateOf((await this.deps.area.get(SAMPLER_KEY))[SAMPLER_KEY]);
  }

  /** measure-status: the tab's latest measurement (progress, or finished with `records` when asked) and what blocks a new one. */
  async status(tabId: number, sender: MessageSender, withRecords: boolean): Promise<MeasureStatus | Failure<MeasureCode>> {
    await this.ready;
    const report = await this.deps.pageReport(tabId, sender);
    // Pending writes first, so a finished measurement's count, state and records agree.
    await this.writes.settled();
    if (!report.ok && report.code === CODES.BAD_SENDER) return failure(CODES.BAD_SENDER, report.message);
    const pageId = report.ok ? report.record.pageId : null;
    let meta: MeasurementMeta | null = null;
    if (report.ok) meta = this.metas.get(report.record.pageId) ?? null;
    else if (report.code === CODES.NO_PAGE) meta = this.latestOfTab(tabId);
    const gate = await measureGate(this.deps, tabId, sender, report);
    let blocked: MeasureStatus['blocked'] = gate.ok ? null : { code: gate.code, message: gate.message };
    if (!blocked && !(this.running && this.running.meta.pageId === pageId)) {
      if (this.running) blocked = { code: CODES.BUSY, message: `another page (${this.running.meta.host}) is being measured` };
      else if (gate.ok) {
        const plan = planFor(this.deps.host, gate.page, gate.settings);
        if ('ok' in plan) blocked = { code: plan.code, message: plan.message, withheld: plan.withheld };
      }
    }
    const out: MeasureStatus = { ok: true, tabId, pageId, measurement: meta ? { ...meta } : null, blocked };
    if (withRecords && meta) out.records = await this.records(meta.pageId);
    return out;
  }

  /** measure-cancel: asks the host to stop the tab's running measurement (finished records are kept). */
  async cancel(tabId: number, sender: MessageSender): Promise<MeasureStatus | Failure<MeasureCode>> {
    await this.ready;
    const run = this.running;
    if (!run || run.meta.tabId !== tabId) return failure(CODES.NOT_RUNNING, 'nothing is being measured for this tab');
    if (run.cancelId === null) {
      run.cancelId = `cancel-${this.deps.newId()}`;
      const id = run.cancelId;
      // The host answers a cancel only when it fails (the target already finished): then the measurement's own
      // `done` has come or comes, and this reply is only released.
      const sent = this.deps.host.request({ id, type: 'cancel', target: run.requestId }, () => this.deps.host.release(id));
      if (!sent) this.finish(run, 'interrupted', { code: CODES.HOST_DISCONNECTED, message: 'the host went away while cancelling' });
    }
    return this.status(tabId, sender, false);
  }

  /** The stored records of a page's measurement, in arrival order. */
  async records(pageId: string): Promise<StoredRecord[]> {
    const meta = this.metas.get(pageId);
    if (!meta) return [];
    await this.writes.settled();
    const keys = Array.from({ length: meta.chunks }, (_, i) => MEASURE_KEYS.chunk(pageId, i));
    if (keys.length === 0) return [];
    const got = await this.deps.area.get(keys);
    return keys.flatMap((k) => (Array.isArray(got[k]) ? (got[k] as StoredRecord[]).map(revivedRecord) : []));
  }

  /** data-clear: forgets every measurement in memory (settings-store removed the keys) and stops a running one. */
  async clear(): Promise<void> {
    this.stopRunning();
    this.metas.clear();
    this.index = [];
    await this.writes.settled();
  }

  /** An excluded site: its stored measurements go from memory and storage, a running one is cancelled; how many. */
  async purge(excluded: (host: string) => boolean): Promise<number> {
    await this.ready;
    const ids = new Set([...this.metas.values()].filter((m) => excluded(m.host)).map((m) => m.pageId));
    if (this.running && excluded(this.running.meta.host)) ids.add(this.stopRunning()!);
    await this.writes.run(async () => {
      for (const id of ids) await this.forget(id);
    });
    return ids.size;
  }

  /** Stops the running measurement (the host is asked to cancel it); its page id, or null when none ran. */
  private stopRunning(): string | null {
    const run = this.running;
    this.running = null;
    if (!run) return null;
    this.deps.host.release(run.requestId);
    this.deps.host.request({ id: `cancel-${this.deps.newId()}`, type: 'cancel', target: run.requestId }, () => undefined);
    return run.meta.pageId;
  }

  // ---- inside ----

  /**
   * Reads the index and every measurement's meta back from storage.local (behind `ready`). A measurement stored as
   * `running` belonged to a background that stopped (a killed service worker or a browser restart takes the host
   * process and its work with it), so it becomes `interrupted`: its finished records stay, it is not resumed, and the
   * popup offers to measure again.
   */
  private async load(): Promise<void> {
    const got = await this.deps.area.get(MEASURE_KEYS.index);
    const index = Array.isArray(got[MEASURE_KEYS.index]) ? (got[MEASURE_KEYS.index] as IndexEntry[]) : [];
    const metas = index.length ? await this.deps.area.get(index.map((e) => MEASURE_KEYS.meta(e.pageId))) : {};
    const changed: Record<string, unknown> = {};
    for (const e of index) {
      const m = metas[MEASURE_KEYS.meta(e.pageId)] as MeasurementMeta | undefined;
      if (!m || m.version !== 1 || typeof m.pageId !== 'string') continue;
      // Stored before protocol 2: a host's first-needed time was `at`.
      m.plan.hosts = m.plan.hosts.map((h) => (h.firstNeededMs === undefined ? { name: h.name, firstNeededMs: (h as unknown as { at?: number }).at ?? 0 } : h));
      if (m.state === 'running') {
        m.state = 'interrupted';
        m.error = { code: 'interrupted', message: 'the extension’s background stopped during the measurement (a killed service worker or a browser restart); the records it had finished are kept' };
        m.updatedAt = this.deps.now();
        changed[MEASURE_KEYS.meta(m.pageId)] = m;
      }
      this.metas.set(m.pageId, m);
      this.index.push(e);
    }
    if (Object.keys(changed).length) await this.deps.area.set(changed);
  }

  private latestOfTab(tabId: number): MeasurementMeta | null {
    for (let i = this.index.length - 1; i >= 0; i--) {
      const e = this.index[i]!;
      if (e.tabId === tabId) return this.metas.get(e.pageId) ?? null;
    }
    return null;
  }

  /** Disarms the run's stall watchdog, if armed. */
  private unwatch(run: Running): void {
    if (run.stall !== null) (this.deps.clearTimer ?? ((h: unknown) => clearTimeout(h as ReturnType<typeof setTimeout>)))(run.stall);
  }

  /** (Re)arms the run's stall watchdog. */
  private watch(run: Running): void {
    this.unwatch(run);
    run.stall = (this.deps.setTimer ?? setTimeout)(() => {
      if (this.running !== run) return;
      const message = `the native host sent nothing for ${(this.deps.stallMs ?? HOST_STALL_MS) / 1000} s; it was restarted`;
      this.finish(run, 'failed', { code: CODES.HOST_STALLED, message });
      this.deps.host.restart?.(message);
    }, this.deps.stallMs ?? HOST_STALL_MS);
  }

  private onReply(run: Running, reply: RoutedReply): void {
    if (this.running !== run) return;
    this.watch(run);
    const meta = run.meta;
    switch (reply.type) {
      case 'progress':
        meta.done = reply.done;
        meta.total = reply.total;
        meta.updatedAt = this.deps.now();
        if (meta.updatedAt - run.lastMetaWrite >= PROGRESS_WRITE_MS) this.persist(run);
        return;
      case 'records':
        // The stored records keep no answers: what the HTTPS answers advertise is kept in the meta.
        meta.advertised = advertisedBy(reply.records, meta.advertised);
        this.append(run, reply.records.map(storedRecord));
        return;
      case 'done':
        meta.seed = reply.seed;
        meta.primed = reply.primed;
        meta.summary = reply.summary;
        {
          const network = networkInfo(reply.network);
          if (network) meta.network = network;
          if (reply.edges?.length) meta.edges = reply.edges;
        }
        if (reply.cancelled || !this.deps.ownPath || meta.plan.proxied) this.finish(run, reply.cancelled ? 'cancelled' : 'done', null);
        else void this.withOwnPath(run, this.deps.ownPath);
        return;
      case 'error':
        this.finish(run, 'failed', { code: reply.code, message: reply.message });
        return;
      case 'closed':
        this.finish(run, 'interrupted', { code: CODES.HOST_DISCONNECTED, message: `the native host went away during the measurement: ${reply.message}` });
        return;
      default:
        return;
    }
  }

  /** The browser's own path once the host is done (no watchdog: the host has nothing more to say); its failure is
   * logged and the measurement stays `done` with the host's records. It starts once the host's records are written:
   * a storage write beside the lookups would hold their answers up in this process and be timed as theirs. */
  private async withOwnPath(run: Running, ownPath: NonNullable<SchedulerDeps['ownPath']>): Promise<void> {
    this.unwatch(run);
    try {
      await this.writes.settled();
      const records = await ownPath(run.meta.plan.hosts);
      if (this.running === run && records.length) this.append(run, records);
    } catch (err) {
      this.deps.log(`measurements: the browser's own lookups of ${run.meta.host} failed: ${String(err)}`);
    }
    this.finish(run, run.cancelId ? 'cancelled' : 'done', null);
  }

  /**
   * Each `records` frame is queued for writing the moment it arrives (one write queue, in arrival order), appended to
   * the current chunk key (a new key every CHUNK_CHARS); the meta's `records` counts only records whose write
   * completed, so a killed worker loses no record it ever reported as stored (a frame still being written when it
   * dies — a few ms — goes with it).
   */
  private append(run: Running, records: StoredRecord[]): void {
    const meta = run.meta;
    for (const r of records) {
      const chars = JSON.stringify(r).length + 1;
      if (run.open.length > 0 && run.openChars + chars > CHUNK_CHARS) {
        run.open = [];
        run.openChars = 0;
      }
      if (run.open.length === 0) meta.chunks++;
      run.open.push(r);
      run.openChars += chars;
      meta.chars += chars;
      run.dirty.set(meta.chunks - 1, run.open);
    }
    run.received += records.length;
    meta.updatedAt = this.deps.now();
    this.persist(run);
  }

  private finish(run: Running, state: MeasurementMeta['state'], error: MeasurementMeta['error']): void {
    if (this.running !== run) return;
    this.running = null;
    this.unwatch(run);
    this.deps.host.release(run.requestId);
    if (run.cancelId) this.deps.host.release(run.cancelId);
    const now = this.deps.now();
    // The state changes in memory only once it is stored with every record: a reader never sees `done` early.
    this.persist(run, { state, error, finishedAt: now, updatedAt: now });
    const onDone = this.deps.onDone;
    if (state === 'done' && onDone) {
      const pageId = run.meta.pageId;
      void this.records(pageId)
        .then((records) => onDone({ ...run.meta }, records))
        .catch((err) => this.deps.log(`measurements: the history entry of ${pageId} failed: ${String(err)}`));
    }
  }

  /**
   * Queues a write of the run's dirty chunks, its meta (with `final` fields, applied in memory once written) and the
   * index. Writes coalesce: while one is queued and not yet started, later calls only add to what it will write, so
   * a burst of frames costs one write, not one per frame.
   */
  private persist(run: Running, final: Partial<MeasurementMeta> = {}): void {
    run.lastMetaWrite = this.deps.now();
    Object.assign(run.final, final);
    if (run.writeQueued) return;
    run.writeQueued = true;
    void this.writes.run(async () => {
      run.writeQueued = false;
      const items: Record<string, unknown> = {};
      for (const [n, recs] of run.dirty) items[MEASURE_KEYS.chunk(run.meta.pageId, n)] = [...recs];
      run.dirty.clear();
      const stored = run.received;
      const fields = { ...run.final };
      items[MEASURE_KEYS.meta(run.meta.pageId)] = { ...run.meta, ...fields, records: stored };
      const entry = this.index.find((e) => e.pageId === run.meta.pageId);
      if (entry) {
        entry.chars = run.meta.chars;
        items[MEASURE_KEYS.index] = this.index.map((e) => ({ ...e }));
      }
      try {
        await this.deps.area.set(items);
      } finally {
        Object.assign(run.meta, fields);
      }
      // Only now are these records safe from a killed worker: measure-status counts them from here on.
      run.meta.records = Math.max(run.meta.records, stored);
    });
  }

  /** Removes measurements beyond the caps (oldest first, never the running one). */
  private async prune(): Promise<void> {
    const now = this.deps.now();
    const keep = (e: IndexEntry) => this.running?.meta.pageId === e.pageId;
    const drop: IndexEntry[] = [];
    let entries = [...this.index].sort((a, b) => a.startedAt - b.startedAt);
    for (const e of entries) if (!keep(e) && now - e.startedAt > MEASURE_CAPS.ageMs) drop.push(e);
    entries = entries.filter((e) => !drop.includes(e));
    let chars = entries.reduce((s, e) => s + e.chars, 0);
    while (entries.length > MEASURE_CAPS.pages || chars > MEASURE_CAPS.chars) {
      const oldest = entries.find((e) => !keep(e));
      if (!oldest) break;
      drop.push(oldest);
      chars -= oldest.chars;
      entries = entries.filter((e) => e !== oldest);
    }
    for (const e of drop) await this.forget(e.pageId);
  }

  /** Removes one page's measurement from memory and storage. */
  private async forget(pageId: string): Promise<void> {
    const meta = this.metas.get(pageId);
    this.metas.delete(pageId);
    this.index = this.index.filter((e) => e.pageId !== pageId);
    if (!meta) return;
    const keys = [MEASURE_KEYS.meta(pageId), ...Array.from({ length: meta.chunks }, (_, i) => MEASURE_KEYS.chunk(pageId, i))];
    await this.deps.area.remove(keys);
    await this.deps.area.set({ [MEASURE_KEYS.index]: this.index });
  }
}

