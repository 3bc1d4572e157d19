import {
  BatonError,
  type EventOutcome,
  type InputOptions,
  type InputRequest,
  isTerminalStatus,
  type LogStream,
  type MessageOptions,
  type Progress,
  type UpdateOptions,
} from '@baton/contracts';
import type { StoreCallFiles } from '@baton/store';
import type { Clock } from '../clock.js';
import { callOfEventKey, eventKey } from '../keys.js';
import type { Failures } from '../log.js';
import {
  duplicateStepIdMessage,
  EMPTY_STEP_ID_MESSAGE,
  EVENT_CANCELLED_MESSAGE,
  EVENT_TIMEOUT_MESSAGE,
  notAnEventKeyMessage,
} from '../messages.js';
import { MessageInbox } from '../steering/inbox.js';
import { storableText, storableValue } from '../storable.js';
import type { WriteBatcher } from '../write-batcher.js';
import type { ContextHost } from './call-context.js';
import type { LiveCall } from './live-call.js';
import { signOfLife } from './stalls.js';
import type { Timers } from './timers.js';
import type { CallUpdates } from './updates.js';
import type { CallWrites } from './writes.js';

type WaitOutcome = EventOutcome | { timedOut: true };

export interface ContextHostDeps {
  writes: CallWrites;
  writer: Pick<WriteBatcher, 'write'>;
  store: Pick<StoreCallFiles, 'getResolution' | 'listSteps'>;
  timers: Timers;
  clock: Clock;
  failures: Failures;
  /** On a shared store only: progress is conflated to one event per call this often. */
  progressIntervalMs: number | undefined;
  updates: Pick<CallUpdates, 'update'>;
  /**
   * On a store that processes share: a resolution stored here for a call that nobody waits for
   * here is told to the process that runs the call (see `resolvedElsewhere`).
   */
  tellOwner?: (callId: string, key: string) => Promise<void>;
  /**
   * On a store that processes share: a wait reads its resolution again at these times, so that
   * what another process stored and could not tell (see `tellOwner`) is found all the same.
   */
  reread?: { firstMs: number; mostMs: number };
}

/**
 * What a running tool reports through its `ctx`: progress, status and logs (events on its call),
 * durable steps, and waits for external events (the durable context), which `resolveEvent` answers.
 */
export class CallContextHost implements ContextHost {
  /** Calls waiting in `ctx.waitFor`, by event key: how to hand each its outcome. */
  readonly #waiters = new Map<string, (outcome: WaitOutcome) => void>();
  readonly #inbox: MessageInbox;

  constructor(private readonly deps: ContextHostDeps) {
    this.#inbox = new MessageInbox({
      waitFor: (call, key, options) => this.waitFor(call, key, options),
      store: deps.store,
      writes: deps.writes,
    });
  }

  nextMessage(call: LiveCall, options: MessageOptions): Promise<unknown> {
    return this.#inbox.next(call, options);
  }

  takeMessages(call: LiveCall): Promise<unknown[]> {
    return this.#inbox.take(call);
  }

  heartbeat(call: LiveCall): void {
    signOfLife(call, this.deps.clock);
  }

  update(call: LiveCall, value: unknown, options: UpdateOptions): void {
    signOfLife(call, this.deps.clock);
    this.deps.updates.update(call, value, options);
  }

  progress(call: LiveCall, progress: Progress): void {
    if (isTerminalStatus(call.record.status)) return;
    signOfLife(call, this.deps.clock);
    const { writes, timers, clock, progressIntervalMs } = this.deps;
    call.record.progress = storableValue({ ...progress });
    call.record.updatedAt = clock.now();
    // On a shared store, what crosses the database is conflated: the latest progress per interval.
    if (progressIntervalMs !== undefined && call.progressTimer !== undefined) return;
    writes.emit(call, { type: 'progress', progress: call.record.progress });
    writes.save(call);
    if (progressIntervalMs === undefined) return;
    const sent = call.record.progress;
    timers.armFor(call, 'progress', progressIntervalMs, () => {
      if (call.record.progress !== sent && call.record.progress) this.progress(call, call.record.progress);
    });
  }

  status(call: LiveCall, given: string): void {
    if (isTerminalStatus(call.record.status)) return;
    signOfLife(call, this.deps.clock);
    const text = storableText(given);
    call.record.statusText = text;
    call.record.updatedAt = this.deps.clock.now();
    this.deps.writes.emit(call, { type: 'status', text });
    this.deps.writes.save(call);
  }

  log(call: LiveCall, stream: LogStream, given: string): void {
    if (isTerminalStatus(call.record.status)) return;
    signOfLife(call, this.deps.clock);
    const chunk = storableText(given);
    call.appendLog(stream, chunk);
    this.deps.writes.emit(call, { type: 'log', stream, chunk });
    this.deps.writes.save(call);
  }

  /** The durable context: a step runs once per call; its result is stored before the tool goes on. */
  async step<T>(call: LiveCall, givenStepId: string, run: () => T | Promise<T>): Promise<T> {
    if (typeof givenStepId !== 'string' || givenStepId.trim() === '') {
      throw new BatonError('durable_effect_empty_step_id', EMPTY_STEP_ID_MESSAGE);
    }
    // Escaped the same way on every attempt, so a recovered call finds its steps again.
    const stepId = storableText(givenStepId);
    call.stepsOfAttempt ??= new Set();
    if (call.stepsOfAttempt.has(stepId)) {
      throw new BatonError('durable_effect_duplicate_step_id', duplicateStepIdMessage(stepId));
    }
    call.stepsOfAttempt.add(stepId);
    call.finishedSteps ??= call.recovered
      ? this.deps.store
          .listSteps(call.record.callId)
          .then((steps) => new Map(steps.map((step) => [step.stepId, step.value])))
      : Promise.resolve(new Map());
    const finished = await call.finishedSteps;
    if (finished.has(stepId)) return finished.get(stepId) as T;
    // A value no store can keep as it is is kept, and returned, as every store keeps it.
    const value = storableValue(await run());
    finished.set(stepId, value);
    await this.deps.writer.write('steps', { callId: call.record.callId, stepId, value });
    return value;
  }

  /**
   * The durable context: waits for an external event. The waiter is in place before the store is read, so a
   * resolution written meanwhile reaches it one way or the other; one kept from before (another
   * attempt, another process) answers at once.
   */
  async waitFor<T>(call: LiveCall, key: string, options: { timeoutMs?: number }): Promise<T> {
    const { writes, timers, store, failures } = this.deps;
    call.record.waitingFor = key;
    writes.save(call);
    let timer: unknown;
    let rereading: unknown;
    let onAbort: (() => void) | undefined;
    try {
      const outcome = await new Promise<WaitOutcome>((resolve) => {
        let done = false;
        const finish = (result: WaitOutcome) => {
          if (done) return;
          done = true;
          if (this.#waiters.get(key) === finish) this.#waiters.delete(key);
          resolve(result);
        };
        this.#waiters.set(key, finish);
        onAbort = () => finish({ cancelled: true });
        call.signal.addEventListener('abort', onAbort, { once: true });
        if (call.signal.aborted) finish({ cancelled: true });
        if (options.timeoutMs !== undefined) {
          timer = timers.arm(() => {
            timer = undefined;
            finish({ timedOut: true });
          }, options.timeoutMs);
        }
        // A read that fails leaves the wait to the resolution itself, or its timeout.
        const read = () =>
          store
            .getResolution(key)
            .then(
              (stored) => stored && finish(stored.outcome),
              failures.on('read an event resolution', call.record.callId),
            );
        void read();
        const { reread } = this.deps;
        if (reread) {
          const again = (afterMs: number) => {
            rereading = timers.arm(() => {
              if (done) return;
              void read().then(() => {
                if (!done) again(Math.min(afterMs * 2, reread.mostMs));
              });
            }, afterMs);
          };
          again(reread.firstMs);
        }
      });
      if ('value' in outcome) return outcome.value as T;
      if ('error' in outcome) throw new BatonError('event_error', outcome.error);
      if ('timedOut' in outcome) throw new BatonError('event_timeout', EVENT_TIMEOUT_MESSAGE);
      throw new BatonError('event_cancelled', EVENT_CANCELLED_MESSAGE);
    } finally {
      // Its wait was no silence: a stall counts from its end.
      signOfLife(call, this.deps.clock);
      timers.clear(timer);
      timers.clear(rereading);
      if (onAbort) call.signal.removeEventListener('abort', onAbort);
      if (call.record.waitingFor === key && !isTerminalStatus(call.record.status)) {
        delete call.record.waitingFor;
        writes.save(call);
      }
    }
  }

  /**
   * `ctx.input`: the request goes out as the call's `input_requested` event, under a key numbered
   * in the attempt (the same on every attempt, so an answer given before is found again), and is
   * waited for like any external event.
   */
  input<T>(call: LiveCall, request: InputRequest, { name, timeoutMs }: InputOptions): Promise<T> {
    call.inputsOfAttempt++;
    const named = name ?? `input-${call.inputsOfAttempt}`;
    const key = eventKey(call.record.callId, `input:${named}`);
    this.deps.writes.emit(call, {
      type: 'input_requested',
      key,
      name: named,
      request: storableValue(request) as InputRequest,
    });
    return this.waitFor<T>(call, key, timeoutMs === undefined ? {} : { timeoutMs });
  }

  /** Resolves an external event: stored first, so a call that waits after a restart, or between attempts, still gets it. */
  async resolveEvent(key: string, given: EventOutcome): Promise<void> {
    const callId = typeof key === 'string' ? callOfEventKey(key) : undefined;
    if (callId === undefined) throw new BatonError('invalid_arguments', notAnEventKeyMessage(key));
    const outcome = storableValue(given);
    await this.deps.writer.write('resolutions', { key, callId, outcome, at: this.deps.clock.now() });
    const waiter = this.#waiters.get(key);
    if (waiter) waiter(outcome);
    else await this.deps.tellOwner?.(callId, key);
  }

  /** Another process stored the resolution of `key`: a wait for it here reads it. */
  async resolvedElsewhere(key: string): Promise<void> {
    const waiter = this.#waiters.get(key);
    if (!waiter) return;
    const stored = await this.deps.store.getResolution(key);
    if (stored) waiter(stored.outcome);
  }
}
