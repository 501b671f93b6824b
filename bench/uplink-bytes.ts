// What each load of a validation run sent upstream, by path, from a capture on the server's side of the lab link
// (`DNSCOST_CAPTURE=DIR scripts/validate … --raw RAW`): the browser's DNS path (Do53, its DoT or DoQ stub, its own
// DoH) and the page's own traffic, per visit, beside the bytes dnscost's replay counted for the same page and path and
// the onLoad the load had. It answers one question: on a slow uplink, does a transport cost the page what its extra
// upstream bytes take to send (bytes / rate)? Frames are counted at the capture (IP + 14-byte Ethernet header).
//   node dist/bench/uplink-bytes.js --raw RAW --pcap DIR/PROFILE.pcap [--out FILE] [--smoke]
// --smoke reads the recorded pilot (bench/results/validation/lookups/uplink-*.frames.tsv.gz) and prints to stdout.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { HAR_SITE_ADDRESS } from '../lab/har/address.js';
import { run } from '../lab/capture.js';
import { median } from '../common/stats.js';
import { upgradeRun } from './validate/legacy.js';
import type { ValidationRun } from './validate/types.js';
import { reportPath, SMOKE_OPTION } from './smoke.js';

/** The lab client's address (lab/netns.ts): frames from it went upstream. */
const CLIENT = '192.0.2.1';
const PILOT = 'bench/results/validation/lookups/uplink-dsl-30-100-chromium';

/** One upstream frame: capture time (ms since the epoch), destination, protocol, destination port, length. */
export interface Frame { t: number; dst: string; udp: boolean; port: number; len: number }

/** The path a frame belongs to: the page's own traffic, or a DNS path by its port. */
export function pathOf(f: Frame): string {
  if (f.dst === HAR_SITE_ADDRESS.v4 || f.dst === HAR_SITE_ADDRESS.v6 || f.port === 80) return 'page';
  if (f.port === 53) return 'do53';
  if (f.port === 853) return f.udp ? 'doq' : 'dot';
  if (f.port === 443) return f.udp ? 'doh3' : 'doh';
  return 'other';
}

/** tshark's tab-separated fields (epoch, src, dst, tcp port, udp port, frame length) → upstream frames. */
export function parseFrames(tsv: string): Frame[] {
  const out: Frame[] = [];
  for (const line of tsv.split('\n')) {
    const [t, src, dst, tcp, udp, len] = line.split('\t');
    if (src !== CLIENT || !dst || !len) continue;
    out.push({ t: Number(t) * 1000, dst, udp: !tcp, port: Number(tcp || udp), len: Number(len) });
  }
  return out;
}

/** The bins `busyDns` reads a load in, ms. */
export const BUSY_BIN_MS = 50;

/**
 * Per visit: bytes each path sent between the load's navigation (its end less its onLoad) and its end; and `busyDns`,
 * the DNS paths' bytes sent in BUSY_BIN_MS bins where the page's own traffic already used half the uplink or more (null
 * without the profile's rate): the DNS bytes that queue beside the page's rather than in its gaps.
 */
export function visitBytes(runData: ValidationRun, frames: readonly Frame[]): { key: string; transport: string; onLoad: number; bytes: Record<string, number>; busyDns: number | null; fetch: number[] }[] {
  const rows = [];
  for (const p of runData.profiles) {
    const binCapacity = p.profile.upMbit ? (p.profile.upMbit * 1e6) / 8 / 1000 * BUSY_BIN_MS : null;
    for (const v of p.visits) {
      if (v.error || v.onLoad == null || v.endedAt == null) continue;
      const from = v.endedAt - v.onLoad;
      const bytes: Record<string, number> = {};
      const bins = new Map<number, { page: number; dns: number }>();
      for (const f of frames) {
        if (f.t < from || f.t > v.endedAt) continue;
        const path = pathOf(f);
        bytes[path] = (bytes[path] ?? 0) + f.len;
        if (path === 'other') continue;
        const i = Math.floor((f.t - from) / BUSY_BIN_MS);
        const bin = bins.get(i) ?? bins.set(i, { page: 0, dns: 0 }).get(i)!;
        if (path === 'page') bin.page += f.len;
        else bin.dns += f.len;
      }
      const busyDns = binCapacity === null ? null : [...bins.values()].reduce((sum, b) => sum + (b.page >= binCapacity / 2 ? b.dns : 0), 0);
      // After each host's lookup (Resource Timing, where exposed) until its last response ended: the page's own fetch.
      const fetch = (v.pageRecord?.hosts ?? []).flatMap((h) => (h.lookup?.endMs != null && h.completedMs != null ? [h.completedMs - h.lookup.endMs] : []));
      rows.push({ key: `${p.profile.name} ${v.browser} page ${v.page} ${v.scenario}`, transport: v.transport, onLoad: v.onLoad, bytes, busyDns, fetch });
    }
  }
  return rows;
}

/** The replay's counted bytes sent per page and transport × mode: the median over replays of the sum of its records. */
export function replayBytes(runData: ValidationRun): Map<string, number> {
  const per = new Map<string, number[]>();
  for (const p of runData.profiles) {
    for (const v of p.visits) {
      const sums = new Map<string, number>();
      for (const r of v.records ?? []) {
        const k = `${p.profile.name} ${v.browser} page ${v.page} ${r.mode}|${r.transport === 'udp' ? 'do53' : r.transport}|${r.repeat}`;
        sums.set(k, (sums.get(k) ?? 0) + r.bytes.sent);
      }
      for (const [k, b] of sums) {
        const key = k.slice(0, k.lastIndexOf('|'));
        per.set(key, [...(per.get(key) ?? []), b]);
      }
    }
  }
  return new Map([...per].map(([k, xs]) => [k, median(xs) ?? 0]));
}

export function report(runData: ValidationRun, frames: readonly Frame[] | null, command: string): string {
  const rows = visitBytes(runData, frames ?? []);
  const replay = replayBytes(runData);
  const up = new Map(runData.profiles.map((p) => [p.profile.name, p.profile.upMbit]));
  const lines = [
    `Command: \`${command}\``,
    '',
    'Medians over the loads. DNS KB: what the browser\'s DNS path sent upstream during the load (capture); Δ: that less',
    'the Do53 loads\'; Δ/rate: Δ at the profile\'s uplink rate; replay Δ: the same difference in the bytes dnscost\'s',
    `replay counted (IP level, the same mode); busy KB: DNS KB sent in ${BUSY_BIN_MS} ms bins where the page's own traffic already`,
    'used half the uplink or more; fetch: after a host\'s lookup until its last response ended (Resource Timing and',
    'webRequest, median over hosts and loads); onLoad Δ: the load\'s onLoad less the Do53 loads\'. Without a capture the',
    'byte columns read —.',
    '',
    '| profile, browser, page, scenario | path | loads | page KB | DNS KB | Δ KB | Δ/rate ms | replay Δ KB | busy KB | fetch ms | onLoad ms | onLoad Δ ms |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  const f = (x: number | null | undefined, digits = 1) => (x == null ? '—' : x.toFixed(digits));
  const groups = [...new Set(rows.map((r) => r.key))];
  for (const g of groups) {
    const of = (t: string) => rows.filter((r) => r.key === g && r.transport === t);
    const dnsKb = (t: string) => (frames ? median(of(t).map((r) => (r.bytes[t] ?? 0) / 1000)) : null);
    const base = { dns: dnsKb('do53'), onLoad: median(of('do53').map((r) => r.onLoad)) };
    const rate = up.get(g.split(' ')[0]!) ?? null;
    // The replay's key: the group without its scenario, and the mode it replayed (expected traces read as cold).
    const page = `${g.replace(/ \S+$/, '')} ${g.split(' ').at(-1) === 'warm' ? 'warm' : 'cold'}`;
    const replayBase = replay.get(`${page}|do53`);
    for (const t of [...new Set(rows.filter((r) => r.key === g).map((r) => r.transport))]) {
      const dns = dnsKb(t.replace(/-aa$/, ''));
      const onLoad = median(of(t).map((r) => r.onLoad));
      const d = dns !== null && base.dns !== null ? dns - base.dns : null;
      const rd = replay.get(`${page}|${t}`);
      lines.push(`| ${g} | ${t} | ${of(t).length} | ${f(frames ? median(of(t).map((r) => (r.bytes.page ?? 0) / 1000)) : null)} | ${f(dns)} | ${f(d)} | ${f(d !== null && rate ? (d * 8) / rate : null, 0)} | ${f(rd != null && replayBase != null ? (rd - replayBase) / 1000 : null)} | ${f(frames ? median(of(t).flatMap((r) => (r.busyDns === null ? [] : [r.busyDns / 1000]))) : null)} | ${f(median(of(t).flatMap((r) => r.fetch)), 0)} | ${f(onLoad, 0)} | ${f(onLoad !== null && base.onLoad !== null ? onLoad - base.onLoad : null, 0)} |`);
    }
  }
  return lines.join('\n') + '\n';
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { raw: { type: 'string' }, pcap: { type: 'string' }, frames: { type: 'string' }, out: { type: 'string' }, ...SMOKE_OPTION } });
  const rawFile = values.raw ?? (values.smoke ? `${PILOT}.raw.json.gz` : null);
  if (!rawFile) throw new Error('usage: uplink-bytes --raw RAW [--pcap FILE | --frames TSV.gz] [--out FILE] [--smoke]');
  const runData = upgradeRun(JSON.parse(gunzipSync(readFileSync(rawFile)).toString('utf8')));
  const tsv = !values.pcap && !values.frames && !values.smoke
    ? null
    : values.pcap
    ? await run('tshark', ['-r', values.pcap, '-T', 'fields', '-e', 'frame.time_epoch', '-e', 'ip.src', '-e', 'ip.dst', '-e', 'tcp.dstport', '-e', 'udp.dstport', '-e', 'frame.len', '-Y', `ip.src==${CLIENT}`], 300_000)
    : gunzipSync(readFileSync(values.frames ?? `${PILOT}.frames.tsv.gz`)).toString('utf8');
  const text = report(runData, tsv === null ? null : parseFrames(tsv), `node dist/bench/uplink-bytes.js ${process.argv.slice(2).join(' ')}`);
  const out = reportPath(values);
  if (out) writeFileSync(out, text);
  process.stdout.write(text);
}

// Run as a script only (the tests import the pure functions above).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main().catch((e: unknown) => { process.stderr.write(`uplink-bytes: ${e instanceof Error ? e.message : String(e)}\n`); process.exit(1); });
