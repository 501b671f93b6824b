// The load loop the extension benchmarks share (extension-overhead.ts, extension-cpu.ts).
import type { Page } from 'puppeteer-core';

/** `n` loads of `url` in `page`, `pauseMs` before each: each load's onLoad (Navigation Timing's loadEventStart, ms). */
export async function timedLoads(page: Page, url: string, n: number, pauseMs: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
    await page.goto(url, { waitUntil: 'load', timeout: 20_000 });
    out.push(await page.evaluate(() => (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming).loadEventStart));
  }
  return out;
}
