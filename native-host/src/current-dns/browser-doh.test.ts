// The browser that started the host and its DNS over HTTPS: found by walking up from the host's parent (through a
// launcher script or cmd.exe) on Linux, macOS and Windows; Chromium's policy, Local State, default and automatic
// upgrade; Firefox's profile (-profile, -P, the held .parentlock, profiles.ini), prefs.js/user.js, Mozilla's rollout
// and the DNSOverHTTPS policy. Every file is a fixture of the real format; nothing here reads this machine.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { proxyFromInternetSettings } from './browser-proxy.js';
import { test } from 'vitest';
import { parseReply, PROTOCOL_VERSION, type BrowserDoh, type CurrentDns } from '../../../common/schema.js';
import { browserOf, discoverBrowserDoh, findLaunchingBrowser, MAX_ANCESTORS, windowsWalkScript, type BrowserDohDeps } from './browser-doh.js';
import { firefoxIniProfile, flagValue, macWords, parsePrefsJs, windowsWords } from './browser-prefs.js';
import { canonicalIp, chromiumUpgrade } from './doh-upgrade.js';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

const HOME = '/home/ada';
/** A Linux process: its executable, argv, parent, and the files its descriptors name. */
interface Proc {
  exe: string;
  argv: string[];
  ppid: number;
  fds?: string[];
}

/** A machine made of files, symbolic links, processes and command outputs. */
function machine(o: { platform?: NodeJS.Platform; files?: Record<string, string>; procs?: Record<number, Proc>; commands?: Record<string, string>; env?: Record<string, string>; home?: string; ppid?: number }): BrowserDohDeps {
  const files: Record<string, string> = { ...o.files };
  const links: Record<string, string> = {};
  for (const [pid, p] of Object.entries(o.procs ?? {})) {
    files[`/proc/${pid}/stat`] = `${pid} (${p.exe.split('/').pop()!.slice(0, 15)}) S ${p.ppid} ${pid} ${pid} 0 -1 4194560 2160 0 0 0 3 1 0 0 20 0 1 0 9000 2400000 900`;
    files[`/proc/${pid}/cmdline`] = `${p.argv.join('\0')}\0`;
    links[`/proc/${pid}/exe`] = p.exe;
    (p.fds ?? []).forEach((target, i) => (links[`/proc/${pid}/fd/${i + 3}`] = target));
  }
  const under = (dir: string) => [...Object.keys(files), ...Object.keys(links)].filter((p) => p.startsWith(`${dir}/`) && !p.slice(dir.length + 1).includes('/')).map((p) => p.slice(dir.length + 1)).sort();
  return {
    platform: o.platform ?? 'linux',
    read: (p) => files[p] ?? null,
    list: under,
    run: async (cmd, args) => o.commands?.[[cmd, ...args].join(' ')] ?? null,
    readlink: (p) => links[p] ?? null,
    env: o.env ?? {},
    home: o.home ?? HOME,
    ppid: o.ppid ?? 4100,
  };
}

/** The installed launcher (a /bin/sh script) between the browser (pid 4000) and the host. */
const LAUNCHER: Proc = { exe: '/usr/bin/dash', argv: ['/bin/sh', `${HOME}/.local/share/dnscost/dnscost-host`, 'chrome-extension://abcdefghijklmnopabcdefghijklmnop/'], ppid: 4000 };
const CHROMIUM: Proc = { exe: '/usr/lib/chromium/chromium', argv: ['/usr/lib/chromium/chromium', '--user-data-dir=/tmp/profile', '--no-first-run', '--headless'], ppid: 1 };
const FIREFOX: Proc = { exe: '/usr/lib/firefox-esr/firefox-esr', argv: ['/usr/lib/firefox-esr/firefox-esr', '--marionette', '--profile', '/tmp/ff'], ppid: 1 };
const withBrowser = (browser: Proc, files: Record<string, string> = {}, extra: Partial<Parameters<typeof machine>[0]> = {}) => machine({ procs: { 4100: LAUNCHER, 4000: browser }, files, ...extra });
const dns = (servers: string[], stub: string | null = null): CurrentDns => ({
  source: 'test', servers: servers.map((address) => ({ address, port: 53 })), search: [], stub: stub ? { address: stub, software: 'systemd-resolved' } : null, encrypted: null, description: 'x',
});

test('formats: prefs.js, profiles.ini, command lines; the upgrade table by address in any spelling', () => {
  const prefs = parsePrefsJs(fixture('firefox-prefs-trr3.js') + 'user_pref("a.b", true);\nuser_pref("esc\\"aped", "x\\"y");\nuser_pref("broken", );\nuser_pref("network.trr.mode", 2);\n');
  assert.equal(prefs.get('network.trr.mode'), 2, 'a later line wins');
  assert.equal(prefs.get('network.trr.uri'), 'https://dns.example.net/dns-query');
  assert.equal(prefs.get('esc"aped'), 'x"y');
  assert.equal(prefs.get('a.b'), true);
  assert.equal(prefs.has('broken'), false);
  assert.deepEqual(firefoxIniProfile(fixture('firefox-profiles.ini')), { path: '8f2kd0ab.default-release', relative: true }, "the install's default");
  assert.deepEqual(firefoxIniProfile(fixture('firefox-profiles.ini'), 'default'), { path: '3xk1w9pq.default', relative: true });
  assert.deepEqual(firefoxIniProfile('[Profile0]\nName=a\nIsRelative=0\nPath=/srv/ff/a\nDefault=1\n'), { path: '/srv/ff/a', relative: false });
  assert.equal(firefoxIniProfile('[General]\nVersion=2\n'), null);

  assert.equal(flagValue(['--user-data-dir=/a b'], 'user-data-dir'), '/a b');
  assert.equal(flagValue(['-profile', '/p'], 'profile'), '/p');
  assert.equal(flagValue(['-profile /Users/a/p q'], 'profile'), '/Users/a/p q', "macOS's joined words");
  assert.equal(flagValue(['-p', 'work'], 'P'), 'work', "Firefox's flags ignore case");
  assert.equal(flagValue(['--profile', '--headless'], 'profile'), null, 'a flag is not a value');
  assert.deepEqual(macWords('/Applications/Google Chrome.app/Contents/MacOS/Google Chrome --user-data-dir=/Users/a/My Dir --flag'), {
    exe: '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome', args: ['--user-data-dir=/Users/a/My Dir', '--flag'],
  });
  assert.deepEqual(macWords('/bin/sh /Users/a/dnscost-host x'), { exe: '/bin/sh', args: ['/Users/a/dnscost-host x'] });
  assert.deepEqual(windowsWords('"C:\\Program Files\\Mozilla Firefox\\firefox.exe" -profile "C:\\Users\\a\\ff x" -foreground'), ['C:\\Program Files\\Mozilla Firefox\\firefox.exe', '-profile', 'C:\\Users\\a\\ff x', '-foreground']);

  assert.equal(canonicalIp('2606:4700:4700:0:0:0:0:1111%eth0'), canonicalIp('2606:4700:4700::1111'));
  assert.deepEqual(chromiumUpgrade(['192.168.1.1', '8.8.4.4']), { from: '8.8.4.4', templates: ['https://dns.google/dns-query{?dns}'] });
  assert.deepEqual(chromiumUpgrade(['2606:4700:4700:0::1001'])?.templates, ['https://chrome.cloudflare-dns.com/dns-query']);
  assert.equal(chromiumUpgrade(['9.9.9.9', '149.112.112.112']), null, "Quad9's filtered service is off by default in Chromium's table");
  assert.deepEqual(chromiumUpgrade(['209.18.47.61'])?.templates.length, 2, 'both Spectrum servers');
  assert.equal(chromiumUpgrade([]), null);

  assert.deepEqual(['/usr/lib/chromium/chromium', '/opt/google/chrome/chrome', 'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe', '/home/a/out/Release/chrome', '/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge', '/opt/brave.com/brave/brave', '/usr/lib/firefox/firefox', '/usr/bin/node', '/bin/bash', 'C:\\Windows\\System32\\cmd.exe'].map((e) => browserOf(e)?.product ?? null),
    ['Chromium', 'Google Chrome', 'Google Chrome', 'Chromium', 'Microsoft Edge', 'Brave', 'Firefox', null, null, null]);
});

test('Linux: through the launcher script to Chromium; its Local State says secure', async () => {
  const doh = await discoverBrowserDoh(dns(['192.168.1.1']), withBrowser(CHROMIUM, { '/tmp/profile/Local State': fixture('chromium-local-state-secure.json') }));
  assert.deepEqual(doh, {
    browser: 'chromium', product: 'Chromium', mode: 'secure', active: true, templates: ['https://dns.quad9.net/dns-query', 'https://dns11.quad9.net/dns-query'],
    source: '/tmp/profile/Local State', setBy: 'settings', fallback: false, upgradedFrom: null,
  } satisfies BrowserDoh);
  // The browser as the direct parent (a launcher that execs), and a launched-from-a-terminal host.
  assert.equal((await findLaunchingBrowser(machine({ procs: { 4100: CHROMIUM } })))?.process.pid, 4100);
  const terminal = machine({ procs: { 4100: { exe: '/usr/bin/bash', argv: ['-bash'], ppid: 3000 }, 3000: { exe: '/usr/sbin/sshd', argv: ['sshd: ada@pts/0'], ppid: 1 } } });
  assert.equal(await discoverBrowserDoh(dns(['8.8.8.8']), terminal), null);
  // A browser further up than MAX_ANCESTORS did not start this host.
  const deep: Record<number, Proc> = { 4000: CHROMIUM };
  for (let i = 0; i < MAX_ANCESTORS; i++) deep[4100 + i] = { ...LAUNCHER, ppid: i === MAX_ANCESTORS - 1 ? 4000 : 4100 + i + 1 };
  assert.equal(await findLaunchingBrowser(machine({ procs: deep })), null);
});

test("Chromium: the managed policy overrides Local State (the last file by name wins); the recommended one only where Local State is silent", async () => {
  const localState = { '/tmp/profile/Local State': fixture('chromium-local-state-secure.json') };
  const off = await discoverBrowserDoh(dns([]), withBrowser(CHROMIUM, { ...localState, '/etc/chromium/policies/managed/10-doh.json': fixture('chromium-policy-off.json') }));
  assert.equal(off?.mode, 'off');
  assert.equal(off?.active, false);
  assert.equal(off?.source, '/etc/chromium/policies/managed/10-doh.json');
  assert.equal(off?.setBy, 'policy');
  const corp = await discoverBrowserDoh(dns([]), withBrowser(CHROMIUM, {
    ...localState, '/etc/chromium/policies/managed/10-doh.json': fixture('chromium-policy-off.json'), '/etc/chromium/policies/managed/20-corp.json': fixture('chromium-policy-templates.json'),
  }));
  assert.deepEqual([corp?.mode, corp?.active, corp?.fallback, corp?.templates, corp?.source], ['automatic', true, true, ['https://doh.corp.example/dns-query{?dns}'], '/etc/chromium/policies/managed/20-corp.json']);
  const recommended = { '/etc/chromium/policies/recommended/doh.json': fixture('chromium-policy-off.json') };
  assert.equal((await discoverBrowserDoh(dns([]), withBrowser(CHROMIUM, { ...localState, ...recommended })))?.mode, 'secure', 'the person overrides a recommendation');
  assert.equal((await discoverBrowserDoh(dns([]), withBrowser(CHROMIUM, recommended)))?.mode, 'off');
  // Chrome reads its own policy directory and, without --user-data-dir, its default user-data dir.
  const chrome: Proc = { exe: '/opt/google/chrome/chrome', argv: ['/opt/google/chrome/chrome'], ppid: 1 };
  const g = await discoverBrowserDoh(dns([]), withBrowser(chrome, { '/cfg/google-chrome/Local State': fixture('chromium-local-state-secure.json') }, { env: { XDG_CONFIG_HOME: '/cfg' } }));
  assert.deepEqual([g?.product, g?.mode, g?.source], ['Google Chrome', 'secure', '/cfg/google-chrome/Local State']);
  const gp = await discoverBrowserDoh(dns([]), withBrowser(chrome, { [`${HOME}/.config/google-chrome/Local State`]: fixture('chromium-local-state-secure.json'), '/etc/opt/chrome/policies/managed/p.json': fixture('chromium-policy-off.json') }));
  assert.equal(gp?.mode, 'off');
});

test("Chromium's proxy (it says nothing per request): its policy, else its command line, else the system's settings; auto-detection is not counted", async () => {
  const policy = (o: object) => ({ '/etc/chromium/policies/managed/p.json': JSON.stringify(o) });
  const flagged: Proc = { ...CHROMIUM, argv: [...CHROMIUM.argv, '--proxy-server=http://10.0.0.8:3128'] };
  const proxyOf = async (browser: Proc, files: Record<string, string> = {}, extra: Partial<Parameters<typeof machine>[0]> = {}) =>
    (await discoverBrowserDoh(dns([]), withBrowser(browser, files, extra)))?.proxy ?? null;
  assert.equal(await proxyOf(CHROMIUM), null, 'direct: no proxy field at all');
  assert.equal(await proxyOf(flagged), 'the command line (--proxy-server)');
  assert.equal(await proxyOf({ ...CHROMIUM, argv: [...CHROMIUM.argv, '--proxy-pac-url=http://wpad.corp/p.pac'] }), 'the command line (--proxy-pac-url)');
  assert.equal(await proxyOf(CHROMIUM, policy({ ProxyMode: 'fixed_servers', ProxyServer: '10.0.0.8:3128' })), '/etc/chromium/policies/managed/p.json (ProxyMode fixed_servers)');
  assert.equal(await proxyOf(CHROMIUM, policy({ ProxySettings: { ProxyMode: 'pac_script', ProxyPacUrl: 'http://x/p.pac' } })), '/etc/chromium/policies/managed/p.json (ProxyMode pac_script)');
  assert.equal(await proxyOf(flagged, policy({ ProxyMode: 'direct' })), null, 'the policy beats the command line');
  assert.equal(await proxyOf(CHROMIUM, policy({ ProxyMode: 'auto_detect' })), null, 'auto-detection is not counted');
  assert.equal(await proxyOf(CHROMIUM, {}, { env: { https_proxy: 'http://10.0.0.8:3128' } }), 'the environment (https_proxy)');
  assert.equal(await proxyOf({ ...CHROMIUM, argv: [...CHROMIUM.argv, '--no-proxy-server'] }, {}, { env: { http_proxy: 'http://x:1' } }), null);
  const gnome = { env: { XDG_CURRENT_DESKTOP: 'ubuntu:GNOME', http_proxy: 'http://x:1' } };
  assert.equal(await proxyOf(CHROMIUM, {}, { ...gnome, commands: { 'gsettings get org.gnome.system.proxy mode': "'none'\n" } }), null, "GNOME's own setting wins over the environment");
  assert.equal(await proxyOf(CHROMIUM, {}, { ...gnome, commands: { 'gsettings get org.gnome.system.proxy mode': "'manual'\n" } }), "GNOME's proxy settings (manual)");
  // macOS and Windows: the system's settings.
  const mac: Proc = { exe: '/Applications/Chromium.app/Contents/MacOS/Chromium', argv: ['/Applications/Chromium.app/Contents/MacOS/Chromium'], ppid: 1 };
  const macDeps = (scutil: string) => machine({ platform: 'darwin', commands: { 'ps -o ppid=,command= -p 4100': `4000 ${mac.exe}`, 'ps -o ppid=,command= -p 4000': `1 ${mac.exe}`, 'scutil --proxy': scutil } });
  assert.equal((await discoverBrowserDoh(dns([]), macDeps('<dictionary> {\n  HTTPEnable : 0\n  HTTPSEnable : 1\n  HTTPSProxy : 10.0.0.8\n}\n')))?.proxy, "macOS's proxy settings (HTTPSEnable)");
  assert.equal((await discoverBrowserDoh(dns([]), macDeps('<dictionary> {\n  HTTPEnable : 0\n  ExceptionsList : <array> {\n  }\n}\n')))?.proxy, undefined);
  assert.deepEqual(proxyFromInternetSettings('    ProxyEnable    REG_DWORD    0x1\n'), { proxy: "Windows' Internet Settings (ProxyEnable)" });
  assert.deepEqual(proxyFromInternetSettings('    ProxyEnable    REG_DWORD    0x0\n    AutoDetect    REG_DWORD    0x1\n'), 'direct', 'auto-detection is not counted');
  assert.deepEqual(proxyFromInternetSettings('    ProxyEnable    REG_DWORD    0x0\n    AutoConfigURL    REG_SZ    http://wpad/p.pac\n'), { proxy: "Windows' Internet Settings (AutoConfigURL)" });
});

test("Chromium's default is automatic: active only when a DNS server it sees is in its upgrade table", async () => {
  const google = await discoverBrowserDoh(dns(['8.8.8.8', '8.8.4.4']), withBrowser(CHROMIUM));
  assert.deepEqual(google, {
    browser: 'chromium', product: 'Chromium', mode: 'automatic', active: true, templates: ['https://dns.google/dns-query{?dns}'],
    source: 'default', setBy: 'default', fallback: true, upgradedFrom: '8.8.8.8',
  } satisfies BrowserDoh);
  const home = await discoverBrowserDoh(dns(['192.168.1.1']), withBrowser(CHROMIUM));
  assert.deepEqual([home?.mode, home?.active, home?.templates, home?.upgradedFrom], ['automatic', false, [], null]);
  const stub = await discoverBrowserDoh(dns(['8.8.8.8'], '127.0.0.53'), withBrowser(CHROMIUM));
  assert.equal(stub?.active, false, 'behind a local stub Chromium sees the stub, not its upstreams');
  assert.equal((await discoverBrowserDoh(null, withBrowser(CHROMIUM)))?.active, false, 'no current DNS known: no upgrade claimed');
  const automatic = { '/tmp/profile/Local State': JSON.stringify({ dns_over_https: { mode: 'automatic', templates: '' } }) };
  const fromState = await discoverBrowserDoh(Promise.resolve(dns(['1.1.1.1'])), withBrowser(CHROMIUM, automatic));
  assert.deepEqual([fromState?.active, fromState?.source, fromState?.upgradedFrom], [true, '/tmp/profile/Local State', '1.1.1.1']);
});

test('Firefox: -profile, its prefs.js (mode 3 and a server), user.js over prefs.js; Mozilla\'s rollout when the mode is 0', async () => {
  const prefs = { '/tmp/ff/prefs.js': fixture('firefox-prefs-trr3.js') };
  const ff = await discoverBrowserDoh(dns(['8.8.8.8']), withBrowser(FIREFOX, prefs));
  assert.deepEqual(ff, {
    browser: 'firefox', product: 'Firefox', mode: 'secure', active: true, templates: ['https://dns.example.net/dns-query'],
    source: '/tmp/ff/prefs.js', setBy: 'settings', fallback: false, upgradedFrom: null,
  } satisfies BrowserDoh);
  const user = await discoverBrowserDoh(null, withBrowser(FIREFOX, { ...prefs, '/tmp/ff/user.js': 'user_pref("network.trr.mode", 5);\n' }));
  assert.deepEqual([user?.mode, user?.active, user?.source, user?.templates], ['off', false, '/tmp/ff/user.js', []]);
  const first = await discoverBrowserDoh(null, withBrowser(FIREFOX, { '/tmp/ff/prefs.js': 'user_pref("network.trr.mode", 2);\n' }));
  assert.deepEqual([first?.mode, first?.active, first?.fallback, first?.templates], ['automatic', true, true, []], "Firefox's own default server is not guessed");
  const reserved = await discoverBrowserDoh(null, withBrowser(FIREFOX, { '/tmp/ff/prefs.js': 'user_pref("network.trr.mode", 1);\n' }));
  assert.equal(reserved?.mode, 'off', 'the retired race mode counts as off, as Firefox treats it');
  const rollout = await discoverBrowserDoh(null, withBrowser(FIREFOX, { '/tmp/ff/prefs.js': fixture('firefox-prefs-rollout.js') }));
  assert.deepEqual([rollout?.mode, rollout?.active, rollout?.setBy, rollout?.templates], ['automatic', true, 'rollout', ['https://mozilla.cloudflare-dns.com/dns-query']]);
  const none = await discoverBrowserDoh(null, withBrowser(FIREFOX));
  assert.deepEqual([none?.mode, none?.active, none?.source, none?.setBy], ['off', false, 'default', 'default']);
});

test('Firefox: the DNSOverHTTPS policy (Enabled, Fallback false → DoH only); locked it beats the person, unlocked it is only the default', async () => {
  const prefs = { '/tmp/ff/prefs.js': fixture('firefox-prefs-trr3.js') };
  const policy = fixture('firefox-policies-doh-only.json');
  const locked = await discoverBrowserDoh(null, withBrowser(FIREFOX, { ...prefs, '/etc/firefox/policies/policies.json': policy }));
  assert.deepEqual(locked, {
    browser: 'firefox', product: 'Firefox', mode: 'secure', active: true, templates: ['https://doh.corp.example/dns-query'],
    source: '/etc/firefox/policies/policies.json', setBy: 'policy', fallback: false, upgradedFrom: null,
  } satisfies BrowserDoh);
  const unlocked = policy.replace('"Locked": true', '"Locked": false');
  const person = await discoverBrowserDoh(null, withBrowser(FIREFOX, { ...prefs, '/usr/lib/firefox-esr/distribution/policies.json': unlocked }));
  assert.deepEqual([person?.source, person?.templates], ['/tmp/ff/prefs.js', ['https://dns.example.net/dns-query']], "the person's own prefs override a policy's defaults");
  const byDefault = await discoverBrowserDoh(null, withBrowser(FIREFOX, { '/usr/lib/firefox-esr/distribution/policies.json': unlocked.replace('"Fallback": false', '"Fallback": true') }));
  assert.deepEqual([byDefault?.mode, byDefault?.fallback, byDefault?.source], ['automatic', true, '/usr/lib/firefox-esr/distribution/policies.json'], 'beside the executable');
  const disabled = await discoverBrowserDoh(null, withBrowser(FIREFOX, { '/etc/firefox/policies/policies.json': '{"policies": {"DNSOverHTTPS": {"Enabled": false}}}', '/tmp/ff/prefs.js': fixture('firefox-prefs-rollout.js') }));
  assert.deepEqual([disabled?.mode, disabled?.active], ['automatic', true], "unlocked, Enabled false is Firefox's default; the rollout's mode still counts since the person set mode 0");
  const disabledLocked = await discoverBrowserDoh(null, withBrowser(FIREFOX, { '/etc/firefox/policies/policies.json': '{"policies": {"DNSOverHTTPS": {"Enabled": false, "Locked": true}}}', '/tmp/ff/prefs.js': fixture('firefox-prefs-trr3.js') }));
  assert.deepEqual([disabledLocked?.mode, disabledLocked?.setBy], ['off', 'policy']);
});

test("Firefox's profile without -profile: the one whose .parentlock it holds open, else profiles.ini's default (or -P NAME)", async () => {
  const root = `${HOME}/.mozilla/firefox`;
  const bare: Proc = { exe: '/usr/lib/firefox/firefox', argv: ['/usr/lib/firefox/firefox'], ppid: 1 };
  const files = {
    [`${root}/profiles.ini`]: fixture('firefox-profiles.ini'),
    [`${root}/8f2kd0ab.default-release/prefs.js`]: fixture('firefox-prefs-rollout.js'),
    [`${root}/3xk1w9pq.default/prefs.js`]: fixture('firefox-prefs-trr3.js'),
    [`${root}/w0rk.work/prefs.js`]: 'user_pref("network.trr.mode", 3);\nuser_pref("network.trr.uri", "https://doh.work.example/q");\n',
  };
  const ini = await discoverBrowserDoh(null, withBrowser(bare, files));
  assert.equal(ini?.source, `${root}/8f2kd0ab.default-release/prefs.js`, "the [Install…] section's default");
  const named = await discoverBrowserDoh(null, withBrowser({ ...bare, argv: [...bare.argv, '-P', 'default'] }, files));
  assert.equal(named?.source, `${root}/3xk1w9pq.default/prefs.js`);
  const held = await discoverBrowserDoh(null, withBrowser({ ...bare, fds: ['/dev/null', `${root}/w0rk.work/cookies.sqlite`, `${root}/w0rk.work/.parentlock`] }, files));
  assert.deepEqual([held?.source, held?.templates], [`${root}/w0rk.work/prefs.js`, ['https://doh.work.example/q']]);
  const marked = await discoverBrowserDoh(null, withBrowser(bare, { ...files, [`${root}/profiles.ini`]: fixture('firefox-profiles.ini').replace(/\[Install[^]*$/, '') }));
  assert.equal(marked?.source, `${root}/3xk1w9pq.default/prefs.js`, 'no install section: the profile marked Default=1');
});

test('macOS through ps and Windows through one PowerShell walk (cmd.exe between), with their default paths and policy keys', async () => {
  const ps = (pid: number) => `ps -o ppid=,command= -p ${pid}`;
  const mac = machine({
    platform: 'darwin', home: '/Users/ada', ppid: 700,
    commands: {
      [ps(700)]: '  650 /bin/sh /Users/ada/Library/Application Support/dnscost/dnscost-host chrome-extension://x/\n',
      [ps(650)]: '    1 /Applications/Google Chrome.app/Contents/MacOS/Google Chrome --user-data-dir=/Users/ada/Chrome Test --flag-switches-begin\n',
    },
    files: { '/Users/ada/Chrome Test/Local State': fixture('chromium-local-state-secure.json') },
  });
  const chrome = await discoverBrowserDoh(null, mac);
  assert.deepEqual([chrome?.product, chrome?.mode, chrome?.source], ['Google Chrome', 'secure', '/Users/ada/Chrome Test/Local State']);
  const support = '/Users/ada/Library/Application Support/Firefox';
  const macFirefox = machine({
    platform: 'darwin', home: '/Users/ada', ppid: 700,
    commands: { [ps(700)]: '  600 /Applications/Firefox.app/Contents/MacOS/firefox -foreground\n' },
    files: {
      [`${support}/profiles.ini`]: '[Profile0]\nName=default-release\nIsRelative=1\nPath=Profiles/abc.default-release\nDefault=1\n',
      [`${support}/Profiles/abc.default-release/prefs.js`]: 'user_pref("network.trr.mode", 0);\n',
      '/Applications/Firefox.app/Contents/Resources/distribution/policies.json': fixture('firefox-policies-doh-only.json'),
    },
  });
  const ff = await discoverBrowserDoh(null, macFirefox);
  assert.deepEqual([ff?.mode, ff?.source], ['secure', '/Applications/Firefox.app/Contents/Resources/distribution/policies.json']);

  const walk = (lines: object[]) => lines.map((l) => JSON.stringify(l)).join('\r\n') + '\r\n';
  const chromeExe = 'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe';
  const win = (commands: Record<string, string>, files: Record<string, string> = {}) => machine({ platform: 'win32', home: 'C:\\Users\\ada', ppid: 900, env: { LOCALAPPDATA: 'C:\\Users\\ada\\AppData\\Local' }, commands, files });
  const psWalk = `powershell -NoProfile -NonInteractive -Command ${windowsWalkScript(900)}`;
  const chain = walk([
    { pid: 900, ppid: 800, exe: 'C:\\Windows\\System32\\cmd.exe', cmd: 'C:\\Windows\\system32\\cmd.exe /d /s /c ""C:\\Users\\ada\\AppData\\Local\\dnscost\\dnscost-host.bat" chrome-extension://x/ --parent-window=0"' },
    { pid: 800, ppid: 700, exe: chromeExe, cmd: `"${chromeExe}" --profile-directory=Default` },
  ]);
  const localState = { 'C:\\Users\\ada\\AppData\\Local\\Google\\Chrome\\User Data\\Local State': fixture('chromium-local-state-secure.json') };
  const own = await discoverBrowserDoh(null, win({ [psWalk]: chain }, localState));
  assert.deepEqual([own?.product, own?.mode, own?.source], ['Google Chrome', 'secure', 'C:\\Users\\ada\\AppData\\Local\\Google\\Chrome\\User Data\\Local State']);
  const reg = '\r\nHKEY_LOCAL_MACHINE\\SOFTWARE\\Policies\\Google\\Chrome\r\n    DnsOverHttpsMode    REG_SZ    automatic\r\n    DnsOverHttpsTemplates    REG_SZ    https://doh.corp.example/dns-query{?dns}\r\n\r\n';
  const managed = await discoverBrowserDoh(null, win({ [psWalk]: chain, 'reg query HKLM\\SOFTWARE\\Policies\\Google\\Chrome': reg }, localState));
  assert.deepEqual([managed?.mode, managed?.active, managed?.templates, managed?.source], ['automatic', true, ['https://doh.corp.example/dns-query{?dns}'], 'HKLM\\SOFTWARE\\Policies\\Google\\Chrome']);
  const ffExe = 'C:\\Program Files\\Mozilla Firefox\\firefox.exe';
  const ffWin = await discoverBrowserDoh(null, win({ [psWalk]: walk([{ pid: 900, ppid: 800, exe: null, cmd: 'C:\\Windows\\system32\\cmd.exe /d /c dnscost-host.bat' }, { pid: 800, ppid: 1, exe: null, cmd: `"${ffExe}" -profile "C:\\Users\\ada\\ff x"` }]) }, {
    'C:\\Users\\ada\\ff x\\prefs.js': fixture('firefox-prefs-trr3.js'),
  }));
  assert.deepEqual([ffWin?.mode, ffWin?.source], ['secure', 'C:\\Users\\ada\\ff x\\prefs.js'], 'no ExecutablePath (another user\'s process): the command line\'s first word; -profile quoted');
  assert.equal(await discoverBrowserDoh(null, win({})), null, 'PowerShell failed: no browser known');
});

test('unreadable or malformed files give the browser\'s default, never an exception; whatever is found fits the hello', async () => {
  const garbage = '\u0000{{ not json ]]';
  const chromium = await discoverBrowserDoh(dns(['192.168.1.1']), withBrowser(CHROMIUM, {
    '/tmp/profile/Local State': garbage, '/etc/chromium/policies/managed/a.json': '[1, 2]', '/etc/chromium/policies/managed/b.json': '{"DnsOverHttpsMode": 7, "DnsOverHttpsTemplates": ["x"]}',
  }));
  assert.deepEqual([chromium?.mode, chromium?.active, chromium?.source], ['automatic', false, 'default']);
  const firefox = await discoverBrowserDoh(null, withBrowser({ ...FIREFOX, argv: [FIREFOX.exe] }, {
    '/etc/firefox/policies/policies.json': garbage, [`${HOME}/.mozilla/firefox/profiles.ini`]: garbage, '/tmp/ff/prefs.js': garbage,
  }));
  assert.deepEqual([firefox?.mode, firefox?.active, firefox?.source], ['off', false, 'default']);
  const prefsGarbage = await discoverBrowserDoh(null, withBrowser(FIREFOX, { '/tmp/ff/prefs.js': `${garbage}\nuser_pref("network.trr.mode", "three");\nuser_pref("network.trr.uri", 5);\n` }));
  assert.deepEqual([prefsGarbage?.mode, prefsGarbage?.templates], ['off', []], 'a mode that is not a number counts as off, as Firefox treats it');
  const throwing: BrowserDohDeps = { ...withBrowser(CHROMIUM), read: () => { throw new Error('EIO'); } };
  assert.equal(await discoverBrowserDoh(dns([]), throwing), null);
  assert.equal(await discoverBrowserDoh(Promise.reject(new Error('no dns')), withBrowser(CHROMIUM)), null);
  assert.equal(await discoverBrowserDoh(null, machine({})), null, 'no /proc: no browser known');

  const long = Array.from({ length: 20 }, (_, i) => `https://doh${i}.example/${'q'.repeat(i === 0 ? 2000 : 10)}{?dns}`).join(' ');
  const many = await discoverBrowserDoh(null, withBrowser({ ...CHROMIUM, argv: [CHROMIUM.exe, `--user-data-dir=/tmp/${'d'.repeat(600)}`] }, {
    [`/tmp/${'d'.repeat(600)}/Local State`]: JSON.stringify({ dns_over_https: { mode: 'secure', templates: long } }),
  }));
  assert.equal(many?.templates.length, 8);
  assert.ok(many!.templates.every((t) => t.length < 100), 'an over-long template is left out');
  for (const browserDoh of [many, chromium, firefox]) {
    const hello = parseReply({ id: 1, type: 'hello', version: '0.1.0', protocol: PROTOCOL_VERSION, transports: ['udp'], browserDoh });
    assert.ok(hello.ok && hello.reply.type === 'hello' && hello.reply.browserDoh !== null, JSON.stringify(hello));
  }
});
