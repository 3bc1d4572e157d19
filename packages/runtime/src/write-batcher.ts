import type { CallEvent, CallRecord } from '@baton/contracts';
import type { Store, StoreWrite } from '@baton/store';
import { WRITE_BATCH_MAX } from './limits.js';

/** What a batch lists besides the calls: events, notifications, artifacts, steps, resolutions, schedules. */
export type ListedWrite = Exclude<keyof StoreWrite, 'calls' | 'writer'>;

type Listed = { [K in ListedWrite]: NonNullable<StoreWrite[K]>[number][] };

interface PendingBatch extends Listed {
  calls: Map<string, CallRecord>;
  size: number;
  written: Promise<void>;
  settle: (error?: unknown) => void;
}

/**
 * Group commit: every change made during one tick of the event loop goes to the store in one write.
 * A record changed several times in the tick is written once, as it is at the end of the tick.
 * A batch is written when the tick's work is done (`setImmediate`) or when it is full, never on a
 * fixed delay, so a lone caller does not wait for a timer. Writes go one at a time: while one is
 * in flight the next batch grows, and events are published in order, only once they are stored,
 * so whoever sees an event can read what it describes.
 */
export class WriteBatcher {
  readonly #store: Store;
  readonly #publish: (event: CallEvent) => void;
  readonly #failed: (records: readonly CallRecord[], error: unknown) => void;
  readonly #writer: string;
  #pending: PendingBatch | undefined;
  #writing: Promise<void> | undefined;

  constructor(options: {
    store: Store;
    /** Called for each event, in order, once it is stored. */
    publish: (event: CallEvent) => void;
    /** Called with the records of a batch the store refused. */
    failed: (records: readonly CallRecord[], error: unknown) => void;
    /** Nothing is written before this settles (the runtime's instance is registered first). */
    after?: Promise<unknown>;
    /** The runtime instance that writes (a shared store fences with it). */
    writer: string;
  }) {
    this.#store = options.store;
    this.#writer = options.writer;
    this.#publish = options.publish;
    this.#failed = options.failed;
    if (options.after) {
      const opened = () => {
        this.#writing = undefined;
        this.#flush();
      };
      this.#writing = options.after.then(opened, opened);
    }
  }

  /** Queues a record (as it will be at flush time); the promise settles once it is written. */
  record(record: CallRecord): Promise<void> {
    const batch = this.#batch();
    if (!batch.calls.has(record.callId)) this.#add(batch, () => batch.calls.set(record.callId, record));
    return batch.written;
  }

  /** Queues an event, notification, artifact, step, resolution or schedule; settles once it is written. */
  add<K extends ListedWrite>(kind: K, item: Listed[K][number]): Promise<void> {
    const batch = this.#batch();
    return this.#add(batch, () => (batch[kind] as Listed[K][number][]).push(item));
  }

  /** Resolves when everything queued so far is written. */
  async drain(): Promise<void> {
    while (this.#pending || this.#writing) {
      this.#flush();
      await this.#writing?.catch(() => {});
    }
  }

  #flush(): void {
    const batch = this.#pending;
    if (!batch || this.#writing) return;
    this.#pending = undefined;
    // The store takes what it keeps before write() returns (the Store contract), so no copy here.
    const calls = [...batch.calls.values()];
    this.#writing = this.#store
      .write({
        calls,
        events: batch.events,
        notifications: batch.notifications,
        artifacts: batch.artifacts,
        steps: batch.steps,
        resolutions: batch.resolutions,
        schedules: batch.schedules,
        writer: this.#writer,
      } satisfies Required<StoreWrite>)
      .then(
        () => {
          for (const event of batch.events) this.#publish(event);
          batch.settle();
        },
        (error: unknown) => {
          batch.settle(error);
          this.#failed(calls, error);
        },
      )
      .finally(() => {
        this.#writing = undefined;
        this.#flush();
      });
  }

  #batch(): PendingBatch {
    if (this.#pending) return this.#pending;
    let settle!: PendingBatch['settle'];
    const written = new Promise<void>((resolve, reject) => {
      settle = (error) => (error === undefined ? resolve() : reject(error));
    });
    // Each waiter handles a failed write itself; a batch nobody waits for must not crash the process.
    written.catch(() => {});
    const batch: PendingBatch = {
      calls: new Map(),
      events: [],
      notifications: [],
      artifacts: [],
      steps: [],
      resolutions: [],
      schedules: [],
      size: 0,
      written,
      settle,
    };
    this.#pending = batch;
    setImmediate(() => {
      if (this.#pending === batch) this.#flush();
    });
    return batch;
  }

  /** Adds one change to the batch; a full batch is written at once rather than at the end of the tick. */
  #add(batch: PendingBatch, change: () => void): Promise<void> {
    change();
    batch.size++;
    if (batch.size >= WRITE_BATCH_MAX) this.#flush();
    return batch.written;
  }
}
