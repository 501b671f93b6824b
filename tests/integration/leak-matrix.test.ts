// The leak matrix (issue 13): names private to the person's network never reach a resolver on a global address, in
// a network namespace of the test's own where a capture on its only interface sees every packet.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'vitest';
import { planMeasurement } from '../../extension/src/background/measure-plan.js';
import { host as pageHost, pageRecord } from '../../extension/src/background/test-fixtures.js';
import { startHost } from '../../lab/host-process.js';
import { READY_PROBE, startCoreDNS, type LabResolver } from '../../lab/resolver.js';
import type { ResolverSpec } from '../../common/schema.js';
import { NAMES_PER_DOMAIN } from '../../common/name-caps.js';
import { currentDnsServer } from '../support/current-dns-server.js';
import { runInNamespace, vitestCommand } from '../support/namespace.js';

const INNER = process.env.DNSCOST_LEAK_INNER;
// Resolvers: CoreDNS on 9.9.9.9 (a global-looking address, inside the namespace), CoreDNS on 10.53.0.1 (private),
// and the current DNS on 10.53.0.2 (the namespace's resolv.conf; a fixture that answers per name, since split horizon
// needs different answers for names of one zone).
const PUBLIC_ADDR = '9.9.9.9';
const PRIVATE_ADDR = '10.53.0.1';
const CURRENT_ADDR = '10.53.0.2';
// The page's hosts: a public name (the current DNS answers it with a global address), a split-horizon name under a
// public suffix (the current DNS answers it with 10.0.0.5), x.onion, printer.internal, a.test, and a name the browser
// reached at 192.168.1.20.
const PUBLIC_NAME = 'www.dnscost-lab.net';
const SPLIT = 'jira.intra.dnscost-lab.net';
const REACHED = 'nas.dnscost-lab.net';
const PRIVATE_NAMES = [SPLIT, 'x.onion', 'printer.internal', 'a.test', REACHED];
// Two flooded domains (item 4 of issue 26): one through the extension's plan, one sent to the host alone.
const FLOOD_PLAN = 'victim-plan.net';
const FLOOD_HOST = 'victim-host.net';


const udpResolver = (id: string, address: string): ResolverSpec => ({ id, name: id, endpoints: [{ transport: 'udp', address, port: 53 }] });
// Every name a resolver was asked, but the lab's own readiness probe.
const asked = (lab: LabResolver) => new Set([...lab.logs().matchAll(/dnscost-query \S+ (\S+) (\S+)/g)]
  .filter((m) => !(m[1] === READY_PROBE.type && m[2] === READY_PROBE.name))
  .map((m) => m[2]!.toLowerCase().replace(/\.$/, '')));

// Re-runs itself under `unshare --net --mount` (root) with DNSCOST_LEAK_INNER set; resolv.conf is bind-mounted in
// that mount namespace only.
if (INNER) {
  test('inside the namespace: private names reach no global resolver, by the extension\'s plan and by the host alone', { timeout: 110_000 }, async (t) => {
    const work = mkdtempSync(join(tmpdir(), 'dnscost-leak-'));
    t.onTestFinished(() => rmSync(work, { recursive: true, force: true }));
    for (const a of [PUBLIC_ADDR, PRIVATE_ADDR, CURRENT_ADDR]) execFileSync('ip', ['addr', 'add', `${a}/32`, 'dev', 'lo']);
    writeFileSync(join(work, 'resolv.conf'), `nameserver ${CURRENT_ADDR}\n`);
    execFileSync('mount', ['--bind', join(work, 'resolv.conf'), '/etc/resolv.conf']);
    // The current DNS: the public name has a global address, the split-horizon one a private one, the rest nothing.
    const current = await currentDnsServer(CURRENT_ADDR, (name) => (name === PUBLIC_NAME ? { a: '93.184.216.34' } : name === SPLIT ? { a: '10.0.0.5' } : 'nxdomain'));
    t.onTestFinished(() => {
      current.close();
    });
    const pub = await startCoreDNS({ address: PUBLIC_ADDR, ports: { dns: 53 }, logQueries: true, siteZone: { zone: 'dnscost-lab.net', a: '93.184.216.34' } });
    t.onTestFinished(() => pub.stop());
    const office = await startCoreDNS({ address: PRIVATE_ADDR, ports: { dns: 53 }, logQueries: true, siteZone: { zone: ['dnscost-lab.net', 'internal'], a: '10.0.0.5' } });
    t.onTestFinished(() => office.stop());
    // Every packet on the namespace's only interface.
    const pcap = join(work, 'capture.pcap');
    const capture = spawn('tshark', ['-i', 'lo', '-q', '-l', '-w', pcap], { stdio: ['ignore', 'ignore', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('tshark did not start capturing in 10 s')), 10_000);
      capture.stderr!.on('data', (d: Buffer) => {
        if (/Capturing on/.test(d.toString())) {
          clearTimeout(timer);
          resolve();
        }
      });
    });

    const page = pageRecord('leak', [PUBLIC_NAME, SPLIT, 'x.onion', 'printer.internal', 'a.test', REACHED].map((n, i) => pageHost(n, i * 10, n === REACHED ? { ips: ['192.168.1.20'] } : {})));
    const host = startHost();
    const run = async (id: string, req: Record<string, unknown>) => {
      host.send({ id, type: 'measure', modes: ['cold'], warmup: false, timeoutMs: 1000, ...req });
      const replies = await host.until((r) => r.id === id && (r.type === 'done' || r.type === 'error'), 30_000);
      return replies.at(-1)!;
    };

    // 1. The extension's plan for the global resolver, then the host: only the public name is asked. The extension's
    // plan (extension/src/background/measure-plan.ts) for the global resolver keeps the names it knows are private;
    // the host (a real dnscost-host process) asks the current DNS and keeps the split-horizon one.
    const plan = planMeasurement(page, [udpResolver('public', PUBLIC_ADDR)], { lab: true })!;
    assert.deepEqual(plan.request.hosts.map((h) => (h as { name: string }).name).sort(), [SPLIT, PUBLIC_NAME].sort(), 'the extension keeps what it knows is private');
    const planned = await run('planned', { ...plan.request });
    assert.equal(planned.type, 'done', JSON.stringify(planned));
    assert.deepEqual(planned.withheld, [{ name: SPLIT, reason: 'split-horizon' }], 'the host asked the current DNS and kept the split-horizon name');

    // 2. The host alone, sent every name (where the browser reached the NAS along), for the global resolver: it keeps
    // all but the public one from the global resolver.
    const all = [PUBLIC_NAME, SPLIT, 'x.onion', 'printer.internal', 'a.test', { name: REACHED, reached: ['192.168.1.20'] }];
    const alone = await run('alone', { hosts: all, resolvers: [udpResolver('public', PUBLIC_ADDR)], lab: true });
    assert.equal(alone.type, 'done', JSON.stringify(alone));
    assert.deepEqual(Object.fromEntries((alone.withheld as Array<{ name: string; reason: string }>).map((w) => [w.name, w.reason])), {
      [SPLIT]: 'split-horizon', 'x.onion': 'onion', 'printer.internal': 'special-use', 'a.test': 'special-use', [REACHED]: 'reached-non-global',
    });

    // 3. The resolver on a private address: the private names go (special-use ones under the lab setting); .onion never.
    const inside = await run('inside', { hosts: all, resolvers: [udpResolver('office', PRIVATE_ADDR)], lab: true });
    assert.equal(inside.type, 'done', JSON.stringify(inside));
    assert.deepEqual(inside.withheld, [{ name: 'x.onion', reason: 'onion' }]);

    // 4. A page of 2,000 random subdomains of one domain (a page steering dnscost users at a victim), through the
    // extension's plan, and 500 more sent to the host alone (the most a request may carry): at most NAMES_PER_DOMAIN
    // of each go anywhere, the current DNS's check included (common/name-caps.ts).
    const floodPage = pageRecord('flood', [pageHost(PUBLIC_NAME, 0), ...Array.from({ length: 2000 }, (_, i) => pageHost(`p${(i * 2654435761 >>> 0).toString(36)}.${FLOOD_PLAN}`, 1 + i))]);
    const floodPlan = planMeasurement(floodPage, [udpResolver('public', PUBLIC_ADDR)], { lab: true })!;
    // The cap's worth of the flood at most (fewer where its names look generated: one of those is the sample of all).
    const floodKept = floodPlan.request.hosts.length - 1;
    assert.ok(floodKept >= 1 && floodKept <= NAMES_PER_DOMAIN, `the plan keeps the page's name and at most the cap's worth of the flood: ${floodKept}`);
    const flooded = await run('flood-plan', { ...floodPlan.request });
    assert.equal(flooded.type, 'done', JSON.stringify(flooded).slice(0, 500));
    const floodAlone = await run('flood-alone', { hosts: Array.from({ length: 500 }, (_, i) => `h${i}.${FLOOD_HOST}`), resolvers: [udpResolver('public', PUBLIC_ADDR)], lab: true });
    assert.equal(floodAlone.type, 'done', JSON.stringify(floodAlone).slice(0, 500));
    assert.equal((floodAlone.withheld as Array<{ reason: string }>).filter((w) => w.reason === 'domain-cap').length, 500 - NAMES_PER_DOMAIN);

    assert.equal(await host.exit(), 0, host.stderr());
    // dumpcap writes its buffer out on its own schedule: give it time, then stop it and let it finish the file.
    await new Promise((r) => setTimeout(r, 1500));
    capture.kill('SIGINT');
    await new Promise((r) => capture.once('exit', r));
    await new Promise((r) => setTimeout(r, 500));

    // What each resolver was asked: the global one's own log, and the capture's questions to each address. The
    // capture: the only DNS questions 9.9.9.9 ever saw are for the public name.
    const flood = (n: string) => n.endsWith(`.${FLOOD_PLAN}`) || n.endsWith(`.${FLOOD_HOST}`);
    const pubAsked = [...asked(pub)].filter((n) => !flood(n));
    assert.deepEqual(pubAsked, [PUBLIC_NAME], `the global resolver was asked only the public name (and the flood's, below): ${pubAsked.join(', ')}`);
    const questionsTo = (address: string) => new Set(execFileSync('tshark', ['-r', pcap, '-Y', `ip.dst == ${address} && dns`, '-T', 'fields', '-e', 'dns.qry.name'], { encoding: 'utf8' })
      .split('\n').map((l) => l.trim().toLowerCase()).filter(Boolean));
    const toOffice = questionsTo(PRIVATE_ADDR);
    for (const n of [SPLIT, REACHED, 'printer.internal', 'a.test']) assert.ok(toOffice.has(n), `the private resolver was asked ${n}: ${[...toOffice].join(', ')}`);
    assert.equal(toOffice.has('x.onion'), false);
    const toPublic = [...questionsTo(PUBLIC_ADDR)].filter((n) => !flood(n));
    assert.deepEqual(toPublic, [PUBLIC_NAME], 'the capture: the only questions to the global address were for the public name (and the flood\'s)');
    // The flood, on the capture: every question for a name of either flooded domain, to any address.
    const questions = execFileSync('tshark', ['-r', pcap, '-Y', 'dns.flags.response == 0', '-T', 'fields', '-e', 'ip.dst', '-e', 'dns.qry.name'], { encoding: 'utf8' })
      .split('\n').map((l) => l.trim().toLowerCase().split('\t')).filter((f) => f.length === 2);
    for (const domain of [FLOOD_PLAN, FLOOD_HOST]) {
      const to = (address: string) => questions.filter(([dst, n]) => dst === address && n!.endsWith(`.${domain}`));
      const names = new Set(to(PUBLIC_ADDR).map(([, n]) => n));
      assert.equal(names.size, domain === FLOOD_PLAN ? floodKept : NAMES_PER_DOMAIN, `${domain}: the global resolver was asked ${names.size} of its names (cap ${NAMES_PER_DOMAIN})`);
      assert.ok(new Set(to(CURRENT_ADDR).map(([, n]) => n)).size <= NAMES_PER_DOMAIN, `${domain}: the check asked the current DNS no more than the cap`);
      console.log(`${domain}: ${to(PUBLIC_ADDR).length} questions for ${names.size} names to ${PUBLIC_ADDR}, ${to(CURRENT_ADDR).length} to the current DNS`);
    }
    // And the raw bytes of every packet to or from 9.9.9.9: no private name in DNS wire form or as text.
    const publicOnly = join(work, 'public.pcap');
    execFileSync('tshark', ['-r', pcap, '-Y', `ip.addr == ${PUBLIC_ADDR}`, '-w', publicOnly]);
    const raw = readFileSync(publicOnly);
    const wire = (n: string) => Buffer.concat([...n.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])), Buffer.from([0])]);
    assert.ok(raw.includes(wire(PUBLIC_NAME)), 'the capture holds the public name (it sees what goes to 9.9.9.9)');
    for (const n of PRIVATE_NAMES) {
      assert.equal(raw.includes(wire(n)), false, `${n} in DNS wire form in a packet to or from ${PUBLIC_ADDR}`);
      assert.equal(raw.includes(Buffer.from(n)), false, `${n} as text in a packet to or from ${PUBLIC_ADDR}`);
    }
  });
} else {
  test('private names never reach a resolver on a global address (leak matrix, in a namespace of its own)', { timeout: 130_000 }, async (t) => {
    if (process.getuid?.() !== 0) return t.skip('needs root: a network and mount namespace of its own (unshare)');
    const out = await runInNamespace(`ip link set lo up && ${vitestCommand(import.meta.url)}`, { DNSCOST_LEAK_INNER: '1' }, 120_000, ['--net', '--mount', '--propagation', 'private']);
    assert.equal(out.code, 0, out.text.slice(-8000));
  });
}
