// Every benchmark that drives real browsers in its smoke mode (a few loads, nothing recorded), so none can rot
// unnoticed: the extension's overhead (Chromium, beside the peer where it is, and Firefox) and its own CPU, the
// popup's and the dashboard's draw, the renderer's settle, the record types browsers ask and the CPU each DNS path
// costs them, how long they keep an encrypted connection, the recorder's coverage of the names a page needed, and the
// cost model's validation.
import { smokeTests } from '../support/bench-smoke.js';

smokeTests([
  { bench: 'extension-overhead', expect: /Ratio with \/ without: \*\*[\d.]+( \[[\d.]+…[\d.]+\])?\*\*/, timeoutMs: 240_000 },
  { bench: 'extension-overhead', args: ['--browser', 'firefox'], expect: /headless Firefox[\s\S]*Ratio with \/ without: \*\*[\d.]+( \[[\d.]+…[\d.]+\])?\*\*/, timeoutMs: 240_000 },
  { bench: 'extension-cpu', expect: /\| the background \(service worker\)[^|]*\| [\d.]+ \|/, timeoutMs: 120_000 },
  { bench: 'popup-draw', expect: /Target: draw ≤ 100 ms — median \*\*[\d.]+ ms\*\*/, timeoutMs: 180_000 },
  { bench: 'dashboard-draw', expect: /Target: draw ≤ 200 ms — 50 entries: median \*\*[\d.]+ ms\*\*/, timeoutMs: 180_000 },
  { bench: 'renderer-settle', expect: /\| firefox \| 1 \| 150 \| 2 \|/, timeoutMs: 180_000 },
  { bench: 'browser-dns-cpu', expect: /\| chromium \| doh \| 1 \| 20 \| \d+ \(https\) \|/, timeoutMs: 300_000 },
  { bench: 'browser-queries', expect: /\| firefox \| [^|]+ \| DoH \| no \| /, timeoutMs: 300_000 },
  { bench: 'idle-lifetimes', expect: /stubby/, timeoutMs: 400_000 },
  { bench: 'recorder-coverage', expect: /\| chromium \| 3 \| 1 \| \d+–\d+ \| [\d.]+ % \|/, timeoutMs: 120_000 },
  { bench: 'validate/main', expect: /chromium/, timeoutMs: 400_000 },
]);
