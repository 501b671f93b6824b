// Which DNS record types a browser asks for a host, as measured in the lab (bench/browser-queries.ts,
// bench/results/browser-queries.md): the replay asks the same, so an encrypted lookup of three record types is priced
// as three. Chromium 156 asks A and HTTPS (type 65) for every host, and AAAA too where the machine has a global IPv6
// route (its reachability probe); Firefox 153 asks A and AAAA whatever the network, and HTTPS for the host it
// navigates to — over its own resolver and over TRR alike.
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
}

/** The record types `browser` asks for one host, in the order it sends them; A and AAAA for an unknown browser. */
export function browserQtypes(browser: RecordingBrowser | null, ctx: QueryContext): QType[] {
  if (browser === 'chromium') return ctx.ipv6 ? ['HTTPS', 'AAAA', 'A'] : ['HTTPS', 'A'];
  if (browser === 'firefox') return ctx.document ? ['A', 'AAAA', 'HTTPS'] : ['A', 'AAAA'];
  return ['A', 'AAAA'];
}
