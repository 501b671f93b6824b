// The dnscost-collector command: parses options (flags, else DNSCOST_COLLECTOR_* environment variables, as a service
// unit sets them), opens the store, starts the service, stops it on SIGINT/SIGTERM. Logs go to stderr; the one line
// "listening on URL" tells scripts where it is. The same code runs from a checkout (dist/) and as the packaged
// single executable (scripts/package), which has no embedded store: it needs a PostgreSQL server.
import cluster from 'node:cluster';
import { availableParallelism, homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { isIpAddress } from '../common/ip-address.js';
import { cellRule, PUBLICATION } from './publication.js';
import { PERSON_CAP } from '../common/privacy-budget.js';
import { UPLOAD_LIMITS } from '../common/upload-batch.js';
import { loadOrCreateSecret, parseSecret, SECRET_FILE } from './secret.js';
import { startCollector } from './server.js';
import { VERSION } from './paths.js';
import { role, runPrimary, shareOf } from './workers.js';
import type { Store } from './store.js';

const DEFAULT_DELAY_HOURS = 6;
/** Raw uploads are needed until their day is published; kept a day past the oldest day an upload may carry. */
const DEFAULT_KEEP_DAYS = UPLOAD_LIMITS.maxAgeDays + 1;

const HELP = `dnscost-collector: receives opt-in dnscost uploads and publishes noisy crowd-wide aggregates.

Usage: dnscost-collector [serve] [options]      (from a checkout: npx dnscost-collector)
       dnscost-collector --version | --help

Each option can also come from the environment variable in brackets (a flag wins):
  --database-url URL     PostgreSQL server, postgres://USER@HOST/DB [DNSCOST_COLLECTOR_DATABASE_URL]; without it,
                         the embedded store (PGlite) in --data (a checkout only: the packaged collector needs one)
  --host ADDR            listen address (default 127.0.0.1) [DNSCOST_COLLECTOR_HOST]
  --port N               port (default 8787; 0 picks a free one) [DNSCOST_COLLECTOR_PORT]
  --data DIR             embedded store's data directory, and the publication secret's (default
                         ~/.local/share/dnscost-collector) [DNSCOST_COLLECTOR_DATA]
  --rate N               /v1 requests per second per client (an IPv4 address or an IPv6 /64), sustained; bursts
                         of 4×N (default 5; 0 = off); a /64 also spends from its /56 (4× as much) and its /48
                         (16×), so one holder's many /64s share a bounded allowance
  --trusted-proxy ADDR   a proxy in front whose X-Forwarded-For names the client (may be repeated; default none:
                         the connection's peer is the client) [DNSCOST_COLLECTOR_TRUSTED_PROXIES, comma-separated]
  --workers N|auto       processes serving on the one port, sharing the PostgreSQL server (default auto: one per
                         core with --database-url, else 1: the embedded store is one process's)
                         [DNSCOST_COLLECTOR_WORKERS]; the limits below are the service's, each worker keeping
                         its share
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
  --keep-days N          days raw uploads are kept, each page by its day; published figures stay for good (default
                         ${DEFAULT_KEEP_DAYS}; more than ${UPLOAD_LIMITS.maxAgeDays}, or 0 to keep them) [DNSCOST_COLLECTOR_KEEP_DAYS]
  -h, --help             this text

Publication: GET /v1/aggregates serves only closed days, each published once (--publication-delay after its end),
with ε-differentially-private noise (Laplace counts, exponential-mechanism percentiles) keyed by a secret kept in
DIR/${SECRET_FILE} (created with mode 0600), or DNSCOST_COLLECTOR_SECRET (≥ 32 bytes, hex or base64url; the same
for every instance on one database). Pages of a day that arrive after it was published are stored, never published.

Storage: the embedded PostgreSQL (PGlite) in --data, unless --database-url names a PostgreSQL server; both run the
same migrations (the collector applies them itself at start, under a lock: several instances may start together).

Endpoints: POST /v1/batches, DELETE /v1/batches/KEY, GET /v1/aggregates, GET /v1/open-data (and each day's file),
GET / (dashboard), GET /healthz. Exit: 0 stopped by a signal, 1 failed while running, 2 bad options or set-up.
`;

/** Exits 2 with the message: a mistake in the options or the set-up, never a stack trace. */
function usage(message: string): never {
  console.error(`dnscost-collector: ${message}\nusage: dnscost-collector --help`);
  process.exit(2);
}

const env = process.env;
const parse = () => parseArgs({
  allowPositionals: true,
  options: {
    'database-url': { type: 'string', default: env.DNSCOST_COLLECTOR_DATABASE_URL },
    host: { type: 'string', default: env.DNSCOST_COLLECTOR_HOST ?? '127.0.0.1' },
    port: { type: 'string', default: env.DNSCOST_COLLECTOR_PORT ?? '8787' },
    data: { type: 'string', default: env.DNSCOST_COLLECTOR_DATA ?? join(env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share'), 'dnscost-collector') },
    rate: { type: 'string', default: '5' },
    'trusted-proxy': { type: 'string', multiple: true, default: (env.DNSCOST_COLLECTOR_TRUSTED_PROXIES ?? '').split(',').map((x) => x.trim()).filter(Boolean) },
    workers: { type: 'string', default: env.DNSCOST_COLLECTOR_WORKERS ?? 'auto' },
    'max-connections': { type: 'string', default: '4096' },
    'max-connections-per-client': { type: 'string', default: '32' },
    'body-budget': { type: 'string', default: '64' },
    epsilon: { type: 'string', default: String(PUBLICATION.epsilon) },
    delta: { type: 'string', default: String(PUBLICATION.delta) },
    'min-pages': { type: 'string' },
    'publication-delay': { type: 'string', default: String(DEFAULT_DELAY_HOURS) },
    'keep-days': { type: 'string', default: env.DNSCOST_COLLECTOR_KEEP_DAYS ?? String(DEFAULT_KEEP_DAYS) },
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean' },
  },
});
let parsed: ReturnType<typeof parse>;
try {
  parsed = parse();
} catch (err) {
  usage((err as Error).message);
}
const { values, positionals } = parsed;
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}
if (values.version) {
  process.stdout.write(`${VERSION}\n`);
  process.exit(0);
}
// `serve` twice is once (a worker of the packaged executable gets it twice: workers.ts).
if (positionals.some((p) => p !== 'serve')) usage(`unknown command ${JSON.stringify(positionals.join(' '))}; the only one is serve`);

function number(name: string, text: string, min: number, max: number): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < min || n > max) usage(`--${name} must be a number from ${min} to ${max}, not ${JSON.stringify(text)}`);
  return n;
}

const port = number('port', values.port, 0, 65535);
const rate = number('rate', values.rate, 0, 1e6);
const epsilon = number('epsilon', values.epsilon, 0.001, 1e6);
const delta = number('delta', values.delta, 1e-12, 0.1);
const minPages = values['min-pages'] === undefined ? cellRule(epsilon, undefined, delta).minPages : number('min-pages', values['min-pages'], 1, 1e6);
const delayHours = number('publication-delay', values['publication-delay'], 0, 24 * 89);
const keepDays = number('keep-days', values['keep-days'], 0, 1e5);
if (keepDays !== 0 && keepDays <= UPLOAD_LIMITS.maxAgeDays) usage(`--keep-days must be 0 or more than ${UPLOAD_LIMITS.maxAgeDays} (uploads may carry pages that old)`);
const maxConnections = number('max-connections', values['max-connections'], 1, 1e6);
const maxConnectionsPerClient = number('max-connections-per-client', values['max-connections-per-client'], 1, 1e6);
const bodyBudgetMiB = number('body-budget', values['body-budget'], 1, 1e5);
const trustedProxies = values['trusted-proxy'] ?? [];
for (const p of trustedProxies) if (!isIpAddress(p)) usage(`--trusted-proxy ${p} is not an IP address`);
const url = values['database-url'] || undefined;
if (url !== undefined && !/^postgres(ql)?:\/\//.test(url)) usage('--database-url takes a postgres:// or postgresql:// URL');
const workers = values.workers === 'auto' ? (url ? availableParallelism() : 1) : number('workers', values.workers, 1, 256);
if (workers > 1 && !url) usage('--workers above 1 needs --database-url: the embedded store belongs to one process');
const me = role();

/** The store the options name: PostgreSQL at --database-url, else the embedded one (loaded only then: PGlite's WebAssembly takes a fifth of a second). */
async function openStore(): Promise<Store> {
  if (url) return (await import('./store-postgres.js')).openPostgresStore(url);
  let pglite: typeof import('./store-pglite.js');
  try {
    pglite = await import('./store-pglite.js');
  } catch {
    usage('this collector has no embedded store (the packaged one stores in PostgreSQL): give --database-url or DNSCOST_COLLECTOR_DATABASE_URL');
  }
  const store = await pglite.openPgliteStore(values.data);
  console.error(`dnscost-collector: note: ${pglite.PGLITE_DURABILITY}`);
  return store;
}

/** The primary of several workers: the migrations and the secret once, before any worker starts; then the workers. */
async function primary(): Promise<void> {
  try {
    await (await openStore()).close();
  } catch (err) {
    usage(`cannot open the store: ${(err as Error).message}`);
  }
  try {
    if (!env.DNSCOST_COLLECTOR_SECRET) await loadOrCreateSecret(values.data);
  } catch (err) {
    usage(`publication secret: ${(err as Error).message}`);
  }
  runPrimary(workers, (message) => console.error(`dnscost-collector: ${message}`));
}

async function serve(): Promise<void> {
  let store: Store;
  try {
    store = await openStore();
  } catch (err) {
    usage(`cannot open the store: ${(err as Error).message}`);
  }
  // After the store: PGlite creates its data directory itself, and the secret lives beside its files.
  let secret: Buffer;
  try {
    secret = env.DNSCOST_COLLECTOR_SECRET ? parseSecret(env.DNSCOST_COLLECTOR_SECRET) : await loadOrCreateSecret(values.data);
  } catch (err) {
    usage(`publication secret: ${(err as Error).message}`);
  }
  const collector = await startCollector({
    store,
    host: values.host,
    port,
    // Each worker keeps its share of the service's limits (the kernel hands it every workers-th connection).
    rate: rate === 0 ? null : { perSecond: shareOf(rate, workers, false, 0), burst: shareOf(4 * rate, workers, false, 1) },
    publication: { secret, epsilon, minPages, delayMs: delayHours * 3_600_000 },
    maxConnections: shareOf(maxConnections, workers),
    maxConnectionsPerClient: shareOf(maxConnectionsPerClient, workers),
    bodyBudgetBytes: shareOf(bodyBudgetMiB * 1024 * 1024, workers),
    trustedProxies,
    // Retention runs in one process: the lead worker, or the only one.
    keepDays: me.lead ? keepDays || null : null,
  });
  if (me.lead) {
    console.error(`dnscost-collector: publishing each UTC day ${delayHours} h after it ends, ε = ${epsilon} per person per day, threshold ${minPages} pages; raw uploads kept ${keepDays ? `${keepDays} days` : 'for good'}`);
    console.error(`dnscost-collector: store ${store.kind}${url ? '' : ` in ${values.data}`}; listening on ${collector.url}${workers > 1 ? ` (${workers} workers)` : ''}`);
  }

  let stopping = false;
  const stop = (why: string) => {
    if (stopping) return;
    stopping = true;
    // Several workers stop together: the primary said so once.
    if (!me.worker) console.error(`dnscost-collector: ${why}: finishing queued uploads`);
    // A client holding a connection open must not keep the collector up for long.
    setTimeout(() => process.exit(1), 10_000).unref();
    collector.close().then(() => process.exit(0), (err: unknown) => {
      console.error(`dnscost-collector: ${String(err)}`);
      process.exit(1);
    });
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stop(signal));
  // A worker whose primary is gone (killed) finishes what it accepted and goes too.
  if (me.worker) process.on('disconnect', () => stop('the primary exited'));
}

(workers > 1 && cluster.isPrimary ? primary() : serve()).catch((err: unknown) => {
  console.error(`dnscost-collector: ${(err as Error)?.stack ?? String(err)}`);
  process.exit(1);
});
