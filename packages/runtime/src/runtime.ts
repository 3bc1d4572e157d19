import { EventBus } from '@baton/bus';
import {
  type AnyTool,
  BatonError,
  type CallError,
  type CallEvent,
  type CallEventInput,
  type CallRecord,
  type CallReply,
  checkRetryPolicy,
  DEFAULT_INLINE_BUDGET_MS,
  DEFAULT_MAX_ARGS_BYTES,
  DEFAULT_MAX_ARGS_DEPTH,
  defaultResultFormatter,
  type EventOutcome,
  type ExecutionMode,
  type FormattedCall,
  isTerminalStatus,
  MAX_ID_CHARS,
  type Notification,
  type RecordedError,
  type ResultFormatter,
  type RetryPolicy,
  type TerminalStatus,
  ToolRegistry,
  type ValidationResult,
} from '@baton/contracts';
import type { CallMachineEvent } from '@baton/machine';
import {
  type CallControl,
  type CallFilter,
  type CallPage,
  type ClaimedCall,
  memoryStore,
  type SessionEvent,
  type Store,
  type StoreNotice,
} from '@baton/store';
import { EMPTY, filter, firstValueFrom, merge, Observable, Subject, takeUntil } from 'rxjs';
import { uuidv7 } from 'uuidv7';
import { Admission } from './admission.js';
import { type ArgumentLimits, checkArguments, requestIdIssues } from './arguments.js';
import { type Clock, systemClock, unref } from './clock.js';
import { type FollowOptions, followStore } from './follow.js';
import {
  APPROVAL_PENDING_MESSAGE,
  approvalRejectedMessage,
  backgroundPerSessionMessage,
  backgroundPerWorkerMessage,
  batchFailedReason,
  CANCELLED_BEFORE_COMPLETION,
  CLAIM_BATCH_MAX,
  CLOSED_REASON,
  callOfEventKey,
  cancelledMessage,
  DEFAULT_BACKGROUND_PER_SESSION,
  DEFAULT_BACKGROUND_PER_WORKER,
  DEFAULT_CONCURRENCY,
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_MAX_OUTPUT_CHARS,
  DEFAULT_MAX_QUEUED,
  DEFAULT_NON_RETRYABLE_CODES,
  DEFAULT_POLL_MS,
  DEFAULT_PROGRESS_INTERVAL_MS,
  DEFAULT_RETRY_BACKOFF_COEFFICIENT,
  DEFAULT_RETRY_INITIAL_INTERVAL_MS,
  DEFAULT_SCHEDULES_PER_SESSION,
  duplicateStepIdMessage,
  EMPTY_STEP_ID_MESSAGE,
  END_REWRITE_INITIAL_MS,
  END_REWRITE_MAX_MS,
  EVENT_CANCELLED_MESSAGE,
  EVENT_TIMEOUT_MESSAGE,
  eventKey,
  fairShareOf,
  INTERRUPTED_MESSAGE,
  notificationBody,
  notificationTitle,
  persistenceFailedMessage,
  queueFullMessage,
  RETENTION_BATCH,
  timedOutMessage,
  toolNotFoundMessage,
  truncatedOutput,
} from './limits.js';
import { type CallBatch, CallContext, type CallInspector, type ContextHost, LiveCall } from './live-call.js';
import {
  type BatchOptions,
  type BatchRequest,
  type CallRequest,
  positive,
  type Runtime,
  type RuntimeLimits,
  type RuntimeOptions,
  type RuntimeRole,
  type RuntimeStats,
} from './options.js';
import { invalidArgumentsMessage, type Outcome, returnedOutcome, thrownOutcome } from './outcome.js';
import { goneInstances, thisInstance, unregisteredTool } from './recovery.js';
import { ScheduleRunner } from './schedules.js';
import {
  type RunRequest,
  runEndedMessage,
  SPAWN_BACKGROUND,
  spawnBackgroundTool,
  startRun,
} from './spawn-background.js';
import { storableText, storableValue } from './storable.js';
import { type RefusedWrite, type Rows, WriteBatcher } from './write-batcher.js';

/** The machine's events carry no data: one shared object each serves every call. */
const MACHINE_EVENTS: { readonly [T in CallMachineEvent['type']]: Readonly<{ type: T }> } = {
  START: { type: 'START' },
  BUDGET: { type: 'BUDGET' },
  DONE: { type: 'DONE' },
  FAIL: { type: 'FAIL' },
  CANCEL: { type: 'CANCEL' },
  TIMEOUT: { type: 'TIMEOUT' },
  REJECT: { type: 'REJECT' },
};

type Ending =
  | { type: 'DONE'; outcome: Extract<Outcome, { ok: true }> }
  | { type: 'FAIL' | 'REJECT'; outcome: Extract<Outcome, { ok: false }> }
  | { type: 'CANCEL'; reason?: string }
  | { type: 'TIMEOUT' };

class BatonRuntime implements Runtime, ContextHost {
  readonly tools: ToolRegistry;
  readonly instanceId: string;
  readonly ready: Promise<void>;
  readonly #store: Store;
  readonly #bus = new EventBus();
  readonly #writer: WriteBatcher;
  readonly #clock: Clock;
  readonly #inspect: CallInspector | undefined;
  readonly #formatter: ResultFormatter;
  readonly #inlineBudgetMs: number;
  readonly #defaultMode: ExecutionMode;
  readonly #timeoutMs: number | undefined;
  readonly #argumentLimits: ArgumentLimits;
  readonly #maxIdChars: number;
  readonly #maxOutputChars: number;
  readonly #leaseMs: number;
  readonly #maxAttempts: number;
  readonly #retry: RetryPolicy | undefined;
  /** The heartbeat and retention timers, cleared by `close()`. */
  readonly #housekeeping = new Set<unknown>();
  readonly #limits: Required<RuntimeLimits>;
  readonly #admission: Admission;
  readonly #live = new Map<string, LiveCall>();
  /** Ended calls whose terminal record is not written yet: `get()` must not go back in time. */
  readonly #ending = new Map<string, LiveCall>();
  /** Calls waiting in `ctx.waitFor`, by event key: how to hand each its outcome. */
  readonly #waiters = new Map<string, (outcome: EventOutcome | { timedOut: true }) => void>();
  /** Live calls whose caller was answered `backgrounded`, per session. */
  readonly #backgroundRuns = new Map<string, number>();
  #backgroundTotal = 0;
  /** Calls claimed here whose taking up failed: tried again at each recovery tick (see #takeUp). */
  readonly #notTakenUp = new Map<string, () => Promise<unknown>>();
  /** Calls whose `callId` is being looked up in the store, so that the same id twice is one call. */
  readonly #lookups = new Map<string, Promise<CallReply | undefined>>();
  #timers = 0;
  #pumping = false;
  #closed = false;
  readonly #role: RuntimeRole;
  /** On a shared store: what the other processes committed. */
  readonly #notices = new Subject<StoreNotice>();
  readonly #stopListening: (() => void) | undefined;
  readonly #pollMs: number;
  /** On a shared store, progress is conflated to one event per call this often. */
  readonly #progressIntervalMs: number | undefined;
  #claiming: Promise<void> | undefined;
  #claimAgain = false;
  /** Set by a notice of a queued call or a full claim; cleared by a claim that found fewer than it asked. */
  #workMayWait = false;

  readonly events$: Observable<CallEvent>;
  readonly notifications: Runtime['notifications'];
  readonly schedules: Runtime['schedules'];
  readonly #scheduleRunner: ScheduleRunner;

  constructor(options: RuntimeOptions) {
    this.tools =
      options.tools instanceof ToolRegistry ? options.tools : new ToolRegistry(options.tools ?? []);
    this.#store = options.store ?? memoryStore();
    this.#clock = options.clock ?? systemClock;
    this.instanceId = options.instanceId ?? uuidv7();
    this.#leaseMs = positive('leaseMs', options.leaseMs) ?? DEFAULT_LEASE_MS;
    this.#maxAttempts = positive('maxAttempts', options.maxAttempts) ?? DEFAULT_MAX_ATTEMPTS;
    checkRetryPolicy('createRuntime', options.retry);
    this.#retry = options.retry;
    this.#formatter = { ...defaultResultFormatter, ...options.formatter };
    this.#inlineBudgetMs = positive('inlineBudgetMs', options.inlineBudgetMs) ?? DEFAULT_INLINE_BUDGET_MS;
    this.#inspect = options.inspect;
    this.#defaultMode = options.defaultMode ?? 'inline';
    this.#timeoutMs = positive('timeoutMs', options.timeoutMs);
    this.#maxIdChars = positive('maxIdChars', options.maxIdChars) ?? MAX_ID_CHARS;
    this.#argumentLimits = {
      maxBytes: positive('maxArgsBytes', options.maxArgsBytes) ?? DEFAULT_MAX_ARGS_BYTES,
      maxDepth: positive('maxArgsDepth', options.maxArgsDepth) ?? DEFAULT_MAX_ARGS_DEPTH,
    };
    this.#maxOutputChars = positive('maxOutputChars', options.maxOutputChars) ?? DEFAULT_MAX_OUTPUT_CHARS;
    const limits = options.limits ?? {};
    const concurrency = positive('limits.concurrency', limits.concurrency) ?? DEFAULT_CONCURRENCY;
    // One session, or one tenant, holds at most its fair share of the slots unless told otherwise.
    const fairShare = fairShareOf(concurrency);
    this.#limits = {
      concurrency,
      maxQueued: positive('limits.maxQueued', limits.maxQueued) ?? DEFAULT_MAX_QUEUED,
      backgroundPerSession:
        positive('limits.backgroundPerSession', limits.backgroundPerSession) ??
        DEFAULT_BACKGROUND_PER_SESSION,
      backgroundPerWorker:
        positive('limits.backgroundPerWorker', limits.backgroundPerWorker) ?? DEFAULT_BACKGROUND_PER_WORKER,
      schedulesPerSession:
        positive('limits.schedulesPerSession', limits.schedulesPerSession) ?? DEFAULT_SCHEDULES_PER_SESSION,
      runningPerSession: positive('limits.runningPerSession', limits.runningPerSession) ?? fairShare,
      runningPerTenant: positive('limits.runningPerTenant', limits.runningPerTenant) ?? fairShare,
    };
    const ttl = options.retention && positive('retention.endedTtlMs', options.retention.endedTtlMs);
    this.#role = options.role ?? 'both';
    if (this.#role !== 'both' && !this.#store.listen) {
      throw new BatonError(
        'invalid_definition',
        `createRuntime: role '${this.#role}' needs a store that processes share (such as PostgreSQL)`,
      );
    }
    this.#pollMs = positive('pollMs', options.pollMs) ?? DEFAULT_POLL_MS;
    this.#progressIntervalMs = this.#store.listen
      ? (positive('progressIntervalMs', options.progressIntervalMs) ?? DEFAULT_PROGRESS_INTERVAL_MS)
      : undefined;
    this.#admission = new Admission({
      concurrency: this.#limits.concurrency,
      runningPerSession: this.#limits.runningPerSession,
      runningPerTenant: this.#limits.runningPerTenant,
      tenantOf: options.tenantOf,
    });
    const start = (request: RunRequest) => this.call(request);
    this.#scheduleRunner = new ScheduleRunner({
      clock: this.#clock,
      store: this.#store,
      save: (schedule) => this.#writer.write('schedules', schedule),
      fire: (schedule) => startRun({ start }, schedule),
      perSession: this.#limits.schedulesPerSession,
    });
    this.schedules = {
      list: (sessionId) => this.#scheduleRunner.list(sessionId),
      cancel: (scheduleId) => this.#scheduleRunner.cancel(scheduleId),
    };
    if (options.builtins?.includes(SPAWN_BACKGROUND)) {
      this.tools.register(
        spawnBackgroundTool({
          tools: this.tools,
          defaultMode: this.#defaultMode,
          start,
          schedules: this.#scheduleRunner,
        }),
      );
    }
    // Every option is valid by now: only then does the runtime announce itself in the store.
    const registered = this.#store.registerInstance(
      thisInstance(this.instanceId, this.#clock.now(), this.#leaseMs),
    );
    this.#writer = new WriteBatcher({
      store: this.#store,
      publish: (event) => this.#bus.publish(event),
      failed: (refused) => this.#writeFailed(refused),
      after: registered,
      writer: this.instanceId,
    });
    this.#stopListening = this.#store.listen?.((notice) => this.#hear(notice));
    const works = this.#role !== 'client';
    this.ready = registered
      .then(() => (works ? this.#recoverOrphans() : undefined))
      .then(() => this.#scheduleRunner.open())
      .then(() => (works && this.#store.listen ? this.#claimWork() : undefined));
    this.ready.catch(() => {});
    this.#every(this.#leaseMs / 3, () => this.#beat());
    if (ttl) this.#every(Math.min(ttl, 60_000), () => this.#deleteEndedBefore(this.#clock.now() - ttl));
    if (works && this.#store.listen) {
      // A safety net under the store's notices.
      this.#every(this.#pollMs, () => this.#claimWork());
    }
    // Lapsed leases are looked for while running, on every store: an instance that dies after this
    // one started (or that looked alive at its start) is recovered without waiting for a restart.
    if (works) {
      const every = this.#store.listen ? Math.min(this.#pollMs, this.#leaseMs / 2) : this.#leaseMs / 2;
      this.#every(every, () => this.#recoverOrphans());
    }
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

  followCall(callId: string, afterSeq = 0, options?: FollowOptions): Observable<CallEvent> {
    const read = (seq: number, limit: number) => this.#store.listEvents(callId, seq + 1, limit);
    const stored$ = merge(
      this.#bus.call$(callId),
      this.#storedElsewhere((notice) => notice.callIds.includes(callId)),
      this.#ticks(),
    );
    return followStore(stored$, read, (event) => event.seq, afterSeq, true, options);
  }

  followSession(sessionId: string, afterPosition = 0, options?: FollowOptions): Observable<SessionEvent> {
    const read = (position: number, limit: number) =>
      this.#store.listSessionEvents(sessionId, position, limit);
    const stored$ = merge(
      this.#bus.session$(sessionId),
      this.#storedElsewhere((notice) => notice.sessionIds.includes(sessionId)),
      this.#ticks(),
    );
    return followStore(stored$, read, (stored) => stored.position, afterPosition, true, options);
  }

  /** Events that other processes stored, as the shared store tells of them. */
  #storedElsewhere(
    about: (notice: Extract<StoreNotice, { type: 'events' }>) => boolean,
  ): Observable<unknown> {
    return this.#notices.pipe(filter((notice) => notice.type === 'events' && about(notice)));
  }

  /** What a shared store tells: events to follow, calls to claim, requests for the calls run here. */
  #hear(notice: StoreNotice): void {
    if (notice.type === 'queued') {
      if (this.#role !== 'client') {
        this.#workMayWait = true;
        void this.#claimWork();
      }
    } else if (notice.type === 'control') {
      if (this.#live.has(notice.callId)) void this.#control(notice);
    }
    this.#notices.next(notice);
  }

  /**
   * The heartbeat renews this instance's lease. One that finds itself unregistered lost its lease
   * (it was stopped or cut off for longer than the lease): its calls went to others, and its writes
   * for them are fenced off. It registers again, so that calls it takes from now on are recovered
   * if it dies.
   */
  async #beat(): Promise<void> {
    const now = this.#clock.now();
    if (await this.#store.heartbeat(this.instanceId, now)) return;
    if (this.#closed) return;
    await this.#store.registerInstance(thisInstance(this.instanceId, now, this.#leaseMs));
    // The calls another instance took while this one was away stop here.
    for (const call of [...this.#live.values()]) {
      const stored = await this.#store.getCall(call.record.callId);
      if (stored?.ownerId !== undefined && stored.ownerId !== this.instanceId) this.#drop(call);
    }
  }

  /**
   * This instance no longer owns the call (another claimed it, and may be running it): its
   * execution is aborted, its slot freed, and it writes nothing more. A caller here hears that it
   * continues in the background, which it does, elsewhere.
   */
  #drop(call: LiveCall): void {
    call.dropped = true;
    this.#disarm(call);
    const { record } = call;
    if (this.#live.get(record.callId) === call) this.#live.delete(record.callId);
    if (call.executing) call.abort(new BatonError('interrupted', INTERRUPTED_MESSAGE));
    if (record.detached) this.#countBackground(record.sessionId, -1);
    call.answer(this.#replyOf(record));
    if (call.holdsSlot) {
      call.holdsSlot = false;
      this.#admission.release(call);
      this.#pump();
    } else {
      this.#admission.withdraw(call);
    }
  }

  #control({ callId, action, reason }: CallControl): Promise<boolean> {
    if (action === 'cancel') return this.cancel(callId, reason);
    if (action === 'approve') return this.approve(callId);
    return this.reject(callId, reason ?? 'rejected');
  }

  // ---------------------------------------------------------------------------------------------
  // The journey of one call: request -> validate -> admit -> start -> settle -> end (reply or
  // notification). Each step is a call into the package that owns it.
  // ---------------------------------------------------------------------------------------------

  call(request: CallRequest): Promise<CallReply> {
    const refused = this.#checkRequest(request);
    if (refused) return refused;
    const createdAt = this.#clock.now();
    if (request.callId === undefined) return this.#validate(request, uuidv7(), createdAt, undefined);
    const callId = request.callId;
    return this.#existing(callId).then(
      (existing) => existing ?? this.#validate(request, callId, createdAt, undefined),
    );
  }

  async callBatch(requests: readonly BatchRequest[], options: BatchOptions): Promise<CallReply[]> {
    const batchRequests = requests.map((request) => ({
      ...request,
      sessionId: options.sessionId,
      ...(options.messageId !== undefined ? { messageId: options.messageId } : {}),
    }));
    // Each request with ids that cannot be kept gets its own refusal; the others go on.
    const refused = await Promise.all(batchRequests.map((request) => this.#checkRequest(request)));
    const createdAt = this.#clock.now();
    const batch: CallBatch = { continueOnFailure: options.continueOnFailure ?? true, calls: [] };
    // Known ids answer with their call; the others are admitted in the order of the requests.
    const existing = await Promise.all(
      batchRequests.map(
        (request, i) =>
          refused[i] ?? (request.callId === undefined ? undefined : this.#existing(request.callId)),
      ),
    );
    return Promise.all(
      batchRequests.map(
        (request, i) => existing[i] ?? this.#validate(request, request.callId ?? uuidv7(), createdAt, batch),
      ),
    );
  }

  /**
   * Before anything is kept: a request whose ids could not be stored, or found again, is answered
   * `invalid_arguments` and leaves no record (there is nothing it could be filed under).
   */
  #checkRequest(request: CallRequest): Promise<CallReply> | undefined {
    if (this.#closed) return Promise.reject(new BatonError('closed', 'the runtime is closed'));
    const issues = requestIdIssues(request, this.#maxIdChars);
    if (issues.length === 0) return undefined;
    const message = `Invalid tool call: ${issues.map((issue) => `${issue.path} ${issue.message}`).join('; ')}`;
    return Promise.resolve({
      callId: typeof request?.callId === 'string' ? request.callId : '',
      status: 'failed',
      output: { error: message },
      error: { code: 'invalid_arguments', message, issues },
    });
  }

  /** The reply of a call this runtime holds: live, or ended and not yet written. */
  #known(callId: string): Promise<CallReply> | undefined {
    const live = this.#live.get(callId);
    if (live) return live.reply;
    const ended = this.#ending.get(callId);
    return ended && Promise.resolve(this.#replyOf(ended.record));
  }

  /** The reply of a call made before with this id (the model's own id makes a retry harmless). */
  #existing(callId: string): Promise<CallReply | undefined> {
    const known = this.#known(callId);
    if (known) return known;
    let lookup = this.#lookups.get(callId);
    if (!lookup) {
      // A lookup that fails is a reply too: without it, running the call could run it twice.
      lookup = this.#store
        .getCall(callId)
        .then((record) => record && this.#replyOf(record), persistenceFailed(callId));
      this.#lookups.set(callId, lookup);
      const forget = () => this.#lookups.delete(callId);
      lookup.then(forget, forget);
    }
    return lookup;
  }

  /** Step 1: the tool exists and the arguments fit its schema. Bad input ends here, as a reply. */
  #validate(
    request: CallRequest,
    callId: string,
    createdAt: number,
    batch: CallBatch | undefined,
  ): Promise<CallReply> {
    // Another call with this id may have been admitted, or even ended, while its lookup was under way.
    const known = this.#known(callId);
    if (known) return known;
    const refuse = (args: unknown, error: CallError) =>
      this.#refuse(request, callId, createdAt, args, error, batch);
    const checked = checkArguments(request.args, this.#argumentLimits);
    // Refused arguments are kept on the refusal's record only when every store can keep them.
    const refusedArgs = checked.ok || checked.storable ? request.args : undefined;
    const tool = this.tools.get(request.name);
    if (!tool) {
      const message = toolNotFoundMessage(request.name, this.tools.names());
      return refuse(refusedArgs, { code: 'tool_not_found', message });
    }
    if (!checked.ok) {
      return refuse(refusedArgs, {
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
        return refuse(checked.args, error);
      }
      const refusal = this.#admissionRefusal(this.#modeOf(tool, request), request.sessionId);
      if (refusal) return refuse(checked.args, { code: 'limit_exceeded', message: refusal });
      const prepareFailed = (thrown: unknown) => {
        const failure = thrownOutcome(thrown);
        return this.#refuse(request, callId, createdAt, checked.args, failure.error, batch);
      };
      const admitPrepared = (given: unknown): Promise<CallReply> => {
        // The prepared value is kept on the record: one no store can keep fails this call alone.
        let prepared: unknown;
        try {
          prepared = storableValue(given);
        } catch (cause) {
          const message = persistenceFailedMessage(
            new Error(`the value prepare() returned is not JSON: ${(cause as Error).message}`),
          );
          return refuse(undefined, { code: 'persistence_failed', message });
        }
        const needs = tool.execution.needsApproval;
        const admit = (awaitingApproval: boolean) =>
          this.#admit(
            tool,
            request,
            callId,
            createdAt,
            checked.args,
            result.value,
            batch,
            prepared,
            awaitingApproval,
          );
        if (typeof needs !== 'function') return admit(needs === true);
        try {
          const decided = needs(result.value as never);
          return isPromiseLike(decided)
            ? Promise.resolve(decided).then(admit, prepareFailed)
            : admit(decided);
        } catch (thrown) {
          return prepareFailed(thrown);
        }
      };
      if (!tool.prepare) return admitPrepared(undefined);
      // Seed 003: prepare runs before the call is queued; if it fails, the call ends without running.
      try {
        const prepared = tool.prepare(result.value as never, {
          callId,
          sessionId: request.sessionId,
          toolName: tool.name,
        });
        return isPromiseLike(prepared)
          ? Promise.resolve(prepared).then(admitPrepared, prepareFailed)
          : admitPrepared(prepared);
      } catch (thrown) {
        return prepareFailed(thrown);
      }
    };
    return validated instanceof Promise ? validated.then(proceed) : proceed(validated);
  }

  /** Where waiting makes no sense, a call past a limit is refused with words that tell the model what to do. */
  #admissionRefusal(mode: ExecutionMode, sessionId: string): string | undefined {
    if (mode === 'background') {
      const { backgroundPerSession, backgroundPerWorker } = this.#limits;
      if ((this.#backgroundRuns.get(sessionId) ?? 0) >= backgroundPerSession) {
        return backgroundPerSessionMessage(backgroundPerSession);
      }
      if (this.#backgroundTotal >= backgroundPerWorker)
        return backgroundPerWorkerMessage(backgroundPerWorker);
    }
    if (this.#admission.waiting >= this.#limits.maxQueued) return queueFullMessage(this.#limits.maxQueued);
    return undefined;
  }

  /** Step 2: the call is accepted: it gets its record, its actor and its budget, then a slot or a place in the queue. */
  #admit(
    tool: AnyTool,
    request: CallRequest,
    callId: string,
    createdAt: number,
    rawArgs: unknown,
    args: unknown,
    batch: CallBatch | undefined,
    prepared: unknown,
    awaitingApproval: boolean,
  ): Promise<CallReply> {
    const mode = this.#modeOf(tool, request);
    const record: CallRecord = {
      callId,
      sessionId: request.sessionId,
      toolName: tool.name,
      args: rawArgs,
      status: 'queued',
      mode,
      detached: mode === 'background' || awaitingApproval,
      attempt: 0,
      ownerId: this.instanceId,
      createdAt,
      outputTail: '',
    };
    if (request.messageId !== undefined) record.messageId = request.messageId;
    if (prepared !== undefined) record.prepared = prepared;
    if (awaitingApproval) record.approval = 'pending';
    const run = (request as Partial<RunRequest>).run;
    if (run) record.run = run;
    if (this.#role === 'client') return this.#submit(tool, record);
    const call = new LiveCall({
      inspect: this.#inspect,
      record,
      tool,
      args,
      inlineBudgetMs: tool.execution.inlineBudgetMs ?? this.#inlineBudgetMs,
      timeoutMs: tool.execution.timeoutMs ?? this.#timeoutMs,
      maxAttempts: this.#retryPolicy(tool)?.maxAttempts ?? 1,
    });
    this.#live.set(callId, call);
    this.#emit(call, { type: 'queued', mode });
    this.#writer.record(record);
    if (batch) {
      call.batch = batch;
      batch.calls.push(call);
      if (batch.failure) {
        this.#drive(call, { type: 'CANCEL', reason: batch.failure });
        return call.reply;
      }
    }
    // A call that needs approval waits out of the queue; its caller is answered at once.
    if (awaitingApproval) {
      this.#answerBackgrounded(call, 'approval');
      return call.reply;
    }
    if (mode === 'background') this.#answerBackgrounded(call, 'mode');
    if (mode === 'auto') this.#armBudget(call);
    this.#admission.enqueue(call);
    this.#pump();
    return call.reply;
  }

  /** Step 3: a slot is free. The same execution runs whether the caller waits or not. */
  #start(call: LiveCall): void {
    call.holdsSlot = true;
    call.record.startedAt = this.#clock.now();
    this.#drive(call, { type: 'START' });
    this.#run(call);
  }

  /** One attempt: the first, or a retry after its backoff. The timeout bounds each attempt. */
  #run(call: LiveCall): void {
    call.record.attempt++;
    call.stepsOfAttempt = undefined;
    this.#emit(call, { type: 'started', attempt: call.record.attempt });
    this.#save(call);
    if (call.timeoutMs !== undefined) {
      call.timeoutTimer = this.#arm(() => {
        call.timeoutTimer = undefined;
        this.#drive(call, { type: 'TIMEOUT' });
      }, call.timeoutMs);
    }
    call.executing = true;
    const args = call.args;
    // Parked calls hold as little as they can; a call that may run again keeps its arguments.
    if (call.record.attempt >= call.maxAttempts) call.args = undefined;
    let returned: unknown;
    try {
      returned = call.tool.execute(args as never, new CallContext(call, this));
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
    if (call.dropped) return;
    if (isTerminalStatus(call.record.status)) return;
    if (!outcome.ok && this.#retries(call, outcome)) {
      this.#retryLater(call, outcome.error);
      return;
    }
    this.#drive(call, outcome.ok ? { type: 'DONE', outcome } : { type: 'FAIL', outcome });
  }

  /** Whether a failed attempt runs again: attempts left, and a code its policy retries. */
  #retries(call: LiveCall, failure: Extract<Outcome, { ok: false }>): boolean {
    const policy = this.#retryPolicy(call.tool);
    if (!policy || call.record.attempt >= call.maxAttempts || this.#closed) return false;
    if (failure.retryable) return true;
    return !(policy.nonRetryableCodes ?? DEFAULT_NON_RETRYABLE_CODES).includes(failure.error.code);
  }

  /** The call stays in its running state while it waits; its budget and its caller's reply are unaffected. */
  #retryLater(call: LiveCall, error: RecordedError): void {
    const policy = this.#retryPolicy(call.tool) as RetryPolicy;
    const initial = policy.initialIntervalMs ?? DEFAULT_RETRY_INITIAL_INTERVAL_MS;
    const coefficient = policy.backoffCoefficient ?? DEFAULT_RETRY_BACKOFF_COEFFICIENT;
    const delayMs = Math.min(
      initial * coefficient ** (call.record.attempt - 1),
      policy.maximumIntervalMs ?? initial * 100,
    );
    if (call.timeoutTimer !== undefined) {
      this.#clock.clearTimeout(call.timeoutTimer);
      this.#timers--;
      call.timeoutTimer = undefined;
    }
    this.#emit(call, {
      type: 'retrying',
      attempt: call.record.attempt + 1,
      delayMs,
      error: modelVisible(error),
    });
    call.retryTimer = this.#arm(() => {
      call.retryTimer = undefined;
      this.#run(call);
    }, delayMs);
  }

  #retryPolicy(tool: AnyTool): RetryPolicy | undefined {
    return tool.execution.retry ?? this.#retry;
  }

  /** How many runs a recovered idempotent call may have in all: its policy's, else the runtime's `maxAttempts`. */
  #recoveryAttempts(tool: AnyTool): number {
    return this.#retryPolicy(tool)?.maxAttempts ?? this.#maxAttempts;
  }

  /**
   * Sends an event to the call's actor and carries out what the machine decided. The machine
   * owns every transition; this is the only place the runtime reacts to one.
   */
  #drive(call: LiveCall, event: Ending | { type: 'START' | 'BUDGET' }): void {
    if (call.dropped) return;
    const before = call.record.status;
    const wasDetached = call.record.detached;
    const { value: status, detached } = call.send(MACHINE_EVENTS[event.type]);
    call.record.status = status;
    if (detached && !wasDetached) this.#answerBackgrounded(call, 'budget');
    // An event that changed nothing writes nothing (a detach has written through #answerBackgrounded).
    if (status === before) return;
    if (isTerminalStatus(status)) this.#end(call, status, event as Ending);
    else this.#save(call);
  }

  /** Step 5: the call reached a terminal state: its caller gets the reply, or its session a notification. */
  #end(call: LiveCall, status: TerminalStatus, ending: Ending): void {
    const record = call.record;
    this.#disarm(call);
    record.endedAt = this.#clock.now();
    record.durationMs = record.endedAt - (record.startedAt ?? record.createdAt);
    if (ending.type === 'DONE') {
      const { value, images, rawOutput } = ending.outcome;
      const output = this.#forModel(value);
      record.result = value;
      record.output = output;
      if (images) record.images = images;
      if (rawOutput !== undefined) record.rawOutput = rawOutput;
      this.#emit(call, { type: 'succeeded', output });
    } else {
      const failure = ending.type === 'FAIL' || ending.type === 'REJECT' ? ending.outcome : undefined;
      const error: RecordedError = failure
        ? failure.error
        : ending.type === 'CANCEL'
          ? { code: 'cancelled', message: cancelledMessage(ending.reason) }
          : { code: 'timed_out', message: timedOutMessage(call.timeoutMs ?? 0) };
      record.error = error;
      if (call.executing) call.abort(new BatonError(error.code, error.message));
      if (ending.type === 'CANCEL') {
        record.output = this.#formatterFor(call.tool).cancelled(formattedCall(record));
        this.#emit(call, { type: 'cancelled', reason: ending.reason ?? 'cancelled by the caller' });
      } else {
        record.output = failure ? failure.output : { error: error.message };
        if (ending.type === 'TIMEOUT')
          this.#emit(call, { type: 'timed_out', timeoutMs: call.timeoutMs ?? 0 });
        else this.#emit(call, { type: 'failed', error: modelVisible(error) });
      }
    }

    this.#live.delete(record.callId);
    if (!call.holdsSlot) this.#admission.withdraw(call);
    if (record.detached) {
      this.#notify(call, status);
      this.#keepArtifacts(call, status);
      this.#countBackground(record.sessionId, -1);
    }
    const written = this.#writer.recordConfirmed(record);
    this.#ending.set(record.callId, call);
    // A refused end stays here: #writeFailed stores it again, and the caller hears persistence_failed.
    written.then(() => this.#ending.delete(record.callId), ignoreRefusal);
    call.answer(written.then(() => this.#replyOf(record), persistenceFailed(record.callId)));
    // The batch's waiting calls are cancelled before the slot this call frees can go to one of them.
    if (call.batch && (status === 'failed' || status === 'timed_out')) this.#failBatch(call.batch, record);
    if (call.holdsSlot) {
      call.holdsSlot = false;
      this.#admission.release(call);
      this.#pump();
      // Freed slots take the next calls that wait in a shared store, a batch at a time.
      if (this.#workMayWait && this.#claimRoom() >= this.#limits.concurrency / 2) void this.#claimWork();
    }
  }

  /** Seed 002: a background run leaves its `output.log` and its `result.json`. */
  #keepArtifacts(call: LiveCall, status: TerminalStatus): void {
    const { callId, result, rawOutput, error } = call.record;
    const log = status === 'succeeded' && rawOutput !== undefined ? rawOutput : call.outputLog();
    const outcome = status === 'succeeded' ? result : { status, error: error?.message };
    this.#writer.add('artifacts', { callId, name: 'output.log', content: log });
    this.#writer.add('artifacts', {
      callId,
      name: 'result.json',
      content: JSON.stringify(outcome ?? null, null, 2),
    });
  }

  #failBatch(batch: CallBatch, failed: Pick<CallRecord, 'callId' | 'toolName'>): void {
    if (batch.continueOnFailure || batch.failure) return;
    batch.failure = batchFailedReason(failed.callId, failed.toolName);
    for (const call of batch.calls) {
      if (call.record.status === 'queued') this.#drive(call, { type: 'CANCEL', reason: batch.failure });
    }
  }

  /** Seed 004: what the model is shown of a long value is cut; the record keeps the whole. */
  #forModel(value: unknown): unknown {
    if (typeof value === 'string') {
      return value.length > this.#maxOutputChars ? truncatedOutput(value, this.#maxOutputChars) : value;
    }
    if (typeof value !== 'object' || value === null) return value;
    const text = JSON.stringify(value);
    return text.length > this.#maxOutputChars ? truncatedOutput(text, this.#maxOutputChars) : value;
  }

  #countBackground(sessionId: string, delta: 1 | -1): void {
    this.#backgroundTotal += delta;
    const count = (this.#backgroundRuns.get(sessionId) ?? 0) + delta;
    if (count === 0) this.#backgroundRuns.delete(sessionId);
    else this.#backgroundRuns.set(sessionId, count);
  }

  /** A run started by `spawn_background` is a background call whatever its tool's own mode. */
  #modeOf(tool: AnyTool, request: CallRequest): ExecutionMode {
    return (request as Partial<RunRequest>).background
      ? 'background'
      : (tool.execution.mode ?? this.#defaultMode);
  }

  /** Seed 000: the end of a call whose caller was answered `backgrounded` goes to its session. */
  #notify(call: LiveCall, outcome: TerminalStatus): void {
    const record = call.record;
    if (record.run && !record.run.signalOnCompletion) return;
    const formatter = this.#formatterFor(call.tool);
    const visible = record.error && modelVisible(record.error);
    const output =
      outcome === 'cancelled'
        ? record.output
        : formatter.result(
            formattedCall(record),
            visible ? { ok: false, error: visible } : { ok: true, value: record.output },
          );
    const text =
      outcome === 'cancelled'
        ? { error: CANCELLED_BEFORE_COMPLETION }
        : visible
          ? { error: visible.message }
          : { value: record.output };
    const notification: Notification = {
      id: uuidv7(),
      callId: record.callId,
      sessionId: record.sessionId,
      toolName: record.toolName,
      status: 'queued',
      outcome,
      title: notificationTitle(record.toolName, outcome),
      body: record.run
        ? runEndedMessage(record, runStatusWord(outcome), runSummary(text))
        : notificationBody(record, text),
      output,
      scheduling: call.tool.execution.scheduling,
      createdAt: this.#clock.now(),
    };
    this.#writer.add('notifications', notification);
    this.#emit(call, { type: 'notification', notificationId: notification.id, title: notification.title });
  }

  /** Seed 000 / 001: the caller is told at once that the call continues, with its id as the handle. */
  #answerBackgrounded(call: LiveCall, reason: 'budget' | 'mode' | 'approval'): void {
    const record = call.record;
    record.detached = true;
    this.#countBackground(record.sessionId, 1);
    this.#emit(call, { type: 'backgrounded', reason, afterMs: this.#clock.now() - record.createdAt });
    const reply = this.#backgroundedReply(record, call.tool, reason, call.inlineBudgetMs);
    call.answer(this.#writer.recordConfirmed(record).then(() => reply, persistenceFailed(record.callId)));
  }

  #backgroundedReply(
    record: CallRecord,
    tool: AnyTool,
    reason: 'budget' | 'mode' | 'approval',
    budgetMs: number,
  ): CallReply {
    const output =
      reason === 'approval'
        ? { status: 'awaiting_approval', tool: record.toolName, message: APPROVAL_PENDING_MESSAGE }
        : this.#formatterFor(tool).running(formattedCall(record), reason === 'budget' ? budgetMs : undefined);
    return { callId: record.callId, status: 'backgrounded', output };
  }

  // ---------------------------------------------------------------------------------------------
  // On a store that processes share: clients submit, workers claim and run
  // ---------------------------------------------------------------------------------------------

  /**
   * A client's call: stored with no owner for a worker to claim. Its reply comes back through the
   * store: `backgrounded` when a worker's budget passes (or at once for background mode or an
   * approval), else the end.
   */
  #submit(tool: AnyTool, record: CallRecord): Promise<CallReply> {
    delete record.ownerId;
    const reason = record.approval === 'pending' ? 'approval' : 'mode';
    this.#writer.add('events', this.#stamp({ type: 'queued', mode: record.mode }, record, 1));
    if (record.detached)
      this.#writer.add('events', this.#stamp({ type: 'backgrounded', reason, afterMs: 0 }, record, 2));
    const budgetMs = tool.execution.inlineBudgetMs ?? this.#inlineBudgetMs;
    const written = this.#writer.recordConfirmed(record);
    if (record.detached) {
      const reply = this.#backgroundedReply(record, tool, reason, budgetMs);
      return written.then(() => reply, persistenceFailed(record.callId));
    }
    return this.#remoteReply(record, tool, budgetMs, written);
  }

  /**
   * Waits in the store for the first thing the caller must hear: that the call was detached
   * (`backgrounded`), or its end. It listens before the call is stored, so nothing a worker stores
   * can come before it, and it reads the record only when the store tells of the call's events.
   * An auto call that no worker has claimed when its budget passes is detached here, as a runtime
   * detaches a call that waits in its queue.
   */
  async #remoteReply(
    record: CallRecord,
    tool: AnyTool,
    budgetMs: number,
    written: Promise<void>,
  ): Promise<CallReply> {
    const { callId } = record;
    const unstored = new Subject<void>();
    const told$ = merge(
      this.#storedElsewhere((notice) => notice.callIds.includes(callId)),
      this.#ticks(),
    );
    const answered = firstValueFrom(
      followStore(
        told$,
        async () => {
          const stored = await this.#store.getCall(callId);
          return stored && (stored.detached || isTerminalStatus(stored.status)) ? [stored] : [];
        },
        () => 1,
        0,
        false,
      ).pipe(takeUntil(unstored)),
    );
    answered.catch(() => {});
    try {
      await written;
    } catch (error) {
      unstored.next();
      return persistenceFailed(callId)(error);
    }
    let budget: unknown;
    if (record.mode === 'auto') {
      const fire = () => {
        budget = undefined;
        void this.#detachUnclaimed(callId);
      };
      budget = this.#arm(fire, budgetMs - (this.#clock.now() - record.createdAt));
    }
    const answer = await answered.finally(() => {
      if (budget === undefined) return;
      this.#clock.clearTimeout(budget);
      this.#timers--;
    });
    return isTerminalStatus(answer.status)
      ? this.#replyOf(answer)
      : this.#backgroundedReply(record, tool, 'budget', budgetMs);
  }

  /**
   * The budget of a client's call passed while no worker had it: the client takes it a moment,
   * marks it detached (its end will be a notification) with the `backgrounded` event its caller
   * hears, and gives it back. A call a worker holds is detached by that worker's own budget.
   */
  async #detachUnclaimed(callId: string): Promise<void> {
    const [unclaimed] = await this.#store.claimQueued(this.instanceId, 1, callId);
    if (!unclaimed) return;
    const { lastSeq } = unclaimed;
    const { ownerId: _, ...released } = unclaimed.record;
    const record: CallRecord = { ...released, detached: true };
    const afterMs = this.#clock.now() - record.createdAt;
    this.#writer.add(
      'events',
      this.#stamp({ type: 'backgrounded', reason: 'budget', afterMs }, record, lastSeq + 1),
    );
    // A refusal ends nothing here: the call stays the workers' to run, and the caller is not told twice.
    await this.#writer.recordConfirmed(record).catch(ignoreRefusal);
  }

  /**
   * On a shared store, followers also read every poll: an event whose notice was lost (a dropped
   * LISTEN connection) comes late, but comes.
   */
  #ticks(): Observable<unknown> {
    if (!this.#store.listen) return EMPTY;
    return new Observable((subscriber) => {
      const tick = () => {
        subscriber.next(undefined);
        handle = this.#clock.setTimeout(tick, this.#pollMs);
        unref(handle);
      };
      let handle = this.#clock.setTimeout(tick, this.#pollMs);
      unref(handle);
      return () => this.#clock.clearTimeout(handle);
    });
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

  /**
   * How many more calls a worker may take: a slot for each, and as many again waiting here, so
   * that freed slots start the next call at once and claims go in batches, not one per call.
   */
  #claimRoom(): number {
    return 2 * this.#limits.concurrency - this.#admission.running - this.#admission.waiting;
  }

  /** A worker takes the unowned calls it has room for, until there are none or it is full. */
  #claimWork(): Promise<void> {
    if (this.#claiming) {
      this.#claimAgain = true;
      return this.#claiming;
    }
    this.#claiming = (async () => {
      do {
        this.#claimAgain = false;
        for (;;) {
          const room = this.#claimRoom();
          if (room <= 0 || this.#closed) break;
          const asked = Math.min(room, CLAIM_BATCH_MAX);
          const claimed = await this.#store.claimQueued(this.instanceId, asked);
          // One after another: they join the queue in the order they were submitted.
          for (const call of claimed) await this.#takeUp(call.record.callId, () => this.#adopt(call, true));
          this.#workMayWait = claimed.length === asked;
          if (!this.#workMayWait) break;
        }
      } while (this.#claimAgain && !this.#closed);
    })()
      // A claim that fails (the database is away) is tried again at the next poll or notice.
      .catch(() => {})
      .finally(() => {
        this.#claiming = undefined;
      });
    return this.#claiming;
  }

  /**
   * A call another process submitted, now owned here: it runs (`run`), or it is held here to be
   * cancelled or rejected. Its budget counts from when it was made, as everywhere.
   */
  async #adopt({ record: claimed, lastSeq }: ClaimedCall, run: boolean): Promise<LiveCall | undefined> {
    const stale = this.#live.get(claimed.callId);
    if (stale) this.#drop(stale);
    const tool = this.tools.get(claimed.toolName);
    const validated = tool ? await tool.validateInput(claimed.args) : undefined;
    if (!tool || !validated?.ok) {
      await this.#recover(claimed);
      return this.#live.get(claimed.callId);
    }
    const record: CallRecord = { ...claimed, ownerId: this.instanceId };
    const call = new LiveCall({
      inspect: this.#inspect,
      record,
      tool,
      args: validated.value,
      inlineBudgetMs: tool.execution.inlineBudgetMs ?? this.#inlineBudgetMs,
      timeoutMs: tool.execution.timeoutMs ?? this.#timeoutMs,
      maxAttempts: this.#retryPolicy(tool)?.maxAttempts ?? 1,
      lastSeq,
    });
    call.adopted = true;
    this.#live.set(record.callId, call);
    if (record.detached) this.#countBackground(record.sessionId, 1);
    this.#writer.record(record);
    if (!run || record.approval === 'pending') return call;
    if (record.mode === 'auto' && !record.detached) this.#armBudget(call);
    this.#admission.enqueue(call);
    this.#pump();
    return call;
  }

  /**
   * A worker that closes gives the calls it claimed and has not started back to the store, with no
   * owner, for another worker to claim; they lose nothing. (Calls it runs end `cancelled`, as in
   * one process.)
   */
  #releaseWaiting(): void {
    for (const call of [...this.#live.values()]) {
      const { record } = call;
      if (!call.adopted || call.holdsSlot || record.status !== 'queued') continue;
      this.#disarm(call);
      this.#admission.withdraw(call);
      this.#live.delete(record.callId);
      if (record.detached) this.#countBackground(record.sessionId, -1);
      const { ownerId: _, ...released } = record;
      this.#writer.record(released);
    }
  }

  /**
   * A request for a call this process does not run. A call no one owns yet is claimed here and
   * handled here; one a worker runs is asked of that worker through the store.
   */
  async #controlRemote(control: CallControl): Promise<boolean> {
    if (!this.#store.send) return false;
    const [unowned] = await this.#store.claimQueued(this.instanceId, 1, control.callId);
    if (unowned) {
      if (control.action === 'approve') {
        // Approved, it goes back to the workers: no owner, and the notice of a queued call.
        const { ownerId: _, ...released } = unowned.record;
        await this.#writer.recordConfirmed({ ...released, approval: 'approved' });
        return true;
      }
      await this.#adopt(unowned, false);
      return this.#control(control);
    }
    const record = await this.#store.getCall(control.callId);
    if (!record || isTerminalStatus(record.status)) return false;
    if (control.action !== 'cancel' && record.approval !== 'pending') return false;
    await this.#store.send(control);
    return true;
  }

  #pump(): void {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      for (let call = this.#admission.take(); call; call = this.#admission.take()) this.#start(call);
    } finally {
      this.#pumping = false;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Reports from running tools (through their context)
  // ---------------------------------------------------------------------------------------------

  progress(call: LiveCall, progress: Parameters<ContextHost['progress']>[1]): void {
    if (isTerminalStatus(call.record.status)) return;
    call.record.progress = storableValue({ ...progress });
    // On a shared store, what crosses the database is conflated: the latest progress per interval.
    if (this.#progressIntervalMs !== undefined && call.progressTimer !== undefined) return;
    this.#emit(call, { type: 'progress', progress: call.record.progress });
    this.#save(call);
    if (this.#progressIntervalMs === undefined) return;
    const sent = call.record.progress;
    call.progressTimer = this.#arm(() => {
      call.progressTimer = undefined;
      if (call.record.progress !== sent && call.record.progress) this.progress(call, call.record.progress);
    }, this.#progressIntervalMs);
  }

  /**
   * Seed 003: waits for an external event. The waiter is in place before the store is read, so a
   * resolution written meanwhile reaches it one way or the other; one kept from before (another
   * attempt, another process) answers at once.
   */
  async waitFor<T>(call: LiveCall, key: string, options: { timeoutMs?: number }): Promise<T> {
    call.record.waitingFor = key;
    this.#save(call);
    let timer: unknown;
    let onAbort: (() => void) | undefined;
    try {
      const outcome = await new Promise<EventOutcome | { timedOut: true }>((resolve) => {
        let done = false;
        const finish = (result: EventOutcome | { timedOut: true }) => {
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
          timer = this.#arm(() => {
            timer = undefined;
            finish({ timedOut: true });
          }, options.timeoutMs);
        }
        this.#store.getResolution(key).then(
          (stored) => stored && finish(stored.outcome),
          () => {},
        );
      });
      if ('value' in outcome) return outcome.value as T;
      if ('error' in outcome) throw new BatonError('event_error', outcome.error);
      if ('timedOut' in outcome) throw new BatonError('event_timeout', EVENT_TIMEOUT_MESSAGE);
      throw new BatonError('event_cancelled', EVENT_CANCELLED_MESSAGE);
    } finally {
      if (timer !== undefined) {
        this.#clock.clearTimeout(timer);
        this.#timers--;
      }
      if (onAbort) call.signal.removeEventListener('abort', onAbort);
      if (call.record.waitingFor === key && !isTerminalStatus(call.record.status)) {
        delete call.record.waitingFor;
        this.#save(call);
      }
    }
  }

  /** Seed 003: a step runs once per call; its result is stored before the tool goes on. */
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
      ? this.#store
          .listSteps(call.record.callId)
          .then((steps) => new Map(steps.map((step) => [step.stepId, step.value])))
      : Promise.resolve(new Map());
    const finished = await call.finishedSteps;
    if (finished.has(stepId)) return finished.get(stepId) as T;
    // A value no store can keep as it is is kept, and returned, as every store keeps it.
    const value = storableValue(await run());
    finished.set(stepId, value);
    await this.#writer.write('steps', { callId: call.record.callId, stepId, value });
    return value;
  }

  status(call: LiveCall, given: string): void {
    if (isTerminalStatus(call.record.status)) return;
    const text = storableText(given);
    call.record.statusText = text;
    this.#emit(call, { type: 'status', text });
    this.#save(call);
  }

  log(call: LiveCall, stream: Parameters<ContextHost['log']>[1], given: string): void {
    if (isTerminalStatus(call.record.status)) return;
    const chunk = storableText(given);
    call.appendLog(stream, chunk);
    this.#emit(call, { type: 'log', stream, chunk });
    this.#save(call);
  }

  // ---------------------------------------------------------------------------------------------
  // Control and queries
  // ---------------------------------------------------------------------------------------------

  async cancel(callId: string, reason?: string): Promise<boolean> {
    const call = this.#live.get(callId);
    if (!call)
      return this.#controlRemote({
        type: 'control',
        callId,
        action: 'cancel',
        ...(reason ? { reason } : {}),
      });
    this.#drive(call, { type: 'CANCEL', reason });
    await this.#saved(call).catch(ignoreRefusal);
    return true;
  }

  async cancelSession(sessionId: string, reason = 'the session was cancelled'): Promise<number> {
    const calls = [...this.#live.values()].filter((call) => call.record.sessionId === sessionId);
    const cancelled = await Promise.all(calls.map((call) => this.cancel(call.record.callId, reason)));
    return cancelled.filter(Boolean).length;
  }

  async get(callId: string): Promise<CallRecord | undefined> {
    const record = (this.#live.get(callId) ?? this.#ending.get(callId))?.record;
    return record ? { ...record } : this.#store.getCall(callId);
  }

  /** The live call with this id if it waits for its approval. */
  #awaitingApproval(callId: string): LiveCall | undefined {
    const call = this.#live.get(callId);
    return call?.record.approval === 'pending' ? call : undefined;
  }

  async approve(callId: string): Promise<boolean> {
    const call = this.#awaitingApproval(callId);
    if (!call)
      return this.#live.has(callId)
        ? false
        : this.#controlRemote({ type: 'control', callId, action: 'approve' });
    call.record.approval = 'approved';
    const written = this.#saved(call);
    this.#admission.enqueue(call);
    this.#pump();
    await written.catch(ignoreRefusal);
    return true;
  }

  async reject(callId: string, reason: string): Promise<boolean> {
    const call = this.#awaitingApproval(callId);
    if (!call) {
      return this.#live.has(callId)
        ? false
        : this.#controlRemote({ type: 'control', callId, action: 'reject', reason });
    }
    call.record.approval = 'rejected';
    const message = approvalRejectedMessage(reason);
    this.#drive(call, {
      type: 'REJECT',
      outcome: { ok: false, error: { code: 'approval_rejected', message }, output: { error: message } },
    });
    await this.#saved(call).catch(ignoreRefusal);
    return true;
  }

  eventKey(callId: string, name: string): string {
    return eventKey(callId, name);
  }

  async resolveEvent(key: string, given: EventOutcome): Promise<void> {
    const callId = typeof key === 'string' ? callOfEventKey(key) : undefined;
    if (callId === undefined)
      throw new BatonError('invalid_arguments', `${JSON.stringify(key)} is not an event key`);
    const outcome = storableValue(given);
    // Stored first: a call that waits after a restart, or between attempts, still gets it.
    await this.#writer.write('resolutions', { key, callId, outcome, at: this.#clock.now() });
    this.#waiters.get(key)?.(outcome);
  }

  replay(callId: string, fromSeq = 1): Promise<CallEvent[]> {
    return this.#store.listEvents(callId, fromSeq);
  }

  artifact(callId: string, name: string): Promise<string | undefined> {
    return this.#store.getArtifact(callId, name);
  }

  list(filter?: CallFilter): Promise<CallPage> {
    return this.#store.listCalls(filter);
  }

  async checkStore(): Promise<void> {
    await this.#store.heartbeat(this.instanceId, this.#clock.now());
    await this.#store.getCall(HEALTH_PROBE_CALL_ID);
  }

  stats(): RuntimeStats {
    return {
      active: this.#live.size,
      running: this.#admission.running,
      queued: this.#admission.waiting,
      timers: this.#timers,
      routes: this.#bus.routeCount(),
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const timer of this.#housekeeping) this.#clock.clearTimeout(timer);
    this.#housekeeping.clear();
    this.#scheduleRunner.close();
    await this.ready.catch(() => {});
    this.#releaseWaiting();
    await Promise.all([...this.#live.keys()].map((callId) => this.cancel(callId, CLOSED_REASON)));
    await Promise.allSettled([...this.#lookups.values()]);
    await this.#claiming;
    await this.#writer.drain();
    this.#stopListening?.();
    this.#notices.complete();
    // A clean close leaves nothing to recover.
    await this.#store.removeInstance(this.instanceId).catch(() => {});
    this.#bus.complete();
    await this.#store.close();
  }

  // ---------------------------------------------------------------------------------------------
  // Durability: a write that fails, and the calls of instances that are gone
  // ---------------------------------------------------------------------------------------------

  /**
   * Seed 000: when the state of a call cannot be saved, its execution is aborted and it ends
   * `persistence_failed`. Only the calls whose own rows the store refused are touched (the writer
   * keeps the others of their batch). A refused schedule is told to whoever saved it.
   */
  #writeFailed(refused: readonly RefusedWrite[]): void {
    for (const { callId, error, rows } of refused) {
      if (callId === undefined) continue;
      const call = this.#live.get(callId);
      if (call) {
        const message = persistenceFailedMessage(error);
        // A call still queued never ran: it is refused; one that runs has failed.
        this.#drive(call, {
          type: call.record.status === 'queued' ? 'REJECT' : 'FAIL',
          outcome: { ok: false, error: { code: 'persistence_failed', message }, output: { error: message } },
        });
        continue;
      }
      const ended = this.#ending.get(callId);
      if (ended) this.#storeEndAgain(ended, error, rows);
    }
  }

  /**
   * The store refused the end of a call. The first time, the end becomes a `persistence_failed`
   * failure that keeps nothing the run produced (its output may be what the store refuses), with
   * its event and, for a detached call, its notification. Each later refusal (the store is down,
   * the disk full) writes it again after a backoff, until it lands; a runtime that closes first
   * leaves the call unfinished in the store, and the next one recovers it as `interrupted`. So a
   * call is never left `backgrounded` with no end.
   */
  #storeEndAgain(call: LiveCall, error: unknown, refusedRows: Rows): void {
    const refusals = ++call.refusedEnds;
    const { callId } = call.record;
    const forget = () => this.#ending.delete(callId);
    if (refusals > 1) {
      // The reduced end was refused too: the same rows, again, later.
      const delayMs = Math.min(END_REWRITE_INITIAL_MS * 2 ** (refusals - 2), END_REWRITE_MAX_MS);
      this.#later(delayMs, () => this.#writer.rewrite(refusedRows).then(forget, ignoreRefusal));
      return;
    }
    const record = call.record;
    const message = persistenceFailedMessage(error);
    record.status = 'failed';
    record.error = { code: 'persistence_failed', message };
    record.output = { error: message };
    delete record.result;
    delete record.rawOutput;
    delete record.images;
    this.#emit(call, { type: 'failed', error: modelVisible(record.error) });
    if (record.detached) {
      // The notification of the end was refused with the rest of it.
      this.#notify(call, 'failed');
      this.#keepArtifacts(call, 'failed');
    }
    this.#writer.recordConfirmed(record).then(forget, ignoreRefusal);
  }

  /**
   * Retention: ended calls go in batches of RETENTION_BATCH, each its own short transaction, with
   * a turn of the event loop between them, so a large backlog never holds the store or the loop.
   */
  async #deleteEndedBefore(cutoff: number): Promise<void> {
    while (
      !this.#closed &&
      (await this.#store.deleteEndedBefore(cutoff, RETENTION_BATCH)) === RETENTION_BATCH
    ) {
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Runs once after `ms`, unless the runtime closes first. */
  #later(ms: number, task: () => void): void {
    const handle = this.#clock.setTimeout(() => {
      this.#housekeeping.delete(handle);
      if (!this.#closed) task();
    }, ms);
    unref(handle);
    this.#housekeeping.add(handle);
  }

  async #recoverOrphans(): Promise<void> {
    // Calls claimed before whose taking up failed go first: nobody else will recover them.
    for (const [callId, takeUp] of [...this.#notTakenUp]) await this.#takeUp(callId, takeUp);
    const gone = goneInstances(await this.#store.listInstances(), this.instanceId, this.#clock.now());
    const orphans = await this.#store.claimCalls(gone, this.instanceId);
    await Promise.all(orphans.map((record) => this.#takeUp(record.callId, () => this.#recover(record))));
  }

  /**
   * Takes up a call this instance has just claimed in the store (an orphan, or a queued call). Once
   * claimed it is this instance's: if taking it up fails (a read fails under load, the database
   * is away a moment), it is kept and tried again at every recovery tick, never left owned here
   * and run by no one.
   */
  async #takeUp(callId: string, takeUp: () => Promise<unknown>): Promise<void> {
    try {
      await takeUp();
      this.#notTakenUp.delete(callId);
    } catch {
      // Kept for the next tick (the error is the store's, and says nothing the retry will not).
      this.#notTakenUp.set(callId, takeUp);
    }
  }

  /**
   * A call whose runtime died: one that never started, or an idempotent one with attempts left,
   * runs again (same call id, next attempt); any other ends `failed` with `interrupted`.
   */
  async #recover(orphan: CallRecord): Promise<void> {
    // A copy this instance still holds from before it lost the call is stale now.
    const stale = this.#live.get(orphan.callId);
    if (stale) this.#drop(stale);
    const tool = this.tools.get(orphan.toolName);
    const lastSeq = (await this.#store.listEvents(orphan.callId)).at(-1)?.seq ?? 0;
    if (tool && orphan.approval === 'pending') {
      // Still waiting for its approval: it waits here now, out of the queue, as it did there.
      const record: CallRecord = { ...orphan, ownerId: this.instanceId };
      const maxAttempts = this.#recoveryAttempts(tool);
      const args = await tool.validateInput(orphan.args);
      const call = new LiveCall({
        inspect: this.#inspect,
        record,
        tool,
        args: args.ok ? args.value : orphan.args,
        inlineBudgetMs: this.#inlineBudgetMs,
        timeoutMs: tool.execution.timeoutMs ?? this.#timeoutMs,
        maxAttempts,
        lastSeq,
        recovered: true,
      });
      this.#live.set(record.callId, call);
      this.#countBackground(record.sessionId, 1);
      return;
    }
    const runsAgain =
      tool !== undefined &&
      (orphan.status === 'queued' ||
        (tool.execution.idempotent && orphan.attempt < this.#recoveryAttempts(tool)));
    const validated = runsAgain ? await tool.validateInput(orphan.args) : undefined;
    const common = {
      inlineBudgetMs: this.#inlineBudgetMs,
      timeoutMs: tool?.execution.timeoutMs ?? this.#timeoutMs,
      maxAttempts: tool ? this.#recoveryAttempts(tool) : 1,
      lastSeq,
      recovered: true,
    };
    if (tool && validated?.ok) {
      const record: CallRecord = { ...orphan, status: 'queued', ownerId: this.instanceId };
      const call = new LiveCall({ ...common, record, tool, args: validated.value, inspect: this.#inspect });
      this.#live.set(record.callId, call);
      if (record.detached) this.#countBackground(record.sessionId, 1);
      this.#emit(call, { type: 'queued', mode: record.mode });
      this.#writer.record(record);
      this.#admission.enqueue(call);
      this.#pump();
      return;
    }
    const record: CallRecord = { ...orphan, ownerId: this.instanceId };
    const call = new LiveCall({
      ...common,
      record,
      tool: tool ?? unregisteredTool(orphan.toolName),
      args: orphan.args,
      resumeAt: orphan.status,
    });
    this.#live.set(record.callId, call);
    if (record.detached) this.#countBackground(record.sessionId, 1);
    // A call that never started is refused (REJECT); one that was running failed (FAIL).
    this.#drive(call, {
      type: orphan.status === 'queued' ? 'REJECT' : 'FAIL',
      outcome: {
        ok: false,
        error: { code: 'interrupted', message: INTERRUPTED_MESSAGE },
        output: { error: INTERRUPTED_MESSAGE },
      },
    });
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
    error: RecordedError,
    batch: CallBatch | undefined,
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
    this.#writer.add('events', this.#stamp({ type: 'failed', error: modelVisible(error) }, record, 1));
    if (batch) this.#failBatch(batch, record);
    return this.#writer.recordConfirmed(record).then(() => this.#replyOf(record), persistenceFailed(callId));
  }

  #replyOf(record: CallRecord): CallReply {
    if (!isTerminalStatus(record.status)) {
      const formatted = formattedCall(record);
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

  /**
   * Events reach the bus once they are stored (see WriteBatcher). The caller's literal is stamped
   * in place: copying it with spreads cost more than the rest of an event's life.
   */
  #emit(call: LiveCall, input: CallEventInput): void {
    if (call.dropped) return;
    this.#writer.add('events', this.#stamp(input, call.record, call.nextSeq()));
  }

  /** Queues the call's record; a call this process no longer owns writes nothing. */
  #save(call: LiveCall): void {
    if (!call.dropped) this.#writer.record(call.record);
  }

  /** `#save`, for a caller that waits until the record is written. */
  #saved(call: LiveCall): Promise<void> {
    return call.dropped ? Promise.resolve() : this.#writer.recordConfirmed(call.record);
  }

  #stamp(input: CallEventInput, record: CallRecord, seq: number): CallEvent {
    const event = input as CallEvent;
    event.callId = record.callId;
    event.sessionId = record.sessionId;
    event.toolName = record.toolName;
    event.seq = seq;
    event.at = this.#clock.now();
    return event;
  }

  /** A housekeeping task on the runtime's clock, every `ms` until `close()`; its failures wait for the next turn. */
  #every(ms: number, task: () => Promise<unknown>): void {
    const tick = () => {
      this.#housekeeping.delete(handle);
      if (this.#closed) return;
      void task()
        .catch(() => {})
        .finally(() => {
          if (!this.#closed) {
            handle = this.#clock.setTimeout(tick, ms);
            unref(handle);
            this.#housekeeping.add(handle);
          }
        });
    };
    let handle = this.#clock.setTimeout(tick, ms);
    unref(handle);
    this.#housekeeping.add(handle);
  }

  #arm(callback: () => void, ms: number): unknown {
    this.#timers++;
    return this.#clock.setTimeout(() => {
      this.#timers--;
      callback();
    }, ms);
  }

  #disarm(call: LiveCall): void {
    for (const handle of [call.budgetTimer, call.timeoutTimer, call.retryTimer, call.progressTimer]) {
      if (handle === undefined) continue;
      this.#clock.clearTimeout(handle);
      this.#timers--;
    }
    call.budgetTimer = undefined;
    call.timeoutTimer = undefined;
    call.retryTimer = undefined;
    call.progressTimer = undefined;
  }
}

/** Seed 002: a run ends "completed" or "failed" (or "cancelled"). */
function runStatusWord(outcome: TerminalStatus): string {
  return outcome === 'succeeded' ? 'completed' : outcome === 'cancelled' ? 'cancelled' : 'failed';
}

/** A line of what the run gave: its value, or its error, cut short. */
function runSummary(text: { value: unknown } | { error: string }): string {
  const summary =
    'value' in text ? (typeof text.value === 'string' ? text.value : JSON.stringify(text.value)) : text.error;
  return summary.length > 300 ? `${summary.slice(0, 300)}...` : summary;
}

function formattedCall(record: CallRecord): FormattedCall {
  return { callId: record.callId, toolName: record.toolName, args: record.args };
}

/** What the model may see of an error: never an internal error's details. */
function modelVisible(error: RecordedError): CallError {
  const { details: _details, ...visible } = error;
  return visible;
}

/** The id `checkStore` looks up: no call has it (ids are at most 128 characters, this one is not an id). */
const HEALTH_PROBE_CALL_ID = '';

/** A write's refusal is handled by #writeFailed; whoever also waits on it needs do nothing more. */
function ignoreRefusal(): void {}

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

export function createRuntime(options: RuntimeOptions = {}): Runtime {
  return new BatonRuntime(options);
}
