// Never weaker than the browser (issue 26 item 1): when the browser that started the host resolves over DoH, its
// lookups reach no one in clear text, so neither may dnscost's. Three pieces: the browser's own DoH server as an
// endpoint (the baseline the extension measures, and where the split-horizon check goes), that check over DoH, and
// the host's refusal of any plain-DNS endpoint while the browser encrypts.
import { lookup as osLookup } from 'node:dns/promises';
import { CODES, DnscostError } from '../../common/errors.js';
import { PUBLIC_RESOLVERS } from '../../common/default-resolvers.js';
import { isIpLiteral, type BrowserDoh, type EndpointSpec, type MeasureRequest } from '../../common/schema.js';
import { isEncrypted, TRANSPORTS } from '../../common/transports.js';
import { canonicalIp, CHROMIUM_UPGRADES } from './current-dns/doh-upgrade.js';
import { encodeQuery, parseAnswer } from './dns-wire.js';
import { monotonic } from './dial.js';
import type { CurrentLookup } from './private-names.js';
import { doh } from './transports/doh.js';

/** The browser resolves over DoH now: nothing of its pages may go out in clear text (BrowserDoh.active). */
export function browserEncrypts(doh: BrowserDoh | null | undefined): boolean {
  return doh?.active === true;
}

/**
 * No name may go out in clear text: the browser resolves over DoH or sends its requests through a proxy, or the request
 * says so (its page went through one). Measuring and probing both obey it.
 */
export function keepsNamesEncrypted(browser: BrowserDoh | null | undefined, noCleartext: boolean | undefined): boolean {
  return browserEncrypts(browser) || Boolean(browser?.proxy) || noCleartext === true;
}

/** How the host finds the address of a DoH server's name: the system's resolver, as the browser's own bootstrap does. */
export type Bootstrap = (host: string) => Promise<string | null>;

const BOOTSTRAP_TIMEOUT_MS = 2000;

/** The system resolver's first address for `host` (IPv4 first), or null; at most BOOTSTRAP_TIMEOUT_MS. */
export const osBootstrap: Bootstrap = async (host) => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), BOOTSTRAP_TIMEOUT_MS)));
  const found = osLookup(host, { all: true, order: 'ipv4first' }).then((xs) => xs[0]?.address ?? null, () => null);
  return Promise.race([found, timeout]).finally(() => clearTimeout(timer));
};

/**
 * The browser's DoH server as an endpoint (its first template), or null when the browser uses its own default (no
 * template: not guessed) or the template is not a usable https URL. Its address: the literal in the URL, the
 * address Chromium upgraded from or a public resolver's known one for the same server, else the system's resolver
 * (`bootstrap`): the browser asked it for that name too. Firefox sends POST; Chromium GET when the template has
 * `{?dns}` (RFC 8484 §4.1), else POST.
 */
export async function browserDohEndpoint(doh: BrowserDoh, bootstrap: Bootstrap = osBootstrap): Promise<EndpointSpec | null> {
  const template = doh.templates[0];
  if (!template) return null;
  const bare = template.replace(/\{\?dns\}$/, '');
  if (/[{}]/.test(bare)) return null;
  let url: URL;
  try {
    url = new URL(bare);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:') return null;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const known =
    (isIpLiteral(host) ? host : null) ??
    (doh.upgradedFrom && CHROMIUM_UPGRADES.some((u) => u.template === template) ? canonicalIp(doh.upgradedFrom) : null) ??
    PUBLIC_RESOLVERS.flatMap((r) => r.endpoints).find((e) => e.transport === 'doh' && e.serverName === host)?.address ??
    (await bootstrap(host));
  if (!known || !isIpLiteral(known)) return null;
  const method = doh.browser === 'chromium' && template.endsWith('{?dns}') ? 'GET' : 'POST';
  return { transport: 'doh', address: known, port: url.port ? Number(url.port) : TRANSPORTS.doh.url.defaultPort, serverName: host, path: url.pathname + url.search, method };
}

/**
 * Refuses a request that would send names in clear text while the browser encrypts or uses a proxy (`browser`), or
 * that says its page went through one (`noCleartext`): any Do53 endpoint (UDP or TCP), whoever's. Throws
 * `cleartext-refused`; nothing was sent.
 */
export function refuseCleartext(req: Pick<MeasureRequest, 'resolvers' | 'noCleartext'>, browser?: BrowserDoh | null): void {
  const plain = req.resolvers.flatMap((r) => r.endpoints.filter((e) => !isEncrypted(e.transport)).map((e) => `${r.id} ${e.transport} ${e.address}`));
  const why = req.noCleartext ? 'the page went through a proxy'
    : !browserEncrypts(browser) && browser?.proxy ? `your browser sends its requests through a proxy (${browser.proxy})` : 'your browser resolves over DNS over HTTPS';
  if (plain.length) throw new DnscostError(CODES.CLEARTEXT_REFUSED, `${why}, so no name of its pages goes out in clear text: ${plain.slice(0, 4).join(', ')}`);
}

const CHECK_TIMEOUT_MS = 1500;

/**
 * The split-horizon check over the browser's own DoH server: a name's A and AAAA asked of it on one HTTP/2
 * connection, opened at the first question (a list of addresses, empty when it has none; null when either question
 * failed, so the name stays home). `ca`: an extra trusted CA (the lab's). `close` ends the connection.
 */
export function dohLookup(endpoint: EndpointSpec, ca?: string): CurrentLookup & { close(): void } {
  let session: ReturnType<typeof doh.open> | null = null;
  const open = () => (session ??= doh.open(endpoint, { timeoutMs: CHECK_TIMEOUT_MS, clock: monotonic, ...(ca ? { ca } : {}) }));
  const ask = async (name: string, qtype: 'A' | 'AAAA'): Promise<string[] | null> => {
    try {
      const s = await open();
      const q = { name, qtype };
      const answer = parseAnswer(await s.exchange(encodeQuery(q, 0, true), 0, CHECK_TIMEOUT_MS), q, 0);
      if (answer.rcode === 'NXDOMAIN') return [];
      if (answer.rcode !== 'NOERROR') return null;
      return answer.answers.filter((a) => a.type === qtype).map((a) => a.data);
    } catch {
      return null;
    }
  };
  const lookup = async (name: string): Promise<string[] | null> => {
    const [a, aaaa] = await Promise.all([ask(name, 'A'), ask(name, 'AAAA')]);
    return a === null || aaaa === null ? null : [...a, ...aaaa];
  };
  return Object.assign(lookup, {
    close: () => {
      void session?.then((s) => s.close(), () => undefined);
    },
  });
}

/** `doh` with its endpoint when it is active (browserDohEndpoint); as it was otherwise. Never rejects. */
export async function withEndpoint(found: Promise<BrowserDoh | null>, bootstrap: Bootstrap = osBootstrap): Promise<BrowserDoh | null> {
  const d = await found.catch(() => null);
  if (!d?.active) return d;
  return { ...d, endpoint: await browserDohEndpoint(d, bootstrap).catch(() => null) };
}

/** The extra CA a request trusts for `endpoint` (a resolver of the request at the same address and port), if any. */
export function caFor(req: Pick<MeasureRequest, 'resolvers'>, endpoint: EndpointSpec): string | undefined {
  return req.resolvers.find((r) => r.ca && r.endpoints.some((e) => e.address === endpoint.address && e.port === endpoint.port))?.ca;
}
