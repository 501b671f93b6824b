// The dnscost-collector command: parses options, opens the store, starts the service, stops it on SIGINT/SIGTERM.
// Logs go to stderr; the one line "listening on URL" tells scripts where it is.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { isIpAddress } from '../common/ip-address.js';
import { startCollector } from './server.js';
import { openPgliteStore, PGLITE_DURABILITY } from './store-pglite.js';
import { openPostgresStore } from './store-postgres.js';

const HELP = `dnscost-collector: receives opt-in dnscost uploads and publishes crowd-wide aggregates.

Usage: npx dnscost-collector [options]

  --host ADDR            listen address (default 127.0.0.1)
  --port N               port (default 8787; 0 picks a free one)
  --data DIR             embedded store's data directory (default ~/.local/share/dnscost-collector)
  --rate N               /v1 requests per second per client (an IPv4 address or an IPv6 /64), sustained; bursts
                         of 4×N (default 5; 0 = off)
  --trusted-proxy ADDR   a proxy in front whose X-Forwarded-For names the client (may be repeated; default none:
                         the connection's peer is the client)
  --max-connections N    connections open at once (default 1000; more are refused at once)
  --aggregates-ttl S     seconds an aggregates answer is reused (default 10; 0 = always fresh)
  --min-batches N        batches a site needs in a cell before it is named (default 5)
  -h, --help             this text

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
    'max-connections': { type: 'string', default: '1000' },
    'aggregates-ttl': { type: 'string', default: '10' },
    'min-batches': { type: 'string', default: '5' },
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
const ttl = number('aggregates-ttl', values['aggregates-ttl'], 0, 86_400);
const minBatches = number('min-batches', values['min-batches'], 1, 1e6);
const maxConnections = number('max-connections', values['max-connections'], 1, 1e6);
const trustedProxies = values['trusted-proxy'] ?? [];
for (const p of trustedProxies) {
  if (!isIpAddress(p)) {
    console.error(`dnscost-collector: --trusted-proxy ${p} is not an IP address`);
    process.exit(2);
  }
}
const url = process.env.DNSCOST_COLLECTOR_DATABASE_URL;

const store = url ? await openPostgresStore(url) : await openPgliteStore(values.data);
const collector = await startCollector({
  store,
  host: values.host,
  port,
  rate: rate === 0 ? null : { perSecond: rate, burst: 4 * rate },
  aggregatesTtlMs: ttl * 1000,
  minBatches,
  maxConnections,
  trustedProxies,
});
if (!url) console.error(`dnscost-collector: note: ${PGLITE_DURABILITY}`);
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
