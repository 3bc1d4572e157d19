import { type CallRecord, isTerminalStatus } from '@baton/contracts';
import type { Store, StoreNotice } from '@baton/store';
import type { Subscription } from 'rxjs';
import { REPLY_READ_BATCH_MAX } from '../defaults.js';
import type { Following } from '../following.js';
import type { Failures } from '../log.js';

export interface RemoteRepliesDeps {
  store: Pick<Store, 'getCalls' | 'listen'>;
  following: Pick<Following, 'ticks' | 'heardOrPolled'>;
  failures: Failures;
  /** This client's instance id: the `replyTo` of the calls it submits. */
  instanceId: string;
}

/**
 * The replies a client waits for. The store tells this client alone (its topic `replies`) of the
 * calls whose `replyTo` it is: with their records (a shared store's notice holds them where they
 * fit), or by name, and every waiting call that notices of one turn name is read in one query (the
 * store's `getCalls`), not one query per call. The shared store's poll reads every waiting call,
 * so a lost notice delays a reply but never loses it.
 */
export class RemoteReplies {
  readonly #waiting = new Map<string, (record: CallRecord | undefined) => void>();
  /** Waiting calls to read at the next turn. */
  readonly #told = new Set<string>();
  #scheduled = false;
  #reading = false;
  /** Polls, while any call waits. */
  #polling: Subscription | undefined;
  /** The topic, from the start to the end: a client that makes one call at a time keeps it. */
  #stopListening: (() => void) | undefined;
  #listened: () => void = () => {};
  readonly #listening = new Promise<void>((resolve) => {
    this.#listened = resolve;
  });
  #ready: Promise<void> | undefined;
  /** Told once no call is waited for. */
  #idle: Array<() => void> = [];

  constructor(private readonly deps: RemoteRepliesDeps) {}

  /** The calls waited for now. */
  waiting(): string[] {
    return [...this.#waiting.keys()];
  }

  /** Resolves once no call is waited for. */
  idle(): Promise<void> {
    if (this.#waiting.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Answers every waiting call with what its caller knows already (the client stops). */
  settleAll(): void {
    for (const callId of this.waiting()) this.#settle(callId, undefined);
  }

  /**
   * Waits for a call: resolves with its record once detached or ended, undefined when unread. Call
   * it before the call is stored, so that no notice of it comes first.
   */
  wait(callId: string): Promise<CallRecord | undefined> {
    const answered = new Promise<CallRecord | undefined>((resolve) => this.#waiting.set(callId, resolve));
    this.#subscribe();
    this.#polling ??= this.deps.following.ticks().subscribe(() => this.#tellAll());
    return answered;
  }

  /** Nobody waits for the call any more (it was not stored). */
  forget(callId: string): void {
    this.#waiting.delete(callId);
    if (this.#waiting.size > 0) return;
    this.#polling?.unsubscribe();
    this.#polling = undefined;
    for (const resolve of this.#idle.splice(0)) resolve();
  }

  /**
   * Listens to this client's topic, until `close()`. Resolves once the store tells it, or after a
   * poll interval if it does not (its LISTEN connection cannot be made: the polls read the replies
   * meanwhile). The calls that wait while it is not yet told are read again once it is.
   */
  listen(): Promise<void> {
    this.#subscribe();
    this.#ready ??= this.deps.following.heardOrPolled(this.#listening);
    return this.#ready;
  }

  #subscribe(): void {
    const { store, instanceId } = this.deps;
    this.#stopListening ??= store.listen?.((notice) => this.#hear(notice), {
      type: 'replies',
      to: instanceId,
    });
  }

  /** This process changed a waiting call's record (the store tells no process of its own writes). */
  changedHere(callId: string): void {
    if (!this.#waiting.has(callId)) return;
    this.#told.add(callId);
    this.#schedule();
  }

  /** Stops listening (the runtime closes). */
  close(): void {
    this.#stopListening?.();
    this.#polling?.unsubscribe();
  }

  #hear(notice: StoreNotice): void {
    if (notice.type === 'listening') {
      this.#listened();
      this.#tellAll();
    } else if (notice.type === 'events') {
      // The records the notice holds, as stored, answer their calls without a read; the rest are read.
      for (const record of notice.records ?? []) this.#answer(record);
      for (const callId of notice.callIds) if (this.#waiting.has(callId)) this.#told.add(callId);
      this.#schedule();
    }
  }

  /** A waiting call's record, read or told: it settles the call once detached or ended. */
  #answer(record: CallRecord): void {
    if (!record.detached && !isTerminalStatus(record.status)) return;
    this.#told.delete(record.callId);
    this.#settle(record.callId, record);
  }

  /** Every waiting call is read again: at a poll, or when notices may have been lost. */
  #tellAll(): void {
    for (const callId of this.#waiting.keys()) this.#told.add(callId);
    this.#schedule();
  }

  /** Reads at the next turn, with what the notices of this turn told. */
  #schedule(): void {
    if (this.#scheduled || this.#told.size === 0) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      void this.#read();
    });
  }

  async #read(): Promise<void> {
    if (this.#reading) return;
    this.#reading = true;
    const callIds: string[] = [];
    for (const callId of this.#told) {
      this.#told.delete(callId);
      if (this.#waiting.has(callId)) callIds.push(callId);
      if (callIds.length === REPLY_READ_BATCH_MAX) break;
    }
    try {
      if (callIds.length === 0) return;
      const records = await this.deps.store.getCalls(callIds);
      for (const record of records) this.#answer(record);
    } catch (error) {
      // The callers hear that their calls continue (a reply of what they know), rather than wait on.
      this.deps.failures.report('read the replies of calls', error);
      for (const callId of callIds) this.#settle(callId, undefined);
    } finally {
      this.#reading = false;
      this.#schedule();
    }
  }

  #settle(callId: string, record: CallRecord | undefined): void {
    const resolve = this.#waiting.get(callId);
    if (!resolve) return;
    this.forget(callId);
    resolve(record);
  }
}
