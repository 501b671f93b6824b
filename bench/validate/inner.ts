// The validation experiment's inner half, one process per profile: it runs in the lab's client namespace and a
// private mount namespace whose /etc/resolv.conf and /etc/chromium are this run's files (run.ts starts it; main.ts
// dispatches here when DNSCOST_VALIDATION_INNER names its config.json). It trusts the lab CA in the browser's HOME,
// loads every page over every transport, replays every Do53 visit with dnscost, and writes the visits to c.out.
// Progress goes to stdout as `progress …` lines, which the outer half passes on.
//
// - Every load is in a new incognito browser context (its own host cache, socket pools and HTTP cache) with the
//   cache disabled and --disk-cache-size=1; one browser per (round, transport); per round the transports, and within
//   them the pages, in a seeded random order; one unrecorded warm-up load (a data: URL) per browser. The tab exists
//   150 ms before the navigation (renderer start-up is not counted). onLoad is the navigation entry's
//   loadEventStart. (Chromium still reuses or pre-opens a DoH connection across contexts in some loads: the
//   document's lookup then takes under 2 RTT; the results say how often.)
// - dnscost's replay of a Do53 visit asks A and AAAA, as the extension does; in these namespaces (no IPv6 route)
//   Chromium asks A and HTTPS (type 65): the same number of queries per host. Only Chromium is wired in.
// - The page record is read from the page after load (Navigation Timing, Paint Timing, Resource Timing): the
//   fields common/page-cost.ts takes from the extension's record (a host's first-needed time is its first
//   resource's startTime; its lookup where Timing-Allow-Origin exposes it).
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { storedRecord, type StoredRecord } from '../../common/stored-record.js';
import type { PageForCost } from '../../common/page-cost.js';
import type { MeasureRequest } from '../../common/schema.js';
import { seededRandom, shuffled } from '../../common/stats.js';
import { measure } from '../../native-host/src/engine/measure.js';
import { pagePlan, pageUrl } from '../../lab/site/validation-site.js';
import { configureDns, launchChromium, loadOnce, pageRecordOf } from './browser.js';
import { sh, stop } from './children.js';
import { startDotStub } from './stubs.js';
import { BROWSER_TRANSPORTS, REPLAY_PORTS, SERVER, type InnerConfig, type Visit } from './types.js';

/** As the extension caps replay offsets (extension/src/background/measure-plan.ts MAX_REPLAY_AT_MS). */
const MAX_REPLAY_AT_MS = 10_000;

/** dnscost's replay of a page (as the extension asks the host, cold only) against the replay resolver. */
async function replay(c: InnerConfig, page: PageForCost, caPem: string, seed: number): Promise<StoredRecord[]> {
  const names = [{ name: page.host, at: 0 }, ...page.hosts.filter((h) => h.name !== page.host).map((h) => ({ name: h.name, at: Math.min(MAX_REPLAY_AT_MS, Math.max(0, Math.round(h.firstNeededMs))) }))];
  const req: MeasureRequest = {
    id: 1,
    type: 'measure',
    hosts: names,
    resolvers: [{
      id: 'lab', name: 'lab', ca: caPem,
      endpoints: [
        { transport: 'udp', address: SERVER, port: REPLAY_PORTS.dns },
        { transport: 'dot', address: SERVER, port: REPLAY_PORTS.tls, serverName: 'dns.test' },
        // Chromium's DoH asks with GET (its template has {?dns}).
        { transport: 'doh', address: SERVER, port: REPLAY_PORTS.https, serverName: 'dns.test', path: '/dns-query', method: 'GET' },
      ],
    }],
    qtypes: ['A', 'AAAA'],
    modes: ['cold'],
    repeat: c.repeat,
    // CoreDNS answers the zone itself (no recursion, no cache): there is nothing to prime.
    prime: false,
    schedule: 'replay',
    seed,
  };
  const result = await measure(req);
  // Stored as the extension stores them, so the prediction runs the model exactly as the popup does.
  return result.records.map(storedRecord);
}

/** The inner half for the profile described by `configFile` (config.json); writes its visits and browser version to c.out. */
export async function inner(configFile: string): Promise<void> {
  const c = JSON.parse(readFileSync(configFile, 'utf8')) as InnerConfig;
  const progress = (s: string) => process.stdout.write(`progress ${c.profile.name}: ${s}\n`);
  const caPem = readFileSync(c.caFile, 'utf8');
  // The browser's HOME: an NSS db trusting the lab CA (Chromium on Linux trusts roots added there).
  const home = join(c.work, 'home');
  const nssdb = join(home, '.pki', 'nssdb');
  mkdirSync(nssdb, { recursive: true });
  await sh('certutil', ['-N', '-d', `sql:${nssdb}`, '--empty-password']);
  await sh('certutil', ['-A', '-d', `sql:${nssdb}`, '-t', 'C,,', '-n', 'dnscost-lab-ca', '-i', c.caFile]);
  const random = seededRandom(c.seed);
  const visits: Visit[] = [];
  let browserVersion = '';
  const started = Date.now();
  for (let round = 1; round <= c.loads; round++) {
    for (const transport of shuffled(c.transports ?? BROWSER_TRANSPORTS, random)) {
      configureDns(transport);
      const profileDir = mkdtempSync(join(c.work, 'profile-'));
      const browser = await launchChromium(c, home, profileDir);
      browserVersion ||= await browser.version();
      try {
        // Warm-up: process start-up and first compilation, not counted; no name is looked up.
        const warm = await browser.createBrowserContext();
        await (await warm.newPage()).goto('data:text/html,<p>warm-up</p>', { waitUntil: 'load' });
        await warm.close();
        for (const n of shuffled(c.pages, random)) {
          let stubby = transport === 'dot' ? await startDotStub(c) : null;
          let visit: Visit;
          let retried = false;
          try {
            // Chromium aborts a navigation with ERR_NETWORK_CHANGED when it sees a netlink event in its fresh
            // namespace (seen once in 960 loads): not a DNS result, so that load is made once more (with a fresh
            // stubby, so a DoT retry is cold too), and the visit says so.
            const t = await loadOnce(browser, pageUrl(n)).catch(async (e: unknown) => {
              if (!String(e).includes('ERR_NETWORK_CHANGED')) throw e;
              retried = true;
              if (stubby) {
                await stop(stubby);
                stubby = await startDotStub(c);
              }
              return loadOnce(browser, pageUrl(n));
            });
            visit = { page: n, transport, round, onLoad: t.navigation.loadEventStart ?? null, error: null, ...(retried ? { retried } : {}) };
            // Every visit keeps its page record (the lookups the browser exposed show what each transport cost it).
            visit.pageRecord = pageRecordOf(pagePlan(n)[0]!.name, t);
            {
              const missing = pagePlan(n).filter((h) => !visit.pageRecord!.hosts.some((x) => x.name === h.name) && h.name !== visit.pageRecord!.host);
              if (missing.length) visit.error = `page record lacks ${missing.length} host(s): ${missing[0]!.name}`;
            }
          } catch (e) {
            visit = { page: n, transport, round, onLoad: null, error: String(e).slice(0, 300) };
          } finally {
            if (stubby) await stop(stubby);
          }
          if (transport === 'do53' && visit.pageRecord && !visit.error) visit.records = await replay(c, visit.pageRecord, caPem, c.seed * 1000 + round * 10 + n);
          visits.push(visit);
          progress(`round ${round}/${c.loads} ${transport} page ${n}: ${visit.onLoad?.toFixed(0) ?? visit.error} (${Math.round((Date.now() - started) / 1000)} s)`);
        }
      } finally {
        await browser.close();
        rmSync(profileDir, { recursive: true, force: true });
      }
    }
  }
  writeFileSync(c.out, JSON.stringify({ visits, browserVersion }));
}
