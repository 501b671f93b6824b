// Where each browser reads our manifest, per platform, and which base directories the environment may move.
import assert from 'node:assert/strict';
import { test } from 'vitest';
import { customTarget, launcherPath, targetFor } from './browsers.js';
import { placeFor, type Browser, type Platform } from './platform.js';

test('where each browser reads our manifest, per platform (per-user locations)', () => {
  const linux = placeFor('linux', '/home/u', {}, false);
  const mac = placeFor('darwin', '/Users/u', {}, false);
  const win = placeFor('win32', 'C:\\Users\\u', {}, false);
  const S = '/Users/u/Library/Application Support';
  const D = 'C:\\Users\\u\\AppData\\Local\\dnscost\\hosts';
  const cases: [Browser, Platform, string, string | null][] = [
    ['firefox', 'linux', '/home/u/.mozilla/native-messaging-hosts/org.dnscost.host.json', null],
    ['chrome', 'linux', '/home/u/.config/google-chrome/NativeMessagingHosts/org.dnscost.host.json', null],
    ['chromium', 'linux', '/home/u/.config/chromium/NativeMessagingHosts/org.dnscost.host.json', null],
    ['brave', 'linux', '/home/u/.config/BraveSoftware/Brave-Browser/NativeMessagingHosts/org.dnscost.host.json', null],
    ['edge', 'linux', '/home/u/.config/microsoft-edge/NativeMessagingHosts/org.dnscost.host.json', null],
    ['vivaldi', 'linux', '/home/u/.config/vivaldi/NativeMessagingHosts/org.dnscost.host.json', null],
    ['firefox', 'darwin', `${S}/Mozilla/NativeMessagingHosts/org.dnscost.host.json`, null],
    ['chrome', 'darwin', `${S}/Google/Chrome/NativeMessagingHosts/org.dnscost.host.json`, null],
    ['chromium', 'darwin', `${S}/Chromium/NativeMessagingHosts/org.dnscost.host.json`, null],
    ['brave', 'darwin', `${S}/BraveSoftware/Brave-Browser/NativeMessagingHosts/org.dnscost.host.json`, null],
    ['edge', 'darwin', `${S}/Microsoft Edge/NativeMessagingHosts/org.dnscost.host.json`, null],
    ['vivaldi', 'darwin', `${S}/Vivaldi/NativeMessagingHosts/org.dnscost.host.json`, null],
    ['firefox', 'win32', `${D}\\firefox\\org.dnscost.host.json`, 'HKCU\\Software\\Mozilla\\NativeMessagingHosts\\org.dnscost.host'],
    ['chrome', 'win32', `${D}\\chrome\\org.dnscost.host.json`, 'HKCU\\Software\\Google\\Chrome\\NativeMessagingHosts\\org.dnscost.host'],
    ['chromium', 'win32', `${D}\\chromium\\org.dnscost.host.json`, 'HKCU\\Software\\Chromium\\NativeMessagingHosts\\org.dnscost.host'],
    ['brave', 'win32', `${D}\\chrome\\org.dnscost.host.json`, 'HKCU\\Software\\Google\\Chrome\\NativeMessagingHosts\\org.dnscost.host'],
    ['edge', 'win32', `${D}\\edge\\org.dnscost.host.json`, 'HKCU\\Software\\Microsoft\\Edge\\NativeMessagingHosts\\org.dnscost.host'],
    ['vivaldi', 'win32', `${D}\\chrome\\org.dnscost.host.json`, 'HKCU\\Software\\Google\\Chrome\\NativeMessagingHosts\\org.dnscost.host'],
  ];
  const places = { linux, darwin: mac, win32: win };
  for (const [browser, platform, manifest, key] of cases) {
    const t = targetFor(browser, places[platform]);
    assert.equal(t.manifestPath, manifest, `${browser} on ${platform}`);
    assert.equal(t.registryKey, key, `${browser} on ${platform}`);
  }
  assert.equal(launcherPath(linux), '/home/u/.local/share/dnscost/dnscost-host');
  assert.equal(launcherPath(mac), `${S}/dnscost/dnscost-host`);
  assert.equal(launcherPath(win), 'C:\\Users\\u\\AppData\\Local\\dnscost\\dnscost-host.bat');
  assert.equal(customTarget('chromium', '/tmp/udd', 'linux').manifestPath, '/tmp/udd/NativeMessagingHosts/org.dnscost.host.json');
});

test('XDG and Windows variables count for the real home, not for an explicit --home', () => {
  const env = { XDG_CONFIG_HOME: '/xdg/config', XDG_DATA_HOME: '/xdg/data', LOCALAPPDATA: 'relative/ignored' };
  const real = placeFor('linux', '/home/u', env, false);
  assert.equal(targetFor('chrome', real).manifestPath, '/xdg/config/google-chrome/NativeMessagingHosts/org.dnscost.host.json');
  assert.equal(launcherPath(real), '/xdg/data/dnscost/dnscost-host');
  // Firefox ignores XDG_CONFIG_HOME for hosts.
  assert.equal(targetFor('firefox', real).manifestPath, '/home/u/.mozilla/native-messaging-hosts/org.dnscost.host.json');
  const given = placeFor('linux', '/tmp/h', env, true);
  assert.equal(targetFor('chrome', given).manifestPath, '/tmp/h/.config/google-chrome/NativeMessagingHosts/org.dnscost.host.json');
  assert.equal(placeFor('win32', 'C:\\Users\\u', env, false).localAppData, 'C:\\Users\\u\\AppData\\Local');
});
