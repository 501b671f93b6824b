// What the person's resolvers can do: the host's `probe` of every resolver in force, run when the options page asks
// (never by itself: it asks each endpoint some thirty fixed questions and handshakes), kept in storage.local so the
// options page and the popup show the last one. Cleared with the rest of the person's data.
import * as v from 'valibot';
import { CODES, failure, type Failure } from '../../../common/errors.js';
import { resolverProbes } from '../../../common/probe.js';
import type { Reply } from '../../../common/schema.js';
import type { ProbeCode, ResolverProbeView, StoredResolverProbe } from '../messages/host.js';
import type { HostConnection, RoutedReply } from './host-connection.js';
import type { SettingsStore } from './settings-store.js';
import { QueuedArea, type StorageArea } from './storage.js';
import { hostProblem } from './measure-gate.js';

/** Where the last probe is kept. */
export const PROBE_KEY = 'resolverProbe';
/** How long a probe may take: each endpoint's checks are bounded (3 s each), 16 resolvers of several endpoints. */
export const PROBE_WAIT_MS = 300_000;

const stored = v.object({
  at: v.number(),
  plainLeftOut: v.boolean(),
  resolvers: resolverProbes,
  names: v.record(v.pipe(v.string(), v.maxLength(64)), v.pipe(v.string(), v.maxLength(128))),
});

export interface ResolverProberDeps {
  host: Pick<HostConnection, 'request' | 'release' | 'status'>;
  settings: Pick<SettingsStore, 'loadSettings'>;
  local: StorageArea;
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

/** Runs the host's probe for the resolvers in force and keeps the last result. */
export class ResolverProber {
  private readonly area: QueuedArea;
  private running: Promise<ResolverProbeView | Failure<ProbeCode>> | null = null;
  private sequence = 0;

  constructor(private readonly deps: ResolverProberDeps) {
    this.area = new QueuedArea(deps.local);
  }

  /** The last probe kept (null when none, or what is kept does not check). */
  async last(): Promise<ResolverProbeView> {
    const got = (await this.area.run((a) => a.get(PROBE_KEY)))[PROBE_KEY];
    const parsed = v.safeParse(stored, got);
    return { ok: true, probe: parsed.success ? (parsed.output as StoredResolverProbe) : null };
  }

  /** Probes now (a probe already running is joined, not started again); keeps and answers the result. */
  run(): Promise<ResolverProbeView | Failure<ProbeCode>> {
    this.running ??= this.probe().finally(() => (this.running = null));
    return this.running;
  }

  /** Forgets the kept probe (the person's data is cleared). */
  clear(): Promise<void> {
    return this.area.run((a) => a.remove(PROBE_KEY));
  }

  private async probe(): Promise<ResolverProbeView | Failure<ProbeCode>> {
    const settings = await this.deps.settings.loadSettings();
    const id = `probe-${this.deps.now()}-${++this.sequence}`;
    const reply = await new Promise<Reply | { type: 'closed'; message: string } | { type: 'timeout' }>((resolve) => {
      const timer = this.deps.setTimer(() => resolve({ type: 'timeout' }), PROBE_WAIT_MS);
      const sent = this.deps.host.request({ id, type: 'probe', resolvers: settings.resolvers }, (r: RoutedReply) => {
        if (r.type === 'progress' || r.type === 'records') return;
        this.deps.clearTimer(timer);
        resolve(r);
      });
      if (!sent) {
        this.deps.clearTimer(timer);
        resolve({ type: 'closed', message: hostProblem(this.deps.host) });
      }
    });
    this.deps.host.release(id);
    if (reply.type === 'timeout') return failure(CODES.TIMEOUT, `the host's probe did not answer within ${PROBE_WAIT_MS / 1000} s`);
    if (reply.type === 'closed') return failure(CODES.HOST_NOT_CONNECTED, reply.message);
    if (reply.type === 'error') return failure(CODES.PROBE_FAILED, `${reply.code}: ${reply.message}`);
    if (reply.type !== 'probe-result') return failure(CODES.PROBE_FAILED, `the host answered a probe with ${reply.type}`);
    const probe: StoredResolverProbe = {
      at: this.deps.now(),
      plainLeftOut: reply.plainLeftOut,
      resolvers: reply.resolvers,
      names: Object.fromEntries(settings.resolvers.map((r) => [r.id, r.name])),
    };
    await this.area.run((a) => a.set({ [PROBE_KEY]: probe }));
    return { ok: true, probe };
  }
}
