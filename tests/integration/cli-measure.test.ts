// `dnscost-host measure` as the tools people use are driven: a HAR's page replayed through the lab resolver (the
// names it was asked, from its own query log, and the offsets each lookup started at), a host list on standard input,
// CSV and the summary JSON parsed back, and --fail's exit code. Only the lab's CoreDNS on loopback is asked.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, test } from 'vitest';
import type { ExchangeRecord } from '../../common/record.js';
import type { SummaryRow } from '../../common/schema.js';
import { harLookups, readHarFile } from '../../native-host/src/hosts-input.js';
import { CSV_COLUMNS } from '../../native-host/src/cli-output.js';
import { HOST_BIN, harPage } from '../../lab/paths.js';
import { READY_PROBE, startCoreDNS, type LabResolver } from '../../lab/resolver.js';

const HAR = harPage('www.izettle.com.har');
/** How late a replayed lookup may start after its offset (as tests/integration/replay.test.ts allows). */
const LATE_MEDIAN_MS = 5;
const LATE_MAX_MS = 60;

let lab: LabResolver;
let expected: { name: string; firstNeededMs: number }[];

beforeAll(async () => {
  expected = harLookups(await readHarFile(HAR));
  // Every name of the page answers; anything else is refused (and forwarded nowhere).
  lab = await startCoreDNS({ siteZone: { zone: expected.map((l) => l.name), a: '127.0.0.1' }, logQueries: true });
}, 30_000);
afterAll(async () => lab?.stop());

/** Runs the host; resolves with its exit code and output (a non-zero exit is a result here, not an error). */
function host(args: string[], input = ''): Promise<{ status: number; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [HOST_BIN, 'measure', ...args], { timeout: 60_000 });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  child.stdin.end(input);
  return new Promise((resolve) => child.on('close', (code) => resolve({ status: code ?? -1, stdout, stderr })));
}

/** The names the lab was asked since `from` characters of its log, but its own readiness probe. */
const askedSince = (from: number): string[] =>
  [...lab.logs().slice(from).matchAll(/dnscost-query \S+ (\S+) (\S+)/g)]
    .filter((m) => !(m[1] === READY_PROBE.type && m[2] === READY_PROBE.name))
    .map((m) => m[2]!.toLowerCase().replace(/\.$/, ''));

test('--har replays the page: every name it needed, asked of the resolver, each lookup started at its offset', { timeout: 90_000 }, async () => {
  assert.ok(expected.length >= 10, `the page needs ${expected.length} names`);
  const from = lab.logs().length;
  const r = await host(['--endpoint', lab.endpoints.udp, '--har', HAR, '--json', '--quiet', '--no-warmup', '--allow-private-names', '--fail']);
  assert.equal(r.status, 0, r.stderr);
  const records = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as ExchangeRecord);
  assert.deepEqual(records.map((x) => x.host).sort(), expected.map((l) => l.name).sort());
  assert.ok(records.every((x) => x.ok), 'every name of the page answered');
  // The resolver's own log: the page's names, each once, and nothing else.
  assert.deepEqual(askedSince(from).sort(), expected.map((l) => l.name).sort());
  const late: number[] = [];
  for (const l of expected) {
    const rec = records.find((x) => x.host === l.name)!;
    assert.equal(rec.replay?.firstNeededMs, l.firstNeededMs, l.name);
    late.push(rec.startedAt - rec.replay!.pageStartedAt - l.firstNeededMs);
  }
  late.sort((a, b) => a - b);
  assert.ok(late[0]! > -1, `a lookup started ${-late[0]!} ms before its offset`);
  assert.ok(late[Math.floor(late.length / 2)]! <= LATE_MEDIAN_MS, `median lateness ${late[Math.floor(late.length / 2)]} ms`);
  assert.ok(late.at(-1)! <= LATE_MAX_MS, `latest lookup ${late.at(-1)} ms late`);
});

test('--hosts-file - reads standard input; --csv parses back to one row per exchange; --fail exits 1 when a lookup failed', { timeout: 90_000 }, async () => {
  const [a, b] = [expected[0]!.name, expected[1]!.name];
  const input = `# two of the page's names, and one the lab refuses\n${a}\n1,${b}\nrefused.dnscost-lab.net\n`;
  const args = ['--endpoint', lab.endpoints.udp, '--endpoint', lab.endpoints.tcp, '--hosts-file', '-', '--qtype', 'A,AAAA', '--quiet', '--no-warmup'];
  const csv = await host([...args, '--csv'], input);
  assert.equal(csv.status, 0, `without --fail a failed lookup is a record, not an error: ${csv.stderr}`);
  const rows = parse(csv.stdout, { columns: true }) as Record<(typeof CSV_COLUMNS)[number], string>[];
  assert.deepEqual(Object.keys(rows[0]!), [...CSV_COLUMNS]);
  assert.equal(rows.length, 3 * 2 * 2, 'names × qtypes × endpoints');
  for (const row of rows) {
    assert.ok([a, b, 'refused.dnscost-lab.net'].includes(row.host), row.host);
    assert.ok(Number(row.total_ms) > 0 && Number.isFinite(Number(row.bytes_received)), JSON.stringify(row));
    const ok = row.host !== 'refused.dnscost-lab.net';
    assert.equal(row.ok, String(ok), JSON.stringify(row));
    assert.equal(row.error, ok ? '' : 'refused');
    if (ok && row.qtype === 'A') assert.equal(row.answers, 'A 127.0.0.1');
  }
  const failing = await host([...args, '--fail'], input);
  assert.equal(failing.status, 1, failing.stderr);
  const passing = await host([...args, '--fail'], `${a}\n${b}\n`);
  assert.equal(passing.status, 0, passing.stderr);
});

test('--summary-json: one object per resolver × endpoint × mode × qtype, the table\'s statistics', { timeout: 90_000 }, async () => {
  const names = expected.slice(0, 3).map((l) => l.name);
  const r = await host(['--endpoint', lab.endpoints.udp, '--endpoint', lab.endpoints.tcp, '--mode', 'cold,warm', '--repeat', '2', '--quiet', '--summary-json', ...names]);
  assert.equal(r.status, 0, r.stderr);
  const rows = JSON.parse(r.stdout) as SummaryRow[];
  assert.deepEqual(rows.map((x) => `${x.transport} ${x.mode} ${x.qtype}`).sort(), ['tcp cold A', 'tcp warm A', 'udp cold A', 'udp warm A']);
  for (const x of rows) {
    assert.equal(x.total.n, names.length * 2);
    assert.equal(x.ok, names.length * 2);
    assert.ok(x.total.median! > 0 && x.total.p5! <= x.total.median! && x.total.median! <= x.total.p95!);
  }
});
