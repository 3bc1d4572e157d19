import type { LogStream, Progress, Scheduling } from './call.js';
import type { Caller } from './caller.js';
import type { InputOptions, InputRequest, InputResponse } from './input.js';

/** What a tool's `prepare` gets besides the arguments. */
export interface PrepareContext {
  readonly callId: string;
  readonly sessionId: string;
  readonly toolName: string;
  /**
   * Asks the caller for input before the call begins: resolves with the answer the request carries
   * under this name (`inputs`), or else ends the request with `input_required`, naming what is
   * asked, and records nothing. The caller asks its user and calls again with the answers: MCP's
   * multi round-trip requests, so a `background` tool can gather what it needs while its caller
   * is still there, and then run as a task. Names default to `input-1`, `input-2`... in order.
   */
  input<R extends InputRequest>(request: R, options?: { name?: string }): Promise<InputResponse<R>>;
}

/** How an update reaches the model; unset: as the tool's end would (its `scheduling`). */
export interface UpdateOptions {
  scheduling?: Scheduling;
}

/** How long `ctx.nextMessage` waits: past `timeoutMs` it throws `event_timeout`. */
export interface MessageOptions {
  timeoutMs?: number;
}

/**
 * What a tool's `execute` gets besides its arguments; `Prepared` is what its `prepare` returned,
 * `Message` what its `messages` schema makes of a message sent to it.
 */
export interface ToolContext<Prepared = unknown, Message = unknown> {
  readonly callId: string;
  readonly sessionId: string;
  readonly toolName: string;
  /** Who asked for the call (`TRUSTED_CALLER` when the way in named nobody). */
  readonly caller: Caller;
  /** Aborted when the call is cancelled or times out; a result that arrives after that is dropped. */
  readonly signal: AbortSignal;
  /** 1 for the first run of a call. */
  readonly attempt: number;
  /** How many runs its retry policy allows (1 without a policy). */
  readonly maxAttempts: number;
  /**
   * The same for every attempt of this call (`baton:{sessionId}:{callId}:{toolName}`, the durable context):
   * pass it to the services the tool calls as an idempotency key.
   */
  readonly replayKey: string;
  /** What the tool's `prepare` returned, or undefined. */
  readonly prepared: Prepared;
  /**
   * A durable step: `run` runs once per call and its result is stored; when the call runs again
   * (a retry, or after a crash) a finished step returns its stored result without running.
   * An empty id, or one this attempt already used, is an error before `run` runs (the durable context).
   */
  step<T>(stepId: string, run: () => T | Promise<T>): Promise<T>;
  /** A key for an external event of this call: the same every time for the same name (`runtime.eventKey` gives it too). */
  eventKey(name: string): string;
  /**
   * Waits for `runtime.resolveEvent(key, ...)`: resolves with its value, or throws a BatonError
   * `event_error`, `event_timeout` (past `timeoutMs`) or `event_cancelled`. A resolution given while
   * nobody waits (the call is between attempts, or its process died) is kept for the next wait.
   */
  waitFor<T = unknown>(key: string, options?: { timeoutMs?: number }): Promise<T>;
  /**
   * Asks the caller for input while the call runs (see `InputRequest`), and waits for the answer as
   * `waitFor` does: the call's `input_requested` event carries the request, its name and the key it
   * is answered under. `name` (default `input-1`, `input-2`... in the order of the attempt's
   * requests) is what an MCP client sees the request as; a call that runs again after a crash asks
   * under the same names, and gets the answers it had.
   */
  input<R extends InputRequest>(request: R, options?: InputOptions): Promise<InputResponse<R>>;
  /**
   * Steering, for a tool that declares `messages`: the next message sent to the call
   * (`runtime.steer`), once it comes. Each message is given once, in the order sent: it is marked
   * read in the store before it is returned, so a call that runs again (a retry, or after a crash)
   * gets the ones it had not read. Throws `event_timeout` past `timeoutMs`, `event_cancelled` when
   * the call is cancelled, `not_steerable` for a tool that declares no `messages`.
   */
  nextMessage(options?: MessageOptions): Promise<Message>;
  /**
   * Steering: every message sent and not yet read, oldest first, without waiting (none: empty):
   * for a loop that looks between its steps, as an agent between its turns. Marked read as
   * `nextMessage` marks one.
   */
  takeMessages(): Promise<Message[]>;
  /**
   * A sign of life with nothing to report, for a tool with `heartbeatTimeoutMs`: progress, a
   * status and a log line are signs too. Stores nothing.
   */
  heartbeat(): void;
  /**
   * An intermediate result for the model, not only for a UI: the call goes on. Kept on the record
   * (`update`, shown by `check_background`) and, for a call in the background, a notification
   * delivered by `scheduling` as its end is. Updates coalesce: one written within
   * `updateIntervalMs` of the last waits and is merged with those after it (the latest stands),
   * a newer update replaces one not yet given, and the end replaces any not yet given.
   */
  update(value: unknown, options?: UpdateOptions): void;
  /** Reports progress: a bus event, and the last one is kept on the record. */
  progress(progress: Progress): void;
  /** Sets the call's status text (what it is doing now). */
  status(text: string): void;
  /** Appends to the call's output; the record keeps its last characters. */
  log(stream: LogStream, chunk: string): void;
}
