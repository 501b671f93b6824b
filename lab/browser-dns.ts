// Real Chromium and Firefox resolving through a chosen DNS path, for the lab's measurements of browsers themselves
// (which record types they ask, how long they keep an encrypted connection): the machine's resolver from
// /etc/resolv.conf (Do53 to a resolver, or a local stub that goes on over DoT or DoQ), Chromium's DoH (secure mode
// by managed policy) or Firefox's TRR (mode 3 by prefs), with the lab CA trusted by each browser.
//
// Call it inside a private mount namespace whose /etc/resolv.conf and /etc/chromium are this run's own (bind
// mounts: see isolateDns), inside a network namespace with nothing beyond the lab's addresses (isolatedNetwork), as
// root. The machine's own files are never written.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';
import { certDb, findBrowser, type BrowserName } from './browsers.js';

export { certDb };

/** How the browser resolves names: the system's resolver (resolv.conf), or its own encrypted DNS to the lab. */
export type BrowserDnsPath = 'system' | 'doh';
/** Every path, in the order reports list them. */
export const BROWSER_DNS_PATHS: readonly BrowserDnsPath[] = ['system', 'doh'];

/** The lab's addresses in an isolated network: the browser's machine and the lab's servers (in the lab certificate). */
export const LAB_CLIENT = '192.0.2.1';
export const LAB_SERVER = '192.0.2.2';
export const LAB_CLIENT6 = '2001:db8::1';
export const LAB_SERVER6 = '2001:db8::2';

/**
 * Gives the current network namespace (a fresh one: `unshare --net`) an interface holding the lab's client and
 * server addresses and a default route through it, so browsers see a network: IPv4 always, IPv6 with a global
 * address and route only when `ipv6` (Chromium asks AAAA only when an IPv6 route to the internet seems to exist).
 */
export function isolatedNetwork(ipv6: boolean): void {
  const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe', timeout: 5000 });
  ip('link', 'set', 'lo', 'up');
  // A veth pair with both ends here (this kernel has no dummy interfaces): an interface that is up, not loopback.
  ip('link', 'add', 'lab0', 'type', 'veth', 'peer', 'name', 'lab1');
  ip('link', 'set', 'lab0', 'up');
  ip('link', 'set', 'lab1', 'up');
  ip('addr', 'add', `${LAB_CLIENT}/24`, 'dev', 'lab0');
  ip('addr', 'add', `${LAB_SERVER}/24`, 'dev', 'lab0');
  ip('route', 'add', 'default', 'dev', 'lab0');
  if (ipv6) {
    ip('-6', 'addr', 'add', `${LAB_CLIENT6}/64`, 'dev', 'lab0', 'nodad');
    ip('-6', 'addr', 'add', `${LAB_SERVER6}/64`, 'dev', 'lab0', 'nodad');
    ip('-6', 'route', 'add', 'default', 'dev', 'lab0');
  }
}

/**
 * Firefox's enterprise policy in the lab: no Remote Settings. Firefox polls firefox.settings.services.mozilla.com;
 * the lab refuses that name, and Firefox then retried at every new tab (three lookups per load, 0.1–0.3 s before its
 * navigation: bench/validate's per-visit `background` log), which opened the stub's or the TRR connection a cold load
 * was meant to open. A person's Firefox resolves the name and polls rarely. (A release build ignores the
 * services.settings.server pref, so the policy is the way.)
 */
export const FIREFOX_LAB_POLICY = { policies: { DisableRemoteSettingsAndAcceptSecurityConsequences: true } };

/**
 * Gives the current mount namespace (a private one: `unshare --mount --propagation private`) its own
 * /etc/resolv.conf, /etc/chromium (a copy, for managed policy) and Firefox distribution folder (a copy with the lab's
 * policies.json), under `work`; returns where they are.
 */
export function isolateDns(work: string): { resolvConf: string; chromiumPolicy: string; firefoxPolicies: string | null } {
  const resolvConf = join(work, 'resolv.conf');
  writeFileSync(resolvConf, `nameserver ${LAB_SERVER}\n`);
  execFileSync('mount', ['--bind', resolvConf, '/etc/resolv.conf'], { timeout: 5000 });
  const etc = join(work, 'etc-chromium');
  mkdirSync(join(etc, 'policies', 'managed'), { recursive: true });
  if (existsSync('/etc/chromium/master_preferences')) cpSync('/etc/chromium/master_preferences', join(etc, 'master_preferences'));
  mkdirSync('/etc/chromium', { recursive: true });
  execFileSync('mount', ['--bind', etc, '/etc/chromium'], { timeout: 5000 });
  const firefox = findBrowser('firefox');
  let firefoxPolicies: string | null = null;
  if (firefox) {
    // Firefox reads policies.json from the distribution folder beside its binary (a symlink on Debian: the bind
    // mount lands on its target; an install without one gets an empty folder, the only file of the machine written).
    const linked = join(dirname(realpathSync(firefox)), 'distribution');
    if (!existsSync(linked)) mkdirSync(linked, { recursive: true });
    const dist = realpathSync(linked);
    const own = join(work, 'firefox-distribution');
    cpSync(dist, own, { recursive: true });
    writeFileSync(join(own, 'policies.json'), JSON.stringify(FIREFOX_LAB_POLICY));
    execFileSync('mount', ['--bind', own, dist], { timeout: 5000 });
    firefoxPolicies = join(dist, 'policies.json');
  }
  return { resolvConf: '/etc/resolv.conf', chromiumPolicy: '/etc/chromium/policies/managed/dnscost-lab.json', firefoxPolicies };
}

/**
 * The name Chromium's DoH probes ask (A, over DoH). A resolver that refuses it fails every probe, and Chromium then
 * probes again and again, about every second, over the session a page would find cold: the lab's resolver for a
 * browser answers it (zoneWithProbe), as a person's resolver does once.
 */
export const CHROMIUM_DOH_PROBE_NAME = 'www.gstatic.com';

/** A site zone (startCoreDNS's siteZone) that also answers Chromium's DoH probe. */
export function zoneWithProbe<Z extends { zone: string | string[] }>(z: Z): Z {
  return { ...z, zone: [...new Set([...[z.zone].flat(), CHROMIUM_DOH_PROBE_NAME])] };
}

/** Names the machine's resolver (what `system` browsers and the stubs' clients use): written into the bind mount. */
export function setSystemResolver(address: string): void {
  writeFileSync('/etc/resolv.conf', `nameserver ${address}\n`);
}

/** How one browser should resolve, and where the lab's DoH server is. */
export interface BrowserDnsOptions {
  path: BrowserDnsPath;
  /** The lab CA (PEM file) the browser trusts for the DoH server (and any https page). */
  caFile: string;
  /** The DoH server, `https://ADDRESS/dns-query` (its certificate names the address): Chromium asks it with GET (its
   * template gets `{?dns}`), Firefox with POST, as each does by default. */
  dohUrl: string;
  /** Profiles and HOMEs go under here. */
  workDir: string;
  /** Extra Firefox prefs or Chromium switches for one experiment. */
  firefoxPrefs?: Record<string, unknown>;
  chromiumArgs?: string[];
  /** Extra environment for the browser (Firefox's MOZ_LOG, for one). */
  env?: Record<string, string>;
}

/** A launched browser and how to close it (its profile and HOME are removed). */
export interface DnsBrowser {
  name: BrowserName;
  browser: Browser;
  close(): Promise<void>;
}

/** Launches `name` headless, resolving as `o.path` says; Chromium's DoH policy is written into the private /etc/chromium. */
export async function launchDnsBrowser(name: BrowserName, o: BrowserDnsOptions): Promise<DnsBrowser> {
  const executablePath = findBrowser(name);
  if (!executablePath) throw new Error(`${name} is not installed: scripts/setup installs it`);
  const work = mkdtempSync(join(o.workDir || tmpdir(), `${name}-`));
  const home = join(work, 'home');
  const profile = join(work, 'profile');
  mkdirSync(profile, { recursive: true });
  const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_CACHE_HOME: join(home, '.cache'), ...o.env };
  let browser: Browser;
  if (name === 'chromium') {
    // Chromium on Linux trusts roots in the user's NSS db.
    certDb(join(home, '.pki', 'nssdb'), o.caFile);
    const policy = '/etc/chromium/policies/managed/dnscost-lab.json';
    if (o.path === 'doh') writeFileSync(policy, JSON.stringify({ DnsOverHttpsMode: 'secure', DnsOverHttpsTemplates: `${o.dohUrl}{?dns}` }));
    else rmSync(policy, { force: true });
    browser = await puppeteer.launch({
      browser: 'chrome', executablePath, headless: true, userDataDir: profile, env, timeout: 60_000, protocolTimeout: 120_000,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disk-cache-size=1', '--disable-features=OptimizationHints,MediaRouter', ...(o.chromiumArgs ?? [])],
    });
  } else {
    // Firefox keeps trust per profile: the lab CA goes into the profile's own certificate db.
    certDb(profile, o.caFile);
    const trr = o.path === 'doh'
      ? {
          'network.trr.mode': 3,
          'network.trr.uri': o.dohUrl,
          'network.trr.custom_uri': o.dohUrl,
          // The URI names an address, so no bootstrap lookup; no confirmation query (mode 3 skips it anyway).
          'network.trr.confirmationNS': 'skip',
          'network.trr.excluded-domains': '',
        }
      : { 'network.trr.mode': 5 };
    browser = await puppeteer.launch({
      browser: 'firefox', executablePath, headless: true, userDataDir: profile, env, timeout: 60_000, protocolTimeout: 120_000,
      extraPrefsFirefox: {
        ...trr,
        // No background lookups of its own beyond what the experiment asks (connectivity and captive-portal checks).
        'network.connectivity-service.enabled': false,
        'network.captive-portal-service.enabled': false,
        'network.dns.disablePrefetch': true,
        ...(o.firefoxPrefs ?? {}),
      },
    });
  }
  return {
    name,
    browser,
    close: async () => {
      await browser.close().catch(() => {});
      rmSync(work, { recursive: true, force: true });
    },
  };
}
