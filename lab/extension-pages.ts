// Talking to the extension from one of its own pages, for browser tests and the demo.
import type { Page } from 'puppeteer-core';
import type { PageRecord } from '../common/page-record.js';
import type { ResolverSpec } from '../common/schema.js';
import type { MeasureStatus } from '../extension/src/messages/measure.js';
import type { LabResolver } from './resolver.js';
import { poll } from './browsers.js';

/** Sends a runtime message from an extension page and returns the background's reply. */
export async function sendFromPage(page: Page, message: unknown): Promise<unknown> {
  // Both ways as one JSON string: Firefox's WebDriver BiDi takes seconds over a deep object (a history of 600 pages).
  const reply = await page.evaluate(async (json) => {
    const g = globalThis as unknown as { browser?: { runtime: { sendMessage(m: unknown): Promise<unknown> } }; chrome?: { runtime: { sendMessage(m: unknown): Promise<unknown> } } };
    const r = await (g.browser ?? g.chrome)!.runtime.sendMessage(JSON.parse(json));
    return r === undefined ? '' : JSON.stringify(r);
  }, JSON.stringify(message));
  return reply === '' ? undefined : (JSON.parse(reply) as unknown);
}

/** The id of the first tab whose URL starts with `prefix`. */
export async function tabIdOf(ext: Page, prefix: string): Promise<number> {
  return poll(`a tab at ${prefix}`, 10_000, async () => {
    const id = await ext.evaluate(async (p) => {
      const g = globalThis as unknown as { browser?: { tabs: { query(q: object): Promise<Array<{ id: number; url?: string }>> } }; chrome?: { tabs: { query(q: object): Promise<Array<{ id: number; url?: string }>> } } };
      const tabs = await (g.browser ?? g.chrome)!.tabs.query({});
      return tabs.find((t) => t.url?.startsWith(p))?.id ?? null;
    }, prefix);
    return id ?? undefined;
  });
}

/**
 * Loads `url` in `tab`, finds that tab's id (the first tab at `tabPrefix`) and waits until the extension has its page
 * record with onLoad and at least `minHosts` hosts (asked from the extension page `ext`). At least one by default:
 * Firefox's record can hold onLoad before its first host, and a page measured then has no name to measure.
 */
export async function loadRecordedPage(ext: Page, tab: Page, url: string, tabPrefix: string, minHosts = 1): Promise<{ tabId: number; record: PageRecord }> {
  await tab.goto(url, { waitUntil: 'load', timeout: 20_000 });
  const tabId = await tabIdOf(ext, tabPrefix);
  const record = await poll('the page is recorded', 15_000, async () => {
    const r = (await sendFromPage(ext, { type: 'page-report', tabId })) as { ok: boolean; record?: PageRecord };
    return r.ok && r.record!.onLoadMs !== null && r.record!.hosts.length >= minHosts ? r.record : undefined;
  });
  return { tabId, record };
}

/**
 * The tab's measurement once it is no longer running, with its records. It asks as the popup does while it waits
 * (every 250 ms, without records), then once with them: asking for the records reads them all from storage, and
 * doing that every 250 ms would keep the background busy while it times the browser's own lookups. Returns at once
 * when nothing runs and something blocks a measurement.
 */
export async function finishedMeasurement(ext: Page, tabId: number, timeoutMs: number): Promise<MeasureStatus> {
  const ask = async (records: boolean) => (await sendFromPage(ext, { type: 'measure-status', tabId, records })) as MeasureStatus;
  const s = await poll('the measurement finishes', timeoutMs, async () => {
    const s = await ask(false);
    return (s.blocked && !s.measurement) || (s.measurement && s.measurement.state !== 'running') ? s : undefined;
  }, 250);
  return s.measurement ? ask(true) : s;
}

/**
 * The lab resolver as a person's custom resolver: every transport at its address, SNI dns.test, the lab CA; DoQ and
 * DoH3 too with `quic` (the host offers them when its QUIC companion is built).
 */
export function labResolverSpec(lab: Pick<LabResolver, 'address' | 'certs' | 'endpoints'>, o: { quic?: boolean } = {}): ResolverSpec {
  // An https URL leaves its standard port out: 443.
  const port = (url: string) => Number(new URL(url.replace(/^(udp|tcp|tls|quic|h3):/, 'http:')).port) || 443;
  const address = lab.address;
  const dnsPort = port(lab.endpoints.udp);
  const tlsPort = port(lab.endpoints.dot);
  const httpsPort = port(lab.endpoints.doh);
  return {
    id: 'lab',
    name: 'Lab resolver',
    ca: lab.certs.caPem,
    endpoints: [
      { transport: 'udp', address, port: dnsPort },
      { transport: 'tcp', address, port: dnsPort },
      { transport: 'dot', address, port: tlsPort, serverName: 'dns.test' },
      { transport: 'doh', address, port: httpsPort, serverName: 'dns.test', path: '/dns-query' },
      { transport: 'doh1', address, port: httpsPort, serverName: 'dns.test', path: '/dns-query' },
      ...(o.quic
        ? [
            { transport: 'doq' as const, address, port: tlsPort, serverName: 'dns.test' },
            { transport: 'doh3' as const, address, port: httpsPort, serverName: 'dns.test', path: '/dns-query' },
          ]
        : []),
    ],
  };
}
