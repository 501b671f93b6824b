// Which DNS record types real browsers ask for each host of a page, measured (issue 11, item 3): Chromium and Firefox,
// each through the machine's resolver (Chromium's built-in resolver, Firefox's getaddrinfo) and through its own
// encrypted DNS (Chromium's DoH in secure mode, Firefox's TRR in mode 3), on a machine without and with a global IPv6
// address and route. The lab resolver (CoreDNS) logs every query with its type; dnscost's replay asks what this table
// finds (common/browser-queries.ts), and the validation checks it against the same log.
//   node dist/bench/browser-queries.js [--out bench/results/browser-queries.md] [--smoke]     (as root, after scripts/setup)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { reportPath, SMOKE_OPTION } from './smoke.js';
import { BROWSER_DNS_PATHS, isolateDns, isolatedNetwork, LAB_SERVER, LAB_SERVER6, launchDnsBrowser, zoneWithProbe, type BrowserDnsPath } from '../lab/browser-dns.js';
import { type BrowserName } from '../lab/browsers.js';
import { distPath } from '../lab/paths.js';
import { startCoreDNS } from '../lab/resolver.js';
import { pagePlan, pageUrl, startValidationSite, VALIDATION_ZONE } from '../lab/site/validation-site.js';

/** One case's finding: per host of the page, the record types asked (sorted, with counts) and over which schemes. */
export interface QueryCase {
  browser: BrowserName;
  path: BrowserDnsPath;
  ipv6: boolean;
  version: string;
  perHost: Record<string, Record<string, number>>;
  schemes: string[];
  /** Names outside the page asked meanwhile (the browser's own background lookups), with their types. */
  others: string[];
  error: string | null;
}

const PAGE = 3;

/** A page of the validation site with 3 hosts is loaded once per case in a fresh browser. */
async function inner(ipv6: boolean, out: string): Promise<void> {
  isolatedNetwork(ipv6);
  const work = mkdtempSync(join(tmpdir(), 'dnscost-queries-'));
  isolateDns(work);
  let log = '';
  const dns = await startCoreDNS({
    address: LAB_SERVER, ports: { dns: 53, tls: 853, https: 443 }, logQueries: true, onOutput: (t) => (log += t), others: 'nxdomain',
    siteZone: zoneWithProbe({ zone: VALIDATION_ZONE, a: LAB_SERVER, ...(ipv6 ? { aaaa: LAB_SERVER6 } : {}) }),
  });
  const sites = [await startValidationSite(LAB_SERVER, 80), ...(ipv6 ? [await startValidationSite(LAB_SERVER6, 80)] : [])];
  const cases: QueryCase[] = [];
  const names = new Set(pagePlan(PAGE).map((h) => h.name));
  try {
    for (const browser of ['chromium', 'firefox'] as const) {
      for (const path of BROWSER_DNS_PATHS) {
        log = '';
        const c: QueryCase = { browser, path, ipv6, version: '', perHost: {}, schemes: [], others: [], error: null };
        const b = await launchDnsBrowser(browser, { path, caFile: dns.certs.caFile, dohUrl: `https://${LAB_SERVER}/dns-query`, workDir: work });
        try {
          c.version = await b.browser.version();
          const page = await b.browser.newPage();
          await page.goto(pageUrl(PAGE), { waitUntil: 'load', timeout: 60_000 });
          // Answers to the last queries (an HTTPS record asked after the addresses) may still be on their way.
          await new Promise((r) => setTimeout(r, 1500));
        } catch (e) {
          c.error = String(e).slice(0, 300);
        } finally {
          await b.close();
        }
        for (const m of log.matchAll(/dnscost-query (\S+) (\S+) (\S+)/g)) {
          const [, scheme, type, raw] = m as unknown as [string, string, string, string];
          const name = raw.replace(/\.$/, '').toLowerCase();
          if (names.has(name)) {
            const per = (c.perHost[name] ??= {});
            per[type] = (per[type] ?? 0) + 1;
            if (!c.schemes.includes(scheme)) c.schemes.push(scheme);
          } else if (!c.others.includes(`${type} ${name}`)) c.others.push(`${type} ${name}`);
        }
        cases.push(c);
      }
    }
  } finally {
    for (const s of sites) await s.close();
    await dns.stop();
    rmSync(work, { recursive: true, force: true });
  }
  writeFileSync(out, JSON.stringify(cases));
}

/** The record types one case asked for every host of the page (the same for each host), or the per-host spread. */
export function typesOf(c: QueryCase): string {
  const per = Object.values(c.perHost).map((t) => Object.keys(t).sort().join('+'));
  if (per.length === 0) return '—';
  const distinct = [...new Set(per)];
  return distinct.length === 1 ? distinct[0]! : distinct.join(' / ');
}

function report(cases: QueryCase[], command: string): string {
  const lines = [
    '# Which record types browsers ask per host',
    '',
    `Command: \`${command}\` (as root, after \`scripts/setup\`), ${new Date().toISOString().slice(0, 10)}.`,
    '',
    `One load of the validation site's ${PAGE}-host page per case in a fresh headless browser; the lab resolver (CoreDNS) logs`,
    'each query. "System" is the machine\'s resolver from /etc/resolv.conf (Chromium\'s built-in resolver, Firefox\'s',
    'getaddrinfo); "DoH" is Chromium\'s secure DNS (managed policy, GET) and Firefox\'s TRR mode 3 (POST). "IPv6" means the',
    "machine has a global IPv6 address and a default IPv6 route (the lab's 2001:db8:: addresses).",
    '',
    '| browser | version | DNS path | IPv6 | types asked per host | queries per type per host | over | other names asked |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const c of cases) {
    const counts = [...new Set(Object.values(c.perHost).map((t) => Object.entries(t).sort().map(([k, n]) => `${k}×${n}`).join(' ')))].join(' / ');
    lines.push(`| ${c.browser} | ${c.version} | ${c.path === 'doh' ? 'DoH' : 'system'} | ${c.ipv6 ? 'yes' : 'no'} | ${c.error ? `error: ${c.error}` : typesOf(c)} | ${counts || '—'} | ${c.schemes.join(', ') || '—'} | ${c.others.join(', ') || 'none'} |`);
  }
  return `${lines.join('\n')}\n`;
}

// Each IPv6 case runs in a network and mount namespace of its own (re-running this file inside `unshare`): a dummy
// interface with the lab's addresses and a default route, /etc/resolv.conf and /etc/chromium bind-mounted from the
// run's files. Nothing leaves the namespace: it has no link to anywhere.
if (process.env.DNSCOST_QUERIES_INNER) {
  const [ipv6, out] = process.env.DNSCOST_QUERIES_INNER.split(':', 2) as [string, string];
  await inner(ipv6 === '1', out);
} else {
  const { values } = parseArgs({ options: { out: { type: 'string' }, ...SMOKE_OPTION } });
  const out = reportPath(values, 'bench/results/browser-queries.md');
  const work = mkdtempSync(join(tmpdir(), 'dnscost-queries-out-'));
  const cases: QueryCase[] = [];
  // --smoke: the machine without IPv6 only (every browser and path, one load each).
  for (const ipv6 of values.smoke ? [false] : [false, true]) {
    const file = join(work, `${ipv6 ? 1 : 0}.json`);
    execFileSync('unshare', ['--net', '--mount', '--propagation', 'private', process.execPath, distPath('bench/browser-queries.ts')], {
      env: { ...process.env, DNSCOST_QUERIES_INNER: `${ipv6 ? 1 : 0}:${file}` }, stdio: 'inherit', timeout: 600_000,
    });
    cases.push(...(JSON.parse(readFileSync(file, 'utf8')) as QueryCase[]));
  }
  if (out) {
    writeFileSync(out, report(cases, `node dist/bench/browser-queries.js --out ${out}`));
    writeFileSync(out.replace(/\.md$/, '.json'), `${JSON.stringify(cases, null, 2)}\n`);
  }
  process.stdout.write(report(cases, 'node dist/bench/browser-queries.js'));
  rmSync(work, { recursive: true, force: true });
  // A case that failed, or saw none of the page's names, is a benchmark that no longer works.
  if (values.smoke && cases.some((c) => c.error || Object.keys(c.perHost).length === 0)) process.exit(1);
}
