// The validation experiment's inner half, one process per profile: it runs in the lab's client network namespace
// (and a private mount namespace), started by run.ts; main.ts dispatches here when DNSCOST_VALIDATION_INNER names its
// config.json. Per page group (groups.ts) it starts, in the server namespace, the browser's CoreDNS (53/853/443,
// every query logged, the idle timeout of the run), a second CoreDNS with the same zone on other ports for dnscost's
// replays (so replays never show in the browser's log), and the group's site; it drives the side workers (one per
// browser × side, each in its own mount namespace: side.ts) through the rounds and the traces (phases.ts); then it
// replays Do53 visits (replay.ts; at most REPLAYS_PER_ROW per row, spread over its loads) and gives each visit its
// share of the query log (querylog.ts). It writes the
// profile's visits to c.out. Progress goes to stdout as `progress …` lines, which the outer half passes on.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RecordingBrowser } from '../../common/browser-queries.js';
import { zoneWithProbe } from '../../lab/browser-dns.js';
import { startCoreDNS, type LabResolver } from '../../lab/resolver.js';
import type { Dest } from './connections.js';
import { labPageGroups, startSite, type RunningSite } from './groups.js';
import { runRounds, runTraces, type PhaseContext } from './phases.js';
import { attribute, QueryLog } from './querylog.js';
import { modesOf, replay } from './replay.js';
import { LoadBook, replayed, sidesOf } from './schedule.js';
import { SideHandle } from './sides.js';
import { REPLAY_PORTS, SERVER, SIDES, type InnerConfig, type ProfileRun, type Side, type Visit } from './types.js';

/** The inner half for the profile described by `configFile` (config.json); writes its ProfileRun to c.out. */
export async function inner(configFile: string): Promise<void> {
  const c = JSON.parse(readFileSync(configFile, 'utf8')) as InnerConfig;
  const o = c.options;
  const progress = (s: string) => process.stdout.write(`progress ${c.profile.name}: ${s}\n`);
  const { certs, groups } = await labPageGroups(c.work, o.pages, o.hars, c.harAddress);
  const caPem = readFileSync(certs.caFile, 'utf8');
  const siteDests: Dest[] = [...new Map(groups.flatMap((g) => g.dests).map((d) => [`${d.address}:${d.port ?? ''}`, d])).values()];

  const sides: Side[] = sidesOf(o);
  const workers = new Map<string, SideHandle>();
  const worker = (browser: RecordingBrowser, side: Side): SideHandle => {
    const key = `${browser}-${side}`;
    const old = workers.get(key);
    if (old?.alive()) return old;
    const work = join(c.work, `side-${key}`);
    mkdirSync(work, { recursive: true });
    // Each side's stub on a loopback address of its own (sides run side by side in a trace); DoH's stays silent.
    const index = o.browsers.indexOf(browser) * SIDES.length + SIDES.indexOf(side);
    const h = SideHandle.start({
      browser, side, work, caFile: certs.caFile, certFile: certs.certFile, keyFile: certs.keyFile, stubAddress: `127.0.1.${index + 1}`,
      dotStub: o.dotStub, stubPreload: c.stubPreload, siteDests,
    });
    workers.set(key, h);
    return h;
  };

  const book = new LoadBook();
  const visits: Visit[] = [];
  const versions: Partial<Record<RecordingBrowser, string>> = {};
  const queryTypes: Record<string, Record<string, number>> = {};
  const started = Date.now();
  try {
    for (const [gi, group] of groups.entries()) {
      const log = new QueryLog();
      const resolvers: LabResolver[] = [];
      let site: RunningSite | undefined;
      const mine: Visit[] = [];
      try {
        const dir = (d: string) => {
          const p = join(c.work, `${group.id}-${d}`);
          mkdirSync(p, { recursive: true });
          return p;
        };
        resolvers.push(await startCoreDNS({
          netns: c.serverNs, address: SERVER, certs, siteZone: zoneWithProbe(group.siteZone), others: 'nxdomain', logQueries: true, idleTimeoutS: c.serverIdleS, onOutput: (t) => log.feed(t), workDir: dir('coredns-browser'),
        }));
        resolvers.push(await startCoreDNS({ netns: c.serverNs, address: SERVER, certs, siteZone: group.siteZone, ports: REPLAY_PORTS, workDir: dir('coredns-replay') }));
        site = await startSite(group, c.serverNs);
        const ctx: PhaseContext = {
          group, browsers: o.browsers, sides, scenarios: o.scenarios, book, worker, seed: c.seed + 100 * gi, serverIdleMs: c.serverIdleS * 1000, dotStub: o.dotStub, versions,
          budget: { loads: o.loads, transports: o.transports, controls: o.controls ?? [] },
          record: (v) => {
            mine.push(v);
            book.add(v.browser, v.page, v.transport, v.scenario, v.error ? null : v.onLoad);
          },
          progress: (s) => progress(`${group.id}: ${s} (${Math.round((Date.now() - started) / 1000)} s)`),
        };
        await runRounds(ctx);
        await runTraces(ctx);
        const base = replayed(mine.filter((v) => v.transport === 'do53' && v.pageRecord && !v.error));
        for (const [i, v] of base.entries()) {
          try {
            v.records = await replay(v.pageRecord!, o.transports, modesOf(v.scenario), o.repeat, c.seed * 1000 + i, caPem);
          } catch (e) {
            v.replayError = String(e).slice(0, 300);
          }
          if ((i + 1) % 10 === 0 || i + 1 === base.length) ctx.progress(`replayed ${i + 1}/${base.length} Do53 visits`);
        }
      } finally {
        for (const w of workers.values()) await w.send({ op: 'close' }).catch(() => undefined);
        await site?.stop();
        for (const r of resolvers) await r.stop().catch(() => undefined);
      }
      for (const [scheme, per] of Object.entries(attribute(log.entries, mine, group.isPageName))) {
        const t = (queryTypes[scheme] ??= {});
        for (const [q, n] of Object.entries(per)) t[q] = (t[q] ?? 0) + n;
      }
      visits.push(...mine);
    }
  } finally {
    for (const w of workers.values()) await w.stop();
  }
  const run: Omit<ProfileRun, 'profile'> = { pages: groups.flatMap((g) => g.pages), visits, browserVersions: versions, serverIdleS: c.serverIdleS, queryTypes };
  writeFileSync(c.out, JSON.stringify(run));
}
