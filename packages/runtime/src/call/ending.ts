import { BatonError, type CallReply, type RecordedError, type TerminalStatus } from '@baton/contracts';
import type { CallState } from '@baton/machine';
import type { Store } from '@baton/store';
import type { Clock } from '../clock.js';
import { END_REWRITE_INITIAL_MS, END_REWRITE_MAX_MS } from '../defaults.js';
import type { Failures } from '../log.js';
import {
  CANCELLED_BY_CALLER,
  cancelledMessage,
  persistenceFailedMessage,
  stalledMessage,
  timedOutMessage,
} from '../messages.js';
import { modelVisible } from '../outcome.js';
import type { RefusedWrite, Rows, WriteBatcher } from '../write-batcher.js';
import { firstEventOf } from '../write-parts.js';
import { failBatch } from './batches.js';
import type { DriverEvent, Send } from './driver.js';
import type { LiveCall } from './live-call.js';
import type { CallNotifications } from './notifications.js';
import type { CallRegistry } from './registry.js';
import { forModel, notSavedReply } from './replies.js';
import type { CallWrites } from './writes.js';

export interface EndingDeps {
  writes: CallWrites;
  writer: Pick<WriteBatcher, 'recordConfirmed' | 'rewrite' | 'putBack' | 'discard'>;
  /** Whether a refusal was the store's being away, and what it kept of an end it was away for. */
  store: Pick<Store, 'getCall' | 'isUnavailable'>;
  registry: Pick<CallRegistry, 'holdEnded' | 'releaseEnded' | 'get' | 'heldEnded'>;
  notifications: Pick<CallNotifications, 'notify' | 'keepArtifacts'>;
  send: Send;
  clock: Clock;
  failures: Failures;
  maxOutputChars: number;
  /** Runs a task once after a delay, unless the runtime closes first. */
  later: (ms: number, task: () => void) => void;
  /** Stops a call here, writing nothing more, and answers its caller (see Recovery.drop). */
  drop: (call: LiveCall, reply: CallReply) => void;
}

/**
 * The end of a call: what its record keeps, its terminal event, the write of its end (and what
 * happens when the store refuses it), and a batch that stops at its first failure.
 */
export class CallEnding {
  /** How many times the store refused each call's end (rare: kept here, not on every call). */
  readonly #refusedEnds = new WeakMap<LiveCall, number>();

  constructor(private readonly deps: EndingDeps) {}

  /** The `recordOutcome` action: the record's end, and the terminal event (from where the call was). */
  recordOutcome(call: LiveCall, status: TerminalStatus, event: DriverEvent, from: CallState): void {
    const { writes, clock, maxOutputChars } = this.deps;
    const record = call.record;
    record.endedAt = clock.now();
    record.durationMs = record.endedAt - (record.startedAt ?? record.createdAt);
    // Stamped as literals, not spread: this runs once per call.
    const left = from.status;
    if (event.type === 'DONE') {
      const { value, images, rawOutput } = event.outcome;
      const output = forModel(value, maxOutputChars);
      record.result = value;
      record.output = output;
      if (images) record.images = images;
      if (rawOutput !== undefined) record.rawOutput = rawOutput;
      writes.emit(call, { type: 'succeeded', output, from: left, to: status });
      return;
    }
    if (event.type === 'CANCEL') {
      record.error = { code: 'cancelled', message: cancelledMessage(event.reason) };
      record.output = call.settings.formatter.cancelled({
        callId: record.callId,
        toolName: record.toolName,
        args: record.args,
      });
      writes.emit(call, {
        type: 'cancelled',
        reason: event.reason ?? CANCELLED_BY_CALLER,
        from: left,
        to: status,
      });
      return;
    }
    if (event.type === 'TIMEOUT') {
      const stalledMs = call.talking?.stalledMs;
      const timeoutMs = stalledMs ?? call.settings.timeoutMs ?? 0;
      const message = stalledMs === undefined ? timedOutMessage(timeoutMs) : stalledMessage(stalledMs);
      record.error = { code: 'timed_out', message };
      record.output = { error: message };
      const stalled = stalledMs === undefined ? {} : { stalled: true as const };
      writes.emit(call, { type: 'timed_out', timeoutMs, ...stalled, from: left, to: status });
      return;
    }
    const failure = (event as Extract<DriverEvent, { type: 'FAIL' | 'REJECT' }>).outcome;
    record.error = failure.error;
    record.output = failure.output;
    writes.emit(call, { type: 'failed', error: modelVisible(failure.error), from: left, to: status });
  }

  /** The `abort` action: a running execution hears, through its signal, why its call ended. */
  abort(call: LiveCall): void {
    const error = call.record.error as RecordedError;
    if (call.executing) call.abort(new BatonError(error.code, error.message));
  }

  /** The `writeEnd` action: the end is written; until then `get()` still finds the call here. */
  writeEnd(call: LiveCall): void {
    const { writer, registry } = this.deps;
    registry.holdEnded(call);
    const written = writer.recordConfirmed(call.record);
    call.endWritten = written;
    // A refused end stays held: `refused` writes it again, and the caller hears persistence_failed.
    written.then(() => registry.releaseEnded(call), refusalHandledElsewhere);
  }

  /** The `failBatch` action: the batch's waiting calls are cancelled before this call's slot goes to one of them. */
  failBatch(call: LiveCall): void {
    failBatch(call.batch, call.record, this.deps.send);
  }

  /**
   * The background continuation: when the state of a call cannot be saved, its execution is aborted and it ends
   * `persistence_failed`. Only the calls whose own rows the store refused are touched (the writer
   * keeps the others of their batch).
   */
  refused(refusals: readonly RefusedWrite[]): void {
    const { registry, send, failures } = this.deps;
    for (const { callId, error, rows, made } of refusals) {
      // The first write of a call this process makes: its maker hears of the refusal (see recordNew).
      if (made) continue;
      failures.report('write', error, callId);
      if (callId === undefined) continue;
      const call = registry.get(callId);
      if (rows.events.some((event) => event.callId === callId && event.seq === 1)) {
        // Its first write: the call was never kept. It stops, leaves nothing under its id (which a
        // caller may use again), and its caller hears so (an ended one, from its refused end).
        if (call) this.deps.drop(call, notSavedReply(callId)(error));
        const ended = registry.heldEnded(callId);
        if (ended) registry.releaseEnded(ended);
        continue;
      }
      if (call) {
        this.#keepHistoryWhole(call, rows, error);
        const message = persistenceFailedMessage(error);
        const failure = { code: 'persistence_failed' as const, message };
        send(call, { type: 'FAIL', outcome: { ok: false, error: failure, output: { error: message } } });
        continue;
      }
      const ended = registry.heldEnded(callId);
      if (ended) this.#storeEndAgain(ended, error, rows);
    }
  }

  /**
   * A call's history keeps no hole where the store refused its rows. Refused by a store that was
   * away past the ride-out, they are written again, ahead of the call's later rows (a write that
   * had been kept, its answer lost, is taken again as written). Refused for what they hold, they
   * are dropped with every row of the call that came after, and its next event (its end) is
   * numbered right after what the store kept.
   */
  #keepHistoryWhole(call: LiveCall, rows: Rows, error: unknown): void {
    const { writer, store } = this.deps;
    if (store.isUnavailable?.(error)) {
      writer.putBack(rows);
      return;
    }
    const first = firstEventOf(rows, call.record.callId);
    if (first === undefined) return;
    writer.discard(call.record.callId);
    call.rewind(first - 1);
  }

  /**
   * The store refused the end of a call. Refused for what it holds, the end becomes a
   * `persistence_failed` failure (see `#reducedEnd`). Refused by a store away past the ride-out,
   * the end may have been kept (see `#endAfterOutage`). Each later refusal (the store is down, the
   * disk full) writes the same rows again after a backoff, until they land; a runtime that closes
   * first leaves the call unfinished in the store, and the next one recovers it as `interrupted`.
   * So a call is never left `backgrounded` with no end, and never ends twice.
   */
  #storeEndAgain(call: LiveCall, error: unknown, refusedRows: Rows): void {
    const { writer, registry, later, store } = this.deps;
    const refusals = (this.#refusedEnds.get(call) ?? 0) + 1;
    this.#refusedEnds.set(call, refusals);
    if (refusals > 1) {
      // The end was refused again: the same rows, again, later.
      const forget = () => registry.releaseEnded(call);
      later(backoffMs(refusals - 1), () => writer.rewrite(refusedRows).then(forget, refusalHandledElsewhere));
      return;
    }
    if (store.isUnavailable?.(error)) void this.#endAfterOutage(call, error, refusedRows, 1);
    else this.#reducedEnd(call, error, refusedRows);
  }

  /**
   * An end refused by a store that was away past the ride-out: the store may have kept it, its
   * answer lost on the way, and what it holds says so once it is back. A kept end stands. A call in
   * the background has its end written again as it was, result and notification with it. A call
   * whose caller was answered `persistence_failed` (its end's write was refused) ends so.
   */
  async #endAfterOutage(call: LiveCall, error: unknown, refusedRows: Rows, reads: number): Promise<void> {
    const { writer, registry, store, failures, later } = this.deps;
    const forget = () => registry.releaseEnded(call);
    let kept: boolean;
    try {
      kept = (await store.getCall(call.record.callId))?.endedAt !== undefined;
    } catch (readError) {
      failures.report('read the call whose end the store was away for', readError, call.record.callId);
      later(backoffMs(reads), () => void this.#endAfterOutage(call, error, refusedRows, reads + 1));
      return;
    }
    if (kept) forget();
    else if (call.record.detached) writer.rewrite(refusedRows).then(forget, refusalHandledElsewhere);
    else this.#reducedEnd(call, error, refusedRows);
  }

  /**
   * The end as a `persistence_failed` failure that keeps nothing the run produced (its output may
   * be what the store refuses), with its event, numbered right after what the store kept, and, for
   * a detached call, its notification.
   */
  #reducedEnd(call: LiveCall, error: unknown, refusedRows: Rows): void {
    const { writer, registry, writes, notifications } = this.deps;
    const record = call.record;
    const first = firstEventOf(refusedRows, record.callId);
    if (first !== undefined) {
      writer.discard(record.callId);
      call.rewind(first - 1);
    }
    const message = persistenceFailedMessage(error);
    // Where the call was before its refused end (that end's own event was refused with it).
    const from = record.startedAt === undefined ? 'queued' : record.detached ? 'backgrounded' : 'inline';
    record.status = 'failed';
    record.error = { code: 'persistence_failed', message };
    record.output = { error: message };
    delete record.result;
    delete record.rawOutput;
    delete record.images;
    writes.emit(call, { type: 'failed', error: modelVisible(record.error), from, to: 'failed' });
    if (record.detached) {
      // The notification of the end was refused with the rest of it.
      notifications.notify(call, 'failed');
      notifications.keepArtifacts(call, 'failed');
    }
    writer.recordConfirmed(record).then(() => registry.releaseEnded(call), refusalHandledElsewhere);
  }
}

/** The wait before the `tries`-th write (or read) again of a refused end. */
function backoffMs(tries: number): number {
  return Math.min(END_REWRITE_INITIAL_MS * 2 ** (tries - 1), END_REWRITE_MAX_MS);
}

/**
 * For a write's promise whose refusal `CallEnding.refused` handles (the writer reports every
 * refusal there): whoever also waits on it needs do nothing more.
 */
export function refusalHandledElsewhere(): void {}
