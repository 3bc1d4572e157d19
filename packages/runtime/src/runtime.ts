import { EventBus } from '@baton/bus';
import {
  type AnyTool,
  BatonError,
  type CallEvent,
  type CallRecord,
  type CallReply,
  type EventOutcome,
  type ExecutionMode,
  type RuntimeFailure,
  type SteerReceipt,
  ToolRegistry,
} from '@baton/contracts';
import type { CallFilter, CallPage, QueueDepth, SessionEvent, StoreConnections } from '@baton/store';
import { firstValueFrom, type Observable, Subject, toArray } from 'rxjs';
import type { Access } from './access.js';
import { assembleRuntime, type RuntimeParts } from './assembly.js';
import { registerBackgroundControl } from './builtins/background-control.js';
import { listenToCaller } from './call/caller-signal.js';
import { refusalHandledElsewhere } from './call/ending.js';
import { CallControls } from './call-controls.js';
import { RETENTION_BATCH } from './defaults.js';
import type { FollowOptions } from './follow-store.js';
import { newId } from './ids.js';
import { eventKey, HEALTH_PROBE_CALL_ID } from './keys.js';
import { createLedger } from './ledger/ledger.js';
import { SESSION_CANCELLED_REASON } from './messages.js';
import type {
  AsCaller,
  BatchOptions,
  BatchRequest,
  BuiltinTool,
  BuiltinToolOf,
  CallOptions,
  CallRequest,
  CloseOptions,
  FollowCall,
  FollowSession,
  RuntimeInputs,
  RuntimeOptions,
  RuntimeStats,
  SteerOptions,
  StoreWriteTiming,
  WaitOptions,
} from './options.js';
import { pendingInputs } from './pending-inputs.js';
import type { Runtime, TypedRuntime } from './runtime-api.js';
import { drained, handOver, mustEndBeforeHandover } from './shutdown.js';
import { MessageNumbers, steerCall } from './steering/steer.js';
import { waitForCall } from './waiting.js';
import { webhooksOfRuntime } from './webhooks/webhooks-of-runtime.js';

/**
 * The runtime's public face. Each method hands its work to the module that owns it; the journey
 * of a call through them, file by file, is told once, in `docs/DESIGN.md` ("The journey of a
 * call"), and starts at `call()`.
 */
class BatonRuntime implements Runtime {
  readonly tools: ToolRegistry;
  readonly instanceId: string;
  readonly defaultMode: ExecutionMode;
  readonly access: Access;
  readonly ready: Promise<void>;
  readonly events$: Observable<CallEvent>;
  readonly failures$: Observable<RuntimeFailure>;
  readonly storeWrites$: Observable<StoreWriteTiming>;
  readonly #storeWrites = new Subject<StoreWriteTiming>();
  readonly inputs: RuntimeInputs;
  readonly notifications: Runtime['notifications'];
  readonly schedules: Runtime['schedules'];
  readonly webhooks: Runtime['webhooks'];
  readonly #bus = new EventBus();
  readonly #parts: RuntimeParts;
  readonly #controls: CallControls;
  readonly #messageNumbers = new MessageNumbers();
  /** Requests that store something for a call, still being answered (see `#inFlight`). */
  readonly #requests = new Set<Promise<unknown>>();
  #closed = false;
  /** Past the drain: no attempt is retried here any more. */
  #stopping = false;
  #closing: Promise<void> | undefined;

  constructor(options: RuntimeOptions) {
    this.tools =
      options.tools instanceof ToolRegistry ? options.tools : new ToolRegistry(options.tools ?? []);
    const parts = assembleRuntime(options, {
      tools: this.tools,
      bus: this.#bus,
      closed: () => this.#closed,
      stopping: () => this.#stopping,
      control: (control) => this.#controls.control(control),
      timed: (timing) => this.#storeWrites.next(timing),
    });
    this.#parts = parts;
    this.#controls = new CallControls(parts, (callId, reason) => this.cancel(callId, reason));
    this.access = parts.access;
    const { store, clock, schedules, host } = parts;
    registerBackgroundControl(this.tools, parts.settings.builtins, this);
    this.instanceId = parts.settings.instanceId;
    this.defaultMode = parts.settings.defaultMode;
    this.ready = this.#start();
    this.events$ = this.#bus.events$;
    this.failures$ = this.#bus.failures$;
    this.storeWrites$ = this.#storeWrites.asObservable();
    this.inputs = {
      approve: (callId, as) =>
        this.#inFlight(this.#mayTouch(callId, as).then(() => this.#controls.approve(callId))),
      reject: (callId, reason, as) =>
        this.#inFlight(this.#mayTouch(callId, as).then(() => this.#controls.reject(callId, reason))),
      key: eventKey,
      resolve: (key, outcome) => this.#inFlight(host.resolveEvent(key, outcome)),
      pending: (callId) => pendingInputs(store, callId),
    };
    this.notifications = createLedger({
      store,
      instanceId: this.instanceId,
      clock,
      runtime: this,
      events$: this.#bus.events$,
      following: parts.following,
      failures: parts.failures,
    });
    this.schedules = {
      list: (sessionId) => schedules.list(sessionId),
      cancel: (scheduleId) => schedules.cancel(scheduleId),
    };
    this.webhooks = webhooksOfRuntime(store, parts.webhooks);
  }

  /**
   * Registered, its notices heard, recovered, schedules armed, first claim; then the housekeeping
   * that keeps it so.
   */
  #start(): Promise<void> {
    const { store, settings, recovery, worker, schedules, housekeeping, failures, clock, peers } =
      this.#parts;
    const { leaseMs, pollMs, role, retentionTtlMs } = settings;
    const works = role !== 'client';
    // Heard before anything is taken up: a request for a call (a cancel) reaches it only as a notice.
    const ready = this.#parts.registered
      .then(() => this.#parts.listening)
      // A worker learns what its peers speak as it looks for gone ones; a client looks for itself.
      .then(() => (works ? recovery.recoverOrphans() : peers.look()))
      .then(() => schedules.open())
      .then(() => (works && store.listen ? worker.claim() : undefined))
      // What was due while no process ran (a restart): delivered now, not at the first poll.
      .then(() => void this.#parts.webhooks?.deliverDue().catch(failures.on('webhook delivery')));
    // Awaited by whoever awaits `ready`; reported here for those who do not.
    ready.catch(failures.onRetried('start', (error) => store.isUnavailable?.(error) === true));
    housekeeping.every(leaseMs / 3, 'heartbeat', () => recovery.beat());
    if (!works) housekeeping.every(leaseMs / 3, 'peers', () => peers.look());
    if (retentionTtlMs) {
      const cutoff = () => clock.now() - retentionTtlMs;
      housekeeping.every(Math.min(retentionTtlMs, 60_000), 'retention', () =>
        this.#deleteEndedBefore(cutoff()),
      );
    }
    // A safety net under the store's notices.
    if (works && store.listen) housekeeping.every(pollMs, 'claim', () => worker.claim());
    // Lapsed leases are looked for while running, on every store: an instance that dies after this
    // one started (or that looked alive at its start) is recovered without waiting for a restart.
    const recoverEvery = store.listen ? Math.min(pollMs, leaseMs / 2) : leaseMs / 2;
    if (works) housekeeping.every(recoverEvery, 'recovery', () => recovery.recoverOrphans());
    return ready;
  }

  call(request: CallRequest, { signal, freshId = false, onAbort }: CallOptions = {}): Promise<CallReply> {
    if (!signal) return this.#parts.intake.call(request, undefined, freshId);
    // An id made here is as new as one intake would make.
    const made = request.callId === undefined;
    const callId = request.callId ?? newId();
    let answered = false;
    let stopListening = () => {};
    const reply = this.#parts.intake.call({ ...request, callId }, undefined, made || freshId).finally(() => {
      answered = true;
      stopListening();
    });
    const { registry, driver, failures } = this.#parts;
    stopListening = listenToCaller(
      {
        registry,
        driver,
        failures,
        cancel: (id, reason) => this.cancel(id, reason),
        follow: (id) => this.follow({ callId: id }),
        stopping: () => this.#stopping,
      },
      callId,
      signal,
      onAbort,
      () => answered,
    );
    return reply;
  }

  callBatch(requests: readonly BatchRequest[], options: BatchOptions): Promise<CallReply[]> {
    return this.#parts.intake.callBatch(requests, options);
  }

  /**
   * Touching a call (cancel, steer, approve, reject) is calling its tool: a caller without the
   * tool's scope is refused, whatever way it came in. A call that is not found is left to the
   * operation, which says so in its own words.
   */
  async #mayTouch(callId: string, as: AsCaller | undefined): Promise<void> {
    const caller = as?.caller;
    if (caller?.scopes === undefined) return;
    const record = await this.get(callId);
    const refusal = record && this.access.scopeRefusal(caller, this.tools.get(record.toolName));
    if (refusal) throw new BatonError('insufficient_scope', refusal.message);
  }

  cancel(callId: string, reason?: string, as?: AsCaller): Promise<boolean> {
    return this.#inFlight(this.#cancel(callId, reason, as));
  }

  async #cancel(callId: string, reason?: string, as?: AsCaller): Promise<boolean> {
    await this.#mayTouch(callId, as);
    const { registry, worker, driver } = this.#parts;
    const call = registry.get(callId);
    if (!call) {
      return worker.controlRemote({
        type: 'control',
        callId,
        action: 'cancel',
        ...(reason ? { reason } : {}),
      });
    }
    driver.send(call, { type: 'CANCEL', ...(reason !== undefined ? { reason } : {}) });
    await call.endWritten?.catch(refusalHandledElsewhere);
    return true;
  }

  async cancelSession(sessionId: string, reason = SESSION_CANCELLED_REASON): Promise<number> {
    const calls = this.#parts.registry.all().filter((call) => call.record.sessionId === sessionId);
    const cancelled = await Promise.all(calls.map((call) => this.cancel(call.record.callId, reason)));
    return cancelled.filter(Boolean).length;
  }

  steer(callId: string, message: unknown, options: SteerOptions = {}): Promise<SteerReceipt> {
    return this.#inFlight(this.#steer(callId, message, options));
  }

  /**
   * A request that stores something for a call (a message, a decision, an answer): the runtime
   * closes its store only once each has answered, so that none is stored and then refused.
   */
  #inFlight<T>(request: Promise<T>): Promise<T> {
    this.#requests.add(request);
    const done = () => this.#requests.delete(request);
    request.then(done, done);
    return request;
  }

  async #steer(callId: string, message: unknown, options: SteerOptions): Promise<SteerReceipt> {
    await this.#mayTouch(callId, options);
    const { store, host, writer, clock } = this.#parts;
    const storeResolution = (key: string, id: string, outcome: EventOutcome) =>
      writer.write('resolutions', { key, callId: id, outcome, at: clock.now() });
    return steerCall(
      {
        runtime: this,
        live: (id) => this.#parts.registry.record(id),
        store,
        tools: this.tools,
        host,
        numbers: this.#messageNumbers,
        storeResolution,
      },
      callId,
      message,
      options.idempotencyKey,
    );
  }

  async get(callId: string): Promise<CallRecord | undefined> {
    const record = this.#parts.registry.record(callId);
    return record ? { ...record } : this.#parts.store.getCall(callId);
  }

  wait(callId: string, options?: WaitOptions): Promise<CallReply | undefined> {
    const { settings, clock } = this.#parts;
    return waitForCall({ runtime: this, settings, clock }, callId, options);
  }

  list(filter?: CallFilter): Promise<CallPage> {
    return this.#parts.store.listCalls(filter);
  }

  follow(target: FollowCall, options?: FollowOptions): Observable<CallEvent>;
  follow(target: FollowSession, options?: FollowOptions): Observable<SessionEvent>;
  follow(
    target: FollowCall | FollowSession,
    options?: FollowOptions,
  ): Observable<CallEvent> | Observable<SessionEvent> {
    return this.#parts.following.follow(target, options);
  }

  artifact(callId: string, name: string): Promise<string | undefined> {
    return this.#parts.store.getArtifact(callId, name);
  }

  async checkStore(): Promise<void> {
    const { store, clock } = this.#parts;
    await store.heartbeat(this.instanceId, clock.now());
    await store.getCall(HEALTH_PROBE_CALL_ID);
  }

  stats(): RuntimeStats {
    const { registry, slots, timers, client } = this.#parts;
    return {
      active: registry.size,
      running: slots.running,
      queued: slots.waiting,
      timers: timers.armed,
      routes: this.#bus.routeCount(),
      waitingForWorkers: client.waitingForWorkers,
    };
  }

  queueDepth(): Promise<QueueDepth> {
    return this.#parts.store.queueDepth();
  }

  storeConnections(): StoreConnections | undefined {
    return this.#parts.store.connections?.();
  }

  get closing(): boolean {
    return this.#closed;
  }

  close({ drainMs = 0 }: CloseOptions = {}): Promise<void> {
    this.#closing ??= this.#close(drainMs);
    return this.#closing;
  }

  /**
   * No new call is taken; the live ones have `drainMs` to end (the heartbeat goes on meanwhile);
   * those still live then are handed over (see shutdown.ts); what is pending is written.
   */
  async #close(drainMs: number): Promise<void> {
    this.#closed = true;
    const { housekeeping, schedules, worker, intake, writer, store, following, failures, clock } =
      this.#parts;
    // The drain counts from the call to close().
    const drainUntil = clock.now() + drainMs;
    schedules.close();
    // A start that failed was reported (see #start); closing goes on without it.
    await this.ready.catch(() => undefined);
    worker.releaseWaiting();
    const shutdown = { ...this.#parts, send: this.#parts.driver.send, events$: this.#bus.events$ };
    // A client's calls run elsewhere: its callers wait for the drain, then hear that they go on.
    await this.#parts.client.handOver(drainUntil - clock.now());
    // Alone on its store, it waits only for what cannot be handed over without loss: meanwhile it
    // refuses calls that no other process takes. With others, it lets its calls end.
    const alone = store.outlivesProcess === true && !store.listen;
    await drained(shutdown, drainUntil - clock.now(), alone ? mustEndBeforeHandover : undefined);
    // Callers waiting here for a call another process runs: it is detached, and they are answered.
    await this.#parts.repeated.handOver();
    housekeeping.close();
    this.#stopping = true;
    const handedOver = handOver(shutdown, store.outlivesProcess === true);
    await intake.pending();
    await worker.claiming;
    // A message, a decision or an answer under way is stored and answered before the store goes.
    await Promise.allSettled([...this.#requests]);
    await writer.drain();
    // Deliveries of calls that ended in the drain go out in what is left of it.
    await this.#parts.webhooks?.close(Math.max(0, drainUntil - clock.now()));
    this.#parts.stopListening();
    following.complete();
    // What was handed over is another's to take up at once: this instance's lease lapses now. A
    // close that hands over nothing leaves nothing to recover.
    if (handedOver > 0) await store.heartbeat(this.instanceId, 0).catch(failures.on('hand over'));
    // Not removed: its lease lapses, and its peers look no further.
    else
      await store
        .removeInstance(this.instanceId)
        .catch(failures.onRetried('unregister', (error) => store.isUnavailable?.(error) === true));
    this.#bus.complete();
    this.#storeWrites.complete();
    await store.close();
  }

  /**
   * Retention: ended calls go in batches, each its own short transaction, with a turn of the event
   * loop between them, so a large backlog never holds the store or the loop.
   */
  async #deleteEndedBefore(cutoff: number): Promise<void> {
    const { store } = this.#parts;
    while (!this.#closed && (await store.deleteEndedBefore(cutoff, RETENTION_BATCH)) === RETENTION_BATCH) {
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  // The names of 0.1 that moved, kept for one release (see options.ts).

  callEvents$(callId: string): Observable<CallEvent> {
    return this.#bus.call$(callId);
  }

  sessionEvents$(sessionId: string): Observable<CallEvent> {
    return this.#bus.session$(sessionId);
  }

  followCall(callId: string, afterSeq = 0, options?: FollowOptions): Observable<CallEvent> {
    return this.follow({ callId, after: afterSeq }, options);
  }

  followSession(sessionId: string, afterPosition = 0, options?: FollowOptions): Observable<SessionEvent> {
    return this.follow({ sessionId, after: afterPosition }, options);
  }

  replay(callId: string, fromSeq = 1): Promise<CallEvent[]> {
    return firstValueFrom(this.follow({ callId, after: fromSeq - 1 }, { live: false }).pipe(toArray()));
  }

  approve(callId: string): Promise<boolean> {
    return this.inputs.approve(callId);
  }

  reject(callId: string, reason: string): Promise<boolean> {
    return this.inputs.reject(callId, reason);
  }

  eventKey(callId: string, name: string): string {
    return eventKey(callId, name);
  }

  resolveEvent(key: string, outcome: EventOutcome): Promise<void> {
    return this.inputs.resolve(key, outcome);
  }
}

/**
 * Makes a runtime. Given its tools as a list, its `call` is typed by their names (see `Runtime`).
 */
export function createRuntime<
  const T extends readonly AnyTool[],
  const B extends readonly BuiltinTool[] = readonly [],
>(
  options: RuntimeOptions & { tools: T; builtins?: B },
): TypedRuntime<[B[number]] extends [never] ? T[number] : T[number] | BuiltinToolOf<B[number]>>;
export function createRuntime(options?: RuntimeOptions): Runtime;
export function createRuntime(options: RuntimeOptions = {}): Runtime {
  return new BatonRuntime(options);
}
