// The one module that imports webextension-polyfill: everything else takes `browser` from here, so the promise-based
// API is the same in Firefox (native `browser`) and Chromium (the polyfill wraps `chrome`).
import browser from 'webextension-polyfill';
import type { RecordingBrowser } from '../../common/browser-queries.js';

export { browser };

/**
 * Which browser this is, for what it asks of DNS (common/browser-queries.ts): Firefox has runtime.getBrowserInfo,
 * Chromium has not (the polyfill does not add it).
 */
export function recordingBrowser(): RecordingBrowser {
  return typeof (browser.runtime as { getBrowserInfo?: unknown }).getBrowserInfo === 'function' ? 'firefox' : 'chromium';
}
export type { Runtime, Tabs } from 'webextension-polyfill';

/**
 * Chromium reports why a native port closed in `chrome.runtime.lastError`, readable only inside onDisconnect;
 * Firefox sets `port.error` instead and has no lastError there. The polyfill passes `runtime.lastError` through.
 */
export function runtimeLastError(): string | undefined {
  return (browser.runtime as { lastError?: { message?: string } | null }).lastError?.message ?? undefined;
}
