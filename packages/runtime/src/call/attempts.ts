import { BatonError, isTerminalStatus, type RetryPolicy } from '@baton/contracts';
import type { CallState } from '@baton/machine';
import type { Clock } from '../clock.js';
import {
  DEFAULT_NON_RETRYABLE_CODES,
  DEFAULT_RETRY_BACKOFF_COEFFICIENT,
  DEFAULT_RETRY_INITIAL_INTERVAL_MS,
} from '../defaults.js';
import type { Logger } from '../log.js';
import { stalledMessage } from '../messages.js';
import { modelVisible, type Outcome, returnedOutcome, thrownOutcome } from '../outcome.js';
import type { WriteBatcher } from '../write-batcher.js';
import { CallContext, type ContextHost } from './call-context.js';
import type { DriverEvent, Send } from './driver.js';
import { refusalHandledElsewhere } from './ending.js';
import type { LiveCall } from './live-call.js';
import { Stalls } from './stalls.js';
import type { Timers } from './timers.js';
import type { CallTracing } from './tracing.js';
import type { CallWrites } from './writes.js';

export interface AttemptsDeps {
  writes: CallWrites;
  /**
   * Set when the store outlives the process: a tool that is not idempotent runs only once its
   * start is stored, so that a crash at any moment leaves a record that says it began, and
   * recovery ends it `interrupted` rather than running it a second time.
   */
  startWritten?: Pick<WriteBatcher, 'recordConfirmed'> | undefined;
  send: Send;
  /** What a running tool reports to through its `ctx`. */
  host: ContextHost;
  /** A closing runtime runs no more attempts. */
  closed: () => boolean;
  /** The tool runs inside its call's span, when tracing is on. */
  tracing?: CallTracing | undefined;
  /** Where a failed attempt is told to the operator (the model sees only what it may). */
  logger?: Pick<Logger, 'error' | 'info'>;
  /** The stall watch's timer, on the runtime's clock. */
  timers: Pick<Timers, 'armFor'>;
  clock: Pick<Clock, 'now'>;
}

/** How long a call waits before its next attempt: the policy's backoff after this many attempts. */
export function retryDelayMs(policy: RetryPolicy, attempt: number): number {
  const initial = policy.initialIntervalMs ?? DEFAULT_RETRY_INITIAL_INTERVAL_MS;
  const coefficient = policy.backoffCoefficient ?? DEFAULT_RETRY_BACKOFF_COEFFICIENT;
  return Math.min(initial * coefficient ** (attempt - 1), policy.maximumIntervalMs ?? initial * 100);
}

/**
 * The runs of a call's tool: each attempt (the first, or a retry after its backoff), how it ended,
 * and whether it runs again. The same execution runs whether the caller waits or not.
 */
export class Attempts {
  readonly #stalls: Stalls;

  constructor(private readonly deps: AttemptsDeps) {
    this.#stalls = new Stalls({
      timers: deps.timers,
      clock: deps.clock,
      stalled: (call) => this.#stalled(call),
    });
  }

  /** The `runAttempt` action: the timeout, armed just before, bounds each attempt. */
  run(call: LiveCall, from: CallState, to: CallState): void {
    const { writes } = this.deps;
    call.record.attempt++;
    call.stepsOfAttempt = undefined;
    call.inputsOfAttempt = 0;
    writes.emit(call, { type: 'started', attempt: call.record.attempt, from: from.status, to: to.status });
    writes.save(call);
    call.executing = true;
    const args = call.args;
    // Parked calls hold as little as they can; a call that may run again keeps its arguments.
    if (call.record.attempt >= call.maxAttempts) call.args = undefined;
    const { startWritten } = this.deps;
    if (startWritten && !call.tool.execution.idempotent) {
      const attempt = call.record.attempt;
      // A start the store refused fails the call there (see CallEnding.refused): the tool never runs.
      startWritten.recordConfirmed(call.record).then(() => {
        // Cancelled or timed out meanwhile, or taken by another instance: it does not begin.
        if (call.dropped || isTerminalStatus(call.record.status) || call.record.attempt !== attempt) {
          call.executing = false;
          return;
        }
        this.#execute(call, args);
      }, refusalHandledElsewhere);
      return;
    }
    this.#execute(call, args);
  }

  #execute(call: LiveCall, args: unknown): void {
    const attempt = call.record.attempt;
    this.#stalls.watch(call);
    let returned: unknown;
    try {
      const context = new CallContext(call, this.deps.host);
      const { tracing } = this.deps;
      returned = tracing
        ? tracing.within(call, () => call.tool.execute(args as never, context))
        : call.tool.execute(args as never, context);
    } catch (thrown) {
      this.#settle(call, thrownOutcome(thrown), attempt);
      return;
    }
    if (isPromiseLike(returned)) {
      returned.then(
        (value) => this.#settleReturned(call, value, attempt),
        (thrown) => this.#settle(call, thrownOutcome(thrown), attempt),
      );
    } else {
      this.#settleReturned(call, returned, attempt);
    }
  }

  /** The `announceRetry` action: the call stays where it is while it waits; its caller's reply is unaffected. */
  announceRetry(call: LiveCall, event: DriverEvent, from: CallState, to: CallState): void {
    if (event.type !== 'RETRY') return;
    this.deps.writes.emit(call, {
      type: 'retrying',
      attempt: call.record.attempt + 1,
      delayMs: this.delayOf(call),
      error: modelVisible(event.error),
      from: from.status,
      to: to.status,
    });
  }

  /** The backoff before the call's next attempt. */
  delayOf(call: LiveCall): number {
    return retryDelayMs(call.settings.retry as RetryPolicy, call.record.attempt);
  }

  #settleReturned(call: LiveCall, returned: unknown, attempt: number): void {
    const outcome = returnedOutcome(call.tool, returned);
    if (outcome instanceof Promise) outcome.then((checked) => this.#settle(call, checked, attempt));
    else this.#settle(call, outcome, attempt);
  }

  /**
   * A run that gave no sign of life for its tool's `heartbeatTimeoutMs`: its signal is aborted and
   * it is tried again where its policy allows (what it returns later is dropped), or else the call
   * ends `timed_out`, saying it stalled.
   */
  #stalled(call: LiveCall): void {
    const ms = call.tool.execution.heartbeatTimeoutMs ?? 0;
    const message = stalledMessage(ms);
    const failure = {
      ok: false as const,
      error: { code: 'timed_out' as const, message },
      output: { error: message },
    };
    this.#logFailure(call, failure);
    if (this.#retries(call, failure)) {
      call.executing = false;
      call.stopAttempt(new BatonError('timed_out', message));
      this.deps.send(call, { type: 'RETRY', error: failure.error });
      return;
    }
    call.talk.stalledMs = ms;
    this.deps.send(call, { type: 'TIMEOUT' });
  }

  /** The tool returned. A result that arrives after cancel or timeout changes nothing. */
  #settle(call: LiveCall, outcome: Outcome, attempt: number): void {
    // Only the record's current attempt has the call: a run stopped as stalled (and any stopped
    // before it, still running when the next began) comes back to nothing, whatever stalled after it.
    if (attempt !== call.record.attempt || call.talking?.stalledAttempt === attempt) return;
    call.executing = false;
    if (call.dropped || isTerminalStatus(call.record.status)) return;
    if (!outcome.ok) this.#logFailure(call, outcome);
    const { send } = this.deps;
    if (outcome.ok) send(call, { type: 'DONE', outcome });
    else if (this.#retries(call, outcome)) send(call, { type: 'RETRY', error: outcome.error });
    else send(call, { type: 'FAIL', outcome });
  }

  /**
   * An internal error (the tool threw something it did not mean the model to see) is an operator's
   * matter: at error, with its message and stack. An error the tool answered the model with
   * (`ToolError`, bad output) is part of a conversation: at info.
   */
  #logFailure(call: LiveCall, failure: Extract<Outcome, { ok: false }>): void {
    const { logger } = this.deps;
    if (!logger) return;
    const { callId, toolName: tool, attempt } = call.record;
    const { code, message, details } = failure.error;
    if (code === 'internal_error') {
      const err = {
        type: details?.name ?? 'Error',
        message: details?.message ?? message,
        stack: details?.stack,
      };
      logger.error({ tool, callId, attempt, err }, `baton: tool ${tool} failed: ${err.message}`);
    } else {
      logger.info(
        { tool, callId, attempt, code, message },
        `baton: tool ${tool} answered ${code}: ${message}`,
      );
    }
  }

  /** Whether a failed attempt runs again: attempts left, and a code its policy retries. */
  #retries(call: LiveCall, failure: Extract<Outcome, { ok: false }>): boolean {
    const policy = call.settings.retry;
    if (!policy || call.record.attempt >= call.maxAttempts || this.deps.closed()) return false;
    if (failure.retryable) return true;
    return !(policy.nonRetryableCodes ?? DEFAULT_NON_RETRYABLE_CODES).includes(failure.error.code);
  }
}

export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}
