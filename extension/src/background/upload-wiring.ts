// Wiring of the uploader (uploader.ts) to the browser: storage.local, fetch, random tokens from the Web Crypto API,
// and an alarm that wakes the background every minute while uploads are on (a killed service worker's timers are
// gone; the alarm is what brings a queued batch out after a restart or a long time offline).
import { browser } from '../browser.js';
import type { SettingsStore } from './settings-store.js';
import { Uploader } from './uploader.js';

const ALARM = 'dnscost-upload';

function randomToken(bytes: number): string {
  const b = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...b)).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

export function createUploader(settings: SettingsStore): Uploader {
  return new Uploader({
    area: browser.storage.local,
    loadSettings: () => settings.loadSettings(),
    fetch: (url, init) => fetch(url, { ...init, credentials: 'omit', cache: 'no-store', redirect: 'error' }),
    randomToken,
    now: () => Date.now(),
    setTimer: (fn, ms) => setTimeout(fn, ms),
    clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
    log: (message) => console.warn(message),
  });
}

/** The alarm follows the upload setting; each alarm, and each settings change, looks for due batches. */
export function listenForUploads(uploader: Uploader, settings: SettingsStore): void {
  browser.alarms.onAlarm.addListener((alarm) => {
    if (alarm.name === ALARM) void uploader.kick();
  });
  const follow = (on: boolean) => {
    if (on) void browser.alarms.create(ALARM, { periodInMinutes: 1 });
    else void browser.alarms.clear(ALARM);
    void uploader.kick();
  };
  settings.onChange((view) => follow(view.settings.upload.enabled && !view.settings.upload.paused));
  void settings.loadSettings().then((s) => follow(s.upload.enabled && !s.upload.paused));
}
