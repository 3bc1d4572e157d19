import type { AnyTool, BatonError, CallRecord, CallReply, ToolContext } from '@baton/contracts';
import { type CallMachine, callMachine } from '@baton/machine';
import { type Actor, createActor } from 'xstate';

/** The parts of the runtime a running tool reports to through its context. */
export interface ContextHost {
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
  /** The arguments as the input schema parsed them: what `execute` receives. */
  readonly args: unknown;
  readonly inlineBudgetMs: number;
  readonly timeoutMs: number | undefined;
  readonly actor: Actor<CallMachine>;
  readonly reply: Promise<CallReply>;
  /** The tool is running and has not returned. */
  executing = false;
  batch: CallBatch | undefined;
  budgetTimer: unknown;
  timeoutTimer: unknown;
  #seq = 0;
  #answered = false;
  #answer!: (reply: CallReply | Promise<CallReply>) => void;
  #controller: AbortController | undefined;
  #abortReason: BatonError | undefined;

  constructor(init: {
    record: CallRecord;
    tool: AnyTool;
    args: unknown;
    inlineBudgetMs: number;
    timeoutMs: number | undefined;
  }) {
    this.record = init.record;
    this.tool = init.tool;
    this.args = init.args;
    this.inlineBudgetMs = init.inlineBudgetMs;
    this.timeoutMs = init.timeoutMs;
    this.actor = createActor(callMachine, { input: { mode: init.record.mode } }).start();
    this.reply = new Promise((resolve) => {
      this.#answer = resolve;
    });
  }

  nextSeq(): number {
    return ++this.#seq;
  }

  get answered(): boolean {
    return this.#answered;
  }

  /** Gives the caller its reply; only the first answer counts. */
  answer(reply: CallReply | Promise<CallReply>): void {
    if (this.#answered) return;
    this.#answered = true;
    this.#answer(reply);
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

  context(host: ContextHost): ToolContext {
    const call = this;
    return {
      callId: call.record.callId,
      sessionId: call.record.sessionId,
      toolName: call.record.toolName,
      attempt: call.record.attempt,
      get signal() {
        return call.signal;
      },
      progress: (progress) => host.progress(call, progress),
      status: (text) => host.status(call, text),
      log: (stream, chunk) => host.log(call, stream, chunk),
    };
  }
}
