// The measurement scheduler under test (measurements.test.ts and its neighbours): a fake host that records requests
// and replies as told, and a harness with fake storage, settings, page reports and timers.
import type { MessageSender } from '../messages/index.js';
import type { HostStatus } from '../messages/host.js';
import type { PageReplies } from '../messages/page.js';
import { PROTOCOL_VERSION, type BrowserDoh, type CurrentDns, type ResolverSpec } from '../../../common/schema.js';
import { defaultSettings, type Settings } from '../settings.js';
import type { RoutedReply } from './host-connection.js';
import { MeasurementScheduler, type MeasureHost, type SchedulerDeps } from './measurements.js';
import { FakeArea, host, LOOPBACK_LAB, pageRecord } from './test-fixtures.js';

export { settle } from './test-fixtures.js';

export const EXT: MessageSender = { id: 'ext', url: 'chrome-extension://x/popup/popup.html' };

/** The lab resolver the scheduler's tests measure with. */
export const LAB: ResolverSpec = LOOPBACK_LAB;
export const PUBLIC: ResolverSpec = { id: 'quad9', name: 'Quad9', endpoints: [{ transport: 'udp', address: '9.9.9.9', port: 53 }] };

export class FakeHost implements MeasureHost {
  connected = true;
  currentDns: CurrentDns | null = null;
  ipv6: boolean | null = null;
  browserDoh: BrowserDoh | null = null;
  requests: Array<{ req: { id: string | number; type: string } & Record<string, unknown>; listener: (r: RoutedReply) => void }> = [];
  released: Array<string | number> = [];
  restarts: string[] = [];
  restart(message: string): void {
    this.restarts.push(message);
  }
  status(): HostStatus {
    return this.connected
      ? { ok: true, connected: true, version: '0.1.0', protocol: PROTOCOL_VERSION, transports: ['udp', 'tcp', 'dot', 'doh', 'doh1'], currentDns: this.currentDns, ipv6: this.ipv6, browserDoh: this.browserDoh }
      : { ok: false, connected: false, code: 'host-missing', message: 'Specified native messaging host not found.', retryAt: null };
  }
  request(req: { id: string | number; type: string }, listener: (r: RoutedReply) => void): boolean {
    if (!this.connected) return false;
    this.requests.push({ req: req as never, listener });
    return true;
  }
  release(id: string | number): void {
    this.released.push(id);
  }
  /** The host replies to the last measure request. */
  reply(r: Record<string, unknown>): void {
    const m = [...this.requests].reverse().find((x) => x.req.type === 'measure')!;
    m.listener({ id: m.req.id, ...r } as RoutedReply);
  }
}

export function harness(opts: { settings?: Partial<Settings>; pages?: Record<number, PageReplies['page-report']>; incognito?: number[]; unknownTabs?: number[]; area?: FakeArea; host?: FakeHost; onDone?: SchedulerDeps['onDone']; ownPath?: SchedulerDeps['ownPath']; log?: (m: string) => void } = {}) {
  const area = opts.area ?? new FakeArea();
  const fakeHost = opts.host ?? new FakeHost();
  const timers: Array<{ fn: () => void; ms: number; cleared: boolean }> = [];
  let now = 1_000_000;
  let n = 0;
  const settings: Settings = { ...defaultSettings([LAB]), lab: true, consent: { given: true, at: 1, for: null }, ...opts.settings };
  const pages: Record<number, PageReplies['page-report']> = opts.pages ?? {
    7: { ok: true, record: pageRecord('p1', [host('a.site.localhost', 0), host('css.site.localhost', 40), host('img.site.localhost', 90)]) },
  };
  const s = new MeasurementScheduler({
    area,
    host: fakeHost,
    loadSettings: async () => settings,
    pageReport: async (tabId, sender) =>
      sender.url?.startsWith('chrome-extension://') ? (pages[tabId] ?? { ok: false, code: 'no-page', message: 'no page' }) : { ok: false, code: 'bad-sender', message: 'no' },
    isIncognitoTab: async (tabId) => ((opts.unknownTabs ?? []).includes(tabId) ? null : (opts.incognito ?? []).includes(tabId)),
    now: () => now,
    newId: () => `id${++n}`,
    log: opts.log ?? (() => undefined),
    selfSender: EXT,
    ...(opts.onDone ? { onDone: opts.onDone } : {}),
    ...(opts.ownPath ? { ownPath: opts.ownPath } : {}),
    setTimer: (fn, ms) => timers.push({ fn, ms, cleared: false }) - 1,
    clearTimer: (i) => void (timers[i as number]!.cleared = true),
  });
  return { s, area, host: fakeHost, settings, pages, timers, advance: (ms: number) => (now += ms) };
}
