// The collector service end to end, against both stores: the embedded PGlite in a temporary directory, and a real
// PostgreSQL server on loopback (lab/postgres.ts). The collector runs as its own process (dist/collector/
// main.js) so it can be killed with SIGKILL and restarted on the same data. Publication is on with no delay, so a
// past day is published at its first request; these tests run it with ε = 100,000 per person and day and a
// threshold of 20 pages, where the noise is below the upload grid's resolution and figures can be checked exactly
// (tests/integration/collector-abuse.test.ts attacks the defaults). Each test writes to a day of its own, so publishing one day does not freeze another's. Every
// loop is bounded in count and time; nothing leaves 127.0.0.1.
import { afterAll, beforeAll, describe, test } from 'vitest';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile, stat, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import type { OpenDataDay } from '../../collector/open-data.js';
import { pruneBefore, startCollector } from '../../collector/server.js';
import type { Store } from '../../collector/store.js';
import { openPgliteStore } from '../../collector/store-pglite.js';
import { openPostgresStore } from '../../collector/store-postgres.js';
import { startPostgres, type LabPostgres } from '../../lab/postgres.js';
import { agent, aggregates, batch, dayAgo, hourAgo, http, randomKey, randomToken, result, spawnCollector, upload, type CollectorProcess, type Reply } from '../support/collector-client.js';

for (const kind of ['pglite', 'postgres'] as const) {
  describe(`collector on ${kind}`, () => {
    let dir: string;
    let pg: LabPostgres | null = null;
    let env: Record<string, string> = {};
    let c: CollectorProcess;
    const start = () => spawnCollector(env, join(dir, 'data'), ['--publication-delay', '0', '--epsilon', '100000', '--min-pages', '20']);
    /** Stored (not deleted) batches, read from the store itself; the embedded one is one process's, so it stops. */
    const storedCount = async (): Promise<number> => {
      if (pg) {
        const store = await openPostgresStore(pg.url, 1);
        try {
          return await store.count();
        } finally {
          await store.close();
        }
      }
      await c.stop();
      const store = await openPgliteStore(join(dir, 'data'));
      try {
        return await store.count();
      } finally {
        await store.close();
        c = await start();
      }
    };

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'dnscost-collector-'));
      if (kind === 'postgres') {
        pg = await startPostgres();
        env = { DNSCOST_COLLECTOR_DATABASE_URL: pg.url };
      }
      c = await start();
    });

    afterAll(async () => {
      await c?.stop();
      await pg?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    test('refuses bad uploads with a stable code and path, answers health and the dashboard', async () => {
      const h = await http(`${c.url}/healthz`);
      assert.deepEqual([h.status, h.body], [200, { ok: true, store: kind }]);
      const cases: Array<[string, () => Promise<Reply>, number, string, string?]> = [
        ['bad json', () => upload(c.url, '{"version":2,'), 400, 'bad-json'],
        ['wrong version', () => upload(c.url, { ...batch(), version: 1 }), 400, 'bad-version', 'version'],
        ['site is a URL', () => upload(c.url, batch({ site: 'https://github.com/anna/private' })), 400, 'bad-value', 'pages.0.site'],
        ['a network label', () => upload(c.url, { ...batch(), network: { type: 'wifi', label: 'home' } }), 400, 'unknown-field', 'network.label'],
        ['exact bytes', () => upload(c.url, batch({ results: [result({ bytesPerLookup: 4871 })] })), 400, 'too-precise', 'pages.0.results.0.bytesPerLookup'],
        ['unknown field', () => upload(c.url, { ...batch(), ip: '203.0.113.9' }), 400, 'unknown-field', 'ip'],
        ['out of range', () => upload(c.url, batch({ results: [result({ lookups: 1e7 })] })), 400, 'out-of-range', 'pages.0.results.0.lookups'],
        ['no token', () => http(`${c.url}/v1/batches`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(batch()) }), 400, 'bad-deletion-token'],
        ['form body', () => upload(c.url, 'a=1', randomToken(), { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'bad-content-type'],
        ['too large', () => upload(c.url, ' '.repeat(300 * 1024)), 413, 'body-too-large'],
        ['wrong method', () => http(`${c.url}/v1/batches`, { method: 'PUT' }), 405, 'method-not-allowed'],
        ['no such path', () => http(`${c.url}/v1/nope`), 404, 'not-found'],
        ['bad filter', () => http(`${c.url}/v1/aggregates?site=my-blog.example`), 400, 'bad-query'],
        ['bad epoch', () => http(`${c.url}/v1/aggregates?epoch=yesterday`), 400, 'bad-query'],
      ];
      for (const [name, send, status, code, path] of cases) {
        const r = await send();
        assert.deepEqual([r.status, r.body.ok, r.body.code, r.body.path], [status, false, code, path], `${name}: ${JSON.stringify(r.body)}`);
      }
      const page = await http(`${c.url}/`);
      assert.equal(page.status, 200);
      assert.match(String(page.headers['content-security-policy']), /script-src 'self'/);
      assert.equal((await http(`${c.url}/uplot.min.js`)).status, 200);
    });

    test('idempotent by key: replay is a duplicate, a different body or token is a conflict', async () => {
      const b = batch();
      const token = randomToken();
      assert.deepEqual((await upload(c.url, b, token)).body, { ok: true, key: b.key, duplicate: false });
      const replay = await upload(c.url, b, token);
      assert.deepEqual([replay.status, replay.body], [200, { ok: true, key: b.key, duplicate: true }]);
      const other = await upload(c.url, { ...b, network: { type: 'cellular' } }, token);
      assert.deepEqual([other.status, other.body.code], [409, 'key-conflict']);
      const thief = await upload(c.url, b, randomToken());
      assert.deepEqual([thief.status, thief.body.code], [409, 'key-conflict']);
      // Concurrent replays of one new key land in the same group: one is stored, the rest are duplicates.
      const same = batch();
      const answers = await Promise.all(Array.from({ length: 8 }, () => upload(c.url, same, token)));
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, 200, 200, 200, 200, 200, 200, 201]);
    });

    test('a closed day is published once: ε and the threshold stated, a site named only at 20 noisy pages, late pages left out', async () => {
      const epoch = dayAgo(3);
      // A cell no other test writes to: quad9 × doq on ethernet.
      const q = `?epoch=${epoch}&resolver=quad9&transport=doq&network=ethernet`;
      const send = (site: string, medianMs = 19) => upload(c.url, batch({ site, network: 'ethernet', hour: hourAgo(3), results: [result({ resolver: 'quad9', transport: 'doq', medianMs })] }));
      // 25 pages of github.com: named; 12 of wikipedia.org: under 20, folded into "other" with 13 uploaded as "other".
      const sends = [...Array(25).fill('github.com'), ...Array(12).fill('wikipedia.org'), ...Array(13).fill('other')];
      for (const site of sends) assert.equal((await send(site)).status, 201);
      const first = await aggregates(c.url, q);
      assert.deepEqual([first.epsilon, first.minPages, first.delayHours], [100_000, 20, 0]);
      assert.deepEqual(first.epochs.map((e) => [e.epoch, e.epsilon, e.minPages]), [[epoch, 100_000, 20]]);
      assert.deepEqual(first.cells.map((x) => [x.epoch, x.site, x.pages, x.lookupMs]), [
        [epoch, 'github.com', 25, { p5: 19, p50: 19, p95: 19 }],
        [epoch, 'other', 25, { p5: 19, p50: 19, p95: 19 }],
      ]);
      assert.ok(Math.abs(first.cells[0]!.failureShare - 1 / 11) < 0.01, `failure share ${first.cells[0]!.failureShare}`);
      assert.deepEqual((await aggregates(c.url, `${q}&site=wikipedia.org`)).cells, [], 'asking by name reveals nothing');
      // Pages of the day that arrive after it was published are stored, never published: the figures stay.
      for (let i = 0; i < 20; i++) assert.equal((await send('wikipedia.org', 90.5)).status, 201);
      assert.deepEqual((await aggregates(c.url, q)).cells, first.cells);
      // Filters select among the published cells; the current day is never published.
      assert.deepEqual((await aggregates(c.url, `${q}&site=github.com`)).cells, [first.cells[0]]);
      assert.deepEqual((await aggregates(c.url, `?epoch=${dayAgo(0)}`)).cells, []);
    });

    test('open data: each published day a gzipped JSON Lines file in the index, with its SHA-256 and schema; the same bytes after a restart', async () => {
      const epoch = dayAgo(5);
      for (let i = 0; i < 22; i++) assert.equal((await upload(c.url, batch({ site: 'other', network: 'wifi', hour: hourAgo(5), results: [result({ resolver: 'google', transport: 'dot' })] }))).status, 201);
      const index = await http(`${c.url}/v1/open-data`);
      assert.equal(index.status, 200);
      const days = index.body.days as OpenDataDay[];
      const day = days.find((d) => d.epoch === epoch)!;
      assert.ok(day, `${epoch} is listed: ${days.map((d) => d.epoch).join(', ')}`);
      assert.deepEqual(days.map((d) => d.epoch), [...days.map((d) => d.epoch)].sort(), 'oldest first');
      assert.deepEqual([day.epsilon, day.minPages, day.file], [100_000, 20, `v1/open-data/${epoch}.jsonl.gz`]);
      const file = await http(`${c.url}/${day.file}`);
      assert.equal(file.status, 200);
      assert.equal(file.headers['content-type'], 'application/gzip');
      assert.equal(createHash('sha256').update(file.raw).digest('hex'), day.sha256);
      assert.equal(file.raw.length, day.bytes);
      const lines = gunzipSync(file.raw).toString('utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.equal(lines.length, day.cells);
      // The same cells the aggregates answer for that day, every field the schema names and no other.
      const schema = await http(`${c.url}/v1/open-data/schema.json`);
      const required = schema.body.required as string[];
      for (const line of lines) assert.deepEqual(Object.keys(line), required);
      assert.deepEqual(lines, (await aggregates(c.url, `?epoch=${epoch}`)).cells.map((cell) => Object.fromEntries(required.map((k) => [k, cell[k as keyof typeof cell]]))));
      assert.ok(lines.some((l) => l.resolver === 'google' && l.transport === 'dot' && l.network === 'wifi' && l.pages === 22));
      // Immutable: a conditional request is answered 304; a restarted collector serves the same bytes.
      assert.equal((await http(`${c.url}/${day.file}`, { headers: { 'if-none-match': String(file.headers.etag) } })).status, 304);
      await c.stop();
      c = await start();
      const again = await http(`${c.url}/${day.file}`);
      assert.ok(again.raw.equals(file.raw), 'the same bytes after a restart');
      assert.equal((await http(`${c.url}/v1/open-data/${dayAgo(0)}.jsonl.gz`)).status, 404, 'today is not published');
      assert.equal((await http(`${c.url}/v1/open-data/2026-13-99.jsonl.gz`)).status, 404);
    });

    test('retention: the raw uploads of days before the cutoff are removed, their publication stays', async () => {
      const old = dayAgo(6);
      for (let i = 0; i < 21; i++) assert.equal((await upload(c.url, batch({ site: 'other', network: 'cellular', hour: hourAgo(6), results: [result({ resolver: 'quad9', transport: 'doh' })] }))).status, 201);
      const published = await aggregates(c.url, `?epoch=${old}`);
      assert.ok(published.cells.length > 0);
      const before = await storedCount();
      // The store as the collector's hourly retention calls it (a cutoff of 5 days: the 21 pages of 6 days ago go).
      const withStore = async <T>(fn: (store: Store) => Promise<T>): Promise<T> => {
        if (!pg) await c.stop();
        const store = pg ? await openPostgresStore(pg.url, 1) : await openPgliteStore(join(dir, 'data'));
        try {
          return await fn(store);
        } finally {
          await store.close();
          if (!pg) c = await start();
        }
      };
      assert.equal(await withStore((store) => store.prune(pruneBefore(Date.now(), 5))), 21);
      assert.equal(await storedCount(), before - 21);
      assert.deepEqual(await aggregates(c.url, `?epoch=${old}`), published, 'the publication stays');
    });

    test('deletion before publication takes the pages out; after it, the published figures stay', async () => {
      const epoch = dayAgo(4);
      const q = `?epoch=${epoch}&resolver=custom&transport=doh3`;
      const uploads = Array.from({ length: 40 }, () => ({ b: batch({ site: 'other', hour: hourAgo(4), results: [result({ resolver: 'custom', transport: 'doh3' })] }), token: randomToken() }));
      for (const { b, token } of uploads) assert.equal((await upload(c.url, b, token)).status, 201);
      const del = (t: string, key: string) => http(`${c.url}/v1/batches/${key}`, { method: 'DELETE', headers: { 'dnscost-deletion-token': t } });
      const [b0, t0] = [uploads[0]!.b, uploads[0]!.token];
      const wrong = await del(randomToken(), b0.key);
      assert.deepEqual([wrong.status, wrong.body.code], [404, 'not-found']);
      assert.deepEqual([(await del(t0, randomKey())).status], [404]);
      for (const { b, token } of uploads.slice(0, 15)) assert.deepEqual((await del(token, b.key)).body, { ok: true, key: b.key, deleted: true });
      // A late retry of a deleted upload does not bring it back.
      assert.deepEqual((await upload(c.url, b0, t0)).body, { ok: true, key: b0.key, duplicate: true });
      const published = await aggregates(c.url, q);
      assert.deepEqual(published.cells.map((x) => [x.site, x.pages]), [['other', 25]]);
      assert.equal((await del(t0, b0.key)).status, 200, 'deleting again is fine');
      for (const { b, token } of uploads.slice(15, 20)) assert.equal((await del(token, b.key)).status, 200);
      assert.deepEqual((await aggregates(c.url, q)).cells, published.cells, 'a day is published once');
    });

    test('an acknowledged batch survives kill -9 of the collector; the secret and the published figures stay', async () => {
      const published = await aggregates(c.url, `?epoch=${dayAgo(3)}`);
      assert.ok(published.cells.length > 0);
      const keyFile = join(dir, 'data', 'publication.key');
      assert.equal((await stat(keyFile)).mode & 0o777, 0o600, 'the secret is readable by its owner only');
      const secret = await readFile(keyFile, 'utf8');
      const acked = [];
      for (let i = 0; i < 20; i++) {
        const b = batch();
        const token = randomToken();
        const r = await upload(c.url, b, token);
        assert.equal(r.status, 201);
        acked.push({ b, token });
      }
      await c.kill9();
      c = await start();
      for (const { b, token } of acked) assert.deepEqual((await upload(c.url, b, token)).body, { ok: true, key: b.key, duplicate: true });
      assert.equal(await readFile(keyFile, 'utf8'), secret);
      assert.deepEqual(await aggregates(c.url, `?epoch=${dayAgo(3)}`), published);
    });

    test('restarted under load: no acknowledged batch is lost', async () => {
      const acked: Array<{ b: object & { key: string }; token: string }> = [];
      let errors = 0;
      let current = c.url;
      // Clients go on until 1.5 s after the restart (the embedded store takes seconds to start), 30 s at most.
      let stopAt = Date.now() + 30_000;
      const client = async () => {
        for (let i = 0; i < 3000 && Date.now() < stopAt; i++) {
          const b = batch();
          const token = randomToken();
          try {
            const r = await upload(current, b, token);
            if (r.status === 201) acked.push({ b, token });
            else errors++;
          } catch {
            errors++; // the collector was killed mid-request: not acknowledged, so nothing is owed
            await sleep(20);
          }
        }
      };
      const clients = Array.from({ length: 8 }, client);
      await sleep(1_000);
      const ackedBeforeKill = acked.length;
      await c.kill9();
      c = await start();
      current = c.url;
      stopAt = Math.min(stopAt, Date.now() + 1_500);
      await Promise.all(clients);
      assert.ok(ackedBeforeKill > 20 && acked.length > ackedBeforeKill, `uploads before (${ackedBeforeKill}) and after (${acked.length}) the restart`);
      const missing = [];
      for (let i = 0; i < acked.length; i += 16) {
        const replies = await Promise.all(acked.slice(i, i + 16).map(({ b, token }) => upload(c.url, b, token)));
        missing.push(...replies.filter((r) => r.body.duplicate !== true).map((r) => JSON.stringify(r.body)));
      }
      assert.deepEqual(missing, [], `of ${acked.length} acknowledged (${errors} failed while down)`);
    });

    test('10,000 hostile uploads are all refused with the right code, none stored, and the service still answers', async () => {
      const stored = batch();
      const storedToken = randomToken();
      assert.equal((await upload(c.url, stored, storedToken)).status, 201);
      const baseline = await storedCount();
      const json = (b: object) => JSON.stringify(b);
      const post = (body: string | Buffer, headers: Record<string, string> = {}) => http(`${c.url}/v1/batches`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'dnscost-deletion-token': randomToken(), ...headers }, body,
      });
      const hostile: Array<[string, () => Promise<Reply>, number, string]> = [
        ['truncated json', () => post(json(batch()).slice(0, 40 + Math.floor(Math.random() * 60))), 400, 'bad-json'],
        ['not utf-8', () => post(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), 400, 'bad-json'],
        ['empty body', () => post(''), 400, 'bad-json'],
        ['json null', () => post('null'), 400, 'bad-type'],
        ['json array', () => post('[1,2,3]'), 400, 'bad-type'],
        ['deep nesting', () => post('['.repeat(5000) + ']'.repeat(5000)), 400, 'bad-type'],
        ['version as string', () => post(json({ ...batch(), version: '2' })), 400, 'bad-version'],
        ['lookups as string', () => post(json(batch({ results: [result({ lookups: '11' })] }))), 400, 'bad-type'],
        ['hosts huge', () => post(json({ ...batch(), pages: [{ ...batch().pages[0], hosts: 1e12 }] })), 400, 'out-of-range'],
        ['median negative', () => post(json(batch({ results: [result({ medianMs: -1 })] }))), 400, 'out-of-range'],
        ['number overflow', () => post(json(batch()).replace('"hosts":8', '"hosts":1e999')), 400, 'out-of-range'],
        ['failures > lookups', () => post(json(batch({ results: [result({ failures: 16 })] }))), 400, 'inconsistent'],
        ['a label with an address', () => post(json({ ...batch(), network: { type: 'wifi', label: '10.1.2.3' } })), 400, 'unknown-field'],
        ['two pages', () => post(json({ ...batch(), pages: [batch().pages[0], batch().pages[0]] })), 400, 'too-many-items'],
        ['site URL', () => post(json(batch({ site: 'https://github.com/a/b?c=d' }))), 400, 'bad-value'],
        ['site IP', () => post(json(batch({ site: '203.0.113.5' }))), 400, 'bad-value'],
        ['site rare', () => post(json(batch({ site: 'anna-family-photos.example' }))), 400, 'bad-value'],
        ['resolver as URL', () => post(json(batch({ results: [result({ resolver: 'https://dns.example/dns-query' })] }))), 400, 'bad-value'],
        ['extra url field', () => post(json({ ...batch(), url: 'https://github.com/anna' })), 400, 'unknown-field'],
        ['extra hostnames', () => post(json({ ...batch(), pages: [{ ...batch().pages[0], hostnames: ['a.example'] }] })), 400, 'unknown-field'],
        ['__proto__', () => post(json(batch()).replace('{', '{"__proto__":{"polluted":1},')), 400, 'unknown-field'],
        ['key with path', () => post(json(batch({ key: '../../etc/passwd////' }))), 400, 'bad-value'],
        ['replayed key, other body', () => post(json({ ...stored, network: { type: 'cellular' } }), { 'dnscost-deletion-token': storedToken }), 409, 'key-conflict'],
        ['replayed key, other token', () => post(json(stored)), 409, 'key-conflict'],
        ['wrong content type', () => post(json(batch()), { 'content-type': 'text/plain' }), 415, 'bad-content-type'],
        ['bad token', () => post(json(batch()), { 'dnscost-deletion-token': 'short' }), 400, 'bad-deletion-token'],
        ['delete without token', () => http(`${c.url}/v1/batches/${stored.key}`, { method: 'DELETE' }), 400, 'bad-deletion-token'],
        ['delete, wrong token', () => http(`${c.url}/v1/batches/${stored.key}`, { method: 'DELETE', headers: { 'dnscost-deletion-token': randomToken() } }), 404, 'not-found'],
        ['filter injection', () => http(`${c.url}/v1/aggregates?site=${encodeURIComponent("x' OR 1=1 --")}`), 400, 'bad-query'],
      ];
      const huge: Array<[string, () => Promise<Reply>, number, string]> = [
        ['over the limit', () => post(Buffer.alloc(256 * 1024 + 1, 0x20)), 413, 'body-too-large'],
        ['chunked, over the limit', () => http(`${c.url}/v1/batches`, {
          method: 'POST', headers: { 'content-type': 'application/json', 'dnscost-deletion-token': randomToken() },
          chunks: Array.from({ length: 20 }, () => Buffer.alloc(32 * 1024, 0x5b)),
        }), 413, 'body-too-large'],
      ];
      const wrong: string[] = [];
      let next = 0;
      const total = 10_000;
      const deadline = Date.now() + 60_000;
      const worker = async () => {
        while (next < total && Date.now() < deadline) {
          const i = next++;
          // Every 250th request is a huge body (40 in all); the rest cycle through the hostile table.
          const [name, send, status, code] = i % 250 === 0 ? huge[(i / 250) % huge.length]! : hostile[i % hostile.length]!;
          const r = await send();
          if (r.status !== status || r.body.code !== code) wrong.push(`${name}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
        }
      };
      await Promise.all(Array.from({ length: 24 }, worker));
      assert.equal(next, total, 'all 10,000 sent within the time bound');
      assert.deepEqual(wrong.slice(0, 10), []);
      assert.equal(await storedCount(), baseline, 'nothing hostile was stored');
      assert.deepEqual((await http(`${c.url}/healthz`)).body, { ok: true, store: kind });
      assert.equal((await upload(c.url, batch())).status, 201, 'and still stores good uploads');
    });
  });
}

test('per-client rate limit answers 429 with Retry-After', async () => {
  const idle: Store = {
    kind: 'pglite', concurrency: 1,
    putMany: async (rows) => rows.map(() => 'stored' as const),
    delete: async () => false,
    epochCounts: async () => [],
    epochValues: async () => [],
    epochsWithData: async () => [],
    publications: async () => [],
    publishedEpochs: async () => [],
    publish: async () => Promise.reject(new Error('nothing to publish')),
    count: async () => 0,
    prune: async () => 0,
    ping: async () => {},
    close: async () => {},
  };
  const c = await startCollector({ store: idle, rate: { perSecond: 2, burst: 5 } });
  try {
    const replies = await Promise.all(Array.from({ length: 12 }, () => upload(c.url, batch())));
    assert.deepEqual(replies.map((r) => r.status).sort(), [...Array(5).fill(201), ...Array(7).fill(429)]);
    const limited = replies.find((r) => r.status === 429)!;
    assert.equal(limited.body.code, 'rate-limited');
    assert.equal(limited.headers['retry-after'], '1');
    assert.equal((await http(`${c.url}/healthz`)).status, 200, 'health is not rate limited');
  } finally {
    await c.close();
  }
});

afterAll(() => agent.destroy());
