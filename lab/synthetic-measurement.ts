// A finished measurement written straight into the extension's storage (Chromium), for panels too big to measure
// for real in a test: one record per host × transport × mode × qtype × repeat, with deterministic lookup times.
// The background reads stored measurements when it starts, so callers restart its service worker afterwards
// (restartChromiumWorker) before opening the popup.
import type { Browser, Page } from 'puppeteer-core';
import type { PageRecord } from '../common/page-record.js';
import { extensionBase } from './browsers.js';

export const SYNTHETIC_TRANSPORTS = ['udp', 'tcp', 'dot', 'doh', 'doh1'] as const;

/**
 * Stores a finished measurement of `page` (its own hosts, or `hosts` when given, each first needed 5 ms after the
 * one before) for tab `tabId`: hosts × 5 transports × cold/warm × A/AAAA × 3 records, and `extra` fields of the
 * measurement's meta (its CDN check's `edges`, say). Returns the record count.
 */
export async function writeSyntheticMeasurement(ext: Page, tabId: number, page: PageRecord, hosts?: string[], extra: Record<string, unknown> = {}): Promise<number> {
  return ext.evaluate(
    async (tabId: number, page: PageRecord, names: string[], transports: string[], extra: Record<string, unknown>) => {
      const g = globalThis as unknown as { chrome: { storage: { local: { set(items: object): Promise<void> } } } };
      const hosts = names.map((name, i) => ({ name, firstNeededMs: i * 5 }));
      const records: object[] = [];
      for (const h of hosts) for (const transport of transports) for (const mode of ['cold', 'warm']) for (let repeat = 1; repeat <= 3; repeat++) for (const qtype of ['A', 'AAAA']) {
        const lookup = 1 + (h.firstNeededMs % 7) + (mode === 'cold' && transport !== 'udp' ? 20 : 0);
        records.push({ host: h.name, qtype, resolver: 'lab', transport, mode, repeat, ok: true, error: null, timings: { connect: null, tls: null, query: lookup, total: lookup },
          bytes: { sent: 60, received: 90 }, packets: { sent: 1, received: 1 }, replay: { pageStartedAt: 0, firstNeededMs: h.firstNeededMs, endedAt: h.firstNeededMs + lookup } });
      }
      const pageId = page.pageId;
      const items: Record<string, unknown> = {};
      const per = 2000;
      for (let i = 0; i * per < records.length; i++) items[`measure:rec:${pageId}:${i}`] = records.slice(i * per, (i + 1) * per);
      const pageHosts = hosts.map((h) => ({ ...page.hosts[0], name: h.name, firstNeededMs: h.firstNeededMs, lookup: null }));
      const now = Date.now();
      items[`measure:meta:${pageId}`] = {
        version: 1, pageId, tabId, url: page.url, host: page.host, state: 'done', trigger: 'manual', startedAt: now, updatedAt: now, finishedAt: now,
        done: records.length, total: records.length, records: records.length, chunks: Math.ceil(records.length / per), chars: JSON.stringify(records).length,
        plan: { hosts, resolvers: [{ id: 'lab', name: 'Lab resolver', transports }], qtypes: ['A', 'AAAA'], modes: ['cold', 'warm'], repeat: 3, prime: true, schedule: 'replay', internalAllowed: true, skipped: [] },
        page: { ...page, hosts: pageHosts }, seed: 1, primed: true, summary: [], error: null, ...extra,
      };
      items['measure:index'] = [{ pageId, tabId, startedAt: now, chars: 1 }];
      await g.chrome.storage.local.set(items);
      return records.length;
    },
    tabId, page, hosts ?? page.hosts.map((h) => h.name), [...SYNTHETIC_TRANSPORTS], extra,
  );
}

/** Stops the extension's service worker (Chromium); the next event or message starts a new one, which reads storage. */
export async function restartChromiumWorker(browser: Browser): Promise<void> {
  const sw = await browser.waitForTarget((t) => t.type() === 'service_worker' && t.url().startsWith(extensionBase('chromium')), { timeout: 5_000 });
  await (await sw.worker())!.close();
}

/** The cost panel's state once it has settled on results (popup.html?tab=ID). */
export async function panelDrawn(popup: Page): Promise<{ state: string; drawMs: number; rows: number; bars: number; scripts: number; text: string }> {
  return popup.evaluate(() => {
    const e = document.getElementById('cost');
    // The tables and the waterfall are folded under the verdict: unfolded, so the text holds every line.
    for (const d of document.querySelectorAll<HTMLDetailsElement>('#cost details')) d.open = true;
    return {
      state: e?.dataset.state ?? '', drawMs: Number(e?.dataset.drawMs ?? NaN),
      rows: document.querySelectorAll('#cost .wf-row').length, bars: document.querySelectorAll('#cost .wf-bar').length,
      scripts: document.querySelectorAll('#cost script').length, text: document.body.innerText,
    };
  });
}
