// A side worker: one browser on one DNS path (a side: Do53, DoT, DoH or DoQ), in a private mount namespace of its
// own, so sides can run side by side (a trace's browsers stay open together). The inner half (inner.ts, through
// sides.ts) starts it; main.ts dispatches here when DNSCOST_VALIDATION_SIDE names its config. It takes one command a
// line on stdin and answers each with one `reply {json}` line on stdout; logs go to stderr.
// Lifecycle: at start it isolates its DNS, naming its path (sideWorker()); `open` launches the browser, `close` ends
// it (and any stub); `visit` makes a cold or warm load, `trace-start` / `trace-visit` / `trace-end` a trace.
import { copyFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { BrowserContext } from 'puppeteer-core';
import type { RecordingBrowser } from '../../common/browser-queries.js';
import { isolateDns, launchDnsBrowser, setSystemResolver, type DnsBrowser } from '../../lab/browser-dns.js';
import { warmUp } from '../../lab/har/load.js';
import { clearHostCache, loadIn, lookUp, newContext, RENDERER_SETTLE_MS, validationBrowserSettings, type PageTimings } from './browser.js';
import { stop } from './children.js';
import { processTree } from '../../lab/proc.js';
import { closeAll, connectionsOf, type Dest } from './connections.js';
import { netLogLookups, type BrowserLookup } from './netlog.js';
import { MOZ_LOG_PREFS, mozLogEnv, mozLogFiles, mozLogLookups } from './mozlog.js';
import { startStub, type Stub } from './stubs.js';
import { PATH_OF, RESOLVER_PORT, SERVER, type DotStub, type Side } from './types.js';

/** What one side worker is (written by the inner half to a JSON file named by DNSCOST_VALIDATION_SIDE). */
export interface SideConfig {
  browser: RecordingBrowser;
  side: Side;
  work: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  /** The loopback address of this side's stub (DoT, DoQ), or where nothing listens (DoH). */
  stubAddress: string;
  dotStub: DotStub;
  stubPreload?: string | undefined;
  /** The pages' servers (a trace ends its leftover connections to them before each load). */
  siteDests: Dest[];
}

/** A command to a side worker. */
export type SideCommand =
  | { op: 'open' }
  | { op: 'close' }
  | { op: 'visit'; url: string; state: 'cold' | 'warm'; warmName: string }
  | { op: 'trace-start'; warmName: string }
  | { op: 'trace-visit'; url: string }
  | { op: 'trace-end' };

/** What one load gave. */
export interface VisitResult {
  onLoad: number | null;
  error: string | null;
  retried?: boolean;
  timings?: PageTimings;
  startedAt: number;
  endedAt: number;
  openBefore: number | null;
  /** How long the most recently active of those connections had been idle then (ms; the kernel's lastsnd/lastrcv). */
  connIdleMs: number | null;
  /** Trace loads: ms from the end of this side's previous load (or the trace's first lookup) to this navigation's start. */
  idleBeforeMs?: number;
}

/** A side worker's answer (`close`: every lookup of the session, as the browser's own log has it). */
export type SideReply = { ok: true; version?: string; visit?: VisitResult; lookups?: BrowserLookup[] } | { ok: false; error: string };

const PROBE_PAUSE_MS = 1000;
/**
 * After a warm load's warm-up (a page of a fresh name loaded and its tab closed), before the load: the closed tab's
 * teardown is the browser's work, not the page's. Without it Firefox's Do53 warm loads at 4G were bimodal (13 of 20
 * rounds +50…+80 ms: the page's second request sent 105 ms later; "Seen, one explained" in
 * bench/results/validation/lookups/README.md).
 */
const WARM_SETTLE_MS = settleFromEnv(process.env.DNSCOST_WARM_SETTLE_MS);

function settleFromEnv(v: string | undefined): number {
  if (v === undefined) return 1000;
  const ms = Number(v);
  if (v.trim() === '' || !Number.isFinite(ms) || ms < 0 || ms > 60_000) throw new Error(`DNSCOST_WARM_SETTLE_MS must be 0…60000 ms, not ${JSON.stringify(v)}`);
  return ms;
}

class SideWorker {
  private b: DnsBrowser | null = null;
  private stub: Stub | null = null;
  private trace: BrowserContext | null = null;
  private lastEnd = 0;
  /** The browser's log of the open session's lookups (Chromium's NetLog file, Firefox's MOZ_LOG file prefix). */
  private lookupLog: string | null = null;

  /** The DNS path this side takes (an A/A control takes its baseline's). */
  private readonly path: (typeof PATH_OF)[Side];

  constructor(private readonly c: SideConfig) {
    this.path = PATH_OF[c.side];
  }

  async run(cmd: SideCommand): Promise<SideReply> {
    switch (cmd.op) {
      case 'open': {
        const settings = validationBrowserSettings();
        // The browser's own account of every lookup, read when the session closes: Chromium's NetLog (netlog.ts),
        // Firefox's MOZ_LOG (mozlog.ts).
        const stamp = `${this.c.side}-${Date.now()}`;
        this.lookupLog = this.c.browser === 'chromium' ? join(this.c.work, `netlog-${stamp}.json`) : join(this.c.work, `mozlog-${stamp}`);
        if (this.c.browser === 'chromium') {
          settings.chromiumArgs = [...(settings.chromiumArgs ?? []), `--log-net-log=${this.lookupLog}`, '--net-log-capture-mode=Default'];
        } else settings.firefoxPrefs = { ...settings.firefoxPrefs, ...MOZ_LOG_PREFS };
        this.b = await launchDnsBrowser(this.c.browser, {
          path: this.path === 'doh' ? 'doh' : 'system', caFile: this.c.caFile, dohUrl: `https://${SERVER}/dns-query`, workDir: this.c.work,
          ...settings, ...(this.c.browser === 'firefox' ? { env: mozLogEnv(this.lookupLog) } : {}),
        });
        // Process start-up and first compilation, not counted; no name is looked up.
        await warmUp(this.b.browser, 300);
        return { ok: true, version: await this.b.browser.version() };
      }
      case 'close': {
        await this.stopStub();
        await this.b?.close();
        this.b = null;
        const log = this.lookupLog;
        this.lookupLog = null;
        if (!log) return { ok: true };
        // Chromium writes one file; Firefox `<file>.moz_log` for its parent process and `<file>.child-N.moz_log`.
        const files = this.c.browser === 'chromium'
          ? (existsSync(log) ? [log] : [])
          : mozLogFiles(log);
        if (!files.length) return { ok: true };
        const read = this.c.browser === 'chromium' ? netLogLookups : mozLogLookups;
        const lookups = files.flatMap((f) => read(readFileSync(f, 'utf8'))).sort((a, b) => a.askedAt - b.askedAt);
        // DNSCOST_KEEP_LOGS=DIR keeps a copy of each log, to read a lookup line by line.
        for (const f of files) {
          if (process.env.DNSCOST_KEEP_LOGS) copyFileSync(f, join(process.env.DNSCOST_KEEP_LOGS, basename(f)));
          rmSync(f, { force: true });
        }
        return { ok: true, lookups };
      }
      case 'visit':
        return { ok: true, visit: await this.visit(cmd.url, cmd.state, cmd.warmName) };
      case 'trace-start': {
        await this.freshStub();
        const context = await newContext(this.browser());
        if (this.c.browser === 'chromium') this.trace = context;
        await lookUp(context, cmd.warmName);
        if (this.c.browser !== 'chromium') await context.close();
        this.lastEnd = Date.now();
        return { ok: true };
      }
      case 'trace-visit':
        return { ok: true, visit: await this.traceVisit(cmd.url) };
      case 'trace-end':
        await this.trace?.close().catch(() => undefined);
        this.trace = null;
        await this.stopStub();
        return { ok: true };
    }
  }

  private browser() {
    if (!this.b) throw new Error('the browser is not open');
    return this.b.browser;
  }

  /** The processes whose connections to the resolver are this side's: the browser's (DoH) or the stub's (DoT). */
  private owners(): Set<number> {
    const pid = this.path === 'doh' ? this.b?.browser.process()?.pid : this.stub?.child.pid;
    return pid === undefined ? new Set() : processTree(pid);
  }

  /** This side's connections to the resolver now: how many, and the shortest idle time among them. */
  private async openNow(): Promise<{ openBefore: number | null; connIdleMs: number | null }> {
    const port = RESOLVER_PORT[this.c.side];
    if (port === null) return { openBefore: null, connIdleMs: null };
    const conns = await connectionsOf(this.owners(), [{ address: SERVER, port }]);
    const idle = conns.map((x) => x.idleMs).filter((x): x is number => x !== null);
    return { openBefore: conns.length, connIdleMs: idle.length ? Math.min(...idle) : null };
  }

  private async freshStub(): Promise<void> {
    await this.stopStub();
    if (this.path !== 'dot' && this.path !== 'doq') return;
    this.stub = await startStub({
      kind: this.path === 'doq' ? 'dnsproxy' : this.c.dotStub, address: this.c.stubAddress, work: this.c.work,
      caFile: this.c.caFile, certFile: this.c.certFile, keyFile: this.c.keyFile, preload: this.path === 'dot' ? this.c.stubPreload : undefined,
    });
  }

  private async stopStub(): Promise<void> {
    if (this.stub) await stop(this.stub.child);
    this.stub = null;
  }

  /**
   * A cold or warm load: fresh stub and context, the state set up, the load; retried once on ERR_NETWORK_CHANGED.
   * `visit` (cold and warm): a fresh stub, a fresh context (Chromium's incognito context, Firefox's container), a
   * pause of 1 s (Chromium's DoH probes a new context's connection in it); cold ends this side's connections to the
   * resolver and checks none is left (DoQ: starts its stub afresh just before the navigation), warm looks a fresh
   * name up through the same browser and stub; then the load.
   */
  private async visit(url: string, state: 'cold' | 'warm', warmName: string): Promise<VisitResult> {
    const startedAt = Date.now();
    let retried = false;
    for (;;) {
      let context: BrowserContext | null = null;
      try {
        await this.freshStub();
        context = await newContext(this.browser());
        await new Promise((r) => setTimeout(r, PROBE_PAUSE_MS));
        const port = RESOLVER_PORT[this.c.side];
        const resolver = port === null ? [] : [{ address: SERVER, port }];
        if (state === 'warm') {
          await lookUp(context, retried ? `r.${warmName}` : warmName);
          await new Promise((r) => setTimeout(r, WARM_SETTLE_MS));
        } else await closeAll(() => this.owners(), resolver, 250, 10);
        let open: Awaited<ReturnType<SideWorker['openNow']>> = { openBefore: null, connIdleMs: null };
        const { timings } = await loadIn(context, url, RENDERER_SETTLE_MS[this.c.browser], async () => {
          // Once more just before the navigation: a browser may have opened one in the meantime (Chromium's DoH probe;
          // Chromium looks accounts.google.com up for a new context). Nothing ends a QUIC connection from outside, so
          // for DoQ the cold stub is a fresh one started now.
          if (state === 'cold' && this.path === 'doq') await this.freshStub();
          if (state === 'cold') await closeAll(() => this.owners(), resolver, 50, 3);
          open = await this.openNow();
        });
        return { onLoad: timings.navigation.loadEventStart ?? null, error: null, timings, startedAt, endedAt: Date.now(), ...open, ...(retried ? { retried } : {}) };
      } catch (e) {
        // Chromium aborts a navigation with ERR_NETWORK_CHANGED when it sees a netlink event in its fresh namespace
        // (seen once in 960 loads): not a DNS result, so that load is made once more, its state set up again.
        if (!retried && String(e).includes('ERR_NETWORK_CHANGED')) {
          retried = true;
          continue;
        }
        return { onLoad: null, error: String(e).slice(0, 300), startedAt, endedAt: Date.now(), openBefore: null, connIdleMs: null, ...(retried ? { retried } : {}) };
      } finally {
        await context?.close().catch(() => undefined);
        await this.stopStub();
      }
    }
  }

  /**
   * A trace's load: nothing done to the encrypted connection; the host cache and the pages' connections cleared.
   * `trace-start` / `trace-visit` / `trace-end` (expected): one stub and, in Chromium, one context for the whole
   * trace (its DoH connection lives in it; its host cache is emptied before each load); in Firefox a container per
   * load (its TRR connection is the browser's). Before each load the side's leftover connections to the pages'
   * servers are ended, so each load looks its names up again; nothing is done to its encrypted connection.
   */
  private async traceVisit(url: string): Promise<VisitResult> {
    const startedAt = Date.now();
    const chromium = this.c.browser === 'chromium';
    const context = chromium ? this.trace : await newContext(this.browser());
    if (!context) throw new Error('trace-visit before trace-start');
    let open: Awaited<ReturnType<SideWorker['openNow']>> = { openBefore: null, connIdleMs: null };
    try {
      if (chromium) await clearHostCache(context);
      await closeAll(() => processTree(this.b?.browser.process()?.pid ?? -1), this.c.siteDests);
      const { timings, navStartedAt } = await loadIn(context, url, RENDERER_SETTLE_MS[this.c.browser], async () => {
        open = await this.openNow();
      });
      const idleBeforeMs = navStartedAt - this.lastEnd;
      return { onLoad: timings.navigation.loadEventStart ?? null, error: null, timings, startedAt, endedAt: Date.now(), ...open, idleBeforeMs };
    } catch (e) {
      return { onLoad: null, error: String(e).slice(0, 300), startedAt, endedAt: Date.now(), ...open };
    } finally {
      if (!chromium) await context.close().catch(() => undefined);
      this.lastEnd = Date.now();
    }
  }
}

/**
 * The side worker for the config file `configFile`: isolates its DNS, then answers commands until stdin ends.
 * At start it gives its mount namespace its own /etc/resolv.conf and /etc/chromium (lab/browser-dns.ts isolateDns)
 * naming its path: Do53 the lab resolver; DoT and DoQ its own stub's loopback address (stubs.ts, started per load or
 * per trace); DoH a loopback address where nothing listens (a fallback to Do53 would fail the load) with Chromium's
 * secure-DNS policy or Firefox's TRR mode 3.
 */
export async function sideWorker(configFile: string): Promise<void> {
  const c = JSON.parse(readFileSync(configFile, 'utf8')) as SideConfig;
  isolateDns(c.work);
  setSystemResolver(PATH_OF[c.side] === 'do53' ? SERVER : c.stubAddress);
  const worker = new SideWorker(c);
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let reply: SideReply;
    try {
      reply = await worker.run(JSON.parse(line) as SideCommand);
    } catch (e) {
      reply = { ok: false, error: String(e).slice(0, 500) };
    }
    process.stdout.write(`reply ${JSON.stringify(reply)}\n`);
  }
  await worker.run({ op: 'close' }).catch(() => undefined);
}
