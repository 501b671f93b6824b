// `dnscost-host measure`: argument parsing, progress on stderr, JSON Lines or a statistics table on stdout.
import { parseArgs } from 'node:util';
import { CODES, DnscostError } from '../../common/errors.js';
import { MAX_HOSTS_PER_REQUEST, parseRequest, type MeasureRequest, type ResolverSpec } from '../../common/schema.js';
import { isQType, MODES, type Mode, type QType } from '../../common/transports.js';
import { CSV_HEADER, csvRow, formatFailures, formatTable } from './cli-output.js';
import { discoverCurrentDns } from './current-dns/discover.js';
import { defaultResolvers } from './defaults.js';
import { measure } from './engine/measure.js';
import { HOL_OPTIONS } from './hol.js';
import { PROBE_OPTIONS } from './probe/cli.js';
import { chooseResolvers, currentDnsIfAsked } from './resolver-args.js';
import { hostArg, readHarLookups, readHostList, type HostArg } from './hosts-input.js';
import { currentDnsLookup, withholdPrivateNames } from './private-names.js';
import { isGlobalAddress } from '../../common/name-privacy.js';

/** The text `dnscost-host --help` prints. */
export const HELP = `dnscost-host — measure what encrypted DNS costs, lookup by lookup

Usage:
  dnscost-host measure [options] HOST...   re-resolve HOSTs over every endpoint, timing every phase
  dnscost-host measure [options] --hosts-file FILE | --har FILE
  dnscost-host hol [options] --slow NAME FAST...
                                            head-of-line blocking: when fast answers arrive behind a slow one
  dnscost-host probe [options]              what each resolver can do: TLS versions, ALPN, DoH GET/POST/JSON,
                                            resumption, 0-RTT, padding, EDE, ECS, DNSSEC, HTTPS records
  dnscost-host lab [--json]                 start the local lab resolver (CoreDNS) and print its endpoints
                                            (from a checkout only: the packaged host has no lab)
  dnscost-host lab --demo                   start it, measure every transport cold and warm, print the table
  dnscost-host native                       speak native messaging on stdin/stdout (browsers start it so)
  dnscost-host install [options]            register the host with the browsers (per user); run from the
                                            packaged archive, first copy it into your data directory
  dnscost-host uninstall [options]          remove exactly what install wrote
  dnscost-host doctor [options]             check each registration, down to a real hello; prints fixes
  dnscost-host --version | --help

Measure options:
  --hosts-file FILE   also measure the names in FILE (- reads standard input): one NAME or NAME@MS a line,
                      # comments; a ranked list (1,example.com) by its name
  --har FILE          replay the page of a HAR file (DevTools, Firefox, WebPageTest exports): every name
                      its requests needed, each when the browser began its lookup (after the request's wait in
                      its queue), else at its first request (implies --schedule replay)
  --endpoint URL      a resolver endpoint; repeatable. udp://IP:PORT, tcp://IP:PORT,
                      tls://NAME:PORT (DoT), https://NAME:PORT/PATH (DoH over HTTP/2),
                      quic://NAME:PORT (DoQ), h3://NAME:PORT/PATH (DoH over HTTP/3); the last
                      two need the QUIC companion (scripts/setup builds it; packaged, it sits
                      beside the executable), else they are reported unavailable and left out
  --http1.1           https endpoints use HTTP/1.1 (transport doh1) instead of HTTP/2
  --get               DoH (and DoH3) uses GET ?dns= (as Chromium) instead of POST (as Firefox);
                      with --resume, DoH3 GET queries may go in 0-RTT
  --connect NAME=IP   reach NAME at IP without a DNS lookup (like curl --resolve); repeatable
  --ca FILE           also trust this CA certificate (PEM) for TLS endpoints
  --resolver ID       measure a default resolver: system (your current DNS: behind a local stub, its
                      upstreams), system-stub (that stub), cloudflare (also DoH3), google, quad9 (also DoQ and
                      DoH3; its DoH over HTTP/1.1 ended in 2025); repeatable
  --ipv6              the public resolvers at their IPv6 addresses (default IPv4)
  --transport LIST    only these transports of the resolvers (udp,tcp,dot,doh,doh1,doq,doh3)
  --mode cold|warm    cold: a new connection per lookup (pays the handshakes); warm: one open
                      connection reused (DoT idles out after 10 s). "cold,warm" runs both. Default cold
  --repeat N          repeat every exchange N times (default 1); the table shows median, p5, p95,
                      mean, relative standard deviation and n
  --qtype LIST        record types, e.g. A,AAAA,HTTPS (default A)
  --prime             ask every name once before measuring, so no transport fills the cache for another
  --no-warmup         skip the untimed cold exchange per endpoint that loads and compiles each
                      transport's code first (without it the first exchange reads 1-10 ms high)
  --resume            cold connections resume the last TLS session of their endpoint
                      (over QUIC with 0-RTT where the server allows it)
  --seed N            seed for the shuffled order of endpoints (printed; random if absent)
  --timeout MS        per-exchange limit, set-up included (default 5000)
  --schedule replay   replay the page: every HOST@MS lookup starts MS ms after the page starts,
                      concurrently, on one connection per endpoint (default: sequential, one at a time)
  --allow-private-names
                      send names the name rule keeps back (special-use, single-label, under your search
                      domains, answered privately by your current DNS) to resolvers outside your network too;
                      without it they are left out and named on stderr, and the caps per domain (10) and per
                      run (150) apply. Resolvers all on your own network (loopback, private addresses) may be
                      asked special-use names such as *.test without it
  --json              JSON Lines on stdout, one record per exchange
  --csv               CSV on stdout, one row per exchange (header first; times in ms, sizes in bytes)
  --summary-json      one JSON array on stdout, an object per resolver × endpoint × mode × qtype (the table's
                      rows with every statistic)
  --quiet             no progress on stderr
  --fail              exit 1 when any lookup failed (a timeout, an error, an answer other than NOERROR)
  Exit: 0 measured (failed lookups are records, not errors, unless --fail), 1 a lookup failed and --fail was
  given, 2 bad usage or no measurement.

${HOL_OPTIONS}
${PROBE_OPTIONS}
Install, uninstall and doctor options (exit 0 ok, 1 problems found, 2 bad usage):
  --browser LIST      firefox, chrome, chromium, brave, edge, vivaldi or all; repeatable
                      (default: every browser that has a profile, or a dnscost manifest, for this user);
                      on Linux their Flatpak builds too, each with its own copy of the packaged host in
                      its sandbox; Firefox's snap reads the usual manifest through the desktop portal;
                      Chromium, Brave and Vivaldi snaps cannot start a host (said, not registered)
  --chromium-user-data-dir DIR
                      write into DIR/NativeMessagingHosts/, for a Chromium started with
                      --user-data-dir=DIR (alone, this selects chromium only)
  --home DIR          the user's home (default: yours; also ignores XDG_* and %LOCALAPPDATA%)
  --dry-run           install/uninstall: print what would be written or removed, touch nothing
  --extension-id ID   install: also let this extension start the host: a Chromium id (the store's build
                      gets one of its own; doctor lists the ids allowed) or a Firefox add-on id; repeatable,
                      kept when installing again (uninstall removes the manifests and them)
  --timeout MS        doctor: how long the host may take to answer hello (default 10000)
  --json              one JSON object on stdout

Examples:
  dnscost-host measure --endpoint udp://127.0.0.1:5300 --endpoint tls://dns.test:8853 \\
    --connect dns.test=127.0.0.1 --ca lab-ca.pem --repeat 20 h1.test h2.test
  dnscost-host measure --resolver cloudflare --mode cold,warm --repeat 10 example.com
  dnscost-host measure --resolver quad9 --transport udp,doh --har page.har --csv > page.csv
  top-sites | dnscost-host measure --resolver google --hosts-file - --summary-json --fail

Nothing is sent anywhere but the endpoints you name (or the default resolvers you pick).
`;

/** How `measure` writes its results on stdout. */
export type Output = 'table' | 'jsonl' | 'csv' | 'summary-json';

/** What `measure` was asked: the validated request and how to report it. */
export interface MeasureArgs {
  req: MeasureRequest;
  output: Output;
  quiet: boolean;
  fail: boolean;
  allowPrivateNames: boolean;
}

/** Turns `measure` arguments into a validated measure request (reading --hosts-file and --har). */
export async function parseMeasureArgs(argv: string[], resolvers: (family: 4 | 6) => ResolverSpec[] = (family) => defaultResolvers(null, family), stdin?: NodeJS.ReadableStream): Promise<MeasureArgs> {
  const bad = (message: string): never => {
    throw new DnscostError(CODES.BAD_REQUEST, message);
  };
  // A bad flag or a missing value is the caller's mistake (bad-request, exit 2), never an internal error.
  const parse = () => parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      endpoint: { type: 'string', multiple: true },
      'http1.1': { type: 'boolean' },
      get: { type: 'boolean' },
      connect: { type: 'string', multiple: true },
      ca: { type: 'string' },
      resolver: { type: 'string', multiple: true },
      ipv6: { type: 'boolean' },
      transport: { type: 'string' },
      mode: { type: 'string' },
      repeat: { type: 'string' },
      qtype: { type: 'string' },
      prime: { type: 'boolean' },
      'no-warmup': { type: 'boolean' },
      resume: { type: 'boolean' },
      seed: { type: 'string' },
      timeout: { type: 'string' },
      schedule: { type: 'string' },
      'hosts-file': { type: 'string' },
      har: { type: 'string' },
      json: { type: 'boolean' },
      csv: { type: 'boolean' },
      'summary-json': { type: 'boolean' },
      quiet: { type: 'boolean' },
      fail: { type: 'boolean' },
      'allow-private-names': { type: 'boolean' },
    },
  });
  let args: ReturnType<typeof parse> | undefined;
  try {
    args = parse();
  } catch (err) {
    bad((err as Error).message);
  }
  const { values, positionals } = args!;
  const outputs = (['json', 'csv', 'summary-json'] as const).filter((o) => values[o]);
  if (outputs.length > 1) bad(`choose one output: ${outputs.map((o) => `--${o}`).join(' or ')}`);
  if (values.har && (positionals.length || values['hosts-file'])) bad('--har replays one page: give no HOST or --hosts-file with it');
  if (values.har && values.schedule && values.schedule !== 'replay') bad('--har replays the page: --schedule must be replay');
  const hosts: HostArg[] = [
    ...positionals.map(hostArg),
    ...(values['hosts-file'] ? await readHostList(values['hosts-file'], stdin) : []),
    ...(values.har ? await readHarLookups(values.har) : []),
  ];
  if (hosts.length === 0) bad(values['hosts-file'] ? `no name in --hosts-file ${values['hosts-file']}` : 'name at least one HOST to measure');
  if (hosts.length > MAX_HOSTS_PER_REQUEST) bad(`at most ${MAX_HOSTS_PER_REQUEST} hosts per run (${hosts.length} given)`);
  const chosen = chooseResolvers(values, resolvers);
  const list = (s: string | undefined): string[] | undefined => s?.split(',').map((x) => x.trim()).filter(Boolean);
  const int = (s: string | undefined, name: string): number | undefined => {
    if (s === undefined) return undefined;
    if (!/^\d+$/.test(s)) bad(`${name} takes a whole number, not ${JSON.stringify(s)}`);
    return Number(s);
  };
  const qtypes = list(values.qtype)?.map((t) => t.toUpperCase());
  for (const t of qtypes ?? []) if (!isQType(t)) bad(`unknown --qtype ${t}`);
  const modes = list(values.mode);
  for (const m of modes ?? []) if (!(MODES as readonly string[]).includes(m)) bad(`--mode is cold or warm, not ${m}`);
  const candidate = {
    id: 'cli',
    type: 'measure',
    // HOST@MS: the page first needed HOST MS milliseconds after navigation start (used by --schedule replay).
    hosts,
    schedule: values.har ? 'replay' : values.schedule,
    resolvers: chosen,
    transports: list(values.transport),
    qtypes: qtypes as QType[] | undefined,
    modes: modes as Mode[] | undefined,
    repeat: int(values.repeat, '--repeat'),
    prime: values.prime,
    warmup: values['no-warmup'] ? false : undefined,
    resume: values.resume,
    seed: int(values.seed, '--seed'),
    timeoutMs: int(values.timeout, '--timeout'),
  };
  const parsed = parseRequest(JSON.parse(JSON.stringify(candidate)));
  if (!parsed.ok) return bad(parsed.problems.join('; '));
  const req = parsed.request as MeasureRequest;
  // Resolvers the person named on their own network stand for the lab setting: special-use names may go to them.
  const ownNetwork = req.resolvers.every((r) => r.endpoints.every((e) => !isGlobalAddress(e.address)));
  const output: Output = values.json ? 'jsonl' : values.csv ? 'csv' : values['summary-json'] ? 'summary-json' : 'table';
  return { req: ownNetwork ? { ...req, lab: true } : req, output, quiet: values.quiet ?? false, fail: values.fail ?? false, allowPrivateNames: values['allow-private-names'] ?? false };
}

/**
 * Runs `dnscost-host measure ARGS`; resolves with the process exit code. Standard input is touched only for
 * `--hosts-file -` (a process started without one, as under wine or by a service, fails on process.stdin).
 */
export async function runMeasure(argv: string[], out = process.stdout, err = process.stderr, stdin?: NodeJS.ReadableStream): Promise<number> {
  const current = await currentDnsIfAsked(argv);
  const parsed = await parseMeasureArgs(argv, (family) => defaultResolvers(current, family), stdin);
  const { output, quiet } = parsed;
  // The name rule, as for the browser's pages (private-names.ts), unless the person says otherwise.
  let req = parsed.req;
  if (!parsed.allowPrivateNames) {
    const dns = current ?? (req.resolvers.some((r) => r.endpoints.some((e) => isGlobalAddress(e.address))) ? await discoverCurrentDns() : null);
    const checked = await withholdPrivateNames(req, dns, dns ? currentDnsLookup(dns) : null);
    for (const w of checked.withheld) err.write(`withheld: ${w.name} (${w.reason}; --allow-private-names sends it)\n`);
    if (checked.request.hosts.length === 0) throw new DnscostError(CODES.NO_MEASURABLE_HOSTS, 'every name was kept back by the name rule (see above)');
    req = checked.request;
  }
  const progress = !quiet && err.isTTY !== false;
  let lastShown = 0;
  if (output === 'csv') out.write(CSV_HEADER);
  const result = await measure(req, {
    onRecord: output === 'jsonl' ? (r) => out.write(JSON.stringify(r) + '\n') : output === 'csv' ? (r) => out.write(csvRow(r)) : undefined,
    onProgress: (done, total) => {
      if (!progress || total < 20) return;
      const now = Date.now();
      if (done === total || now - lastShown > 250) {
        lastShown = now;
        err.write(`\rmeasuring: ${done}/${total} exchanges`);
        if (done === total) err.write('\n');
      }
    },
  });
  if (output === 'table') out.write(formatTable(result.summary) + formatFailures(result.records));
  if (output === 'summary-json') out.write(JSON.stringify(result.summary, null, 2) + '\n');
  else if (output !== 'table' && !quiet) err.write(formatFailures(result.records));
  for (const u of result.unavailable) err.write(`unavailable: ${u.endpoint} (${u.transport}): ${u.message}\n`);
  const failed = result.records.filter((r) => !r.ok).length;
  err.write(`seed ${result.seed}${result.primed ? ', cache primed' : ''}${result.warmedUp ? ', warmed up' : ''}, ${result.records.length} exchanges${failed ? `, ${failed} failed` : ''}\n`);
  return parsed.fail && failed > 0 ? 1 : 0;
}
