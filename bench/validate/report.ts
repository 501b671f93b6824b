// The validation experiment's report, pure: the markdown the command prints and writes to --out — what ran, the
// predicted-vs-measured table (analysis.ts rows), and the papers' shapes (cold handshakes in RTTs, the gap against
// RTT, stalls under loss) as measured.
import { analyse, documentLookup, med } from './analysis.js';
import { BROWSER_TRANSPORTS, type BrowserTransport, type DotStub, type ProfileRun, type ValidationRun } from './types.js';

const f = (x: number | null | undefined, d = 0) => (x === null || x === undefined ? '—' : x.toFixed(d));

const WHAT_RAN = (stub: DotStub): Record<BrowserTransport, string> => ({
  do53: '**Do53** (resolv.conf → CoreDNS over UDP)',
  dot: `**DoT** (resolv.conf → a fresh \`${stub}\` per load → CoreDNS over TLS; so every DoT load is cold)`,
  doh: "**DoH** (Chromium's DnsOverHttpsMode=secure policy, GET template on the resolver's address, lab CA in the NSS db; a new context per load)",
});

/** The markdown report of a run. */
export function report(run: ValidationRun, command: string): string {
  const rows = analyse(run);
  const ran = BROWSER_TRANSPORTS.filter((t) => t === 'do53' || !run.options.transports || run.options.transports.includes(t));
  const lines = rows.map((r) =>
    `| ${r.profile} | ${r.page} | ${r.transport} | ${r.loads.do53}/${r.loads.other}${r.loads.failed ? ` (${r.loads.failed} failed)` : ''} | ` +
    `${r.onLoad ? `${f(r.onLoad.do53[0])} [${f(r.onLoad.do53[1])}–${f(r.onLoad.do53[2])}]` : '—'} | ` +
    `${r.onLoad ? `${f(r.onLoad.other[0])} [${f(r.onLoad.other[1])}–${f(r.onLoad.other[2])}]` : '—'} | ` +
    `**${f(r.measured)}** [${r.measuredCi ? `${f(r.measuredCi[0])}…${f(r.measuredCi[1])}` : '—'}] | ` +
    `**${f(r.predicted?.delta)}** [${f(r.predicted?.lower)}…${f(r.predicted?.upper)}] | ${f(r.medianAbsError)} | ${f(r.target)} | ${r.pass === null ? '—' : r.pass ? '✓' : '✗'} | ` +
    `${f(r.doc.measured)} / ${f(r.doc.predicted)} |`);
  const passed = rows.filter((r) => r.pass).length;
  const judged = rows.filter((r) => r.pass !== null).length;
  const queries = run.profiles.map((p) => `${p.profile.name}: ${Object.entries(p.queries).map(([s, per]) => `${s} ${Object.values(per).reduce((a, b) => a + b, 0)} queries for ${Object.keys(per).length} names` +
    (p.queryTypes?.[s] ? ` (${Object.entries(p.queryTypes[s]!).map(([t, n]) => `${t} ${n}`).join(', ')})` : '')).join(', ')}`);
  return `# Cost model validation: predicted vs measured onLoad change (headless ${run.options.browser})

Command: \`${command}\` (as root, after \`scripts/setup\`)
Run: ${run.startedAt} → ${run.finishedAt}; machine: ${run.machine} (shared with other work while it ran);
browser: ${run.profiles[0]?.browserVersion ?? '?'}; replay repeats per Do53 visit: ${run.options.repeat}; seed ${run.options.seed}.

What ran: per profile, each page loaded ${run.options.loads} times per transport (fresh incognito context per
load, cache disabled; rounds of the transports in a seeded random order, pages shuffled within each), the
browser resolving every name through the lab resolver: ${ran.map((t) => WHAT_RAN(run.options.dotStub ?? 'stubby')[t]).join(', ')}.
Queries the browser's resolver saw for the site's names, per scheme: ${queries.join('; ')}.${run.options.stubNoDelay ?? (run.options as { stubbyNoDelay?: boolean }).stubbyNoDelay ? `
**${run.options.dotStub ?? 'stubby'} ran with TCP_NODELAY forced on its sockets** (\`--stub-nodelay\`: an LD_PRELOAD shim; Debian's stubby and unbound leave Nagle on).` : ''}
The prediction: from every Do53 visit, the page record (Navigation/Paint/Resource Timing, as the extension keeps
it) and dnscost's cold replay of its hosts (A and AAAA, at their first-needed offsets) over udp, dot and doh under
the same profile, through \`common/cost-model.ts\`; the table shows the median over visits (point [lower…upper]).

Columns: onLoad medians [p25–p75] in ms; measured change = median(transport) − median(Do53) [bootstrap 95 %
interval]; MAE = median over the Do53 visits of |predicted − measured change|; target = max(10 % of |measured|,
one RTT). ${passed}/${judged} rows within target.

| profile | page hosts | transport | loads Do53/T | onLoad Do53 | onLoad T | measured Δ | predicted Δ | MAE | target | ok | document lookup Δ measured / predicted |
| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | :---: | ---: |
${lines.join('\n')}

## The papers' shapes, measured

${shapes(run)}
`;
}

/** The measured numbers behind the papers' shapes: cold handshakes in RTTs, the gap against RTT, loss. */
export function shapes(run: ValidationRun): string {
  const docOf = (p: ProfileRun, t: BrowserTransport) => p.visits.filter((v) => v.transport === t && v.pageRecord && !v.error).map((v) => documentLookup(v.pageRecord!));
  const handshake = run.profiles.map((p) => {
    const [u, t, h] = [med(docOf(p, 'do53')), med(docOf(p, 'dot')), med(docOf(p, 'doh'))];
    const rtt = p.profile.rttMs;
    const inRtt = (x: number | null) => (x !== null && u !== null && rtt > 0 ? ` (+${((x - u) / rtt).toFixed(1)} RTT)` : '');
    return `| ${p.profile.name} | ${rtt} | ${p.profile.lossPct} | ${f(u, 1)} | ${f(t, 1)}${inRtt(t)} | ${f(h, 1)}${inRtt(h)} |`;
  });
  const rows = analyse(run);
  const gap = run.options.pages.flatMap((page) => (['dot', 'doh'] as const).map((t) =>
    `| ${page} | ${t} | ${run.profiles.map((p) => f(rows.find((r) => r.profile === p.profile.name && r.page === page && r.transport === t)?.measured)).join(' | ')} |`));
  // A Do53 load whose browser waited ≥ 1 s for some exposed lookup (the document's, or a Timing-Allow-Origin host's).
  const stalls = run.profiles.map((p) => {
    const per = BROWSER_TRANSPORTS.map((t) => {
      const vs = p.visits.filter((v) => v.transport === t && v.pageRecord && !v.error);
      const slow = vs.filter((v) => documentLookup(v.pageRecord!) >= 1000 || v.pageRecord!.hosts.some((h) => (h.lookup?.durationMs ?? 0) >= 1000));
      return `${slow.length}/${vs.length}`;
    });
    return `| ${p.profile.name} | ${p.profile.lossPct} | ${per.join(' | ')} |`;
  });
  return `Cold handshake: the document's lookup (Navigation Timing, median over every load of every page), ms:

| profile | RTT ms | loss % | Do53 | DoT (${run.options.dotStub ?? 'stubby'}) | DoH (Chromium) |
| --- | ---: | ---: | ---: | ---: | ---: |
${handshake.join('\n')}

Gap against RTT: measured onLoad change (ms) per page, profiles in the order run:

| page hosts | transport | ${run.profiles.map((p) => `${p.profile.name} (${p.profile.rttMs} ms)`).join(' | ')} |
| ---: | --- | ${run.profiles.map(() => '---:').join(' | ')} |
${gap.join('\n')}

Loss: loads in which some exposed lookup (the document's, or a Timing-Allow-Origin host's) took ≥ 1 s:

| profile | loss % | Do53 | DoT | DoH |
| --- | ---: | ---: | ---: | ---: |
${stalls.join('\n')}`;
}

