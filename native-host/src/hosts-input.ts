// Where `dnscost-host measure` gets its names besides the command line: a host list (a file, or `-` for stdin) and a
// HAR file, whose page's names are replayed at the offsets the page first needed them. Every mistake is a
// bad-request naming the file and the line or entry, never a crash.
import { readFile } from 'node:fs/promises';
import { CODES, DnscostError } from '../../common/errors.js';
import { HarError, parseHar, type Har } from '../../common/har.js';
import { parseHost } from '../../common/hostname.js';

/** A name and, when known, when the page first needed it (ms after the page started). */
export type HostArg = string | { name: string; firstNeededMs: number };

/** A host as the command line writes it: `NAME`, or `NAME@MS` (the page first needed NAME MS ms after it started). */
export function hostArg(text: string): HostArg {
  const m = /^(.+)@(\d+(?:\.\d+)?)$/.exec(text);
  return m ? { name: m[1]!, firstNeededMs: Number(m[2]) } : text;
}

/**
 * A host list: one `NAME` or `NAME@MS` per line; blank lines and `#` comments are skipped. A line's first field that
 * is not a number is its name, so top-sites lists are read as they come (`1,example.com` and `example.com,1` alike).
 */
export function parseHostList(text: string): HostArg[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.replace(/#.*/, '').split(/[,;\s]+/).find((f) => f && !/^\d+$/.test(f)) ?? '')
    .filter(Boolean)
    .map(hostArg);
}

/** Reads a host list from `path`, or from `stdin` (default: the process's, touched only then) when the path is `-`. */
export async function readHostList(path: string, stdin?: NodeJS.ReadableStream): Promise<HostArg[]> {
  let text: string;
  try {
    if (path === '-') {
      const chunks: Buffer[] = [];
      for await (const chunk of stdin ?? process.stdin) chunks.push(Buffer.from(chunk as Buffer));
      text = Buffer.concat(chunks).toString('utf8');
    } else text = await readFile(path, 'utf8');
  } catch (e) {
    throw new DnscostError(CODES.BAD_REQUEST, `cannot read --hosts-file ${path}: ${(e as Error).message}`);
  }
  return parseHostList(text);
}

/**
 * The names a HAR's page needed, each at the offset the browser asked DNS for it (ms after the page's first request,
 * on the HAR's clock): the start of its requests' own lookup (timings.blocked after the request's start, the wait in
 * the browser's queue: common/lookup-starts.ts says why the replay starts there), else (and for documents) its first
 * request's start; never before that. In that order: redirect hops and failed requests count (the browser looked
 * their names up too); IP literals and URLs without a host (data:, blob:) do not.
 */
export function harLookups(har: Har): { name: string; firstNeededMs: number }[] {
  const start = Math.min(...har.requests.map((r) => r.startMs));
  // The page's own document is its first request, whether or not the HAR says what type each request was.
  const page = har.requests.find((r) => r.startMs === start);
  const first = new Map<string, { needed: number; asked: number | null }>();
  for (const r of har.requests) {
    const h = parseHost(new URL(r.url).hostname);
    if (!h.ok || h.kind !== 'name') continue;
    const seen = first.get(h.name) ?? { needed: Infinity, asked: null };
    seen.needed = Math.min(seen.needed, r.startMs - start);
    // A document (the page's, a redirect's, a frame's) is asked for at once, before any scheduler: its first need.
    if (r.dnsStartMs !== null && r.resourceType !== 'document' && r !== page) seen.asked = Math.min(seen.asked ?? Infinity, r.dnsStartMs - start);
    first.set(h.name, seen);
  }
  return [...first]
    .map(([name, { needed, asked }]) => ({ name, firstNeededMs: Math.round(Math.max(needed, asked ?? needed) * 10) / 10 }))
    .sort((a, b) => a.firstNeededMs - b.firstNeededMs || a.name.localeCompare(b.name));
}

/** Reads and validates the HAR file at `path` (parseHar's errors, or `unreadable`). */
export async function readHarFile(path: string): Promise<Har> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new HarError('unreadable', `cannot read HAR file ${path}: ${(e as Error).message}`);
  }
  return parseHar(text, path);
}

/** `--har FILE`'s lookups; a HAR that cannot be used is the caller's mistake (bad-request with the HAR's reason). */
export async function readHarLookups(path: string): Promise<HostArg[]> {
  try {
    return harLookups(await readHarFile(path));
  } catch (e) {
    if (e instanceof HarError) throw new DnscostError(CODES.BAD_REQUEST, `--har: ${e.message} (${e.code})`);
    throw e;
  }
}
