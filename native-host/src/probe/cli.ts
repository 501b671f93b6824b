// `dnscost-host probe`: arguments, and the table (or JSON) of what each resolver can do.
import { parseArgs } from 'node:util';
import { CODES, DnscostError } from '../../../common/errors.js';
import { parseHost } from '../../../common/hostname.js';
import type { ResolverSpec } from '../../../common/schema.js';
import { chooseResolvers, currentDnsIfAsked } from '../resolver-args.js';
import { defaultResolvers } from '../defaults.js';
import { DEFAULT_PROBE_NAMES, type ProbeNames, type ProbeRow } from '../../../common/probe.js';
import { probe } from './probe.js';

/** The probe's lines of `dnscost-host --help`. */
export const PROBE_OPTIONS = `Probe options (dnscost-host probe; also --endpoint, --http1.1, --connect, --ca, --resolver, --ipv6 as measure):
  --name NAME         a name that exists, asked on every endpoint (default ${DEFAULT_PROBE_NAMES.name})
  --signed NAME       a DNSSEC-signed name: a validating resolver answers it with AD (default ${DEFAULT_PROBE_NAMES.signed})
  --bogus NAME        a name whose signatures fail: a validating resolver answers SERVFAIL
                      (default ${DEFAULT_PROBE_NAMES.bogus})
  --https-name NAME   a name with an HTTPS record (default ${DEFAULT_PROBE_NAMES.https})
  --whoami NAME       a name whose server answers TXT with the client subnet it saw (default ${DEFAULT_PROBE_NAMES.whoami})
  --timeout MS        bound on each handshake or exchange (default 3000)
  --json              one JSON object on stdout: {"resolvers":[{"id","name","rows":[{item,endpoint,result,detail}]}]}
  Items: answers; tls-1.0 … tls-1.3, alpn-h2, alpn-http/1.1 and resumption on TLS endpoints; alpn-h3 and 0-rtt on
  QUIC ones; doh-get, doh-post, dns-json on DoH ones; qdcount-2, padding, ede, ecs (a documentation subnet is sent,
  never yours), ecs-upstream (does the resolver send your subnet on to authoritative servers), dnssec and https-rr per
  resolver. Results: yes, no, n/a, error (the check could not run).
  Exit: 0 probed, 2 bad usage.
`;

/** What `probe` was asked. */
export interface ProbeArgs {
  resolvers: ResolverSpec[];
  names: ProbeNames;
  timeoutMs: number;
  json: boolean;
}

/** Parses `probe` arguments; a bad one is a bad-request error (exit 2, no stack). */
export function parseProbeArgs(argv: string[], resolvers: (family: 4 | 6) => ResolverSpec[] = (family) => defaultResolvers(null, family)): ProbeArgs {
  const bad = (message: string): never => {
    throw new DnscostError(CODES.BAD_REQUEST, message);
  };
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        endpoint: { type: 'string', multiple: true },
        'http1.1': { type: 'boolean' },
        connect: { type: 'string', multiple: true },
        ca: { type: 'string' },
        resolver: { type: 'string', multiple: true },
        ipv6: { type: 'boolean' },
        name: { type: 'string' },
        signed: { type: 'string' },
        bogus: { type: 'string' },
        'https-name': { type: 'string' },
        whoami: { type: 'string' },
        timeout: { type: 'string' },
        json: { type: 'boolean' },
      },
    });
  } catch (err) {
    return bad((err as Error).message);
  }
  const { values } = parsed;
  const name = (flag: string, value: string | undefined, fallback: string): string => {
    if (value === undefined) return fallback;
    const host = parseHost(value);
    if (!host.ok || host.kind !== 'name') return bad(`${flag} takes a hostname, not ${JSON.stringify(value)}`);
    return host.name;
  };
  if (values.timeout !== undefined && (!/^\d+$/.test(values.timeout) || Number(values.timeout) < 1 || Number(values.timeout) > 60_000)) {
    bad(`--timeout takes 1 to 60000 ms, not ${JSON.stringify(values.timeout)}`);
  }
  return {
    resolvers: chooseResolvers(values, resolvers),
    names: {
      name: name('--name', values.name, DEFAULT_PROBE_NAMES.name),
      signed: name('--signed', values.signed, DEFAULT_PROBE_NAMES.signed),
      bogus: name('--bogus', values.bogus, DEFAULT_PROBE_NAMES.bogus),
      https: name('--https-name', values['https-name'], DEFAULT_PROBE_NAMES.https),
      whoami: name('--whoami', values.whoami, DEFAULT_PROBE_NAMES.whoami),
    },
    timeoutMs: values.timeout ? Number(values.timeout) : 3000,
    json: values.json ?? false,
  };
}

/** The probe's table for one resolver: item, endpoint, result, detail, aligned. */
export function formatProbe(resolver: ResolverSpec, rows: ProbeRow[]): string {
  const cells = rows.map((r) => [r.item, r.endpoint ?? '-', r.result, r.detail]);
  const widths = [0, 1, 2].map((i) => Math.max(...cells.map((c) => c[i]!.length), ['item', 'endpoint', 'result'][i]!.length));
  const line = (c: string[]) => c.map((x, i) => (i < 3 ? x.padEnd(widths[i]!) : x)).join('  ').trimEnd();
  return [`${resolver.name} (${resolver.id})`, line(['item', 'endpoint', 'result', 'detail']), ...cells.map(line)].join('\n') + '\n\n';
}

/** Runs `dnscost-host probe ARGS`; resolves with the exit code. */
export async function runProbe(argv: string[], out = process.stdout): Promise<number> {
  const current = await currentDnsIfAsked(argv);
  const args = parseProbeArgs(argv, (family) => defaultResolvers(current, family));
  const results: { id: string; name: string; rows: ProbeRow[] }[] = [];
  for (const r of args.resolvers) {
    const rows = await probe(r, { names: args.names, timeoutMs: args.timeoutMs });
    results.push({ id: r.id, name: r.name, rows });
    if (!args.json) out.write(formatProbe(r, rows));
  }
  if (args.json) out.write(JSON.stringify({ resolvers: results }) + '\n');
  return 0;
}
