import assert from 'node:assert/strict';
import { test } from 'vitest';
import { sizing, type PilotRow } from '../bench/validate/sizing.js';

const row = (page: string, halfWidth: number | null, over: Partial<PilotRow> = {}): PilotRow =>
  ({ browser: 'chromium', profile: '4g', page, control: false, loads: { do53: 20, candidate: 20 }, halfWidth, tolerance: 10, ...over });

test('loads per side from a pilot: 20 only where at least two rows would resolve at 20 and not at 10', () => {
  const s = sizing([
    // At 20 loads a half-width of 12 is 17 at 10 (no) and 12 at 20 (no); 9 is 12.7 at 10 (no), 9 at 20 (yes).
    row('a', 9), row('a', 9), row('a', 12),
    // One row gaining is not enough; one already resolving at 10 (6 → 8.5) counts as such.
    row('b', 9), row('b', 6),
    // A pilot row at 5 loads a side: 6 then is 4.2 at 10.
    row('c', 6, { loads: { do53: 5, candidate: 5 } }),
    // Controls and rows without an interval do not size anything.
    row('d', 9, { control: true }), row('d', null),
  ]);
  assert.deepEqual(Object.fromEntries([...s].map(([k, v]) => [k, v])), {
    'chromium 4g a': { loads: 20, at10: 0, at20: 2, never: 1 },
    'chromium 4g b': { loads: 10, at10: 1, at20: 1, never: 0 },
    'chromium 4g c': { loads: 10, at10: 1, at20: 0, never: 0 },
  });
});
