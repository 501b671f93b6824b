// Whether a tab is in a private window, asked of the browser's tabs API: the page recorder and the measurement
// scheduler both take it as their `isIncognitoTab` dependency (neither records nor measures a private window).
import { browser } from '../browser.js';

/** True when tab `tabId` is in a private window, false when not, null when the tab is gone. */
export async function isIncognitoTab(tabId: number, tabs: Pick<typeof browser.tabs, 'get'> = browser.tabs): Promise<boolean | null> {
  try {
    return (await tabs.get(tabId)).incognito;
  } catch {
    return null; // the tab is gone
  }
}
