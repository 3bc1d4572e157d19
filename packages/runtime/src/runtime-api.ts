import type {
  AnyTool,
  CallEvent,
  CallRecord,
  CallReply,
  EventOutcome,
  ExecutionMode,
  Notification,
  RuntimeFailure,
  Schedule,
  SteerReceipt,
  ToolCallOf,
  ToolCallReply,
  ToolRegistry,
  WebhookDelivery,
} from '@baton/contracts';
import type {
  CallFilter,
  CallPage,
  DeliveryCountFilter,
  DeliveryFilter,
  NotificationCountFilter,
  NotificationFilter,
  QueueDepth,
  SessionEvent,
  StoreConnections,
} from '@baton/store';
import type { Observable } from 'rxjs';
import type { Access } from './access.js';
import type { FollowOptions } from './follow-store.js';
import type {
  AsCaller,
  BatchOptions,
  BatchRequest,
  CallOptions,
  CallRequest,
  CloseOptions,
  FollowCall,
  FollowSession,
  RuntimeInputs,
  RuntimeStats,
  SteerOptions,
  StoreWriteTiming,
  WaitOptions,
} from './options.js';
import type { WebhookSend } from './webhooks/targets.js';

/** The public shape of a runtime: what `createRuntime` gives (`options.ts` has what it takes). */

/**
 * A call request for one of a runtime's tools: by a name it has, with that tool's arguments. A
 * runtime made from a registry (or from tools whose names are plain strings) takes any request.
 */
export type ToolCallRequest<T extends AnyTool> = ToolCallOf<T, CallRequest>;

/** The reply to a call of tool `N`: a success has that tool's output. */
export type { ToolCallReply };

export interface Runtime {
  readonly tools: ToolRegistry;
  readonly instanceId: string;
  /**
   * The one place that decides what a caller may see and call (scopes) and start (quota); every
   * call's request is decided by it. A door asks it what to list and which challenge to give.
   */
  readonly access: Pick<Access, 'scopeOf' | 'lacks' | 'visible' | 'scopeRefusal' | 'configure'>;
  /** The mode of a tool that names none (`createRuntime({ defaultMode })`): bridges declare tools by it. */
  readonly defaultMode: ExecutionMode;
  /**
   * Settles once this runtime is registered in its store and has recovered the calls of instances
   * that are gone (calls can be made before: their replies wait for the registration).
   */
  readonly ready: Promise<void>;
  /**
   * Runs a tool call. A failure of any kind, a closed runtime included, is a reply, never a rejection.
   * `signal` cancels the call when it aborts before the reply (the agent's run was stopped); once
   * the caller has its reply, a backgrounded call is the session's, and the signal no longer reaches it.
   */
  call(request: CallRequest, options?: CallOptions): Promise<CallReply>;
  /** The batch rules: runs the calls of one model turn; the replies come in the order of the requests. */
  callBatch(requests: readonly BatchRequest[], options: BatchOptions): Promise<CallReply[]>;
  /**
   * True when the call was running or queued and is now `cancelled`. A `caller` without the scope
   * of the call's tool is refused: a `BatonError` `insufficient_scope`.
   */
  cancel(callId: string, reason?: string, as?: AsCaller): Promise<boolean>;
  /**
   * Steering: sends a message to a running (or queued) call whose tool declares `messages`; the
   * tool reads it with `ctx.nextMessage()`. Resolves once the message is stored, with its number in
   * the call. Throws a `BatonError`: `call_not_found`, `call_ended`, `not_steerable` (its tool takes
   * none), `invalid_arguments` (its schema refused the message), `limit_exceeded`,
   * `insufficient_scope` (a `caller` without the scope of the call's tool). With an
   * `idempotencyKey`, the same message sent again is stored once, under the same number.
   */
  steer(callId: string, message: unknown, options?: SteerOptions): Promise<SteerReceipt>;
  /** Cancels every live call of a session; resolves with how many. */
  cancelSession(sessionId: string, reason?: string): Promise<number>;
  get(callId: string): Promise<CallRecord | undefined>;
  /**
   * Waits for a call to end, at most `timeoutMs` (its tool's inline budget by default), on the
   * runtime's clock. Resolves with its reply: its end, or `backgrounded` when it goes on; undefined
   * when there is no such call. The waiter has the result then: the call's notification is
   * acknowledged, so its session is not told twice.
   */
  wait(callId: string, options?: WaitOptions): Promise<CallReply | undefined>;
  list(filter?: CallFilter): Promise<CallPage>;
  /**
   * The stored events of a call (or of every call of a session, in the order they were stored)
   * after `after`, then its later events as they are stored: each once, in order. With
   * `{ live: false }` it completes once what is stored now has been read.
   */
  follow(target: FollowCall, options?: FollowOptions): Observable<CallEvent>;
  follow(target: FollowSession, options?: FollowOptions): Observable<SessionEvent>;
  /** Every event of every call of this runtime, as it is stored (no replay). */
  readonly events$: Observable<CallEvent>;
  /** Every failure the runtime caught and handled, to count or alert on (they are logged too). */
  readonly failures$: Observable<RuntimeFailure>;
  /** Approvals and external events: what calls wait for from outside. */
  readonly inputs: RuntimeInputs;
  /** How long each of the store's writes took: one per batch (group commit), for a latency metric. */
  readonly storeWrites$: Observable<StoreWriteTiming>;
  readonly notifications: {
    list(filter?: NotificationFilter): Promise<Notification[]>;
    /** How many match: `{ status: 'queued' }` counts those not yet acknowledged. */
    count(filter?: NotificationCountFilter): Promise<number>;
    /** False when there is no such notification or it was already acknowledged. */
    ack(notificationId: string): Promise<boolean>;
    /**
     * The session's notifications that are due now, each acknowledged as it is taken (the result
     * scheduling, `isDueAt`): `interrupt` and `silent` ones at any step; `when_idle` ones only when
     * `idle` (the model finished its turn). A loop that can say when the model has them in its
     * conversation takes them through `@baton/runtime/bridge`'s `pullDelivery` instead, which
     * acknowledges them only then.
     */
    take(request: { sessionId: string; idle: boolean }): Promise<Notification[]>;
    /**
     * The session's notifications that are due now (`isDueAt`), held for this runtime in one store
     * operation, not acknowledged: no other loop, of this process or another, is given them until
     * they are acknowledged (`ack`) or let go (`release`), or this runtime's instance is gone (a
     * process that died before its model saw them). The bridge kit's deliveries are made of it.
     */
    hold(request: { sessionId: string; idle: boolean }): Promise<Notification[]>;
    /**
     * The call's end reached its consumer by another way than a notification (an MCP task's
     * result, a client's own wait): every notification of the call still queued (its end, the
     * updates and reminders the end replaces) is acknowledged, so its session is not told again.
     * Nothing for a call not ended. Resolves with how many were acknowledged.
     */
    given(callId: string): Promise<number>;
    /** Lets go of notifications this runtime holds without acknowledging them: they are due again. */
    release(notificationIds: readonly string[]): Promise<void>;
    /**
     * A session's notifications not yet acknowledged (or those of every session under a prefix: a
     * tenant's), as they come: the queued ones first, then each new one once it is stored, by this
     * process or by another on a shared store. The place to start a turn when a result arrives
     * while the user is idle (not for a `silent` one: `startsTurn`). Each is given once; one
     * another loop took first is not given. The subscriber is called in its own async context
     * (where it subscribed), so a turn it starts is a turn of its own.
     */
    watch(target: { sessionId: string } | { sessionPrefix: string }): Observable<Notification>;
  };
  /** The schedules of `spawn_background` (the background runs): listed per session, cancelled by id. */
  readonly schedules: {
    list(sessionId: string): Promise<Schedule[]>;
    /** False when there is no such active schedule. */
    cancel(scheduleId: string): Promise<boolean>;
  };
  /** Webhook deliveries (see `webhooks`): what they are, and what each attempt made of one. */
  readonly webhooks: {
    /** Newest first; the values of a delivery's own headers hidden. */
    list(filter?: DeliveryFilter): Promise<WebhookDelivery[]>;
    /**
     * Delivers a stored notification to destinations of their own besides its session's endpoint
     * (an A2A task's push notification configs): each a delivery stored now and attempted like
     * the others, signed with `webhooks.secret`. Asked again with the same keys, it adds nothing.
     */
    deliver(notification: Notification, sends: readonly WebhookSend[]): Promise<void>;
    count(filter?: DeliveryCountFilter): Promise<number>;
    /**
     * Attempts the deliveries due now, here (those no other process holds); resolves with how
     * many it attempted. The runtime does this by itself; a test or a scheduled job may ask.
     */
    deliverDue(): Promise<number>;
    /**
     * Why a destination given at run time (an A2A push config's URL) would be refused by the
     * webhooks' rules (`webhooks.allow`), as far as can be told before its name is looked up (the
     * address it resolves to is checked at the connection); undefined when it may be used.
     */
    destinationProblem(url: string): string | undefined;
    /** Each delivery as an attempt of this runtime left it. */
    readonly attempts$: Observable<WebhookDelivery>;
  };
  /** A file of a background run: `output.log` or `result.json`. */
  artifact(callId: string, name: string): Promise<string | undefined>;
  stats(): RuntimeStats;
  /**
   * The calls in the store waiting for a worker to claim them (every process's), and when the
   * oldest was made: how far behind the workers are. Rejects if the store cannot be read.
   */
  queueDepth(): Promise<QueueDepth>;
  /** The connections the store holds to its database, where it keeps a pool of them (PostgreSQL). */
  storeConnections(): StoreConnections | undefined;
  /**
   * A write and a read on the store (this runtime's heartbeat, then a lookup): resolves when both
   * worked, rejects with the store's error otherwise. For health checks.
   */
  checkStore(): Promise<void>;
  /**
   * Takes no new call, lets the live ones run to their end for `drainMs`, hands over the rest (see
   * `CloseOptions`), writes what is pending, and closes the store.
   */
  close(options?: CloseOptions): Promise<void>;
  /** `close()` has begun: no new call is taken (the live ones may still be draining). */
  readonly closing: boolean;

  /** @deprecated Use `follow({ callId })`, which replays what is stored first. Removed in 0.3. */
  callEvents$(callId: string): Observable<CallEvent>;
  /** @deprecated Use `follow({ sessionId })`, which replays what is stored first. Removed in 0.3. */
  sessionEvents$(sessionId: string): Observable<CallEvent>;
  /** @deprecated Use `follow({ callId, after })`. Removed in 0.3. */
  followCall(callId: string, afterSeq?: number, options?: FollowOptions): Observable<CallEvent>;
  /** @deprecated Use `follow({ sessionId, after })`. Removed in 0.3. */
  followSession(sessionId: string, afterPosition?: number, options?: FollowOptions): Observable<SessionEvent>;
  /** @deprecated Use `follow({ callId, after: fromSeq - 1 }, { live: false })`. Removed in 0.3. */
  replay(callId: string, fromSeq?: number): Promise<CallEvent[]>;
  /** @deprecated Use `inputs.approve`. Removed in 0.3. */
  approve(callId: string): Promise<boolean>;
  /** @deprecated Use `inputs.reject`. Removed in 0.3. */
  reject(callId: string, reason: string): Promise<boolean>;
  /** @deprecated Use `inputs.key`. Removed in 0.3. */
  eventKey(callId: string, name: string): string;
  /** @deprecated Use `inputs.resolve`. Removed in 0.3. */
  resolveEvent(key: string, outcome: EventOutcome): Promise<void>;
}

/**
 * A runtime made from a list of tools (`createRuntime({ tools: [search, fetchPage] })`): its
 * `call` is typed by their names. A wrong name or wrong arguments do not compile, and a successful
 * reply's `output` is the tool's output. It is a `Runtime` wherever one is taken.
 */
export interface TypedRuntime<T extends AnyTool> extends Runtime {
  call<const R extends ToolCallRequest<T>>(
    request: R,
    options?: CallOptions,
  ): Promise<ToolCallReply<T, R['name']>>;
}
