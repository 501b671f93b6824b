// Real Chromium and Firefox (Debian's), driven by puppeteer-core, with the built extension loaded and the real native
// host registered in a private profile. Run them only inside a loopback-only network namespace (see
// tests/browser/host.test.ts): they try to reach outside services even with every "no background networking" flag.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { CHROMIUM_ID, GECKO_ID, HOST_NAME } from '../common/extension-ids.js';
import { HOST_BIN } from './paths.js';

/**
 * The environment a lab browser (and the host it starts) gets: this process's, without the machine's proxy settings
 * (nothing of a test leaves the lab, and a proxy in the environment would make the host take the browser as proxied).
 */
function labEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (/^(https?|all|no|ftp)_proxy$/i.test(k)) delete env[k];
  return env;
}

/** Which browser. */
export type BrowserName = 'chromium' | 'firefox';

/** Debian's binaries: the real Chromium binary (not the /usr/bin wrapper, which adds flags from /etc/chromium.d). */
export const EXECUTABLES: Record<BrowserName, string[]> = {
  chromium: ['/usr/lib/chromium/chromium', '/usr/bin/chromium'],
  firefox: ['/usr/lib/firefox-esr/firefox-esr', '/usr/bin/firefox-esr'],
};

/** The first installed executable of `name`, or null. */
export function findBrowser(name: BrowserName): string | null {
  return EXECUTABLES[name].find((p) => existsSync(p)) ?? null;
}

/** The internal UUID Firefox gives the extension (pref extensions.webextensions.uuids), so its pages have fixed URLs. */
export const FIREFOX_EXTENSION_UUID = '6f1d3c4e-2b7a-4e59-9a1c-d05c05715001';

/** The base URL of the extension's pages in each browser. */
export function extensionBase(name: BrowserName): string {
  return name === 'chromium' ? `chrome-extension://${CHROMIUM_ID}/` : `moz-extension://${FIREFOX_EXTENSION_UUID}/`;
}

/**
 * Writes a launcher for the real host into `dir`: the browser starts the host with its own environment, whose PATH
 * may lack node, so the launcher execs this test's node binary with native-host/bin/dnscost-host.js.
 */
export function writeHostLauncher(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'dnscost-host.sh');
  writeFileSync(path, `#!/bin/sh\nexec '${process.execPath}' '${HOST_BIN}' "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

/** A native messaging host manifest for `browser` pointing at `launcher`. */
export function hostManifest(browser: BrowserName, launcher: string): Record<string, unknown> {
  const base = { name: HOST_NAME, description: 'dnscost native host (test)', path: launcher, type: 'stdio' };
  // Chromium matches allowed_origins exactly, trailing slash included.
  return browser === 'chromium' ? { ...base, allowed_origins: [`chrome-extension://${CHROMIUM_ID}/`] } : { ...base, allowed_extensions: [GECKO_ID] };
}

/** A launched browser with the extension installed. */
export interface ExtensionBrowser {
  name: BrowserName;
  browser: Browser;
  /** Opens one of the extension's pages (path under the build, e.g. `popup/popup.html`) in a new tab. */
  openExtensionPage(path: string, timeoutMs?: number): Promise<Page>;
  /** Writes the host manifest now (as installing the host would, while the browser runs). */
  registerHost(): void;
  close(): Promise<void>;
}

/** Options for launchWithExtension. */
export interface LaunchOptions {
  /** The unpacked extension for this browser (build/extension-NAME). */
  extensionDir: string;
  /** A fresh directory for the profile, private HOME and host launcher. */
  workDir: string;
  /** Register the real host (default true); false leaves it missing, as on a machine where it is not installed. */
  registerHost?: boolean;
  /** Extra environment for the browser (and so the host). */
  env?: NodeJS.ProcessEnv;
  /** Extra Chromium switches. */
  chromiumArgs?: string[];
  /** Extra Firefox prefs. */
  firefoxPrefs?: Record<string, unknown>;
  /** The color scheme pages see (default: the system's, light here). Firefox: a pref, since its WebDriver BiDi
   * cannot emulate it per page; Chromium pages take page.emulateMediaFeatures instead. */
  colorScheme?: 'light' | 'dark';
  /** Keep the welcome page the extension opens on install (default: it is closed once it appeared). */
  keepWelcome?: boolean;
  /**
   * The browser's UI language (`de`), which browser.i18n follows; default the system's (English here). Chromium needs
   * its locale files (Debian: chromium-l10n), Firefox a language pack (firefox-esr-l10n-de), or they stay English.
   */
  locale?: string;
  /**
   * Firefox: how the extension gets in. `temporary` (default): the unpacked build as a temporary add-on, gone at
   * restart. `permanent`: the packed xpi (build/dnscost-firefox.xpi) installed for good, as "Install Add-on From
   * File" does, with signature checks off as ESR and Developer Edition allow; the profile is kept in workDir.
   * `installed`: the kept profile already has it (a restart after `permanent`); nothing is installed.
   */
  firefoxInstall?: 'temporary' | 'permanent' | 'installed';
  /** Chromium: run as a person's does, with HOME=workDir/home and its default user-data dir there
   * ($HOME/.config/chromium, where an installed host registers itself), not a profile of the test's own. */
  chromiumDefaultProfile?: boolean;
  /** What to start instead of Debian's binary: a wrapper that execs it (lab/no-checkout.ts hides node and the checkout). */
  executable?: string;
  /**
   * A CA (PEM file) the browser trusts as a root, for https pages served by the lab: Chromium reads it from
   * $HOME/.pki/nssdb (HOME becomes workDir/home), Firefox from its profile's cert db (then kept under workDir).
   */
  caFile?: string;
}

/** A fresh NSS certificate db in `dir` trusting the CA in `caFile` (Chromium's $HOME/.pki/nssdb, a Firefox profile). */
export function certDb(dir: string, caFile: string): void {
  mkdirSync(dir, { recursive: true });
  execFileSync('certutil', ['-N', '-d', `sql:${dir}`, '--empty-password'], { timeout: 10_000 });
  execFileSync('certutil', ['-A', '-d', `sql:${dir}`, '-t', 'C,,', '-n', 'dnscost-lab-ca', '-i', caFile], { timeout: 10_000 });
}

/** Polls `check` every `everyMs` (100) ms until it returns a value other than undefined, or throws after `timeoutMs`. */
export async function poll<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms${last ? ` (last error: ${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Launches Chromium with the extension unpacked and the host manifest in the profile's NativeMessagingHosts/. */
async function launchChromium(executablePath: string, o: LaunchOptions): Promise<ExtensionBrowser> {
  const home = join(o.workDir, 'home');
  const profile = o.chromiumDefaultProfile ? join(home, '.config', 'chromium') : join(o.workDir, 'chromium-profile');
  // Chromium reads host manifests from <user-data-dir>/NativeMessagingHosts/ when --user-data-dir is given.
  const hosts = join(profile, 'NativeMessagingHosts');
  mkdirSync(hosts, { recursive: true });
  if (o.caFile) certDb(join(home, '.pki', 'nssdb'), o.caFile);
  const registerHost = () => writeFileSync(join(hosts, `${HOST_NAME}.json`), JSON.stringify(hostManifest('chromium', writeHostLauncher(o.workDir))));
  if (o.registerHost !== false) registerHost();
  const browser = await puppeteer.launch({
    browser: 'chrome',
    executablePath,
    headless: true, // --headless=new, which loads extensions
    userDataDir: profile,
    enableExtensions: true,
    args: [
      '--no-sandbox', // as root
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--load-extension=${o.extensionDir}`,
      `--disable-extensions-except=${o.extensionDir}`,
      ...(o.locale ? [`--lang=${o.locale}`] : []),
      ...(o.chromiumArgs ?? []),
    ],
    // On Linux Chromium takes its UI language from the environment (GLib's language names), --lang elsewhere.
    env: { ...labEnv(), ...(o.locale ? { LANGUAGE: o.locale } : {}), ...(o.chromiumDefaultProfile || o.caFile ? { HOME: home, XDG_CONFIG_HOME: join(home, '.config') } : {}), ...o.env },
    timeout: 30_000,
    protocolTimeout: 30_000,
  });
  let workerSeen = false;
  return {
    name: 'chromium',
    browser,
    registerHost,
    async openExtensionPage(path, timeoutMs = 20_000) {
      // The extension is ready when its service worker first runs. Only the first time: a worker stopped later (idle,
      // or by a test) starts again on the page's first message, so waiting for it before opening the page would wait
      // for an event that only the page can cause.
      if (!workerSeen) {
        await browser.waitForTarget((t) => t.type() === 'service_worker' && t.url().startsWith(extensionBase('chromium')), { timeout: timeoutMs });
        workerSeen = true;
      }
      const page = await browser.newPage();
      await page.goto(extensionBase('chromium') + path, { timeout: timeoutMs });
      return page;
    },
    close: () => browser.close(),
  };
}

/** Launches Firefox with a private HOME holding the host manifest, and installs the extension (o.firefoxInstall). */
async function launchFirefox(executablePath: string, o: LaunchOptions): Promise<ExtensionBrowser> {
  const home = join(o.workDir, 'home');
  // Firefox reads host manifests only from $HOME/.mozilla/native-messaging-hosts/ (on Linux, per user).
  const hosts = join(home, '.mozilla', 'native-messaging-hosts');
  mkdirSync(hosts, { recursive: true });
  const registerHost = () => writeFileSync(join(hosts, `${HOST_NAME}.json`), JSON.stringify(hostManifest('firefox', writeHostLauncher(o.workDir))));
  if (o.registerHost !== false) registerHost();
  const install = o.firefoxInstall ?? 'temporary';
  const keptProfile = install !== 'temporary' || o.caFile !== undefined;
  if (o.caFile) certDb(join(o.workDir, 'firefox-profile'), o.caFile);
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath,
    headless: true,
    // A kept profile for an add-on that must survive a restart; else puppeteer's own, deleted at close.
    ...(keptProfile ? { userDataDir: join(o.workDir, 'firefox-profile') } : {}),
    // Opening moz-extension:// pages under remote control needs system access.
    args: ['--remote-allow-system-access'],
    extraPrefsFirefox: {
      'extensions.webextensions.uuids': JSON.stringify({ [GECKO_ID]: FIREFOX_EXTENSION_UUID }),
      // 0 dark, 1 light, 2 the system's.
      ...(o.colorScheme ? { 'layout.css.prefers-color-scheme.content-override': o.colorScheme === 'dark' ? 0 : 1 } : {}),
      // The UI language, from an installed language pack (the application-scope add-ons puppeteer's profile enables).
      ...(o.locale ? { 'intl.locale.requested': o.locale } : {}),
      // An unsigned xpi installs for good only with signature checks off (ESR and Developer Edition honour this).
      ...(install === 'temporary' ? {} : { 'xpinstall.signatures.required': false }),
      ...o.firefoxPrefs,
    },
    env: { ...labEnv(), ...o.env, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_CACHE_HOME: join(home, '.cache') },
    timeout: 60_000,
    protocolTimeout: 30_000,
  });
  try {
    // webExtension.install with Firefox's moz:permanent parameter installs the packed xpi as a regular add-on.
    const bidi = (browser as unknown as { connection: { send(method: string, params: object): Promise<{ result: { extension: string } }> } }).connection;
    const id = install === 'installed' ? GECKO_ID
      : install === 'permanent'
        ? (await bidi.send('webExtension.install', { extensionData: { type: 'archivePath', path: join(o.extensionDir, '..', 'dnscost-firefox.xpi') }, 'moz:permanent': true })).result.extension
        : await browser.installExtension(o.extensionDir);
    if (id !== GECKO_ID) throw new Error(`Firefox installed the extension as ${id}, not ${GECKO_ID}`);
  } catch (err) {
    await browser.close();
    throw err;
  }
  return {
    name: 'firefox',
    browser,
    registerHost,
    async openExtensionPage(path, timeoutMs = 20_000) {
      const page = await browser.newPage();
      const url = extensionBase('firefox') + path;
      // goto() never resolves for moz-extension:// pages under WebDriver BiDi: start it, then poll the document.
      page.goto(url, { timeout: timeoutMs }).catch(() => {});
      // page.url() stays about:blank meanwhile; the document's own location is right.
      await poll(`Firefox opens ${url}`, timeoutMs, async () =>
        (await page.evaluate(() => location.href === document.URL && document.readyState === 'complete' ? location.href : '')) === url ? true : undefined);
      return page;
    },
    close: () => browser.close(),
  };
}

/** Launches `name` with the extension (and, by default, the real host registered for it). */
export async function launchWithExtension(name: BrowserName, options: LaunchOptions): Promise<ExtensionBrowser> {
  const executable = options.executable ?? findBrowser(name);
  if (!executable) throw new Error(`${name} is not installed (${EXECUTABLES[name].join(' or ')}): scripts/setup installs it`);
  mkdirSync(options.workDir, { recursive: true });
  const b = name === 'chromium' ? await launchChromium(executable, options) : await launchFirefox(executable, options);
  // The extension opens its welcome page on install (a fresh profile is one): closed here unless the caller wants it,
  // since in headless Chromium the tab in front is the only one that renders (clicks elsewhere would wait forever).
  // Another extension (a benchmark's empty or no-op one) has no welcome page to wait for.
  const hasWelcome = existsSync(join(options.extensionDir, WELCOME_PATH));
  if (hasWelcome && !options.keepWelcome && options.firefoxInstall !== 'installed') {
    try {
      await (await welcomePage(b.browser, 15_000)).close();
    } catch (err) {
      await b.close();
      throw err;
    }
  }
  return b;
}

const WELCOME_PATH = '/welcome/welcome.html';

/** The welcome tab the extension opened on install (Firefox's BiDi reports such a tab's URL as about:blank, so its
 * document is asked), within `timeoutMs`. */
export function welcomePage(browser: Browser, timeoutMs: number): Promise<Page> {
  return poll('the welcome page opens on install', timeoutMs, async () => {
    for (const p of await browser.pages()) {
      if (p.url().endsWith(WELCOME_PATH)) return p;
      const href = await p.evaluate(() => location.href).catch(() => '');
      if (href.endsWith(WELCOME_PATH)) return p;
    }
    return undefined;
  }, 200);
}
