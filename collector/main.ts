// The dnscost-collector command: parses options, opens the store, starts the service, stops it on SIGINT/SIGTERM.
// Logs go to stderr; the one line "listening on URL" tells scripts where it is.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { isIpAddress } from '../common/ip-address.js';
import { cellRule, PUBLICATION } from './publication.js';
import { PERSON_CAP } from '../common/privacy-budget.js';
import { loadOrCreateSecret, parseSecret, SECRET_FILE } from './secret.js';
import { startCollector } from './server.js';

const DEFAULT_DELAY_HOURS = 6;

const HELP = `dnscost-collector: receives opt-in dnscost uploads and publishes noisy crowd-wide aggregates.

Usage: npx dnscost-collector [options]

  --host ADDR            listen address (default 127.0.0.1)
  --port N               port (default 8787; 0 picks a free one)
  --data DIR             embedded store's data directory, and the publication secret's (default
                         ~/.local/share/dnscost-collector)
  --rate N               /v1 requests per second per client (an IPv4 address or an IPv6 /64), sustained; bursts
                         of 4×N (default 5; 0 = off); a /64 also spends from its /56 (4× as much) and its /48
                         (16×), so one holder's many /64s share a bounded allowance
  --trusted-proxy ADDR   a proxy in front whose X-Forwarded-For names the client (may be repeated; default none:
                         the connection's peer is the client)
  --max-connections N    connections open at once (default 4096; more are refused at once); a connection that
                         sends nothing is closed after 5 s, slow clients get 5 s for their headers and 15 s for
                         the whole request
  --max-connections-per-client N
                         connections one client (an IPv4 address, an IPv6 /64; a trusted proxy is not counted)
                         may hold open at once (default 32)
  --body-budget MIB      upload bodies being received at once, in MiB over every connection (default 64); past it
                         uploads are answered 503 with Retry-After
  --epsilon E            differential privacy: ε per person per UTC day, over every published cell (default
                         ${PUBLICATION.epsilon}); the extension uploads at most ${PERSON_CAP.pagesPerDay} pages a day × ${PERSON_CAP.resultsPerPage} results a page
  --delta D              chance that one person alone makes a cell published (default ${PUBLICATION.delta}); sets the
                         threshold
  --min-pages N          noisy page count a cell, and a site's name, needs to be published (default: from ε and
                         δ, ${PUBLICATION.minPages} at the defaults)
  --publication-delay H  hours after a day (UTC) ends before it is published (default ${DEFAULT_DELAY_HOURS})
  -h, --help             this text

Publication: GET /v1/aggregates serves only closed days, each published once (--publication-delay after its end),
with ε-differentially-private noise (Laplace counts, exponential-mechanism percentiles) keyed by a secret kept in
DIR/${SECRET_FILE} (created with mode 0600), or DNSCOST_COLLECTOR_SECRET (≥ 32 bytes, hex or base64url; the same
for every instance on one database). Pages of a day that arrive after it was published are stored, never published.

Storage: the embedded PostgreSQL (PGlite) in --data, unless DNSCOST_COLLECTOR_DATABASE_URL=postgres://… names a
PostgreSQL server; both run the same migrations (collector/migrations/).

Endpoints: POST /v1/batches, DELETE /v1/batches/KEY, GET /v1/aggregates, GET / (dashboard), GET /healthz.
`;

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '8787' },
    data: { type: 'string', default: join(process.env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share'), 'dnscost-collector') },
    rate: { type: 'string', default: '5' },
    'trusted-proxy': { type: 'string', multiple: true, default: [] },
    'max-connections': { type: 'string', default: '4096' },
    'max-connections-per-client': { type: 'string', default: '32' },
    'body-budget': { type: 'string', default: '64' },
    epsilon: { type: 'string', default: String(PUBLICATION.epsilon) },
    delta: { type: 'string', default: String(PUBLICATION.delta) },
    'min-pages': { type: 'string' },
    'publication-delay': { type: 'string', default: String(DEFAULT_DELAY_HOURS) },
    help: { type: 'boolean', short: 'h' },
  },
});

if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}

function number(name: string, text: string, min: number, max: number): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n < min || n > max) {
    console.error(`dnscost-collector: --${name} must be a number from ${min} to ${max}`);
    process.exit(2);
  }
  return n;
}

const port = number('port', values.port, 0, 65535);
const rate = number('rate', values.rate, 0, 1e6);
const epsilon = number('epsilon', values.epsilon, 0.001, 1e6);
const delta = number('delta', values.delta, 1e-12, 0.1);
const minPages = values['min-pages'] === undefined ? cellRule(epsilon, undefined, delta).minPages : number('min-pages', values['min-pages'], 1, 1e6);
const delayHours = number('publication-delay', values['publication-delay'], 0, 24 * 89);
const maxConnections = number('max-connections', values['max-connections'], 1, 1e6);
const maxConnectionsPerClient = number('max-connections-per-client', values['max-connections-per-client'], 1, 1e6);
const bodyBudgetMiB = number('body-budget', values['body-budget'], 1, 1e5);
const trustedProxies = values['trusted-proxy'] ?? [];
for (const p of trustedProxies) {
  if (!isIpAddress(p)) {
    console.error(`dnscost-collector: --trusted-proxy ${p} is not an IP address`);
    process.exit(2);
  }
}
const url = process.env.DNSCOST_COLLECTOR_DATABASE_URL;

// Only the driver in use is loaded (PGlite's WebAssembly module takes a fifth of a second): restarts stay quick.
const pglite = url ? null : await import('./store-pglite.js');
const store = pglite ? await pglite.openPgliteStore(values.data) : await (await import('./store-postgres.js')).openPostgresStore(url!);
// After the store: PGlite creates its data directory itself, and the secret lives beside its files.
let secret: Buffer;
try {
  secret = process.env.DNSCOST_COLLECTOR_SECRET ? parseSecret(process.env.DNSCOST_COLLECTOR_SECRET) : await loadOrCreateSecret(values.data);
} catch (err) {
  console.error(`dnscost-collector: publication secret: ${(err as Error).message}`);
  process.exit(2);
}
const collector = await startCollector({
  store,
  host: values.host,
  port,
  rate: rate === 0 ? null : { perSecond: rate, burst: 4 * rate },
  publication: { secret, epsilon, minPages, delayMs: delayHours * 3_600_000 },
  maxConnections,
  maxConnectionsPerClient,
  bodyBudgetBytes: bodyBudgetMiB * 1024 * 1024,
  trustedProxies,
});
if (pglite) console.error(`dnscost-collector: note: ${pglite.PGLITE_DURABILITY}`);
console.error(`dnscost-collector: publishing each UTC day ${delayHours} h after it ends, ε = ${epsilon} per person per day, threshold ${minPages} pages`);
console.error(`dnscost-collector: store ${store.kind}${url ? '' : ` in ${values.data}`}; listening on ${collector.url}`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.error(`dnscost-collector: ${signal}: finishing queued uploads`);
    // A client holding a connection open must not keep the collector up for long.
    setTimeout(() => process.exit(1), 10_000).unref();
    collector.close().then(() => process.exit(0), (err: unknown) => {
      console.error(`dnscost-collector: ${String(err)}`);
      process.exit(1);
    });
  });
}
