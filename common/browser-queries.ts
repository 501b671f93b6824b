// Which DNS record types a browser asks for a host, as measured in the lab (bench/browser-queries.ts,
// bench/results/browser-queries.md): the replay asks the same, so an encrypted lookup of three record types is priced
// as three. Chromium 156 asks A and HTTPS (type 65) for every host, and AAAA too where the machine has a global IPv6
// route (its reachability probe); Firefox 153 asks A and AAAA whatever the network, and HTTPS for every host it
// fetches over https (bench/results/validation-fiber.md: 222 of 222 https hosts, none of 108 http ones) and for the
// host it navigates to (HTTPS-First, on by default, probes an http document's upgrade) — over its own resolver and
// over TRR alike.
import type { QType } from './transports.js';

/** The browsers whose way of asking is known. */
export const RECORDING_BROWSERS = ['chromium', 'firefox'] as const;
export type RecordingBrowser = (typeof RECORDING_BROWSERS)[number];

/** What, besides the browser, decides the types: the machine's IPv6 reachability, and whether the host is the page's. */
export interface QueryContext {
  /** The machine has a global IPv6 address and route (the host's probe, as Chromium's). */
  ipv6: boolean;
  /** The host is the one the browser navigated to (the page's document). */
  document: boolean;
  /** The browser fetched something from the host over https (its page-record `schemes`); unknown counts as https. */
  https?: boolean;
  /** Firefox upgrades http navigations (HTTPS-First, its default); the lab turns it off to load pages as recorded. */
  httpsFirst?: boolean;
}

/** The record types `browser` asks for one host, in the order it sends them; A and AAAA for an unknown browser. */
export function browserQtypes(browser: RecordingBrowser | null, ctx: QueryContext): QType[] {
  if (browser === 'chromium') return ctx.ipv6 ? ['HTTPS', 'AAAA', 'A'] : ['HTTPS', 'A'];
  if (browser === 'firefox') return (ctx.https ?? true) || (ctx.document && (ctx.httpsFirst ?? true)) ? ['A', 'AAAA', 'HTTPS'] : ['A', 'AAAA'];
  return ['A', 'AAAA'];
}

/**
 * The record types `browser` asks for `name`, one of a recorded page's hosts: whether it is the document and whether
 * it was fetched over https read from the page record (a host without a record counts as https).
 */
export function pageHostQtypes(
  browser: RecordingBrowser | null,
  page: { host?: string | undefined; hosts: readonly { name: string; schemes: readonly string[] }[] },
  name: string,
  ctx: Pick<QueryContext, 'ipv6' | 'httpsFirst'>,
): QType[] {
  const https = page.hosts.find((h) => h.name === name)?.schemes.includes('https') ?? true;
  return browserQtypes(browser, { ...ctx, document: name === page.host, https });
}
