// The CPU a browser spends per name it resolves, by DNS path: Chromium's own resolver over the system's Do53 against
// its DoH (secure mode), Firefox's getaddrinfo against its TRR (mode 3). Each round the browser resolves N fresh names
// at once (a page asks N images from N names of the lab zone, on a port where nothing listens: each request ends at
// once with a refused connection, the same work on both paths); the browser's whole process tree's CPU (user +
// system, /proc) is read around the round. The difference between the paths per name is what encrypted DNS costs
// the browser's own processes, measured with no page around it (issue 24: Chromium's DoH requests are each a whole
// URL request on its network thread). Rounds alternate the paths; N names and no cache between rounds.
//   node dist/bench/browser-dns-cpu.js [--names 200] [--rounds 6] [--out bench/results/browser-dns-cpu.md] [--smoke]
// As root, after scripts/setup; nothing else may run meanwhile. It runs in a network and mount namespace of its own.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { isolateDns, isolatedNetwork, LAB_SERVER, launchDnsBrowser, zoneWithProbe, type BrowserDnsPath, type DnsBrowser } from '../lab/browser-dns.js';
import type { BrowserName } from '../lab/browsers.js';
import { distPath } from '../lab/paths.js';
import { treeCpuMs } from '../lab/proc.js';
import { startCoreDNS } from '../lab/resolver.js';
import { median } from '../common/stats.js';
import { reportPath, SMOKE_OPTION } from './smoke.js';

const ZONE = 'cpu.example';
/** No server listens here (the default port, so Chromium asks the HTTPS record too, as for a page): each image request
 * fails at once, after its lookup. */
const CLOSED_PORT = 80;

/** One round: browser, path, names resolved, CPU of the browser's process tree and wall time. */
export interface Round { browser: BrowserName; path: BrowserDnsPath; round: number; names: number; cpuMs: number; wallMs: number; failed: number; queries: number; over: string[] }

/** Asks `names` images at once in a blank page and waits for each to end; returns how many did not end in an error. */
async function resolveAll(b: DnsBrowser, names: string[]): Promise<{ wallMs: number; failed: number }> {
  const page = (await b.browser.pages())[0] ?? (await b.browser.newPage());
  const t0 = Date.now();
  const failed = await page.evaluate((urls: string[]) => Promise.all(urls.map((u) => new Promise<number>((res) => {
    const img = new Image();
    img.onerror = () => res(0);
    img.onload = () => res(1);
    img.src = u;
  }))).then((xs) => xs.reduce((a, x) => a + x, 0)), names.map((n) => `http://${n}${CLOSED_PORT === 80 ? "" : `:${CLOSED_PORT}`}/x.png`));
  return { wallMs: Date.now() - t0, failed };
}

async function inner(out: string, n: number, rounds: number, browsers: BrowserName[]): Promise<void> {
  isolatedNetwork(false);
  const work = mkdtempSync(join(tmpdir(), 'dnscost-dnscpu-'));
  isolateDns(work);
  let log = '';
  const dns = await startCoreDNS({ address: LAB_SERVER, ports: { dns: 53, tls: 853, https: 443 }, others: 'nxdomain', logQueries: true, onOutput: (t) => (log += t), siteZone: zoneWithProbe({ zone: ZONE, a: LAB_SERVER }) });
  const measured: Round[] = [];
  try {
    for (const browser of browsers) {
      const open: Partial<Record<BrowserDnsPath, DnsBrowser>> = {};
      try {
        for (const path of ['system', 'doh'] as const) {
          open[path] = await launchDnsBrowser(browser, { path, caFile: dns.certs.caFile, dohUrl: `https://${LAB_SERVER}/dns-query`, workDir: work });
          // A first round of a few names: the DoH connection (or the stub) up, the page's renderer warm; not counted.
          await resolveAll(open[path]!, Array.from({ length: 5 }, (_, i) => `warm-${path}-${i}.${ZONE}`));
        }
        for (let r = 0; r < rounds; r++) {
          // Alternate which path goes first.
          for (const path of r % 2 ? (['doh', 'system'] as const) : (['system', 'doh'] as const)) {
            const b = open[path]!;
            const pid = b.browser.process()?.pid;
            if (!pid) throw new Error(`${browser}: no process id`);
            const names = Array.from({ length: n }, (_, i) => `r${r}-${path}-h${i}.${ZONE}`);
            await new Promise((res) => setTimeout(res, 500));
            log = '';
            const before = treeCpuMs(pid);
            const { wallMs, failed } = await resolveAll(b, names);
            // Let the last answers' work end (an HTTPS record answered after the addresses).
            await new Promise((res) => setTimeout(res, 300));
            const cpuMs = treeCpuMs(pid) - before;
            // The lab resolver's log: how many of this round's queries it answered, over which schemes.
            const asked = [...log.matchAll(/dnscost-query (\S+) \S+ (\S+)/g)].filter((m) => m[2]!.startsWith(`r${r}-${path}-`));
            measured.push({ browser, path, round: r, names: n, cpuMs, wallMs, failed, queries: asked.length, over: [...new Set(asked.map((m) => m[1]!))] });
          }
        }
      } finally {
        for (const b of Object.values(open)) await b?.close();
      }
    }
  } finally {
    await dns.stop();
    rmSync(work, { recursive: true, force: true });
  }
  writeFileSync(out, JSON.stringify(measured));
}

export function report(rounds: readonly Round[], command: string): string {
  const lines = [
    '# CPU a browser spends per name it resolves, by DNS path',
    '',
    `Command: \`${command}\` (as root, after \`scripts/setup\`), ${new Date().toISOString().slice(0, 10)}.`,
    '',
    'Each round: N fresh names of the lab zone asked at once by a blank page (an image each, on a closed port: the same',
    'refused connection on both paths), the CPU of the browser\'s whole process tree around it; medians over rounds.',
    '"system": the machine\'s resolver (Chromium\'s own Do53 client, Firefox\'s getaddrinfo) to the lab resolver',
    '(CoreDNS); "doh": Chromium\'s secure DNS, Firefox\'s TRR mode 3, to the same resolver.',
    '',
    '| browser | path | rounds | names a round | queries a round (over) | CPU ms a round | CPU ms per name | wall ms a round | DoH − system, ms per name |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const browser of [...new Set(rounds.map((r) => r.browser))]) {
    const per = (path: BrowserDnsPath) => rounds.filter((r) => r.browser === browser && r.path === path);
    const perName = (path: BrowserDnsPath) => median(per(path).map((r) => r.cpuMs / r.names));
    for (const path of ['system', 'doh'] as const) {
      const rs = per(path);
      const [dohMs, systemMs] = [perName('doh'), perName('system')];
      const d = path === 'doh' && dohMs !== null && systemMs !== null ? (dohMs - systemMs).toFixed(3) : '';
      lines.push(`| ${browser} | ${path} | ${rs.length} | ${rs[0]?.names ?? '—'} | ${median(rs.map((r) => r.queries)) ?? '—'} (${[...new Set(rs.flatMap((r) => r.over))].join(', ') || '—'}) | ${median(rs.map((r) => r.cpuMs))?.toFixed(0) ?? '—'} | ${perName(path)?.toFixed(3) ?? '—'} | ${median(rs.map((r) => r.wallMs))?.toFixed(0) ?? '—'} | ${d} |`);
    }
  }
  const failed = rounds.filter((r) => r.failed > 0);
  lines.push('', failed.length ? `Rounds where an image loaded (it should not): ${failed.length}.` : 'Every image ended in its refused connection.');
  return `${lines.join('\n')}\n`;
}

if (process.env.DNSCOST_DNSCPU_INNER) {
  const [out, n, rounds, browsers] = process.env.DNSCOST_DNSCPU_INNER.split('|') as [string, string, string, string];
  await inner(out, Number(n), Number(rounds), browsers.split(',') as BrowserName[]);
} else {
  const { values } = parseArgs({ options: { names: { type: 'string', default: '200' }, rounds: { type: 'string', default: '6' }, browsers: { type: 'string', default: 'chromium,firefox' }, out: { type: 'string' }, ...SMOKE_OPTION } });
  const n = values.smoke ? 20 : Number(values.names);
  const rounds = values.smoke ? 1 : Number(values.rounds);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new Error(`--names takes a whole number 1–1000, not ${values.names}`);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 50) throw new Error(`--rounds takes a whole number 1–50, not ${values.rounds}`);
  const browsers = values.browsers.split(',').filter(Boolean);
  if (!browsers.length || browsers.some((b) => b !== 'chromium' && b !== 'firefox')) throw new Error(`--browsers takes chromium and/or firefox, not ${values.browsers}`);
  if (process.getuid?.() !== 0) throw new Error('needs root: it runs in namespaces of its own');
  const work = mkdtempSync(join(tmpdir(), 'dnscost-dnscpu-out-'));
  const file = join(work, 'rounds.json');
  try {
    execFileSync('unshare', ['--net', '--mount', '--propagation', 'private', process.execPath, distPath('bench/browser-dns-cpu.ts')], {
      env: { ...process.env, DNSCOST_DNSCPU_INNER: `${file}|${n}|${rounds}|${browsers.join(',')}` }, stdio: 'inherit', timeout: 1_200_000,
    });
    const rs = JSON.parse(readFileSync(file, 'utf8')) as Round[];
    const command = `node dist/bench/browser-dns-cpu.js ${process.argv.slice(2).join(' ')}`.trim();
    const out = reportPath(values);
    if (out) writeFileSync(out, report(rs, command));
    process.stdout.write(report(rs, command));
    // A round that loaded an image, or whose names the resolver never saw over the path's own scheme, measured nothing.
    const scheme = (r: Round) => (r.path === 'doh' ? 'https' : 'dns');
    if (values.smoke && (rs.length === 0 || rs.some((r) => r.failed > 0 || r.queries < r.names || !r.over.every((o) => o === scheme(r))))) process.exit(1);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
