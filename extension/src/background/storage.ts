// The one storage mechanism every store of the background uses (settings, page records, measurements, history,
// uploads): a storage area (storage.local, storage.session, or a test's in-memory one) behind one interface, and a
// queue per store so its read-change-write operations run one after another, in the order they were asked for.

/** The part of a browser storage area (storage.local / storage.session) the stores use. */
export interface StorageArea {
  get(keys?: string | string[] | null): Promise<Record<string, unknown>>;
  set(items: Record<string, unknown>): Promise<void>;
  remove(keys: string | string[]): Promise<void>;
}

/**
 * A store's area with its queue: `run` starts `fn` only after every operation queued before it has settled, so a later
 * state never lands before an earlier one and two read-change-writes never interleave. A failure rejects the caller's
 * promise and is reported to `onError`; the queue goes on.
 */
export class QueuedArea {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    readonly area: StorageArea,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  /** Runs `fn` with the area after every earlier operation; resolves or rejects as it does. */
  run<T>(fn: (area: StorageArea) => Promise<T>): Promise<T> {
    const op = this.tail.then(() => fn(this.area));
    this.tail = op.catch((err: unknown) => this.onError(err));
    return op;
  }

  /** Settles once every operation queued so far has (reads that must see earlier writes wait on this). */
  settled(): Promise<void> {
    return this.tail.then(() => undefined);
  }
}
