// The report's evidence that each load ran as its row says, pure: the query log per transport (every name of every
// load asked over the transport's own scheme; warm-up lookups too), the record types the log shows per browser beside
// the ones dnscost's replay asked, the connection state each load found (nothing open before a cold load, the
// connection open before a warm one, and in traces whether it was open when the model expected it), the document
// lookup per side, and the description of what ran.
import { holderOf, HOLDERS, pings } from '../../common/connection-state.js';
import { documentLookup, med, modeFor, namesOf, queryCheck, type Row } from './analysis.js';
import { SCHEME_OF, SIDES, type Side, type ValidationRun, type Visit } from './types.js';

const f = (x: number | null | undefined, d = 0) => (x === null || x === undefined ? '—' : x.toFixed(d));

function tallyPatterns(out: Map<string, number>, pattern: string): void {
  out.set(pattern, (out.get(pattern) ?? 0) + 1);
}
const show = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).map(([p, n]) => `${p} ×${n}`).join(', ') || '—';
const order = (types: Iterable<string>) => [...types].sort().join('+');

/** Record types per name, as the log saw them on each visit's own scheme and as the replay asked them: document and other hosts apart. */
function recordTypes(visits: readonly Visit[]): string[] {
  const lines: string[] = [];
  for (const browser of [...new Set(visits.map((v) => v.browser))]) {
    for (const side of SIDES) {
      const vs = visits.filter((v) => v.browser === browser && v.transport === side && v.pageRecord && v.asked);
      if (!vs.length) continue;
      const doc = new Map<string, number>();
      const other = new Map<string, number>();
      for (const v of vs) {
        const asked = v.asked![SCHEME_OF[side]] ?? {};
        for (const n of namesOf(v.pageRecord!)) {
          const types = Object.keys(asked[n] ?? {});
          if (types.length) tallyPatterns(n === v.pageRecord!.host ? doc : other, order(types));
        }
      }
      lines.push(`| ${browser} | log, ${side} (${SCHEME_OF[side]}) | ${show(doc)} | ${show(other)} |`);
    }
    const doc = new Map<string, number>();
    const other = new Map<string, number>();
    for (const v of visits.filter((x) => x.browser === browser && x.transport === 'do53' && x.records?.length)) {
      const first = v.records!.filter((r) => r.transport === 'udp' && r.repeat === 1 && r.mode === v.records![0]!.mode);
      const per = new Map<string, Set<string>>();
      for (const r of first) (per.get(r.host) ?? per.set(r.host, new Set()).get(r.host)!).add(r.qtype);
      for (const [host, types] of per) tallyPatterns(host === v.pageRecord!.host ? doc : other, order(types));
    }
    lines.push(`| ${browser} | **dnscost's replay** (udp) | ${show(doc)} | ${show(other)} |`);
  }
  return lines;
}

/** The query log per browser and side: loads whose every name went over the side's scheme, other schemes seen, warm-up lookups. */
function queryLines(visits: readonly Visit[]): string[] {
  const lines: string[] = [];
  for (const browser of [...new Set(visits.map((v) => v.browser))]) {
    for (const side of SIDES) {
      const vs = visits.filter((v) => v.browser === browser && v.transport === side);
      const q = queryCheck(vs, side);
      if (!q) continue;
      const warm = vs.filter((v) => v.scenario === 'warm' && !v.error);
      const warmOk = warm.filter((v) => v.warmScheme?.includes(SCHEME_OF[side])).length;
      lines.push(`| ${browser} | ${side} | ${SCHEME_OF[side]} | ${q.complete}/${q.visits} | ${q.otherSchemes.join(', ') || 'none'} | ${warm.length ? `${warmOk}/${warm.length}` : '—'} |`);
    }
  }
  return lines;
}

/** What the candidate loads found open before their navigation, per browser × transport × scenario (TCP transports). */
function connectionLines(run: ValidationRun): string[] {
  const lines: string[] = [];
  for (const p of run.profiles) {
    const ctx = { dotStub: run.options.dotStub, serverIdleMs: p.serverIdleS * 1000 };
    for (const browser of run.options.browsers) {
      for (const transport of run.options.transports) {
        for (const scenario of run.options.scenarios) {
          const vs = p.visits.filter((v) => v.browser === browser && v.transport === transport && v.scenario === scenario && !v.error && v.openBefore !== null);
          if (!vs.length) continue;
          const open = (v: Visit) => v.openBefore! > 0;
          let cell: string;
          if (scenario !== 'expected') cell = `${vs.filter(open).length}/${vs.length} open`;
          else {
            // Whether the connection was open when the model, from the load's own idle time, expected it warm.
            const agree = vs.filter((v) => (modeFor(v, transport, 'expected', ctx) === 'warm') === open(v)).length;
            const warm = vs.filter((v) => modeFor(v, transport, 'expected', ctx) === 'warm');
            cell = `expected warm ${warm.length} (open ${warm.filter(open).length}), expected cold ${vs.length - warm.length} (open ${vs.filter((v) => !warm.includes(v) && open(v)).length}); agree ${agree}/${vs.length}`;
          }
          lines.push(`| ${p.profile.name} | ${browser} | ${transport} | ${scenario} | ${cell} |`);
        }
      }
    }
  }
  return lines;
}

/** Median document lookup (Navigation Timing) per profile × browser × scenario and side, with the excess over Do53 in RTTs. */
function documentLines(run: ValidationRun): string[] {
  const lines: string[] = [];
  for (const p of run.profiles) {
    for (const browser of run.options.browsers) {
      for (const scenario of run.options.scenarios) {
        const of = (side: Side) => med(p.visits.filter((v) => v.browser === browser && v.scenario === scenario && v.transport === side && v.pageRecord && !v.error).map((v) => documentLookup(v.pageRecord!)));
        const base = of('do53');
        if (base === null) continue;
        const cells = ['do53' as const, ...run.options.transports].map((s) => {
          const x = of(s);
          return s === 'do53' || x === null || p.profile.rttMs <= 0 ? f(x, 1) : `${f(x, 1)} (+${((x - base) / p.profile.rttMs).toFixed(1)} RTT)`;
        });
        lines.push(`| ${p.profile.name} | ${browser} | ${scenario} | ${cells.join(' | ')} |`);
      }
    }
  }
  return lines;
}

/** The report's checks section. */
export function checks(run: ValidationRun, rows: readonly Row[]): string {
  const visits = run.profiles.flatMap((p) => p.visits);
  const replayFailed = visits.filter((v) => v.replayError);
  const retried = visits.filter((v) => v.retried).length;
  const failed = visits.filter((v) => v.error);
  return `## Checks

The query log (the browser's lab resolver logs every query with its scheme; each query belongs to the load whose
window holds it, loads running one at a time): loads whose every name (the document and each host of its page record)
was asked over the side's own scheme, other schemes the page's names were asked over in those windows, and warm
loads whose warm-up lookup went over the side's scheme.

| browser | side | scheme | every name asked | other schemes | warm-up lookups |
| --- | --- | --- | --- | --- | --- |
${queryLines(visits).join('\n')}

Record types per name per load: what the log shows on each side's scheme, beside what dnscost's replay asked (Do53
visits, first repeat), for the document and for the other hosts (IPv6 is off in the lab namespaces).

| browser | source | document | other hosts |
| --- | --- | --- | --- |
${recordTypes(visits).join('\n')}

Connection state before each candidate load (its side's TCP connections to the resolver as the navigation started:
the browser's for DoH, the stub's for DoT; DoQ runs over UDP and is not watched): cold loads should find none open,
warm ones one; in traces, the model's expected mode (from the load's own idle time, the holder's limit and the
server's ${[...new Set(run.profiles.map((p) => `${p.serverIdleS} s`))].join('/')}) beside what was open.

| profile | browser | transport | scenario | found |
| --- | --- | --- | --- | --- |
${connectionLines(run).join('\n')}

Document lookup (Navigation Timing), median ms, and its excess over Do53 in RTTs:

| profile | browser | scenario | ${['do53', ...run.options.transports].join(' | ')} |
| --- | --- | --- | ${['do53', ...run.options.transports].map(() => '---:').join(' | ')} |
${documentLines(run).join('\n')}

Loads: ${visits.length} (${failed.length} failed${failed.length ? `: ${[...new Set(failed.map((v) => v.error!.slice(0, 80)))].slice(0, 5).join('; ')}` : ''}; ${retried} retried after ERR_NETWORK_CHANGED); rows: ${rows.length}; Do53 replays that failed: ${replayFailed.length}${replayFailed.length ? ` (${replayFailed[0]!.replayError})` : ''}.`;
}

/** How each side and scenario was set up, from the run's options. */
export function whatRan(run: ValidationRun): string {
  const o = run.options;
  const stub = o.dotStub;
  const stubIdle = HOLDERS[stub].idleMs / 1000;
  const limits = o.browsers.flatMap((b) => o.transports.map((t) => {
    const h = holderOf(t, b, stub);
    return h ? `${b} ${t}: ${HOLDERS[h].name}, ${HOLDERS[h].idleMs === null ? `no limit of its own${pings(h) ? ', and it pings (no server limit ends it)' : ''}` : `${HOLDERS[h].idleMs / 1000} s`}` : '';
  })).filter(Boolean);
  return `Per profile, a lab network (a client and a server namespace joined by the emulated link); in the server namespace
the browser's CoreDNS (53/853/443 and DoQ on 853/UDP; every query logged with its scheme; idle encrypted connections
closed after the run's server idle timeout), a second CoreDNS with the same zone on other ports for dnscost's replays,
and the pages' site: the synthetic pages (\`lab/site/validation-site.ts\`) on the resolver's address, each HAR page
(\`lab/har/\`: every hostname in the zone, each resource at its HAR size and wait, one certificate per recorded server
from the lab CA) on an address of its own, one page group at a time. Each browser × side runs in a process of its own
in the client namespace with a private mount namespace: its own \`/etc/resolv.conf\` and \`/etc/chromium\`.

- **Do53**: resolv.conf names the lab resolver; the browser asks it over UDP.
- **DoT**: resolv.conf names a loopback address where the machine's stub listens — \`${stub}\` (${stubIdle} s idle${o.stubNoDelay ? ', TCP_NODELAY forced by an LD_PRELOAD shim' : ', Nagle left on as Debian ships it'}; no cache) — which goes on over TLS to the lab resolver.
- **DoH**: Chromium's DnsOverHttpsMode=secure policy (GET template on the resolver's address), Firefox's TRR mode 3
  (POST); resolv.conf names a silent loopback address, so a fallback to Do53 would fail the load. The lab CA is trusted
  through the browser's NSS database.
- **DoQ**: resolv.conf names a loopback address where AdGuard dnsproxy listens as the machine's stub, forwarding over
  QUIC to the lab resolver (no cache).

Scenarios (every load in a fresh Chromium incognito context or Firefox container unless said; HAR pages load as
recorded: no HTTPS upgrades, mixed content allowed; Firefox's DNS cache off):
- **cold**: a fresh stub and context per load and a 1 s pause (Chromium's DoH opens a connection for a new context);
  then the side's connections to the resolver are ended (\`ss -K\`, by their owner) until none is left, and the page loads.
- **warm**: the same, but instead of ending them a fresh name is looked up through the same browser (and stub) just
  before the load, so the encrypted connection is open; the Do53 side does the same lookup.
- **expected**: a browsing trace per browser × side with every side's browser open at once, the group's pages in one
  seeded order and one seeded series of gaps per browser, shared by its sides; the stub (and Chromium's one context,
  whose host cache is emptied before each load) lives for the whole trace, and each load's leftover connections to the
  pages' servers are ended first. The gaps straddle each holder's idle limit in the lab (${limits.join('; ')}; the
  lab resolver's own limit ${[...new Set(run.profiles.map((p) => `${p.serverIdleS} s`))].join('/')} ends the others): every load's
  idleBeforeMs is its own gap, and \`expectedMode(idleBeforeMs, holder, serverIdleMs)\` (common/connection-state.ts)
  gives the mode the model expects for it. The candidate loads' modes are the ones priced: the sides stop at different
  numbers of loads, so their shares of long gaps differ, and the measured change is that of the candidate's loads.

The prediction: from every Do53 visit, the page record (Navigation, Paint and Resource Timing, with the browser that
recorded it) and dnscost's replay of its hosts (each at its first-needed offset, asking the record types that browser
asks, common/browser-queries.ts) over udp and each candidate under the same profile, in the scenario's mode(s),
stored through \`storedRecord\` and priced by \`measuredPageCost\`; a row's prediction is the shift of its
priced Do53 loads, each moved by its own predicted change (in a trace: once per candidate load, in that load's mode),
against all its Do53 loads (predictedShift, pricedPairs).`;
}
