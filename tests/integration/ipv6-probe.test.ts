// The host's IPv6 reachability probe decides as Chromium does whether a browser asks AAAA: in a namespace of the test's
// own, no IPv6 route → unreachable; a global address and a default route → reachable; only a link-local address and a
// route → unreachable. The probe's connect sends no packet; the namespace has no link to anywhere anyway.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'vitest';
import { ipv6Reachable } from '../../native-host/src/ipv6.js';
import { runInNamespace, vitestCommand } from '../support/namespace.js';

const INNER = process.env.DNSCOST_IPV6_INNER;
const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe', timeout: 5000 });

if (INNER) {
  test(`inside: ${INNER}`, async () => {
    ip('link', 'set', 'lo', 'up');
    assert.equal(await ipv6Reachable(), false, 'only loopback: no route');
    ip('link', 'add', 'lab0', 'type', 'veth', 'peer', 'name', 'lab1');
    ip('link', 'set', 'lab0', 'up');
    ip('link', 'set', 'lab1', 'up');
    // Only a link-local address: a route, but a source address Chromium does not count.
    ip('-6', 'addr', 'add', 'fe80::1/64', 'dev', 'lab0', 'nodad');
    ip('-6', 'route', 'add', 'default', 'dev', 'lab0');
    assert.equal(await ipv6Reachable(), false, 'link-local source');
    ip('-6', 'addr', 'add', '2001:db8::1/64', 'dev', 'lab0', 'nodad');
    assert.equal(await ipv6Reachable(), true, 'a global address and a default route');
  });
} else {
  test('the IPv6 probe: unreachable without a route or with only link-local, reachable with a global address (own namespace)', async (t) => {
    if (process.getuid?.() !== 0) return t.skip('needs root: a network namespace (unshare --net)');
    const out = await runInNamespace(vitestCommand(import.meta.url), { DNSCOST_IPV6_INNER: 'probe' }, 60_000);
    assert.equal(out.code, 0, out.text.slice(-4000));
  });
}
