// The CDN mapping penalty (issue 29 item 1) in the lab's CDN (lab/cdn.ts): two edges of one service at 10 and 50 ms
// round trips, an authoritative server that answers each client with its nearest edge (by EDNS Client Subnet, else by
// the resolver's own address), and two resolvers: one sends the client's subnet, one does not. The host's `measure`
// with `edges` times a TCP handshake with the edge the browser reached (the near one) and with each resolver's: the
// resolver without ECS answers the far edge, and its penalty on a new HTTPS connection is within max(5 %, 2 ms) of the
// round-trip difference times the two set-up round trips (TCP, TLS 1.3); the ECS resolver's is 0. The probe's
// ecs-upstream item says which resolver sends the subnet. Without `edges` no handshake is made.
//
// Re-runs itself under `unshare --net` (root) with DNSCOST_CDN_INNER set: the lab's addresses and iptables rules
// exist only there.
import assert from 'node:assert/strict';
import { test } from 'vitest';
import { edgePenalty, setupRoundTrips, type EdgeRow } from '../../common/edges.js';
import type { ResolverSpec } from '../../common/schema.js';
import { CDN_ZONE, startCdnLab } from '../../lab/cdn.js';
import { startHost } from '../../lab/host-process.js';
import type { LabResolver } from '../../lab/resolver.js';
import { probe } from '../../native-host/src/probe/probe.js';
import { linesOf, runInNamespace, vitestCommand } from '../support/namespace.js';

const INNER = process.env.DNSCOST_CDN_INNER;
const NEAR_MS = 10;
const FAR_MS = 50;
const NAME = `www.${CDN_ZONE}`;

const spec = (id: string, r: LabResolver): ResolverSpec => ({ id, name: id, endpoints: [{ transport: 'udp', address: r.address, port: 53 }] });

function innerTest(): void {
  test(`cdn: the far edge a resolver without ECS answers costs (${FAR_MS} − ${NEAR_MS}) ms × 2 per new HTTPS connection; the probe tells ECS`, { timeout: 60_000 }, async (t) => {
    const cdn = await startCdnLab({ nearRttMs: NEAR_MS, farRttMs: FAR_MS });
    t.onTestFinished(() => cdn.stop());

    const names = { name: NAME, signed: NAME, bogus: NAME, https: NAME, whoami: `whoami.${CDN_ZONE}` };
    for (const [id, r, want] of [['ecs', cdn.ecs, 'yes'], ['plain', cdn.plain, 'no']] as const) {
      const row = (await probe(spec(id, r), { names, timeoutMs: 3000 })).find((x) => x.item === 'ecs-upstream');
      assert.equal(row?.result, want, `${id}: ${row?.detail}`);
      console.log(`cdn: probe ${id}: ecs-upstream ${row!.result} (${row!.detail})`);
    }

    const host = startHost();
    t.onTestFinished(() => void host.child.kill());
    const ask = async (id: string, edges: boolean) => {
      host.send({
        id, type: 'measure', hosts: [{ name: NAME, firstNeededMs: 0, qtypes: ['A'], reached: [cdn.near], port: 443 }],
        resolvers: [spec('ecs', cdn.ecs), spec('plain', cdn.plain)], modes: ['warm'], repeat: 1, lab: true, ...(edges ? { edges: true } : {}),
      });
      const replies = await host.until((r) => r.id === id && (r.type === 'done' || r.type === 'error'), 50_000);
      const done = replies.at(-1)!;
      assert.equal(done.type, 'done', JSON.stringify(done));
      return done as { edges?: EdgeRow[] };
    };
    const rows = (await ask('with', true)).edges ?? [];
    assert.equal(rows.length, 1, JSON.stringify(rows));
    const row = rows[0]!;
    assert.deepEqual([row.host, row.port, row.browser.address], [NAME, 443, cdn.near]);
    assert.deepEqual(row.resolvers.map((r) => `${r.resolver} ${r.address}`).sort(), [`ecs ${cdn.near}`, `plain ${cdn.far}`]);
    const expected = (FAR_MS - NEAR_MS) * setupRoundTrips(443);
    const bound = Math.max(0.05 * expected, 2);
    const penalty = edgePenalty(row, 'plain')!;
    console.log(`cdn: handshakes: near ${row.browser.ms?.toFixed(2)} ms, far ${row.resolvers.find((r) => r.resolver === 'plain')!.ms?.toFixed(2)} ms; the plain resolver's penalty ${penalty.toFixed(2)} ms per new HTTPS connection against ${expected} (bound ±${bound})`);
    assert.ok(Math.abs(penalty - expected) <= bound, `penalty ${penalty} ms, expected ${expected} ± ${bound}`);
    assert.equal(edgePenalty(row, 'ecs'), 0, 'the ECS resolver answers the edge the browser reached');
    assert.equal((await ask('without', false)).edges, undefined, 'no handshake unless asked');
  });
}

if (INNER) innerTest();
else {
  test('cdn: the CDN mapping penalty and the ECS report (its own network namespace)', { timeout: 75_000 }, async (t) => {
    if (process.getuid?.() !== 0) return t.skip('needs root: a network namespace, iptables');
    const out = await runInNamespace(`ip link set lo up && ${vitestCommand(import.meta.url)}`, { DNSCOST_CDN_INNER: '1' }, 70_000);
    console.log(linesOf(out, 'cdn: ').join('\n'));
    assert.equal(out.code, 0, out.text.slice(-8000));
  });
}
