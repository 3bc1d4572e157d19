import type { CallEvent, CallRecord, Notification } from '@baton/contracts';
import type { Store } from '@baton/store';
import { WRITE_BATCH_MAX } from './limits.js';

interface PendingBatch {
  calls: Map<string, CallRecord>;
  events: CallEvent[];
  notifications: Notification[];
  size: number;
  written: Promise<void>;
  settle: (error?: unknown) => void;
}

/**
 * Group commit: every change made during one tick of the event loop goes to the store in one write.
 * A record changed several times in the tick is written once, as it is at the end of the tick.
 * The batch is written when the tick's work is done (`setImmediate`), or at once when it is full,
 * never on a fixed delay, so a lone caller does not wait for a timer.
 */
export class WriteBatcher {
  readonly #store: Store;
  #pending: PendingBatch | undefined;
  #inFlight = new Set<Promise<void>>();

  constructor(store: Store) {
    this.#store = store;
  }

  /** Queues a record (as it will be at flush time); the promise is settled once it is written. */
  record(record: CallRecord): Promise<void> {
    const batch = this.#batch();
    if (!batch.calls.has(record.callId)) {
      batch.calls.set(record.callId, record);
      this.#grew(batch);
    }
    return batch.written;
  }

  event(event: CallEvent): Promise<void> {
    const batch = this.#batch();
    batch.events.push(event);
    this.#grew(batch);
    return batch.written;
  }

  notification(notification: Notification): Promise<void> {
    const batch = this.#batch();
    batch.notifications.push(notification);
    this.#grew(batch);
    return batch.written;
  }

  /** Resolves when everything queued so far is written. */
  async drain(): Promise<void> {
    this.flush();
    await Promise.allSettled([...this.#inFlight]);
  }

  flush(): void {
    const batch = this.#pending;
    if (!batch) return;
    this.#pending = undefined;
    const calls = [...batch.calls.values()].map((record) => ({ ...record }));
    const write = this.#store
      .write({ calls, events: batch.events, notifications: batch.notifications })
      .then(
        () => batch.settle(),
        (error: unknown) => batch.settle(error),
      );
    this.#inFlight.add(write);
    void write.finally(() => this.#inFlight.delete(write));
  }

  #batch(): PendingBatch {
    if (this.#pending) return this.#pending;
    let settle!: PendingBatch['settle'];
    const written = new Promise<void>((resolve, reject) => {
      settle = (error) => (error === undefined ? resolve() : reject(error));
    });
    // A batch whose write fails is reported to each waiter; nobody waiting must not crash the process.
    written.catch(() => {});
    const batch: PendingBatch = { calls: new Map(), events: [], notifications: [], size: 0, written, settle };
    this.#pending = batch;
    setImmediate(() => {
      if (this.#pending === batch) this.flush();
    });
    return batch;
  }

  #grew(batch: PendingBatch): void {
    batch.size++;
    if (batch.size >= WRITE_BATCH_MAX) this.flush();
  }
}
