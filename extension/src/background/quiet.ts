// While a page loads, the background asks the browser nothing on its own account: the page gate's reads (the tab, the
// settings), the recorder's storage writes and the sampler wait until no tab's top-level page is loading, so dnscost's
// calls into the browser (each one IPC and work in the browser process, on a machine the page shares) never compete
// with a load. The events themselves are only noted in memory meanwhile. Bounded: a page that never reports its end
// (an aborted navigation, a load that hangs) counts as loading for QUIET_CAP_MS at most, and nothing waits longer.

/** How long a load holds back the background's work, at most (ms). */
export const QUIET_CAP_MS = 10_000;

export interface QuietDeps {
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

export class LoadQuiet {
  /** Tabs whose top-level page is loading, with when it started (deps.now() time). */
  private readonly loading = new Map<number, number>();
  private waiting: Array<() => void> = [];
  private timer: unknown = null;

  constructor(private readonly deps: QuietDeps) {}

  /** A tab's top-level navigation started (again: its start moves). */
  started(tabId: number): void {
    this.loading.set(tabId, this.deps.now());
  }

  /** A tab's top-level page finished loading, failed, or the tab closed: work held back for it runs if nothing else loads. */
  ended(tabId: number): void {
    if (this.loading.delete(tabId) && !this.busy()) this.flush();
  }

  /** Runs `fn` now if no page is loading, else once none is (in the order asked), within QUIET_CAP_MS. */
  run(fn: () => void): void {
    if (!this.busy()) {
      fn();
      return;
    }
    this.waiting.push(fn);
    this.timer ??= this.deps.setTimer(() => {
      this.timer = null;
      this.flush();
    }, QUIET_CAP_MS);
  }

  /** `run` as a promise: settles once no page is loading. */
  idle(): Promise<void> {
    return new Promise((resolve) => this.run(resolve));
  }

  /** Runs everything held back now (someone asked for the page: the popup, the sampler). */
  flush(): void {
    if (this.timer !== null) this.deps.clearTimer(this.timer);
    this.timer = null;
    const due = this.waiting;
    this.waiting = [];
    for (const fn of due) fn();
  }

  /** Whether a page started loading less than QUIET_CAP_MS ago and has not finished. */
  private busy(): boolean {
    const now = this.deps.now();
    for (const [tabId, since] of this.loading) {
      if (now - since < QUIET_CAP_MS) return true;
      this.loading.delete(tabId);
    }
    return false;
  }
}
