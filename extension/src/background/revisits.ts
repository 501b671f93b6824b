// The person's host revisits (extension/src/cache-savings.ts): each top-level page the sampler is offered notes when
// it needed each of its hosts (with consent, never in a private window or on an excluded site); each finished
// measurement notes the TTL every resolver answered each host with. Kept in storage.local under one key, on this
// machine only (never uploaded); cleared with the person's data, an excluded site's hosts purged.
import * as v from 'valibot';
import { pageLookupMs, type StoredRecord } from '../../../common/stored-record.js';
import { median } from '../../../common/stats.js';
import { hostRevisitsSchema, MAX_REVISIT_HOSTS, noteNeed, noteTtls, type HostRevisits } from '../cache-savings.js';
import type { MessageSender } from '../messages/index.js';
import type { PageReplies } from '../messages/page.js';
import type { Settings } from '../settings.js';
import { QueuedArea, type StorageArea } from './storage.js';

/** Where the revisits are kept. */
export const REVISITS_KEY = 'hostRevisits';

export interface RevisitDeps {
  local: StorageArea;
  loadSettings(): Promise<Settings>;
  pageReport(tabId: number, sender: MessageSender): Promise<PageReplies['page-report']>;
  selfSender: MessageSender;
}

/** The revisits store: one read-change-write at a time. */
export class RevisitStore {
  private readonly area: QueuedArea;

  constructor(private readonly deps: RevisitDeps) {
    this.area = new QueuedArea(deps.local, (err) => console.warn(`dnscost: host revisits: ${String(err)}`));
  }

  /** Every host kept (a stored host that does not check is dropped). */
  async all(): Promise<Map<string, HostRevisits>> {
    return this.area.run(async (a) => this.read(a));
  }

  /** Notes the needs of the tab's page: its measurable hosts, each at the time the page first needed it. */
  async notePage(tabId: number): Promise<void> {
    if (!(await this.deps.loadSettings()).consent.given) return;
    // page-report applies the private-window and exclusion gate.
    const report = await this.deps.pageReport(tabId, this.deps.selfSender);
    if (!report.ok || !report.record.complete) return;
    const page = report.record;
    await this.change((hosts) => {
      for (const h of page.hosts) if (h.measurable) hosts.set(h.name, noteNeed(hosts.get(h.name), page.startedAt + h.firstNeededMs));
    });
  }

  /**
   * Notes each host's TTL per resolver from a finished measurement's records (the smallest answered), and its median
   * warm lookup with that resolver over its transports (what a need a cache answers does not spend).
   */
  async noteMeasurement(records: readonly StoredRecord[]): Promise<void> {
    const ttls = new Map<string, Record<string, number>>();
    const warm = new Map<string, number[]>();
    for (const r of records) {
      if (!r.ok) continue;
      if (r.mode === 'warm') warm.set(`${r.host} ${r.resolver}`, [...(warm.get(`${r.host} ${r.resolver}`) ?? []), pageLookupMs(r)]);
      if (r.ttl === undefined || r.ttl === null) continue;
      const t = ttls.get(r.host) ?? {};
      t[r.resolver] = Math.min(t[r.resolver] ?? Infinity, r.ttl);
      ttls.set(r.host, t);
    }
    if (ttls.size === 0) return;
    await this.change((hosts) => {
      for (const [host, t] of ttls) {
        const h = hosts.get(host);
        const ms = Object.fromEntries(Object.keys(t).flatMap((resolver) => {
          const m = median(warm.get(`${host} ${resolver}`) ?? []);
          return m === null ? [] : [[resolver, Math.round(m * 10) / 10]];
        }));
        if (h) hosts.set(host, noteTtls(h, t, ms));
      }
    });
  }

  /** Forgets the hosts `excluded` names (an excluded site), or all of them. */
  purge(excluded: (host: string) => boolean = () => true): Promise<void> {
    return this.change((hosts) => {
      for (const host of [...hosts.keys()]) if (excluded(host)) hosts.delete(host);
    });
  }

  private async read(a: StorageArea): Promise<Map<string, HostRevisits>> {
    const raw = (await a.get(REVISITS_KEY))[REVISITS_KEY];
    const out = new Map<string, HostRevisits>();
    if (typeof raw !== 'object' || raw === null) return out;
    for (const [host, value] of Object.entries(raw)) if (v.is(hostRevisitsSchema, value)) out.set(host, value);
    return out;
  }

  private change(fn: (hosts: Map<string, HostRevisits>) => void): Promise<void> {
    return this.area.run(async (a) => {
      const hosts = await this.read(a);
      fn(hosts);
      // The hosts needed longest ago go first.
      const kept = [...hosts].sort((x, y) => y[1].last - x[1].last).slice(0, MAX_REVISIT_HOSTS);
      await a.set({ [REVISITS_KEY]: Object.fromEntries(kept) });
    });
  }
}
