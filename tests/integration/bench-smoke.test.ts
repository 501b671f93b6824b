// Every benchmark of the lab, the host and the collector in its smoke mode (a few exchanges, nothing recorded), so
// none can rot unnoticed; the browser benchmarks are in tests/browser/bench-smoke.test.ts.
import { smokeTests } from '../support/bench-smoke.js';

smokeTests([
  { bench: 'timing-vs-reference', expect: /smoke: every exchange answered/, timeoutMs: 120_000 },
  // 20 exchanges are within the noise of a process start, so a smoke row's difference may come out negative (CI saw
  // udp −3393 µs): the row's shape is checked, not its value.
  { bench: 'host-vs-kdig', expect: /\| udp \| -?[\d.]+ \| -?[\d.]+ \| -?[\d.]+ \| -?[\d.]+ \| -?[\d.]+ \| 1 × 20 \|[\s\S]*\| dot warm \| \d+ \| \d+ \| \d+ \| \d+ \| [\d.]+ \| -?\d+ \|[\s\S]*\| 20 hosts × \{udp, tcp, dot, doh\} × \{cold, warm\} \|/, timeoutMs: 120_000 },
  { bench: 'quic-loss', expect: /\| 4g-lossy \| doq \|/, timeoutMs: 180_000 },
  { bench: 'doq-stub-cold', expect: /\| none \| 0(\.0)? \| 3 \|/, timeoutMs: 120_000 },
  { bench: 'lab-cpu-per-query', expect: /\| path \| lab resolver \(CoreDNS\)/, timeoutMs: 120_000 },
  { bench: 'collector-throughput', expect: /\| postgres \| 2 \| \d+ \|/, timeoutMs: 120_000 },
  { bench: 'collector-rollup', expect: /\| \*\*all\*\* \| 50 \|/, timeoutMs: 120_000 },
  { bench: 'privacy-budget', expect: /\| pages uploaded per UTC day, most \| 3 \| 3 \|/, timeoutMs: 120_000 },
  { bench: 'replay-schedule', expect: /\| chromium fiber page 100 dot warm \| lookup-starts \| 100 \|/, timeoutMs: 120_000 },
  { bench: 'uplink-bytes', expect: /\| dsl chromium page 100 cold \| dot \| 3 \| [\d.]+ \| [\d.]+ \| [\d.]+ \| \d+ \|/, timeoutMs: 60_000 },
  { bench: 'doh-wait-fit', expect: /\| 10 \| 10 \| -?\d+\.\d+ \| -?\d+\.\d+ \| \d+ \|/, timeoutMs: 60_000 },
  { bench: 'fuzz', expect: /\| HTTP\/1\.1 response reader \| 500 \| 0 \| 0 \|/, timeoutMs: 120_000 },
]);
