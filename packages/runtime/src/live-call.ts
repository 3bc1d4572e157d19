import type {
  AnyTool,
  BatonError,
  CallRecord,
  CallReply,
  CallStatus,
  LogStream,
  Progress,
  ToolContext,
} from '@baton/contracts';
import {
  type CallMachine,
  type CallMachineEvent,
  type CallState,
  type CompiledCallLogic,
  callMachine,
  compiledCallLogic,
  initialCallState,
} from '@baton/machine';
import { type Actor, createActor, type InspectionEvent, type Observer, type SnapshotFrom } from 'xstate';
import {
  eventKey,
  OUTPUT_LOG_MAX_CHARS,
  OUTPUT_LOG_TRUNCATED_LINE,
  OUTPUT_TAIL_CHARS,
  replayKey,
} from './limits.js';

/** An XState inspection observer (`@statelyai/inspect`'s `inspect`, or a function). */
export type CallInspector = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

/** The parts of the runtime a running tool reports to through its context. */
export interface ContextHost {
  waitFor<T>(call: LiveCall, key: string, options: { timeoutMs?: number }): Promise<T>;
  step<T>(call: LiveCall, stepId: string, run: () => T | Promise<T>): Promise<T>;
  progress(call: LiveCall, progress: Parameters<ToolContext['progress']>[0]): void;
  status(call: LiveCall, text: string): void;
  log(call: LiveCall, stream: Parameters<ToolContext['log']>[0], chunk: string): void;
}

/** The calls of one `callBatch`: with `continueOnFailure: false`, the first failure cancels those not started. */
export interface CallBatch {
  continueOnFailure: boolean;
  calls: LiveCall[];
  /** Set by the first failure: why the calls that had not started were cancelled. */
  failure?: string;
}

/** A call between its admission and its terminal state: its actor, timers, signal and pending reply. */
export class LiveCall {
  readonly record: CallRecord;
  readonly tool: AnyTool;
  /** The arguments as the input schema parsed them: what `execute` receives (let go once it has them). */
  args: unknown;
  readonly inlineBudgetMs: number;
  readonly timeoutMs: number | undefined;
  /**
   * The call's actor: the call machine, compiled (see `@baton/machine`). It is awake only while the
   * call runs inline; a call that waits (queued, or in the background, maybe for hours) keeps its
   * actor as its snapshot, which is a shared state object, and the actor is revived on its next event.
   */
  #actor: Actor<CompiledCallLogic> | undefined;
  #state: CallState;
  readonly reply: Promise<CallReply>;
  /** The tool is running and has not returned. */
  executing = false;
  /** The call holds one of the admission's running slots. */
  holdsSlot = false;
  /** Claimed from a shared store (another process submitted it): a closing worker gives it back if it has not started. */
  adopted = false;
  /** Another instance owns the call now: this copy does nothing more. */
  dropped = false;
  /** How many times the store refused this call's end (see the runtime's #storeEndAgain). */
  refusedEnds = 0;
  batch: CallBatch | undefined;
  budgetTimer: unknown;
  timeoutTimer: unknown;
  /** Armed between a failed attempt and the next. */
  retryTimer: unknown;
  /** On a shared store: armed after a progress event; later progress waits for it (conflation). */
  progressTimer: unknown;
  /** Runs this call may have in all (its retry policy's `maxAttempts`, else 1). */
  readonly maxAttempts: number;
  /** A recovered call may have durable steps stored by the runtime that died. */
  readonly recovered: boolean;
  /** Finished durable steps by id: kept across attempts, loaded from the store once for a recovered call. */
  finishedSteps: Promise<Map<string, unknown>> | undefined;
  /** The step ids this attempt has used (seed 003: an id is used once per attempt); made on the first step. */
  stepsOfAttempt: Set<string> | undefined;
  #seq: number;
  #log = '';
  #logTruncated = false;
  /** Resolves `reply`; dropped once used, so that a call parked for hours holds no closure for it. */
  #answer: ((reply: CallReply | Promise<CallReply>) => void) | undefined;
  #controller: AbortController | undefined;
  #inspected: Actor<CallMachine> | undefined;
  #abortReason: BatonError | undefined;

  constructor(init: {
    record: CallRecord;
    tool: AnyTool;
    args: unknown;
    inlineBudgetMs: number;
    timeoutMs: number | undefined;
    maxAttempts: number;
    /** A recovered call: the last `seq` it stored, and the state it was left in. */
    lastSeq?: number;
    resumeAt?: CallStatus;
    recovered?: boolean;
    /** Runs the call as a live `callMachine` actor that this observer watches, start to end. */
    inspect?: CallInspector;
  }) {
    this.maxAttempts = init.maxAttempts;
    this.recovered = init.recovered ?? false;
    this.record = init.record;
    this.tool = init.tool;
    this.args = init.args;
    this.inlineBudgetMs = init.inlineBudgetMs;
    this.timeoutMs = init.timeoutMs;
    this.#seq = init.lastSeq ?? 0;
    // Every call starts waiting (queued), so its actor starts asleep; a recovered one where it was left.
    const start = initialCallState({ mode: init.record.mode, detached: init.record.detached });
    this.#state = init.resumeAt ? { ...start, value: init.resumeAt } : start;
    if (init.inspect) this.#inspected = this.#inspectedActor(init.inspect);
    this.reply = new Promise((resolve) => {
      this.#answer = resolve;
    });
  }

  get state(): CallState {
    return this.#state;
  }

  /** Sends an event to the call's actor (reviving it if it sleeps) and returns where the call is now. */
  send(event: CallMachineEvent): CallState {
    if (this.#inspected) {
      this.#inspected.send(event);
      const snapshot = this.#inspected.getSnapshot();
      this.#state = {
        value: snapshot.value,
        mode: snapshot.context.mode,
        detached: snapshot.context.detached,
      };
      return this.#state;
    }
    const actor = this.#actor ?? this.#revive();
    actor.send(event);
    this.#state = actor.getSnapshot().context;
    this.#actor = this.#state.value === 'inline' ? actor : undefined;
    return this.#state;
  }

  /**
   * With an inspector, the call runs as the machine itself, one actor from start to end, so that
   * XState tools see the real machine, its events and its snapshots. Slower; for development.
   */
  #inspectedActor(inspect: CallInspector): Actor<CallMachine> {
    const { value, mode, detached } = this.#state;
    const snapshot = callMachine.resolveState({ value, context: { mode, detached } });
    return createActor(callMachine, {
      input: { mode, detached },
      snapshot,
      inspect,
      id: this.record.callId,
    }).start();
  }

  #revive(): Actor<CompiledCallLogic> {
    const snapshot: SnapshotFrom<CompiledCallLogic> = {
      status: 'active',
      output: undefined,
      error: undefined,
      context: this.#state,
    };
    return createActor(compiledCallLogic, { snapshot, input: this.#state }).start();
  }

  nextSeq(): number {
    return ++this.#seq;
  }

  /** Gives the caller its reply; only the first answer counts. */
  answer(reply: CallReply | Promise<CallReply>): void {
    const answer = this.#answer;
    this.#answer = undefined;
    answer?.(reply);
  }

  /** Seed 002: the tail keeps the last characters, the log its first 256 KiB; both prefix each chunk with its stream. */
  appendLog(stream: LogStream, chunk: string): void {
    const line = `[${stream}] ${chunk}`;
    this.record.outputTail = (this.record.outputTail + line).slice(-OUTPUT_TAIL_CHARS);
    if (this.#logTruncated) return;
    const room = OUTPUT_LOG_MAX_CHARS - this.#log.length;
    this.#log += line.length <= room ? line : line.slice(0, room);
    this.#logTruncated = line.length > room;
  }

  /** The `output.log` of a background run. */
  outputLog(): string {
    return this.#logTruncated ? `${this.#log}${OUTPUT_LOG_TRUNCATED_LINE}` : this.#log;
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
}

/** What a running tool gets as `ctx`: one small object per run, its methods on the prototype. */
export class CallContext implements ToolContext {
  readonly #call: LiveCall;
  readonly #host: ContextHost;
  readonly attempt: number;

  constructor(call: LiveCall, host: ContextHost) {
    this.#call = call;
    this.#host = host;
    this.attempt = call.record.attempt;
  }

  get maxAttempts(): number {
    return this.#call.maxAttempts;
  }

  get replayKey(): string {
    const { sessionId, callId, toolName } = this.#call.record;
    return replayKey(sessionId, callId, toolName);
  }

  get prepared(): unknown {
    return this.#call.record.prepared;
  }

  step<T>(stepId: string, run: () => T | Promise<T>): Promise<T> {
    return this.#host.step(this.#call, stepId, run);
  }

  eventKey(name: string): string {
    return eventKey(this.#call.record.callId, name);
  }

  waitFor<T = unknown>(key: string, options: { timeoutMs?: number } = {}): Promise<T> {
    return this.#host.waitFor<T>(this.#call, key, options);
  }

  get callId(): string {
    return this.#call.record.callId;
  }

  get sessionId(): string {
    return this.#call.record.sessionId;
  }

  get toolName(): string {
    return this.#call.record.toolName;
  }

  get signal(): AbortSignal {
    return this.#call.signal;
  }

  progress(progress: Progress): void {
    this.#host.progress(this.#call, progress);
  }

  status(text: string): void {
    this.#host.status(this.#call, text);
  }

  log(stream: LogStream, chunk: string): void {
    this.#host.log(this.#call, stream, chunk);
  }
}
