import {
  type Caller,
  type InputOptions,
  type InputRequest,
  type InputResponse,
  type LogStream,
  type MessageOptions,
  type Progress,
  type ToolContext,
  TRUSTED_CALLER,
  type UpdateOptions,
} from '@baton/contracts';
import { eventKey, replayKey } from '../keys.js';
import type { LiveCall } from './live-call.js';

/** The parts of the runtime a running tool reports to through its context (see context-host.ts). */
export interface ContextHost {
  waitFor<T>(call: LiveCall, key: string, options: { timeoutMs?: number }): Promise<T>;
  input<T>(call: LiveCall, request: InputRequest, options: InputOptions): Promise<T>;
  step<T>(call: LiveCall, stepId: string, run: () => T | Promise<T>): Promise<T>;
  nextMessage(call: LiveCall, options: MessageOptions): Promise<unknown>;
  takeMessages(call: LiveCall): Promise<unknown[]>;
  heartbeat(call: LiveCall): void;
  update(call: LiveCall, value: unknown, options: UpdateOptions): void;
  progress(call: LiveCall, progress: Progress): void;
  status(call: LiveCall, text: string): void;
  log(call: LiveCall, stream: LogStream, chunk: string): void;
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

  input<R extends InputRequest>(request: R, options: InputOptions = {}): Promise<InputResponse<R>> {
    return this.#host.input<InputResponse<R>>(this.#call, request, options);
  }

  nextMessage(options: MessageOptions = {}): Promise<unknown> {
    return this.#host.nextMessage(this.#call, options);
  }

  takeMessages(): Promise<unknown[]> {
    return this.#host.takeMessages(this.#call);
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

  get caller(): Caller {
    return this.#call.record.caller ?? TRUSTED_CALLER;
  }

  get signal(): AbortSignal {
    return this.#call.signalOf(this.attempt);
  }

  heartbeat(): void {
    this.#host.heartbeat(this.#call);
  }

  update(value: unknown, options: UpdateOptions = {}): void {
    this.#host.update(this.#call, value, options);
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
