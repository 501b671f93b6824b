// dnscost-host's timings on a 40 ms lab link: no median below the physical floor, and every median within
// max(5 %, 2 ms) of the reference client's on the same path (the CI-sized version of
// bench/timing-vs-reference.ts, which records the full table at 20, 50 and 100 ms).
import test from 'node:test';
import assert from 'node:assert/strict';
import { compareTimings, describeFailures, formatPhases, formatTable, missingPrerequisites } from './helpers/timing.js';

const root = process.getuid?.() === 0;
const skip = root ? false : 'needs root (network namespaces, iptables) for the lab link';

test('dnscost medians respect the floor and agree with the reference client at 40 ms RTT', { skip, timeout: 110_000 }, async (t) => {
  const missing = missingPrerequisites();
  assert.deepEqual(missing, [], `missing: ${missing.join(', ')}`);
  const results = await compareTimings({ rttMs: 40, count: 20, blocks: 2, warmup: 1 });
  const table = formatTable(results);
  for (const line of table.trimEnd().split('\n')) t.diagnostic(line);
  const failures = describeFailures(results);
  assert.equal(results.length, 9);
  assert.deepEqual(failures, [], `${failures.join('\n')}\n\n${table}\n${formatPhases(results)}`);
});
