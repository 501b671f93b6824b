// How `dnscost-host measure` writes its results (native-host/src/cli.ts picks one): a table of summary rows and the
// failures grouped, or CSV with one row per exchange. JSON Lines and the summary JSON are the records and rows as
// they are.
import type { ExchangeRecord } from '../../common/record.js';
import type { SummaryRow } from '../../common/schema.js';
import { TRANSPORT_IDS } from '../../common/transports.js';

const fmt = (x: number | null, digits = 1): string => (x === null ? '-' : x.toFixed(digits));

/** A plain-text table of summary rows. */
export function formatTable(unsorted: SummaryRow[]): string {
  const rank = (r: SummaryRow): string => [r.resolver, TRANSPORT_IDS.indexOf(r.transport), r.endpoint, r.mode, r.qtype].join('|');
  const rows = [...unsorted].sort((a, b) => rank(a).localeCompare(rank(b)));
  const head = ['resolver', 'endpoint', 'transport', 'mode', 'qtype', 'n', 'fail', 'median', 'p5', 'p95', 'mean', 'rsd%', 'bytes'];
  const body = rows.map((r) => [
    r.resolver,
    r.endpoint,
    r.transport,
    r.mode,
    r.qtype,
    String(r.total.n),
    String(r.failed),
    fmt(r.total.median, 2),
    fmt(r.total.p5, 2),
    fmt(r.total.p95, 2),
    fmt(r.total.mean, 2),
    fmt(r.total.rsd),
    fmt(r.bytesPerExchange.median, 0),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i < 5 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(head), ...body.map(line)].join('\n') + '\n';
}

/** One line per (endpoint, mode, error code) with its count and one example, so a failing run stays readable. */
export function formatFailures(records: readonly ExchangeRecord[]): string {
  const groups = new Map<string, { count: number; example: ExchangeRecord }>();
  for (const r of records) {
    if (r.ok) continue;
    const key = `${r.endpoint} ${r.mode} ${r.error?.code}`;
    const g = groups.get(key);
    if (g) g.count += 1;
    else groups.set(key, { count: 1, example: r });
  }
  return [...groups.values()]
    .map(({ count, example: r }) => `failed ×${count}: ${r.endpoint} ${r.mode} ${r.error?.code} — e.g. ${r.host} ${r.qtype}: ${r.error?.message}\n`)
    .join('');
}

/** The CSV columns, one row per exchange: times in ms (empty where a phase does not apply), sizes in bytes. */
export const CSV_COLUMNS = [
  'host', 'qtype', 'resolver', 'endpoint', 'transport', 'mode', 'repeat', 'ok', 'rcode', 'error', 'total_ms', 'connect_ms',
  'tls_ms', 'query_ms', 'reused', 'resumed', 'bytes_sent', 'bytes_received', 'packets_sent', 'packets_received', 'first_needed_ms',
  'answers',
] as const;

/** The CSV's header line. */
export const CSV_HEADER = CSV_COLUMNS.join(',') + '\r\n';

/** A field as RFC 4180 writes it: quoted when it holds a comma, a quote or a line break, quotes doubled. */
const field = (v: string | number | boolean | null | undefined): string => {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/** One exchange as a CSV line (CSV_COLUMNS' order; answers as `type data` joined by `; `). */
export function csvRow(r: ExchangeRecord): string {
  const row: Record<(typeof CSV_COLUMNS)[number], string | number | boolean | null | undefined> = {
    host: r.host,
    qtype: r.qtype,
    resolver: r.resolver,
    endpoint: r.endpoint,
    transport: r.transport,
    mode: r.mode,
    repeat: r.repeat,
    ok: r.ok,
    rcode: r.rcode,
    error: r.error?.code,
    total_ms: r.timings.total,
    connect_ms: r.timings.connect,
    tls_ms: r.timings.tls,
    query_ms: r.timings.query,
    reused: r.reused,
    resumed: r.tls?.resumed,
    bytes_sent: r.bytes.sent,
    bytes_received: r.bytes.received,
    packets_sent: r.packets.sent,
    packets_received: r.packets.received,
    first_needed_ms: r.replay?.firstNeededMs,
    answers: r.answers.map((a) => `${a.type} ${a.data}`).join('; '),
  };
  return CSV_COLUMNS.map((c) => field(row[c])).join(',') + '\r\n';
}
