// The pages a profile loads, in groups that each have the lab to themselves for a while (the lab resolver takes one
// site zone with one address, and a HAR's site holds the ports of its address): the synthetic pages together
// (lab/site/validation-site.ts, zone val.example on the server's address), then each HAR file's page on its own
// (lab/har/: every hostname of the HAR in the zone, the site on the HAR address). A group knows its zone, which
// names are its pages' (for the query log), a parent for fresh names (warm-up lookups), and how to start its site in
// the server namespace. Nothing here resolves or fetches a page's names: only the browsers in the lab do.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import forge from 'node-forge';
import { makeCerts, type LabCerts } from '../../lab/certs.js';
import { literalAddresses } from '../../lab/har/address.js';
import { readHarFile } from '../../native-host/src/hosts-input.js';
import { pagePlan } from '../../lab/har/plan.js';
import { harZone, zoneNames } from '../../lab/har/zone.js';
import { distPath } from '../../lab/paths.js';
import { pageUrl, VALIDATION_ZONE } from '../../lab/site/validation-site.js';
import { stop } from './children.js';
import type { Dest } from './connections.js';
import { SERVER, type PageSpec } from './types.js';

/** One group of pages with its zone and site. */
export interface PageGroup {
  id: string;
  pages: PageSpec[];
  /** startCoreDNS's siteZone. */
  siteZone: { zone: string | string[]; a: string };
  /** A name of the zone: `warm-….PARENT` is a fresh name that resolves (to the site, which answers 404). */
  warmParent: string;
  /** Whether a name (lower case, no trailing dot) is one of the pages' own (not a warm-up name). */
  isPageName(name: string): boolean;
  /** The site's command line (node and arguments), run in the server namespace. */
  site: string[];
  /** Where the site listens (a trace ends a browser's leftover connections to these before each load). */
  dests: Dest[];
}

/** The synthetic pages' group (null when none is asked for). */
export function syntheticGroup(pages: readonly number[]): PageGroup | null {
  if (!pages.length) return null;
  const suffix = `.${VALIDATION_ZONE}`;
  return {
    id: 'synthetic',
    pages: pages.map((n) => ({ id: String(n), kind: 'synthetic', hosts: n, url: pageUrl(n) })),
    siteZone: { zone: VALIDATION_ZONE, a: SERVER },
    warmParent: VALIDATION_ZONE,
    isPageName: (name) => name.endsWith(suffix) && !name.startsWith('warm-'),
    site: [process.execPath, distPath('lab/site/validation-site.ts'), '--address', SERVER, '--port', '80'],
    dests: [{ address: SERVER, port: 80 }],
  };
}

/** The page id of a HAR file: its name without `.har`. */
export function harId(file: string): string {
  return basename(file).replace(/\.har$/i, '');
}

/** The IP-literal hosts of a HAR's page (the outer half gives them to the server side before the inner half starts). */
export async function harLiterals(file: string): Promise<string[]> {
  return literalAddresses(pagePlan(await readHarFile(file)));
}

/** A HAR file's group: its page alone, served on `address` with certificates from the lab CA (`caCert`, `caKey`). */
export async function harGroup(file: string, address: string, caCert: string, caKey: string): Promise<PageGroup> {
  const plan = pagePlan(await readHarFile(file));
  const zone = harZone(plan, address);
  const names = new Set(zoneNames(plan).names.map((n) => n.toLowerCase()));
  const literals = literalAddresses(plan);
  return {
    id: harId(file),
    pages: [{ id: harId(file), kind: 'har', file, hosts: names.size, url: plan.resources[plan.document]!.url }],
    siteZone: zone,
    warmParent: [...names][0]!,
    isPageName: (name) => names.has(name),
    site: [process.execPath, distPath('lab/har/site.ts'), '--har', file, ...[address, ...literals].flatMap((a) => ['--address', a]), '--ca-cert', caCert, '--ca-key', caKey],
    dests: [address, ...literals].map((a) => ({ address: a })),
  };
}

/**
 * The lab CA (certificates under `work`/certs, its key written beside them: the HAR sites issue one certificate per
 * recorded server group from it) and the page groups of the synthetic `pages` and the `hars`, served on `harAddress`.
 */
export async function labPageGroups(work: string, pages: readonly number[], hars: readonly string[], harAddress: string): Promise<{ certs: LabCerts; groups: PageGroup[] }> {
  const certs = await makeCerts(join(work, 'certs'));
  const caKey = join(work, 'certs', 'ca.key');
  writeFileSync(caKey, forge.pki.privateKeyToPem(certs.ca.key), { mode: 0o600 });
  const synthetic = syntheticGroup(pages);
  const groups: PageGroup[] = synthetic ? [synthetic] : [];
  for (const f of hars) groups.push(await harGroup(f, harAddress, certs.caFile, caKey));
  return { certs, groups };
}

/** A running site. */
export interface RunningSite {
  stop(): Promise<void>;
}

/** Starts `group`'s site in the server namespace `serverNs`; resolves once it prints `ready`. */
export function startSite(group: PageGroup, serverNs: string): Promise<RunningSite> {
  const child: ChildProcess = spawn('ip', ['netns', 'exec', serverNs, ...group.site], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the ${group.id} site was not ready in 30 s: ${out}`));
    }, 30_000);
    let rest = '';
    // The HAR site prints a line per response: read them all (a full pipe would stall it), keep none.
    child.stdout!.on('data', (d: Buffer) => {
      const parts = (rest + d.toString()).split('\n');
      rest = parts.pop() ?? '';
      if (parts.some((l) => l.startsWith('ready'))) {
        clearTimeout(t);
        resolve({ stop: () => stop(child) });
      }
    });
    child.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
    child.once('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`the ${group.id} site exited (${code}): ${out}`));
    });
  });
}
