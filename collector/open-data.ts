// The published days as open data: each UTC day's publication as one file of JSON Lines (one published cell a line,
// gzipped), listed in an index with its size and SHA-256, and a JSON Schema of a line. A publication never changes
// once stored (publisher.ts), and gzip here writes no time or name, so a day's file is the same bytes on every
// collector and every request: its checksum can be cited. What shaped the figures (ε per person and day, the
// threshold) is in the index and in the schema's description.
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { PERSON_CAP } from '../common/privacy-budget.js';
import type { PublishedRow, StoredPublication, Store } from './store.js';

/** A published day's file, as the index lists it. */
export interface OpenDataDay {
  epoch: string;
  publishedAt: string;
  /** ε per person and UTC day the day was published with, and its cell threshold (noisy pages). */
  epsilon: number;
  minPages: number;
  cells: number;
  /** Path of the file relative to the index (`v1/open-data/EPOCH.jsonl.gz`). */
  file: string;
  bytes: number;
  sha256: string;
}

/** The fields of a line, in the order they are written. */
const FIELDS = ['epoch', 'resolver', 'transport', 'mode', 'network', 'site', 'pages', 'failureShare', 'lookupMs', 'onloadMs', 'bytesPerLookup', 'packetsPerLookup'] as const;

const spread = (what: string) => ({
  description: `${what}: the 5th, 50th and 95th percentiles over the cell's pages, each a noisy choice near the true one; null when no page had one.`,
  oneOf: [{ type: 'null' }, { type: 'object', additionalProperties: false, required: ['p5', 'p50', 'p95'], properties: { p5: { type: 'number' }, p50: { type: 'number' }, p95: { type: 'number' } } }],
});

/** JSON Schema (2020-12) of one line of a day's file. */
export const OPEN_DATA_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'dnscost published cell',
  description:
    'One cell of one UTC day: the pages people uploaded from the dnscost extension for one resolver, transport, mode, network type and site, ' +
    `with differential privacy per person and day: a person uploads at most ${PERSON_CAP.pagesPerDay} pages a day (a random sample) of at most ` +
    `${PERSON_CAP.resultsPerPage} results each, and everything one person uploads in a day changes the day's publication by at most the ε the index ` +
    'gives. Page counts carry Laplace noise; a cell (and a site\'s name) is published only when its noisy count reached the threshold (minPages in ' +
    'the index), the rest being counted under "other"; percentiles are chosen at random near the true ones (exponential mechanism).',
  type: 'object',
  additionalProperties: false,
  required: [...FIELDS],
  properties: {
    epoch: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'The UTC day the pages were measured.' },
    resolver: { type: 'string', description: 'cloudflare, google, quad9, system (the person\'s own DNS), or custom.' },
    transport: { type: 'string', description: 'udp, tcp, dot, doh, doh1 (DoH over HTTP/1.1), doq, doh3.' },
    mode: { type: 'string', description: 'cold: a new connection per lookup; warm: one connection reused.' },
    network: { type: 'string', description: 'The network type the person was on, as the browser told it (wifi, ethernet, cellular, …, or unknown).' },
    site: { type: 'string', description: 'A popular site whose own noisy page count reached the threshold, otherwise "other".' },
    pages: { type: 'integer', description: 'The noisy page count.' },
    failureShare: { type: 'number', description: 'The share of the cell\'s lookups that failed, over pages (noisy).' },
    lookupMs: spread('Median lookup time per page, in ms'),
    onloadMs: spread('Estimated onLoad change per page against the person\'s own DNS, in ms'),
    bytesPerLookup: { type: ['number', 'null'], description: 'Bytes on the wire per lookup (IP level, both directions), noisy; null when none.' },
    packetsPerLookup: { type: ['number', 'null'], description: 'Packets per lookup, noisy; null when none.' },
  },
} as const;

/** A day's publication as its file: one line per cell in the publication's order, fields in FIELDS order, gzipped. */
export function openDataFile(p: StoredPublication): Buffer {
  const line = (c: PublishedRow) => JSON.stringify(Object.fromEntries(FIELDS.map((f) => [f, f === 'epoch' ? p.epoch : c[f]])));
  return gzipSync(p.cells.map((c) => `${line(c)}\n`).join(''), { level: 9 });
}

/** The open data of a store: its index and files; files are kept once made (a day's bytes never change). */
export class OpenData {
  private readonly days = new Map<string, OpenDataDay>();
  private readonly recent = new Map<string, Buffer>();

  constructor(
    private readonly store: Store,
    /** Brings the publications up to date (the publisher's), so a due day is listed once it can be. */
    private readonly publishDue: () => Promise<unknown>,
    private readonly keepFiles = 32,
  ) {}

  /** Every published day, oldest first. */
  async index(): Promise<OpenDataDay[]> {
    await this.publishDue();
    const epochs = await this.store.publishedEpochs();
    const missing = epochs.filter((e) => !this.days.has(e));
    for (const p of await this.store.publications(missing)) this.remember(p);
    return epochs.flatMap((e) => this.days.get(e) ?? []);
  }

  /** A published day's file, or null when the day was not published. */
  async file(epoch: string): Promise<{ body: Buffer; day: OpenDataDay } | null> {
    const kept = this.recent.get(epoch);
    if (kept) return { body: kept, day: this.days.get(epoch)! };
    await this.publishDue();
    const [p] = await this.store.publications([epoch]);
    return p ? this.remember(p) : null;
  }

  private remember(p: StoredPublication): { body: Buffer; day: OpenDataDay } {
    const body = openDataFile(p);
    const day: OpenDataDay = {
      epoch: p.epoch,
      publishedAt: p.publishedAt,
      epsilon: p.epsilon,
      minPages: p.minPages,
      cells: p.cells.length,
      file: `v1/open-data/${p.epoch}.jsonl.gz`,
      bytes: body.length,
      sha256: createHash('sha256').update(body).digest('hex'),
    };
    this.days.set(p.epoch, day);
    this.recent.set(p.epoch, body);
    // The files of the most recent requests stay; older ones are made again when asked (the index keeps their sums).
    for (const old of this.recent.keys()) if (this.recent.size > this.keepFiles) this.recent.delete(old);
    return { body, day };
  }
}
