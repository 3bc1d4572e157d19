import { EventBus } from '@baton/bus';
import {
  type AnyTool,
  BatonError,
  type CallError,
  type CallEvent,
  type CallEventInput,
  type CallRecord,
  type CallReply,
  type CallStatus,
  DEFAULT_INLINE_BUDGET_MS,
  DEFAULT_MAX_ARGS_BYTES,
  defaultResultFormatter,
  type ExecutionMode,
  type FormattedCall,
  isTerminalStatus,
  type Notification,
  type RecordedError,
  type ResultFormatter,
  type TerminalStatus,
  ToolRegistry,
  type ValidationResult,
} from '@baton/contracts';
import type { CallMachineEvent } from '@baton/machine';
import {
  type CallFilter,
  type CallPage,
  memoryStore,
  type NotificationFilter,
  type Store,
} from '@baton/store';
import type { Observable } from 'rxjs';
import { uuidv7 } from 'uuidv7';
import { checkArguments } from './arguments.js';
import { type Clock, systemClock } from './clock.js';
import {
  CANCELLED_BEFORE_COMPLETION,
  CANCELLED_MESSAGE,
  CLOSED_REASON,
  DEFAULT_CONCURRENCY,
  notificationBody,
  notificationTitle,
  OUTPUT_TAIL_CHARS,
  timedOutMessage,
  toolNotFoundMessage,
} from './limits.js';
import { type ContextHost, LiveCall } from './live-call.js';
import { invalidArgumentsMessage, type Outcome, returnedOutcome, thrownOutcome } from './outcome.js';
import { WriteBatcher } from './write-batcher.js';

export interface RuntimeOptions {
  /** The tools this runtime can call: a list, or a registry to share. */
  tools?: Iterable<AnyTool> | ToolRegistry;
  /** Where calls, events and notifications are kept. Default: in memory. `close()` closes it. */
  store?: Store;
  /** Seed 000: how long an `auto` call may keep its caller waiting. Default 300 ms. */
  inlineBudgetMs?: number;
  /** The mode of tools that declare none. Default `inline`. */
  defaultMode?: ExecutionMode;
  /** A hard limit on each run of tools that set none. Default: none. */
  timeoutMs?: number;
  /** Arguments larger than this (as JSON) are refused. Default 1 MiB. */
  maxArgsBytes?: number;
  /** Shapes background replies; a tool's own formatter wins over it. Default: seed 001's shapes. */
  formatter?: Partial<ResultFormatter>;
  clock?: Clock;
  limits?: {
    /** Calls running at once. Default 64. */
    concurrency?: number;
  };
}

export interface CallRequest {
  name: string;
  /** The arguments the model gave; omitted means `{}`. */
  args?: unknown;
  sessionId: string;
  /** The model's own tool-call id: the same id twice is the same call. Default: a new UUIDv7. */
  callId?: string;
  messageId?: string;
}

export interface RuntimeStats {
  /** Calls admitted and not yet ended. */
  active: number;
  running: number;
  queued: number;
  /** Budget and timeout timers armed. */
  timers: number;
  /** Per-call and per-session bus routes with a live subscriber. */
  routes: number;
}

export interface Runtime {
  readonly tools: ToolRegistry;
  /** Every event of every call. */
  readonly events$: Observable<CallEvent>;
  callEvents$(callId: string): Observable<CallEvent>;
  sessionEvents$(sessionId: string): Observable<CallEvent>;
  /** Runs a tool call. A failure of any kind is a reply, never a rejection. */
  call(request: CallRequest): Promise<CallReply>;
  /** True when the call was running or queued and is now `cancelled`. */
  cancel(callId: string, reason?: string): Promise<boolean>;
  /** Cancels every live call of a session; resolves with how many. */
  cancelSession(sessionId: string, reason?: string): Promise<number>;
  get(callId: string): Promise<CallRecord | undefined>;
  list(filter?: CallFilter): Promise<CallPage>;
  readonly notifications: {
    list(filter?: NotificationFilter): Promise<Notification[]>;
    /** False when there is no such notification or it was already acknowledged. */
    ack(notificationId: string): Promise<boolean>;
  };
  stats(): RuntimeStats;
  /** Cancels every live call, writes what is pending, and closes the store. */
  close(): Promise<void>;
}

type Ending =
  | { type: 'DONE'; outcome: Extract<Outcome, { ok: true }> }
  | { type: 'FAIL'; outcome: Extract<Outcome, { ok: false }> }
  | { type: 'CANCEL'; reason: string }
  | { type: 'TIMEOUT' };

class BatonRuntime implements Runtime, ContextHost {
  readonly tools: ToolRegistry;
  readonly #store: Store;
  readonly #bus = new EventBus();
  readonly #writer: WriteBatcher;
  readonly #clock: Clock;
  readonly #formatter: ResultFormatter;
  readonly #inlineBudgetMs: number;
  readonly #defaultMode: ExecutionMode;
  readonly #timeoutMs: number | undefined;
  readonly #maxArgsBytes: number;
  readonly #concurrency: number;
  readonly #live = new Map<string, LiveCall>();
  /** Calls waiting for a slot, oldest first. */
  readonly #queue = new Map<string, LiveCall>();
  /** Calls whose `callId` is being looked up in the store, so that the same id twice is one call. */
  readonly #lookups = new Map<string, Promise<CallReply>>();
  #running = 0;
  #timers = 0;
  #pumping = false;
  #closed = false;

  readonly events$: Observable<CallEvent>;
  readonly notifications: Runtime['notifications'];

  constructor(options: RuntimeOptions) {
    this.tools =
      options.tools instanceof ToolRegistry ? options.tools : new ToolRegistry(options.tools ?? []);
    this.#store = options.store ?? memoryStore();
    this.#writer = new WriteBatcher(this.#store, (event) => this.#bus.publish(event));
    this.#clock = options.clock ?? systemClock;
    this.#formatter = { ...defaultResultFormatter, ...options.formatter };
    this.#inlineBudgetMs = positive('inlineBudgetMs', options.inlineBudgetMs) ?? DEFAULT_INLINE_BUDGET_MS;
    this.#defaultMode = options.defaultMode ?? 'inline';
    this.#timeoutMs = positive('timeoutMs', options.timeoutMs);
    this.#maxArgsBytes = positive('maxArgsBytes', options.maxArgsBytes) ?? DEFAULT_MAX_ARGS_BYTES;
    this.#concurrency = positive('limits.concurrency', options.limits?.concurrency) ?? DEFAULT_CONCURRENCY;
    this.events$ = this.#bus.events$;
    this.notifications = {
      list: (filter) => this.#store.listNotifications(filter),
      ack: (id) => this.#store.acknowledgeNotification(id, this.#clock.now()),
    };
  }

  callEvents$(callId: string): Observable<CallEvent> {
    return this.#bus.call$(callId);
  }

  sessionEvents$(sessionId: string): Observable<CallEvent> {
    return this.#bus.session$(sessionId);
  }

  // ---------------------------------------------------------------------------------------------
  // The journey of one call: request -> validate -> admit -> start -> settle -> end (reply or
  // notification). Each step is a call into the package that owns it.
  // ---------------------------------------------------------------------------------------------

  call(request: CallRequest): Promise<CallReply> {
    if (this.#closed) return Promise.reject(new BatonError('closed', 'the runtime is closed'));
    if (typeof request?.name !== 'string' || typeof request.sessionId !== 'string') {
      return Promise.reject(
        new BatonError('invalid_arguments', 'a call needs a string `name` and `sessionId`'),
      );
    }
    const createdAt = this.#clock.now();
    if (request.callId === undefined) return this.#validate(request, uuidv7(), createdAt);
    const callId = request.callId;
    const live = this.#live.get(callId);
    if (live) return live.reply;
    const pending = this.#lookups.get(callId);
    if (pending) return pending;
    const lookup = this.#store
      .getCall(callId)
      .then((existing) => (existing ? this.#replyOf(existing) : this.#validate(request, callId, createdAt)))
      .finally(() => this.#lookups.delete(callId));
    this.#lookups.set(callId, lookup);
    return lookup;
  }

  /** Step 1: the tool exists and the arguments fit its schema. Bad input ends here, as a reply. */
  #validate(request: CallRequest, callId: string, createdAt: number): Promise<CallReply> {
    const tool = this.tools.get(request.name);
    if (!tool) {
      const message = toolNotFoundMessage(request.name, this.tools.names());
      return this.#refuse(request, callId, createdAt, request.args, { code: 'tool_not_found', message });
    }
    const checked = checkArguments(request.args, this.#maxArgsBytes);
    if (!checked.ok) {
      return this.#refuse(request, callId, createdAt, checked.tooLarge ? undefined : request.args, {
        code: 'invalid_arguments',
        message: invalidArgumentsMessage(tool.name, checked.issues),
        issues: checked.issues,
      });
    }
    const validated = tool.validateInput(checked.args);
    const proceed = (result: ValidationResult): Promise<CallReply> => {
      if (!result.ok) {
        const error = {
          code: 'invalid_arguments' as const,
          message: invalidArgumentsMessage(tool.name, result.issues),
          issues: result.issues,
        };
        return this.#refuse(request, callId, createdAt, checked.args, error);
      }
      return this.#admit(tool, request, callId, createdAt, checked.args, result.value);
    };
    return validated instanceof Promise ? validated.then(proceed) : proceed(validated);
  }

  /** Step 2: the call is accepted: it gets its record, its actor and its budget, then a slot or a place in the queue. */
  #admit(
    tool: AnyTool,
    request: CallRequest,
    callId: string,
    createdAt: number,
    rawArgs: unknown,
    args: unknown,
  ): Promise<CallReply> {
    const mode = tool.execution.mode ?? this.#defaultMode;
    const record: CallRecord = {
      callId,
      sessionId: request.sessionId,
      toolName: tool.name,
      args: rawArgs,
      status: 'queued',
      mode,
      detached: mode === 'background',
      attempt: 0,
      createdAt,
      outputTail: '',
      ...(request.messageId !== undefined ? { messageId: request.messageId } : {}),
    };
    const call = new LiveCall({
      record,
      tool,
      args,
      inlineBudgetMs: tool.execution.inlineBudgetMs ?? this.#inlineBudgetMs,
      timeoutMs: tool.execution.timeoutMs ?? this.#timeoutMs,
    });
    this.#live.set(callId, call);
    this.#emit(call, { type: 'queued', mode });
    this.#writer.record(record);
    if (mode === 'background') this.#answerBackgrounded(call, 'mode');
    if (mode === 'auto') this.#armBudget(call);
    this.#queue.set(callId, call);
    this.#pump();
    return call.reply;
  }

  /** Step 3: a slot is free. The same execution runs whether the caller waits or not. */
  #start(call: LiveCall): void {
    this.#running++;
    call.record.attempt++;
    call.record.startedAt = this.#clock.now();
    this.#drive(call, { type: 'START' });
    this.#emit(call, { type: 'started', attempt: call.record.attempt });
    if (call.timeoutMs !== undefined) {
      call.timeoutTimer = this.#arm(() => {
        call.timeoutTimer = undefined;
        this.#drive(call, { type: 'TIMEOUT' });
      }, call.timeoutMs);
    }
    call.executing = true;
    let returned: unknown;
    try {
      returned = call.tool.execute(call.args as never, call.context(this));
    } catch (thrown) {
      this.#settle(call, thrownOutcome(thrown));
      return;
    }
    if (isPromiseLike(returned)) {
      returned.then(
        (value) => this.#settleReturned(call, value),
        (thrown) => this.#settle(call, thrownOutcome(thrown)),
      );
    } else {
      this.#settleReturned(call, returned);
    }
  }

  #settleReturned(call: LiveCall, returned: unknown): void {
    const outcome = returnedOutcome(call.tool, returned);
    if (outcome instanceof Promise) outcome.then((checked) => this.#settle(call, checked));
    else this.#settle(call, outcome);
  }

  /** Step 4: the tool returned. A result that arrives after cancel or timeout changes nothing. */
  #settle(call: LiveCall, outcome: Outcome): void {
    call.executing = false;
    if (isTerminalStatus(call.record.status)) return;
    this.#drive(call, outcome.ok ? { type: 'DONE', outcome } : { type: 'FAIL', outcome });
  }

  /**
   * Sends an event to the call's actor and carries out what the machine decided. The machine
   * owns every transition; this is the only place the runtime reacts to one.
   */
  #drive(call: LiveCall, event: Ending | { type: 'START' | 'BUDGET' }): void {
    const before = call.record.status;
    const wasDetached = call.record.detached;
    call.actor.send({ type: event.type } satisfies CallMachineEvent);
    const snapshot = call.actor.getSnapshot();
    const status = snapshot.value as CallStatus;
    call.record.status = status;
    if (snapshot.context.detached && !wasDetached) this.#answerBackgrounded(call, 'budget');
    if (status === before) {
      this.#writer.record(call.record);
      return;
    }
    if (isTerminalStatus(status)) this.#end(call, status, event as Ending);
    else this.#writer.record(call.record);
  }

  /** Step 5: the call reached a terminal state: its caller gets the reply, or its session a notification. */
  #end(call: LiveCall, status: TerminalStatus, ending: Ending): void {
    const record = call.record;
    const wasRunning = record.startedAt !== undefined;
    this.#disarm(call);
    record.endedAt = this.#clock.now();
    record.durationMs = record.endedAt - (record.startedAt ?? record.createdAt);
    const formatter = this.#formatterFor(call.tool);
    const formatted: FormattedCall = { callId: record.callId, toolName: record.toolName, args: record.args };
    let notificationOutput: unknown;
    let notificationText: { value: unknown } | { error: string };

    if (ending.type === 'DONE') {
      const { value, images, rawOutput } = ending.outcome;
      record.result = value;
      record.output = value;
      if (images) record.images = images;
      if (rawOutput !== undefined) record.rawOutput = rawOutput;
      this.#emit(call, { type: 'succeeded', output: value });
      notificationOutput = formatter.result(formatted, { ok: true, value });
      notificationText = { value };
    } else {
      const error: RecordedError =
        ending.type === 'FAIL'
          ? ending.outcome.error
          : ending.type === 'CANCEL'
            ? { code: 'cancelled', message: CANCELLED_MESSAGE }
            : { code: 'timed_out', message: timedOutMessage(call.timeoutMs ?? 0) };
      record.error = error;
      if (call.executing) call.abort(new BatonError(error.code, error.message));
      const visible = modelVisible(error);
      if (ending.type === 'CANCEL') {
        record.output = formatter.cancelled(formatted);
        this.#emit(call, { type: 'cancelled', reason: ending.reason });
        notificationOutput = record.output;
        notificationText = { error: CANCELLED_BEFORE_COMPLETION };
      } else {
        record.output = ending.type === 'FAIL' ? ending.outcome.output : { error: error.message };
        if (ending.type === 'TIMEOUT')
          this.#emit(call, { type: 'timed_out', timeoutMs: call.timeoutMs ?? 0 });
        else this.#emit(call, { type: 'failed', error: visible });
        notificationOutput = formatter.result(formatted, { ok: false, error: visible });
        notificationText = { error: error.message };
      }
    }

    this.#live.delete(record.callId);
    this.#queue.delete(record.callId);
    if (record.detached) this.#notify(call, status, notificationOutput, notificationText);
    const written = this.#writer.record(record);
    call.answer(written.then(() => this.#replyOf(record), persistenceFailed(record.callId)));
    if (wasRunning) {
      this.#running--;
      this.#pump();
    }
  }

  #notify(
    call: LiveCall,
    outcome: TerminalStatus,
    output: unknown,
    text: { value: unknown } | { error: string },
  ): void {
    const record = call.record;
    const notification: Notification = {
      id: uuidv7(),
      callId: record.callId,
      sessionId: record.sessionId,
      toolName: record.toolName,
      status: 'queued',
      outcome,
      title: notificationTitle(record.toolName, outcome),
      body: notificationBody(record, text),
      output,
      scheduling: call.tool.execution.scheduling,
      createdAt: this.#clock.now(),
    };
    this.#writer.notification(notification);
    this.#emit(call, { type: 'notification', notificationId: notification.id, title: notification.title });
  }

  /** Seed 000 / 001: the caller is told at once that the call continues, with its id as the handle. */
  #answerBackgrounded(call: LiveCall, reason: 'budget' | 'mode'): void {
    const record = call.record;
    record.detached = true;
    this.#emit(call, { type: 'backgrounded', reason, afterMs: this.#clock.now() - record.createdAt });
    const formatted: FormattedCall = { callId: record.callId, toolName: record.toolName, args: record.args };
    const output = this.#formatterFor(call.tool).running(
      formatted,
      reason === 'budget' ? call.inlineBudgetMs : undefined,
    );
    const reply: CallReply = { callId: record.callId, status: 'backgrounded', output };
    call.answer(this.#writer.record(record).then(() => reply, persistenceFailed(record.callId)));
  }

  /** The budget counts from the call, queue time included: the caller never waits longer than it. */
  #armBudget(call: LiveCall): void {
    const remaining = call.inlineBudgetMs - (this.#clock.now() - call.record.createdAt);
    const fire = () => {
      call.budgetTimer = undefined;
      this.#drive(call, { type: 'BUDGET' });
    };
    if (remaining <= 0) fire();
    else call.budgetTimer = this.#arm(fire, remaining);
  }

  #pump(): void {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      for (const call of this.#queue.values()) {
        if (this.#running >= this.#concurrency) break;
        this.#queue.delete(call.record.callId);
        this.#start(call);
      }
    } finally {
      this.#pumping = false;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Reports from running tools (through their context)
  // ---------------------------------------------------------------------------------------------

  progress(call: LiveCall, progress: Parameters<ContextHost['progress']>[1]): void {
    if (isTerminalStatus(call.record.status)) return;
    call.record.progress = { ...progress };
    this.#emit(call, { type: 'progress', progress: call.record.progress });
    this.#writer.record(call.record);
  }

  status(call: LiveCall, text: string): void {
    if (isTerminalStatus(call.record.status)) return;
    call.record.statusText = text;
    this.#emit(call, { type: 'status', text });
    this.#writer.record(call.record);
  }

  log(call: LiveCall, stream: Parameters<ContextHost['log']>[1], chunk: string): void {
    if (isTerminalStatus(call.record.status)) return;
    call.record.outputTail = (call.record.outputTail + chunk).slice(-OUTPUT_TAIL_CHARS);
    this.#emit(call, { type: 'log', stream, chunk });
    this.#writer.record(call.record);
  }

  // ---------------------------------------------------------------------------------------------
  // Control and queries
  // ---------------------------------------------------------------------------------------------

  async cancel(callId: string, reason = 'cancelled by the caller'): Promise<boolean> {
    const call = this.#live.get(callId);
    if (!call) return false;
    this.#drive(call, { type: 'CANCEL', reason });
    await this.#writer.record(call.record).catch(() => {});
    return true;
  }

  async cancelSession(sessionId: string, reason = 'the session was cancelled'): Promise<number> {
    const calls = [...this.#live.values()].filter((call) => call.record.sessionId === sessionId);
    const cancelled = await Promise.all(calls.map((call) => this.cancel(call.record.callId, reason)));
    return cancelled.filter(Boolean).length;
  }

  async get(callId: string): Promise<CallRecord | undefined> {
    const live = this.#live.get(callId);
    return live ? structuredClone(live.record) : this.#store.getCall(callId);
  }

  list(filter?: CallFilter): Promise<CallPage> {
    return this.#store.listCalls(filter);
  }

  stats(): RuntimeStats {
    return {
      active: this.#live.size,
      running: this.#running,
      queued: this.#queue.size,
      timers: this.#timers,
      routes: this.#bus.routeCount(),
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([...this.#live.keys()].map((callId) => this.cancel(callId, CLOSED_REASON)));
    await Promise.allSettled([...this.#lookups.values()]);
    await this.#writer.drain();
    this.#bus.complete();
    await this.#store.close();
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers
  // ---------------------------------------------------------------------------------------------

  /** Refused calls leave a record too (ended `failed`, never run), so that nothing asked for is unaccounted. */
  #refuse(
    request: CallRequest,
    callId: string,
    createdAt: number,
    args: unknown,
    error: CallError,
  ): Promise<CallReply> {
    const record: CallRecord = {
      callId,
      sessionId: request.sessionId,
      toolName: request.name,
      args,
      status: 'failed',
      mode: 'inline',
      detached: false,
      attempt: 0,
      createdAt,
      endedAt: createdAt,
      durationMs: 0,
      outputTail: '',
      output: { error: error.message },
      error,
      ...(request.messageId !== undefined ? { messageId: request.messageId } : {}),
    };
    this.#writer.event({ type: 'failed', error, ...this.#stamp(record, 1) } as CallEvent);
    return this.#writer.record(record).then(() => this.#replyOf(record), persistenceFailed(callId));
  }

  #replyOf(record: CallRecord): CallReply {
    if (!isTerminalStatus(record.status)) {
      const formatted: FormattedCall = {
        callId: record.callId,
        toolName: record.toolName,
        args: record.args,
      };
      const tool = this.tools.get(record.toolName);
      return {
        callId: record.callId,
        status: 'backgrounded',
        output: this.#formatterFor(tool).running(formatted),
      };
    }
    const reply: CallReply = { callId: record.callId, status: record.status, output: record.output };
    if (record.error) reply.error = modelVisible(record.error);
    if (record.images) reply.images = record.images;
    return reply;
  }

  #formatterFor(tool: AnyTool | undefined): ResultFormatter {
    return tool?.formatter ? { ...this.#formatter, ...tool.formatter } : this.#formatter;
  }

  /** Events reach the bus once they are stored (see WriteBatcher). */
  #emit(call: LiveCall, input: CallEventInput): void {
    this.#writer.event({ ...input, ...this.#stamp(call.record, call.nextSeq()) } as CallEvent);
  }

  #stamp(record: CallRecord, seq: number) {
    return {
      callId: record.callId,
      sessionId: record.sessionId,
      toolName: record.toolName,
      seq,
      at: this.#clock.now(),
    };
  }

  #arm(callback: () => void, ms: number): unknown {
    this.#timers++;
    return this.#clock.setTimeout(() => {
      this.#timers--;
      callback();
    }, ms);
  }

  #disarm(call: LiveCall): void {
    for (const handle of [call.budgetTimer, call.timeoutTimer]) {
      if (handle === undefined) continue;
      this.#clock.clearTimeout(handle);
      this.#timers--;
    }
    call.budgetTimer = undefined;
    call.timeoutTimer = undefined;
  }
}

/** What the model may see of an error: never an internal error's details. */
function modelVisible(error: RecordedError): CallError {
  const { details: _details, ...visible } = error;
  return visible;
}

function persistenceFailed(callId: string): (cause: unknown) => CallReply {
  return (cause) => ({
    callId,
    status: 'failed',
    output: { error: 'The call could not be saved' },
    error: {
      code: 'persistence_failed',
      message: `The call could not be saved: ${(cause as Error)?.message ?? cause}`,
    },
  });
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

function positive(name: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!(Number.isFinite(value) && value > 0)) {
    throw new BatonError('invalid_definition', `createRuntime: ${name} must be a positive number`);
  }
  return value;
}

export function createRuntime(options: RuntimeOptions = {}): Runtime {
  return new BatonRuntime(options);
}
