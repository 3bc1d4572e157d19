import type { CallEvent, CallRecord } from '@baton/contracts';
import type { Store, StoreWrite } from '@baton/store';
import { WRITE_BATCH_CALLS_MIN, WRITE_BATCH_MAX, WRITE_COHORTS } from './defaults.js';
import type { StoreWriteTiming } from './options.js';
import type { StoreOutage } from './ride-out.js';
import {
  emptyWrite,
  joined,
  keyOf,
  type Listed,
  type ListedWrite,
  type Part,
  type PendingBatch,
  partsOf,
  putBack,
  type RefusedWrite,
  type Rows,
  rowsOf,
  SCHEDULE_PART,
  withoutCall,
} from './write-parts.js';

export type { ListedWrite, RefusedWrite, Rows };

/**
 * Group commit: every change made during one tick of the event loop goes to the store in one write.
 * A record changed several times in the tick is written once, as it is at the end of the tick.
 * A batch is written when the tick's work is done (`setImmediate`) or when it is full, never on a
 * fixed delay, so a lone caller does not wait for a timer.
 *
 * Pipelined: up to the store's `writeConcurrency` batches are in flight at once (one for a store
 * that does not say), so a store with round trips is kept busy while the next batch grows. A store
 * that names `writeBatchCalls` has a tick's changes cut into batches of about a quarter of the
 * calls in flight (`WRITE_COHORTS`, within `WRITE_BATCH_CALLS_MIN` and the store's limit), each
 * call's rows of the tick in one, sent one after another: the calls of one batch answer their
 * callers, whose next calls run while the store writes the next batch (`bench/RESULTS.md`, row 8).
 *
 * One call's writes stay in order: a batch that holds rows of a call whose earlier batch is still
 * in flight waits for it, growing meanwhile. Events are published only once they are stored, each
 * call's in order, so whoever sees an event can read what it describes.
 *
 * One call's rows can never fail another's: a batch the store refuses is written again in halves,
 * and halves of halves, down to the parts (one call's rows each) that it refuses on their own.
 * Only those fail; with one bad call among n, that takes about 2·log2(n) more writes. A store
 * that cannot be reached is not refusing: the batch is written again, whole and unchanged (a copy
 * taken when it left), while it is away (`storeRetryMs`), and its calls wait. A store that is
 * still away after that refuses the whole batch, which is not split.
 */
export class WriteBatcher {
  readonly #store: Store;
  readonly #publish: (event: CallEvent) => void;
  readonly #failed: (refused: readonly RefusedWrite[]) => void;
  readonly #writer: string;
  readonly #timed: ((timing: StoreWriteTiming) => void) | undefined;
  /** How many batches may be in flight at once. */
  readonly #depth: number;
  /** At most this many calls (and schedules) in one batch (see `Store.writeBatchCalls`). */
  readonly #batchKeys: number;
  readonly #liveCalls: (() => number) | undefined;
  readonly #outage: Pick<StoreOutage, 'ride'> | undefined;
  /** The batches not yet sent, oldest first: new calls go to the last. */
  readonly #unsent: PendingBatch[] = [];
  /** The unsent batch of each call (and schedule) with rows in one: all its rows go there. */
  readonly #home = new Map<string, PendingBatch>();
  /** The writes in flight, each settling once its batch is written or refused. */
  readonly #inFlight = new Set<Promise<void>>();
  /** The calls (and schedules) of the batches in flight. */
  readonly #busy = new Set<string>();
  /** False until `after` settles: nothing is written before. */
  #open = true;
  /** Settles once `after` has. */
  #opening: Promise<void> | undefined;

  constructor(options: {
    store: Store;
    /** Called for each event, in order, once it is stored. */
    publish: (event: CallEvent) => void;
    /** Called with the parts of a batch that the store refused on their own. */
    failed: (refused: readonly RefusedWrite[]) => void;
    /** Nothing is written before this settles (the runtime's instance is registered first). */
    after?: Promise<unknown>;
    /** The runtime instance that writes (a shared store fences with it). */
    writer: string;
    /** Told how long each batch's write took. */
    timed?: (timing: StoreWriteTiming) => void;
    /**
     * Whether to take the store's `writeConcurrency` and `writeBatchCalls` (default true). A
     * process that does not run the calls it writes has nothing to do while a write is out, and
     * smaller batches cost whoever reads them a notice and a query each: it writes a tick whole.
     */
    pipelined?: boolean;
    /** How many calls are in flight: a cut batch holds about a `WRITE_COHORTS` share of them. */
    liveCalls?: () => number;
    /** A store that cannot be reached is ridden out: a batch is written again while it is away. */
    outage?: Pick<StoreOutage, 'ride'>;
  }) {
    this.#outage = options.outage;
    this.#timed = options.timed;
    this.#store = options.store;
    this.#writer = options.writer;
    this.#publish = options.publish;
    this.#failed = options.failed;
    const pipelined = options.pipelined ?? true;
    this.#depth = pipelined ? Math.max(1, Math.floor(options.store.writeConcurrency ?? 1)) : 1;
    this.#liveCalls = options.liveCalls;
    this.#batchKeys =
      pipelined && options.store.writeBatchCalls !== undefined
        ? Math.max(1, Math.floor(options.store.writeBatchCalls))
        : Number.POSITIVE_INFINITY;
    if (options.after) {
      this.#open = false;
      const opened = () => {
        this.#open = true;
        this.#opening = undefined;
        this.#flush();
      };
      this.#opening = options.after.then(opened, opened);
    }
  }

  /** Queues a record, as it will be at flush time (a refusal goes to `failed`). */
  record(record: CallRecord): void {
    this.#queueRecord(record);
  }

  /** Queues a record like `record`; the promise settles once it is written, and rejects if it is refused. */
  recordConfirmed(record: CallRecord): Promise<void> {
    return this.#outcome(this.#queueRecord(record), record.callId);
  }

  /**
   * Queues the first record of a call this process makes, like `recordConfirmed`: the store refuses
   * it if a call of that id is stored already (made elsewhere at the same time). Only the promise
   * tells of that refusal: the caller handles it (`failed` is not told).
   */
  recordNew(record: CallRecord): Promise<void> {
    const batch = this.#queueRecord(record);
    batch.made ??= new Set();
    batch.made.add(record.callId);
    return this.#outcome(batch, record.callId);
  }

  /**
   * Queues the first record of a call under an id this runtime made up, like `record`: the store
   * may insert it without looking for one stored under its id (see `StoreWrite.firstRecords`).
   */
  recordFirst(record: CallRecord): void {
    const batch = this.#queueRecord(record);
    batch.firsts ??= new Set();
    batch.firsts.add(record.callId);
  }

  #queueRecord(record: CallRecord): PendingBatch {
    const batch = this.#batch(record.callId);
    if (!batch.calls.has(record.callId)) {
      batch.calls.set(record.callId, record);
      this.#grew(batch);
    }
    return batch;
  }

  /** Queues an event, notification, artifact, step, resolution or schedule. */
  add<K extends ListedWrite>(kind: K, item: Listed[K][number]): void {
    const batch = this.#batch(keyOf(kind, item));
    (batch[kind] as Listed[K][number][]).push(item);
    this.#grew(batch);
  }

  /** Queues like `add`; the promise settles once the item is written, or refused. */
  write<K extends ListedWrite>(kind: K, item: Listed[K][number]): Promise<void> {
    const key = keyOf(kind, item);
    const batch = this.#batch(key);
    (batch[kind] as Listed[K][number][]).push(item);
    this.#grew(batch);
    return this.#outcome(batch, key);
  }

  /** Queues again every row of a refused part; settles once its record (or its first row) is written. */
  rewrite(rows: Rows): Promise<void> {
    let first: { batch: PendingBatch; key: string } | undefined;
    for (const kind of Object.keys(rows) as (keyof Rows)[]) {
      for (const item of rows[kind]) {
        const key = keyOf(kind, item);
        const batch = this.#batch(key);
        if (kind === 'calls') batch.calls.set((item as CallRecord).callId, item as CallRecord);
        else (batch[kind] as unknown[]).push(item);
        this.#grew(batch);
        first ??= { batch, key };
      }
    }
    return first === undefined ? Promise.resolve() : this.#outcome(first.batch, first.key);
  }

  /** Puts the rows of a refused part back ahead of what their calls queued since (see `putBack`). */
  putBack(rows: Rows): void {
    putBack(rows, (key) => this.#batch(key));
  }

  /** Drops the rows a call queued that are not sent yet, all but its record (see `withoutCall`). */
  discard(callId: string): void {
    for (const batch of this.#unsent) withoutCall(batch, callId);
  }

  /** Resolves when everything queued so far is written (or refused). */
  async drain(): Promise<void> {
    while (this.#unsent.length > 0 || this.#inFlight.size > 0 || this.#opening) {
      this.#flush();
      if (this.#opening) await this.#opening;
      else if (this.#inFlight.size > 0) await Promise.race(this.#inFlight);
    }
  }

  /** The outcome of one part of a batch, for a caller that handles its rejection. */
  #outcome(batch: PendingBatch, key: string): Promise<void> {
    return batch.written.then(() => {
      const refused = batch.refused?.get(key);
      if (refused !== undefined) throw refused;
    });
  }

  /** Writes the oldest unsent batches while the store takes another write and none in flight holds their calls. */
  #flush(): void {
    while (this.#open && this.#inFlight.size < this.#depth) {
      const batch = this.#unsent[0];
      if (!batch) return;
      // One write at a time needs no keys: nothing else is in flight.
      const keys = this.#depth > 1 ? batch.keys : [];
      if (this.#busy.size > 0) {
        for (const key of keys) if (this.#busy.has(key)) return;
      }
      this.#unsent.shift();
      for (const key of batch.keys) this.#home.delete(key);
      for (const key of keys) this.#busy.add(key);
      const writing: Promise<void> = this.#write(batch).finally(() => {
        for (const key of keys) this.#busy.delete(key);
        this.#inFlight.delete(writing);
        this.#flush();
      });
      this.#inFlight.add(writing);
    }
  }

  async #write(batch: PendingBatch): Promise<void> {
    // The batch is what its calls were when it left: a write made again (the store was away, or
    // its answer was lost) writes the same rows, never a call's later state beside its old events.
    for (const [callId, record] of batch.calls) batch.calls.set(callId, { ...record });
    const whole: Required<Omit<StoreWrite, 'newCalls' | 'firstRecords'>> &
      Pick<StoreWrite, 'newCalls' | 'firstRecords'> = {
      calls: [...batch.calls.values()],
      events: batch.events,
      notifications: batch.notifications,
      deliveries: batch.deliveries,
      artifacts: batch.artifacts,
      steps: batch.steps,
      resolutions: batch.resolutions,
      schedules: batch.schedules,
      writer: this.#writer,
    };
    if (batch.made) whole.newCalls = [...batch.made];
    if (batch.firsts) whole.firstRecords = [...batch.firsts];
    let refused: Map<string, unknown> | undefined;
    let parts: Part[] | undefined;
    const startedAt = this.#timed ? performance.now() : 0;
    try {
      await this.#send(whole);
      this.#timed?.({ durationMs: performance.now() - startedAt, rows: rowsOf(whole), ok: true });
    } catch (error) {
      this.#timed?.({ durationMs: performance.now() - startedAt, rows: rowsOf(whole), ok: false });
      parts = partsOf(batch);
      refused = await this.#writeApart(parts, error, new Map(), batch);
      batch.refused = refused;
    }
    for (const event of batch.events) {
      if (!refused?.has(event.callId)) this.#publish(event);
    }
    batch.settle();
    if (refused && parts) {
      this.#failed(
        parts
          .filter((part) => refused.has(part.key))
          .map((part) => {
            const callId = part.key.startsWith(SCHEDULE_PART) ? undefined : part.key;
            const record = callId === undefined ? undefined : batch.calls.get(callId);
            const made = callId !== undefined && batch.made?.has(callId) === true;
            return { callId, record, rows: part.write, error: refused.get(part.key), made };
          }),
      );
    }
  }

  /**
   * One write, ridden out while the store is away. A store makes a write that had committed (its
   * answer was lost on the way) again without change and answers it as written, so a write made
   * again never refuses what it kept the first time.
   */
  #send(write: StoreWrite): Promise<void> {
    return this.#outage ? this.#outage.ride(() => this.#store.write(write)) : this.#store.write(write);
  }

  /**
   * Parts that failed together are written in halves; a part refused on its own is refused with its
   * own error. Only a store that answered is asked so: one still away past the ride-out would
   * refuse every half alike, so all the parts are refused with its error, without splitting.
   */
  async #writeApart(
    parts: readonly Part[],
    error: unknown,
    refused: Map<string, unknown>,
    { made, firsts }: Pick<PendingBatch, 'made' | 'firsts'>,
  ): Promise<Map<string, unknown>> {
    if (parts.length === 1 || this.#store.isUnavailable?.(error)) {
      for (const part of parts) refused.set(part.key, error);
      return refused;
    }
    const middle = parts.length >>> 1;
    for (const half of [parts.slice(0, middle), parts.slice(middle)]) {
      const write: StoreWrite = { ...joined(half), writer: this.#writer };
      const newCalls = made && half.filter((part) => made.has(part.key)).map((part) => part.key);
      if (newCalls && newCalls.length > 0) write.newCalls = newCalls;
      const firstRecords = firsts && half.filter((part) => firsts.has(part.key)).map((part) => part.key);
      if (firstRecords && firstRecords.length > 0) write.firstRecords = firstRecords;
      try {
        await this.#send(write);
      } catch (halfError) {
        await this.#writeApart(half, halfError, refused, { made, firsts });
      }
    }
    return refused;
  }

  /**
   * The unsent batch that takes this call's (or schedule's) next row: the one that has its rows
   * already, so that its rows of a tick are written together, or else the newest, or a new one
   * when the newest holds its share of calls.
   */
  #batch(key: string): PendingBatch {
    // One write at a time of whole ticks: the one unsent batch takes everything, and no call need be told apart.
    if (this.#depth === 1 && this.#batchKeys === Number.POSITIVE_INFINITY) {
      return this.#unsent[0] ?? this.#newBatch();
    }
    const home = this.#home.get(key);
    if (home) return home;
    let batch = this.#unsent.at(-1);
    if (!batch || batch.keys.length >= this.#cut()) {
      batch = this.#newBatch();
    }
    batch.keys.push(key);
    this.#home.set(key, batch);
    return batch;
  }

  /** How many calls a batch takes: a share of those in flight, within the store's limit. */
  #cut(): number {
    const live = this.#liveCalls?.();
    // A store that names no writeBatchCalls is never cut.
    if (live === undefined || this.#batchKeys === Number.POSITIVE_INFINITY) return this.#batchKeys;
    return Math.min(this.#batchKeys, Math.max(WRITE_BATCH_CALLS_MIN, Math.ceil(live / WRITE_COHORTS)));
  }

  #newBatch(): PendingBatch {
    let settle!: PendingBatch['settle'];
    const written = new Promise<void>((resolve) => {
      settle = resolve;
    });
    const batch: PendingBatch = { ...emptyWrite(), calls: new Map(), keys: [], size: 0, written, settle };
    this.#unsent.push(batch);
    setImmediate(() => {
      if (this.#unsent.includes(batch)) this.#flush();
    });
    return batch;
  }

  /**
   * Counts a change just made to the batch; a full batch is written at once rather than at the end
   * of the tick. (The change is made by the caller, not passed in: a closure a row was garbage.)
   */
  #grew(batch: PendingBatch): void {
    batch.size++;
    if (batch.size >= WRITE_BATCH_MAX) this.#flush();
  }
}
