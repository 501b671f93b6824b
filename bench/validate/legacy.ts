// Raw files for `--from`: those of the validation's first form (before scenarios, Firefox and HAR pages: Chromium,
// cold loads, synthetic pages, DoT and DoH) read into today's shape, and several runs merged into one (one per
// profile, say), so they are re-analysed with the current model.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { revivedRecord } from '../../common/stored-record.js';
import { pageUrl } from '../../lab/site/validation-site.js';
import type { Candidate, DotStub, ProfileRun, Side, ValidationRun, Visit } from './types.js';

interface OldVisit {
  page: number;
  transport: Side;
  round: number;
  onLoad: number | null;
  error: string | null;
  retried?: boolean;
  pageRecord?: Visit['pageRecord'];
  records?: Visit['records'];
}

interface OldRun {
  command?: string;
  options: { profiles: string[]; pages: number[]; loads: number; repeat: number; seed: number; transports?: string[]; stubNoDelay?: boolean; stubbyNoDelay?: boolean; dotStub?: DotStub };
  startedAt: string;
  finishedAt: string;
  machine: string;
  profiles: { profile: ValidationRun['profiles'][number]['profile']; visits: OldVisit[]; queryTypes?: Record<string, Record<string, number>>; browserVersion: string }[];
}

/**
 * The runs in raw files (`--from A,B…`), merged into one in today's shape. Files named *.gz are gzipped (a profile's raw
 * run is megabytes of JSON; gzipped about a thirteenth); each is read by its bytes (gzip's magic number), so a file
 * named either way reads back.
 */
export function readRuns(files: readonly string[]): ValidationRun {
  return mergeRuns(files.map((f) => {
    const bytes = readFileSync(f);
    return upgradeRun(JSON.parse((bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes).toString('utf8')));
  }));
}

/**
 * A raw run in today's shape: converted when it is of the first form; its replay records read as stored records are
 * (revivedRecord: runs before protocol 2 named a lookup's first-needed time `scheduledAt`).
 */
export function upgradeRun(raw: unknown): ValidationRun {
  const run = upgradeForm(raw);
  for (const p of run.profiles) for (const v of p.visits) if (v.records) v.records = v.records.map(revivedRecord);
  return run;
}

function upgradeForm(raw: unknown): ValidationRun {
  const r = raw as ValidationRun | OldRun;
  if ('format' in r && r.format === 2) return r;
  const old = r as OldRun;
  const transports = (old.options.transports ?? ['dot', 'doh']).filter((t): t is Candidate => t === 'dot' || t === 'doh' || t === 'doq');
  return {
    format: 2,
    ...(old.command ? { command: old.command } : {}),
    options: {
      browsers: ['chromium'], profiles: old.options.profiles, pages: old.options.pages, hars: [], scenarios: ['cold'], transports,
      loads: old.options.loads, minLoads: old.options.loads, repeat: old.options.repeat, seed: old.options.seed,
      dotStub: old.options.dotStub ?? 'stubby', stubNoDelay: old.options.stubNoDelay ?? old.options.stubbyNoDelay ?? false,
    },
    startedAt: old.startedAt,
    finishedAt: old.finishedAt,
    machine: old.machine,
    profiles: old.profiles.map((p) => ({
      profile: p.profile,
      pages: old.options.pages.map((n) => ({ id: String(n), kind: 'synthetic' as const, hosts: n, url: pageUrl(n) })),
      // The first form did not record when each load ran nor which connections were open.
      visits: p.visits.map((v): Visit => ({
        browser: 'chromium', page: String(v.page), transport: v.transport, scenario: 'cold', round: v.round, onLoad: v.onLoad, error: v.error,
        ...(v.retried ? { retried: true } : {}), startedAt: 0, endedAt: 0, openBefore: null,
        ...(v.pageRecord ? { pageRecord: v.pageRecord } : {}), ...(v.records ? { records: v.records } : {}),
      })),
      browserVersions: { chromium: p.browserVersion },
      // CoreDNS's default then.
      serverIdleS: 10,
      queryTypes: p.queryTypes ?? {},
    })),
  };
}

/**
 * Several raw runs as one (`--from A.json,B.json`: e.g. one run per profile, or per profile and page group): their
 * profiles in order — the runs of one profile (same name, link and server idle timeout) as one, their pages and
 * visits together, so a later run can add loads to a row — the union of their browsers, pages, scenarios and
 * candidates (a row needs visits on both its sides, so a combination one run lacks yields no row), the first run's
 * other options, the earliest start and the latest finish.
 */
export function mergeRuns(runs: readonly ValidationRun[]): ValidationRun {
  const [first] = runs;
  if (!first) throw new Error('no raw run to merge');
  if (runs.length === 1) return first;
  const union = <T>(pick: (r: ValidationRun) => readonly T[]) => [...new Set(runs.flatMap(pick))];
  const machines = union((r) => [r.machine]);
  return {
    ...first,
    options: {
      ...first.options,
      browsers: union((r) => r.options.browsers), profiles: union((r) => r.options.profiles), pages: union((r) => r.options.pages),
      hars: union((r) => r.options.hars), scenarios: union((r) => r.options.scenarios), transports: union((r) => r.options.transports),
      controls: union((r) => r.options.controls ?? []),
    },
    command: union((r) => [r.command ?? '(not recorded)']).join('`; `'),
    startedAt: runs.map((r) => r.startedAt).sort()[0]!,
    finishedAt: runs.map((r) => r.finishedAt).sort().at(-1)!,
    machine: machines.join('; '),
    ...(runs.some((r) => r.code) ? { code: union((r) => [r.code ?? 'not recorded']).join('; ') } : {}),
    profiles: mergeProfiles(runs.flatMap((r) => r.profiles)),
  };
}

function mergeProfiles(ps: readonly ProfileRun[]): ProfileRun[] {
  const out = new Map<string, ProfileRun>();
  for (const p of ps) {
    const key = JSON.stringify([p.profile, p.serverIdleS]);
    const had = out.get(key);
    if (!had) {
      out.set(key, { ...p, pages: [...p.pages], visits: [...p.visits], queryTypes: structuredClone(p.queryTypes) });
      continue;
    }
    for (const page of p.pages) if (!had.pages.some((x) => x.id === page.id)) had.pages.push(page);
    had.visits.push(...p.visits);
    had.browserVersions = { ...p.browserVersions, ...had.browserVersions };
    for (const [scheme, per] of Object.entries(p.queryTypes)) {
      const t = (had.queryTypes[scheme] ??= {});
      for (const [q, n] of Object.entries(per)) t[q] = (t[q] ?? 0) + n;
    }
  }
  return [...out.values()];
}
