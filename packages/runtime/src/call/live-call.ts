import type { AnyTool, BatonError, CallRecord, CallReply, LogStream } from '@baton/contracts';
import {
  type CallMachine,
  type CallMachineEvent,
  type CallState,
  type CallStep,
  type CallTimer,
  callMachine,
  nextCallStep,
  snapshotOf,
} from '@baton/machine';
import { type Actor, createActor } from 'xstate';
import { OUTPUT_LOG_MAX_CHARS, OUTPUT_TAIL_CHARS } from '../defaults.js';
import { OUTPUT_LOG_TRUNCATED_LINE } from '../messages.js';
import type { CallInspector } from '../options.js';
import type { ToolSettings } from '../settings.js';
import type { TalkState } from './talk-state.js';

/** The calls of one `callBatch`: with `continueOnFailure: false`, the first failure cancels those not started. */
export interface CallBatch {
  continueOnFailure: boolean;
  calls: LiveCall[];
  /** Set by the first failure: why the calls that had not started were cancelled. */
  failure?: string;
}

/** The timers a call may have armed, one of each kind: the machine's, and progress conflation's. */
export type CallTimerKind = CallTimer | 'progress' | 'stall' | 'update' | 'reminder';

export interface LiveCallInit {
  record: CallRecord;
  tool: AnyTool;
  args: unknown;
  settings: ToolSettings;
  /** Where the call starts: read from its record (see `callStateOf`). */
  state: CallState;
  /** The last `seq` the call stored (a recovered or claimed call has events already). */
  lastSeq?: number | undefined;
  /** A recovered call may have durable steps stored by the runtime that died. */
  recovered?: boolean | undefined;
  /** Runs the call as a live `callMachine` actor that this observer watches, start to end. */
  inspect?: CallInspector | undefined;
}

const FLAGS = {
  executing: 1,
  holdsSlot: 2,
  adopted: 4,
  dropped: 8,
  recovered: 16,
  logTruncated: 32,
  inspected: 64,
} as const;

/** With `createRuntime({ inspect })`, the machine itself beside each call (kept out of the call: rare, and big). */
const inspectedActors = new WeakMap<LiveCall, Actor<CallMachine>>();

/** A call between its admission and its terminal state: its actor, timers, signal and pending reply. */
export class LiveCall {
  readonly record: CallRecord;
  readonly tool: AnyTool;
  readonly settings: ToolSettings;
  /** The arguments as the input schema parsed them: what `execute` receives (let go once it has them). */
  args: unknown;
  /**
   * Where the call is in its machine: one of the compiled machine's shared state objects (see
   * `@baton/machine`). It is all the call's actor keeps of its machine, running or parked for hours.
   */
  #state: CallState;
  readonly reply: Promise<CallReply>;
  /** The call's yes-or-no facts, in one number (a parked call holds as little as it can): see FLAGS. */
  #flags = 0;
  /** The write of the call's end, once it ended. */
  endWritten: Promise<void> | undefined;
  batch: CallBatch | undefined;
  /** Armed by the machine's `armTimer` (see timers.ts), one of each kind at most. */
  budgetTimer: unknown;
  timeoutTimer: unknown;
  retryTimer: unknown;
  /** On a shared store: armed after a progress event; later progress waits for it (conflation). */
  progressTimer: unknown;
  /** Finished durable steps by id: kept across attempts, loaded from the store once for a recovered call. */
  finishedSteps: Promise<Map<string, unknown>> | undefined;
  /** The step ids this attempt has used (the durable context: an id is used once per attempt); made on the first step. */
  stepsOfAttempt: Set<string> | undefined;
  /** How many input requests (`ctx.input`) this attempt made: their keys are numbered by it. */
  inputsOfAttempt = 0;
  #seq: number;
  #log = '';
  /** Resolves `reply`; dropped once used, so that a call parked for hours holds no closure for it. */
  #answer: ((reply: CallReply | Promise<CallReply>) => void) | undefined;
  #controller: AbortController | undefined;
  #abortReason: BatonError | undefined;
  #talk: TalkState | undefined;

  constructor(init: LiveCallInit) {
    this.record = init.record;
    this.tool = init.tool;
    this.args = init.args;
    this.settings = init.settings;
    if (init.recovered) this.#flags = FLAGS.recovered;
    this.#seq = init.lastSeq ?? 0;
    this.#state = init.state;
    if (init.inspect) {
      const inspected = createActor(callMachine, {
        input: { mode: init.state.mode, detached: init.state.detached },
        snapshot: snapshotOf(init.state),
        inspect: init.inspect,
        id: init.record.callId,
      }).start();
      inspectedActors.set(this, inspected);
      this.#flags |= FLAGS.inspected;
    }
    this.reply = new Promise((resolve) => {
      this.#answer = resolve;
    });
  }

  /** The tool is running and has not returned. */
  get executing(): boolean {
    return (this.#flags & FLAGS.executing) !== 0;
  }

  set executing(on: boolean) {
    this.#flag(FLAGS.executing, on);
  }

  /** The call holds one of the admission's running slots. */
  get holdsSlot(): boolean {
    return (this.#flags & FLAGS.holdsSlot) !== 0;
  }

  set holdsSlot(on: boolean) {
    this.#flag(FLAGS.holdsSlot, on);
  }

  /** Claimed from a shared store (another process submitted it): a closing worker gives it back if it has not started. */
  get adopted(): boolean {
    return (this.#flags & FLAGS.adopted) !== 0;
  }

  set adopted(on: boolean) {
    this.#flag(FLAGS.adopted, on);
  }

  /** Another instance owns the call now: this copy does nothing more. */
  get dropped(): boolean {
    return (this.#flags & FLAGS.dropped) !== 0;
  }

  set dropped(on: boolean) {
    this.#flag(FLAGS.dropped, on);
  }

  /** Taken up after its runtime died: it may have durable steps stored by the runtime that died. */
  get recovered(): boolean {
    return (this.#flags & FLAGS.recovered) !== 0;
  }

  /** Runs this call may have in all: its retry policy's, or for a recovered call its recovery attempts. */
  get maxAttempts(): number {
    return this.recovered ? this.settings.recoveryAttempts : this.settings.maxAttempts;
  }

  #flag(flag: number, on: boolean): void {
    this.#flags = on ? this.#flags | flag : this.#flags & ~flag;
  }

  get state(): CallState {
    return this.#state;
  }

  /**
   * The call's mailbox: takes one event at a time (the driver sends them) and returns the machine's
   * step, the compiled machine's (`nextCallStep`). The call is its own actor: an XState `Actor`
   * around the compiled logic (its own system, mailbox and closures) cost a fifth of a call's CPU
   * in memory and did nothing more. With `inspect`, the machine itself runs beside, as an XState
   * actor, for XState's tools.
   */
  send(event: CallMachineEvent): CallStep {
    // With an inspector the machine itself runs beside, so that XState's tools see it (slower; for development).
    if (this.#flags & FLAGS.inspected) inspectedActors.get(this)?.send(event);
    const step = nextCallStep(this.#state, event);
    this.#state = step.state;
    return step;
  }

  nextSeq(): number {
    return ++this.#seq;
  }

  /** Numbers the next event after `lastSeq`: the ones after it were refused, and are not written. */
  rewind(lastSeq: number): void {
    this.#seq = lastSeq;
  }

  /** Nobody has been answered yet: a caller (or a repeat of its request) may wait for the reply. */
  get unanswered(): boolean {
    return this.#answer !== undefined;
  }

  /** Gives the caller its reply; only the first answer counts. */
  answer(reply: CallReply | Promise<CallReply>): void {
    const answer = this.#answer;
    this.#answer = undefined;
    answer?.(reply);
  }

  /** The background runs: the tail keeps the last characters, the log its first 256 KiB; both prefix each chunk with its stream. */
  appendLog(stream: LogStream, chunk: string): void {
    const line = `[${stream}] ${chunk}`;
    this.record.outputTail = (this.record.outputTail + line).slice(-OUTPUT_TAIL_CHARS);
    if (this.#flags & FLAGS.logTruncated) return;
    const room = OUTPUT_LOG_MAX_CHARS - this.#log.length;
    this.#log += line.length <= room ? line : line.slice(0, room);
    this.#flag(FLAGS.logTruncated, line.length > room);
  }

  /** The `output.log` of a background run. */
  outputLog(): string {
    return this.#flags & FLAGS.logTruncated ? `${this.#log}${OUTPUT_LOG_TRUNCATED_LINE}` : this.#log;
  }

  /** Made on first use: most tools never look at their signal. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#abortReason) this.#controller.abort(this.#abortReason);
    }
    return this.#controller.signal;
  }

  abort(reason: BatonError): void {
    if (this.#abortReason) return;
    this.#abortReason = reason;
    this.#controller?.abort(reason);
  }

  /** What the call keeps as it talks back, made now if it had none. */
  get talk(): TalkState {
    this.#talk ??= { lastSignAt: 0 };
    return this.#talk;
  }

  /** The same, without making it: undefined for a call that never talked back. */
  get talking(): TalkState | undefined {
    return this.#talk;
  }

  /** Stops the running attempt as stalled: its signal is aborted; the next attempt gets one of its own. */
  stopAttempt(reason: BatonError): void {
    if (this.#abortReason) return;
    const talk = this.talk;
    talk.stalledAttempt = this.record.attempt;
    talk.stalledReason = reason;
    this.#controller?.abort(reason);
    this.#controller = undefined;
  }

  /** The signal a run sees: that of a run stopped as stalled, or over since, is aborted. */
  signalOf(attempt: number): AbortSignal {
    const stopped = this.#talk?.stalledReason;
    if (!stopped) return this.signal;
    const over = attempt < this.record.attempt || attempt === this.#talk?.stalledAttempt;
    return over ? AbortSignal.abort(stopped) : this.signal;
  }
}
