// The collector's routes without a server or a store: GET /v1/vocabulary answers the tables of common/ (the
// dashboard's only source of its lists), each entry of which the aggregates filter accepts; it is GET only, sends
// the strict Content-Security-Policy, and counts against the per-client rate like every /v1 request.
import { test } from 'vitest';
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NETWORK_TYPES, UPLOAD_RESOLVERS } from '../common/upload-batch.js';
import { MODES, TRANSPORT_IDS, TRANSPORTS } from '../common/transports.js';
import { RateLimiter } from './rate-limit.js';
import { BodyBudget, handle, type RouteContext } from './routes.js';
import type { AggregateFilter } from './publisher.js';

interface Answer {
  status: number;
  headers: Record<string, string | number>;
  body: { ok: boolean; code?: string; [key: string]: unknown };
}

/** Runs one bodiless request through handle() with fake request and response objects. */
async function request(ctx: RouteContext, method: string, url: string, from = '192.0.2.1', headers: Record<string, string> = {}): Promise<Answer> {
  const req = { method, url, headers, socket: { remoteAddress: from } } as unknown as IncomingMessage;
  const answer: Answer = { status: 0, headers: {}, body: { ok: false } };
  const res = {
    get headersSent() {
      return answer.status !== 0;
    },
    writeHead(status: number, headers: Record<string, string | number>) {
      answer.status = status;
      answer.headers = headers;
    },
    end(text: string) {
      answer.body = JSON.parse(text) as Answer['body'];
    },
    destroy() {
      throw new Error('the response was destroyed');
    },
  } as unknown as ServerResponse;
  await handle(req, res, ctx);
  return answer;
}

function context(overrides: Partial<RouteContext> = {}): RouteContext & { filters: AggregateFilter[] } {
  const filters: AggregateFilter[] = [];
  return {
    store: null as unknown as RouteContext['store'],
    committer: null as unknown as RouteContext['committer'],
    limiter: null,
    trustedProxies: new Set(),
    aggregates: async (filter) => {
      filters.push(filter);
      return { epsilon: 2, minPages: 20, delayHours: 6, epochs: [], cells: [] };
    },
    openData: { index: async () => [], file: async () => null },
    stored: () => {},
    assets: new Map(),
    now: () => 0,
    bodies: new BodyBudget({ budget: 1 << 20, perClient: 1 << 20, reserve: 0 }),
    filters,
    ...overrides,
  };
}

test('GET /v1/vocabulary: the transports with their names, the resolvers, network types and modes of common/', async () => {
  const a = await request(context(), 'GET', '/v1/vocabulary');
  assert.equal(a.status, 200);
  assert.deepEqual(a.body, {
    ok: true,
    transports: TRANSPORT_IDS.map((id) => ({ id, name: TRANSPORTS[id].name, short: TRANSPORTS[id].short })),
    resolvers: [...UPLOAD_RESOLVERS],
    networks: [...NETWORK_TYPES],
    modes: [...MODES],
  });
  assert.deepEqual((a.body.transports as Array<{ id: string }>).map((t) => t.id), ['udp', 'tcp', 'dot', 'doh', 'doh1', 'doq', 'doh3'], 'in the table order');
  assert.equal(a.headers['content-type'], 'application/json; charset=utf-8');
  assert.equal(a.headers['cache-control'], 'public, max-age=300');
  assert.match(String(a.headers['content-security-policy']), /script-src 'self'/);
  assert.doesNotMatch(String(a.headers['content-security-policy']), /unsafe-inline/);
});

test('every resolver, transport and network type of the vocabulary is a filter /v1/aggregates accepts', async () => {
  const ctx = context();
  const v = (await request(ctx, 'GET', '/v1/vocabulary')).body as unknown as { resolvers: string[]; transports: Array<{ id: string }>; networks: string[] };
  const asked: Array<[string, string]> = [
    ...v.resolvers.map((r): [string, string] => ['resolver', r]),
    ...v.transports.map((t): [string, string] => ['transport', t.id]),
    ...v.networks.map((n): [string, string] => ['network', n]),
  ];
  for (const [name, value] of asked) {
    const a = await request(ctx, 'GET', `/v1/aggregates?${name}=${encodeURIComponent(value)}`);
    assert.equal(a.status, 200, `${name}=${value}: ${JSON.stringify(a.body)}`);
  }
  assert.deepEqual(ctx.filters, asked.map(([name, value]) => ({ [name]: value })));
});

test('/v1/vocabulary is GET only and rate limited like every /v1 request', async () => {
  const post = await request(context(), 'POST', '/v1/vocabulary');
  assert.equal(post.status, 405);
  assert.equal(post.body.code, 'method-not-allowed');
  assert.equal(post.headers.allow, 'GET');
  const limited = context({ limiter: new RateLimiter({ perSecond: 1, burst: 1 }, () => 0) });
  assert.equal((await request(limited, 'GET', '/v1/vocabulary')).status, 200);
  const refused = await request(limited, 'GET', '/v1/vocabulary');
  assert.equal(refused.status, 429);
  assert.equal(refused.body.code, 'rate-limited');
});

test('a request target starting with "//" is a path, not a host (the routing fuzz\'s find: it was a 500 with a stack trace)', async () => {
  for (const url of ['//', '//<V.qP$E', '//v1/aggregates']) {
    const a = await request(context(), 'GET', url);
    assert.deepEqual([a.status, a.body.code], [404, 'not-found'], url);
  }
  assert.equal((await request(context(), 'GET', '/v1//aggregates')).status, 404);
});

test('a method named like a member of every object (valueOf, constructor, __proto__) is not allowed: 405, not a 500', async () => {
  for (const method of ['valueOf', 'constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    const a = await request(context(), method, '/v1/batches');
    assert.deepEqual([a.status, a.body.code], [405, 'method-not-allowed'], method);
  }
});

test('filters are own properties only: ?constructor=x is an unknown filter (400), not a crash', async () => {
  for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
    const a = await request(context(), 'GET', `/v1/aggregates?${name}=x`);
    assert.equal(a.status, 400, name);
    assert.equal(a.body.code, 'bad-query');
  }
});

test('the rate limit counts an IPv6 /64 as one client, and believes X-Forwarded-For only from a configured proxy', async () => {
  const ctx = context({ limiter: new RateLimiter({ perSecond: 1, burst: 2 }, () => 0) });
  assert.equal((await request(ctx, 'GET', '/v1/vocabulary', '2001:db8:1:2::a')).status, 200);
  assert.equal((await request(ctx, 'GET', '/v1/vocabulary', '2001:db8:1:2:ffff::b')).status, 200);
  assert.equal((await request(ctx, 'GET', '/v1/vocabulary', '2001:db8:1:2:dead:beef:0:1')).status, 429, 'a new address in the same /64 is the same client');
  assert.equal((await request(ctx, 'GET', '/v1/vocabulary', '2001:db8:1:3::a')).status, 200, 'another /64 is another client');
  // A forged X-Forwarded-For from anyone but the configured proxy changes nothing.
  const proxied = context({ limiter: new RateLimiter({ perSecond: 1, burst: 1 }, () => 0), trustedProxies: new Set(['10.0.0.2']) });
  assert.equal((await request(proxied, 'GET', '/v1/vocabulary', '198.51.100.9', { 'x-forwarded-for': '203.0.113.1' })).status, 200);
  assert.equal((await request(proxied, 'GET', '/v1/vocabulary', '198.51.100.9', { 'x-forwarded-for': '203.0.113.2' })).status, 429, 'not from the proxy: the peer is the client');
  // Behind the proxy each forwarded client has its own bucket; what a client prepends itself is not believed.
  assert.equal((await request(proxied, 'GET', '/v1/vocabulary', '10.0.0.2', { 'x-forwarded-for': '1.1.1.1, 203.0.113.7' })).status, 200);
  assert.equal((await request(proxied, 'GET', '/v1/vocabulary', '10.0.0.2', { 'x-forwarded-for': '2.2.2.2, 203.0.113.8' })).status, 200);
  assert.equal((await request(proxied, 'GET', '/v1/vocabulary', '10.0.0.2', { 'x-forwarded-for': '3.3.3.3, 203.0.113.7' })).status, 429, 'the same forwarded client');
});

test('/v1/aggregates: an epoch filter is a UTC day; the answer states ε and the threshold; a store failure is 503', async () => {
  const ctx = context();
  assert.equal((await request(ctx, 'GET', '/v1/aggregates?epoch=2026-11-2x')).status, 400);
  const a = await request(ctx, 'GET', '/v1/aggregates?epoch=2026-11-21&site=other');
  assert.equal(a.status, 200);
  assert.deepEqual(ctx.filters, [{ epoch: '2026-11-21', site: 'other' }]);
  assert.deepEqual(a.body, { ok: true, epsilon: 2, minPages: 20, delayHours: 6, epochs: [], cells: [] });
  assert.equal(a.headers['cache-control'], 'public, max-age=60');
  const failing = context({ aggregates: async () => Promise.reject(new Error('store down')) });
  const e = await request(failing, 'GET', '/v1/aggregates');
  assert.deepEqual([e.status, e.body.code, e.headers['retry-after']], [503, 'unavailable', '5']);
});

test('memory for bodies being received: by declared length, per client and in all, with a reserve only small bodies may use', () => {
  const b = new BodyBudget({ budget: 1000, perClient: 600, reserve: 100 });
  const big = b.admit('a', 500)!;
  assert.ok(big);
  assert.equal(b.admit('a', 200), null, 'a client holds at most perClient');
  const other = b.admit('b', 500)!;
  assert.ok(other);
  assert.equal(b.held(), 1000);
  assert.equal(b.admit('c', 40_000), null, 'the budget is full for large bodies');
  const small = b.admit('c', 100);
  assert.ok(small, 'a small body may use the reserve');
  assert.equal(b.admit('d', 100), null, 'and the reserve is bounded too');
  big();
  big();
  assert.equal(b.held(), 600, 'a body gives its share back once');
  assert.ok(b.admit('a', 500));
});
