// The resolver options `measure` and `probe` share: --endpoint URLs (one "command line" resolver), --resolver IDs.
import { readFileSync } from 'node:fs';
import { CODES, DnscostError } from '../../common/errors.js';
import type { CurrentDns, ResolverSpec } from '../../common/schema.js';
import { discoverCurrentDns } from './current-dns/discover.js';
import { parseEndpoint } from './endpoints.js';

/** The resolver options `measure` and `probe` share. */
export interface ResolverArgs {
  endpoint?: string[] | undefined;
  'http1.1'?: boolean | undefined;
  get?: boolean | undefined;
  connect?: string[] | undefined;
  ca?: string | undefined;
  resolver?: string[] | undefined;
  ipv6?: boolean | undefined;
}

/** The resolvers named by --endpoint (one "command line" resolver) and --resolver; a bad-request error otherwise. */
export function chooseResolvers(values: ResolverArgs, resolvers: (family: 4 | 6) => ResolverSpec[]): ResolverSpec[] {
  const bad = (message: string): never => {
    throw new DnscostError(CODES.BAD_REQUEST, message);
  };
  const connect = new Map<string, string>();
  for (const pair of values.connect ?? []) {
    const [name, ip] = pair.split('=');
    if (!name || !ip) bad(`--connect takes NAME=IP, not ${JSON.stringify(pair)}`);
    connect.set(name!.toLowerCase(), ip!);
  }
  let ca: string | undefined;
  if (values.ca) {
    try {
      ca = readFileSync(values.ca, 'utf8');
    } catch (err) {
      bad(`cannot read --ca ${values.ca}: ${(err as Error).message}`);
    }
  }
  const chosen: ResolverSpec[] = [];
  if (values.endpoint?.length) {
    const endpoints = values.endpoint.map((u) => parseEndpoint(u, { connect, http1: values['http1.1'], method: values.get ? 'GET' : 'POST' }));
    chosen.push({ id: 'cli', name: 'command line', endpoints, ...(ca ? { ca } : {}) });
  }
  if (values.resolver?.length) {
    const known = resolvers(values.ipv6 ? 6 : 4);
    for (const id of values.resolver) {
      const r = known.find((k) => k.id === id);
      if (!r) bad(`unknown resolver ${JSON.stringify(id)}; known: ${known.map((k) => k.id).join(', ')}`);
      chosen.push(r!);
    }
  }
  if (chosen.length === 0) bad('name at least one --endpoint URL or --resolver ID');
  return chosen;
}

/**
 * The person's current DNS when the command line names a default resolver (`system` is it), else null: it is looked
 * for only then (it may run resolvectl or scutil).
 */
export function currentDnsIfAsked(argv: readonly string[]): Promise<CurrentDns | null> {
  return argv.some((a) => a === '--resolver' || a.startsWith('--resolver=')) ? discoverCurrentDns() : Promise.resolve(null);
}
