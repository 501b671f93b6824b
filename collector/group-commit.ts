// Group commit: many uploads share one insert statement (and so one COMMIT and one WAL flush), so durability costs
// one disk flush per group instead of one per upload.
//
// Lifecycle: submit() queues an item. A flush hands up to maxItems queued items to `write` and settles each
// item's promise with its result once `write` resolved (after COMMIT), or rejects them all. At most `concurrency`
// flushes run at once; items arriving meanwhile wait for the next flush, so groups grow with load by themselves.
// The first item of an idle queue waits windowMs for company. drain() resolves when nothing is queued or running.
// The queue is bounded: past maxQueued items submit() refuses at once (QueueFull), so a flood costs no memory and
// the client is told to come back (the route answers 503 with Retry-After).

interface Pending<T, R> {
  item: T;
  resolve: (r: R) => void;
  reject: (e: unknown) => void;
}

/** Tuning of a GroupCommitter. */
export interface GroupOptions {
  maxItems: number;
  windowMs: number;
  concurrency: number;
  /** Items that may wait at once (default 10 groups); more are refused with QueueFull. */
  maxQueued?: number;
}

/** submit() on a full queue. */
export class QueueFull extends Error {}

/** Batches submit() calls into write() calls; see the lifecycle note above. */
export class GroupCommitter<T, R> {
  private queue: Pending<T, R>[] = [];
  private running = 0;
  private timer: NodeJS.Timeout | null = null;
  private idle: (() => void)[] = [];

  constructor(
    private readonly write: (items: T[]) => Promise<R[]>,
    private readonly opts: GroupOptions,
  ) {}

  /** Resolves with this item's result once its group is committed. */
  submit(item: T): Promise<R> {
    if (this.queue.length >= (this.opts.maxQueued ?? 10 * this.opts.maxItems)) return Promise.reject(new QueueFull(`${this.queue.length} uploads are waiting`));
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.queue.length >= this.opts.maxItems) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.opts.windowMs);
    });
  }

  /** Resolves when every submitted item has been settled. */
  drain(): Promise<void> {
    if (this.queue.length === 0 && this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.running >= this.opts.concurrency || this.queue.length === 0) return;
    const group = this.queue.splice(0, this.opts.maxItems);
    this.running++;
    this.write(group.map((p) => p.item)).then(
      (results) => group.forEach((p, i) => p.resolve(results[i]!)),
      (err: unknown) => group.forEach((p) => p.reject(err)),
    ).finally(() => {
      this.running--;
      // What queued while this group was committing goes now: it has already waited long enough.
      if (this.queue.length > 0) this.flush();
      else if (this.running === 0) this.idle.splice(0).forEach((f) => f());
    });
  }
}
