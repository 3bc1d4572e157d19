import type {
  AnyTool,
  Caller,
  EventOutcome,
  ExecutionMode,
  InputRequest,
  ResultFormatter,
  RetryPolicy,
  Tool,
  ToolRegistry,
} from '@baton/contracts';
import type { Store } from '@baton/store';
import type { InspectionEvent, Observer } from 'xstate';
import type { AccessOptions } from './access.js';
import type { BUILTIN_TOOLS } from './builtin-names.js';
import type { Clock } from './clock.js';
import type { Logger } from './log.js';

/** The public shape of a runtime: what `createRuntime` takes, and what it gives. */

/** An XState inspection observer (`@statelyai/inspect`'s `inspect`, or a function). */
export type CallInspector = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

/** How long one batch took the store to write, for a latency metric. */
export interface StoreWriteTiming {
  /** Wall-clock milliseconds of the store's `write`. */
  durationMs: number;
  /** The rows of the batch: records, events, notifications and the rest. */
  rows: number;
  /** False when the store refused the batch (it is then written again in parts). */
  ok: boolean;
}

export interface RuntimeOptions {
  /** The tools this runtime can call: a list, or a registry to share. */
  tools?: Iterable<AnyTool> | ToolRegistry;
  /** Where calls, events and notifications are kept. Default: in memory. `close()` closes it. */
  store?: Store;
  /** The background continuation: how long an `auto` call may keep its caller waiting. Default 300 ms. */
  inlineBudgetMs?: number;
  /**
   * A client: how long a call it waits for may wait for a worker to claim it. Past it, unclaimed,
   * the call goes to the background and its caller is answered as at the budget, so that under
   * more calls than the workers end no caller waits on and on. Default 10 s.
   */
  claimWaitMs?: number;
  /** The mode of tools that declare none. Default `inline`. */
  defaultMode?: ExecutionMode;
  /** A hard limit on each run of tools that set none. Default: none. */
  timeoutMs?: number;
  /** Arguments larger than this (as JSON) are refused. Default 1 MiB. */
  maxArgsBytes?: number;
  /**
   * The tenant a session belongs to, for `limits.runningPerTenant` (the server keeps a tenant's
   * sessions under `tenant/`). Default: no tenants.
   */
  tenantOf?: (sessionId: string) => string;
  /**
   * What a caller may do: the scope each tool needs beside its own `scope`, and each tenant's
   * quota. Decided here for every way into a call (see `CallRequest.caller`). Default: no quota,
   * and each tool's own scope.
   */
  access?: AccessOptions;
  /** Arguments nested deeper than this (objects and arrays) are refused. Default 64. */
  maxArgsDepth?: number;
  /**
   * The longest call, session and message id, and tool name, a call may carry. Default 128. A host
   * that keeps its callers' ids under a prefix of its own (the server's tenants) adds the prefix.
   */
  maxIdChars?: number;
  /** The batch rules: a longer output is cut for the model (the record keeps it whole). Default 32,000. */
  maxOutputChars?: number;
  /** Shapes background replies; a tool's own formatter wins over it. Default: the result scheduling's shapes. */
  formatter?: Partial<ResultFormatter>;
  clock?: Clock;
  /**
   * An XState inspection observer (`@statelyai/inspect`'s `inspect`, or a function): each call then
   * runs as a live `callMachine` actor that it watches. Slower; for development.
   */
  inspect?: CallInspector;
  limits?: RuntimeLimits;
  /** This runtime's id in the store (the background continuation's runtime owner). Default: a new UUIDv7. */
  instanceId?: string;
  /** Past this long without a heartbeat, this runtime's calls may be recovered by another. Default 5 s. */
  leaseMs?: number;
  /**
   * How long a store that cannot be reached (a database restarting, a failover) is ridden out:
   * its writes, claims and reads are made again, with backoff, for up to this long before an
   * accepted call fails for it (`persistence_failed`). Meanwhile callers wait. 0: not at all.
   * Default 15 s.
   */
  storeRetryMs?: number;
  /** How a failed run is tried again, for tools that set no policy. Default: none (a call runs once). */
  retry?: RetryPolicy;
  /**
   * A recovered idempotent call runs again while it has run fewer times than this, when its tool
   * has no retry policy (with one, the policy's `maxAttempts`). Default 3.
   */
  maxAttempts?: number;
  /**
   * Built-in tools to register beside `tools`: `spawn_background` (the background runs), and the background
   * control a model follows what it started with (`BACKGROUND_CONTROL`: check, wait, cancel, list;
   * each confined to the caller's session). Default: none.
   */
  builtins?: readonly BuiltinTool[];
  /**
   * Removes ended calls, their events and artifacts, this long after they end, 500 at a time.
   * Notifications not yet acknowledged, and calls still waiting for approval, stay. Default: keep
   * them (the server's default is 7 days).
   */
  retention?: { endedTtlMs: number };
  /**
   * On a store that processes share (PostgreSQL): `client` submits calls and waits for their
   * replies, `worker` runs the calls that clients submit, `both` (default) runs its own calls and
   * takes clients' calls too. A client's call, its `backgrounded` reply and its events reach it
   * through the store.
   */
  role?: RuntimeRole;
  /**
   * On a shared store: how often a worker looks for calls and lapsed leases, and a client for the
   * end of its calls, besides being woken by the store's notices. Default 2 s.
   */
  pollMs?: number;
  /**
   * On a shared store, progress is conflated: at most one progress event per call this often (the
   * latest); state changes never are. Default 100 ms.
   */
  progressIntervalMs?: number;
  /**
   * Intermediate results (`ctx.update`): at most one update per call is written this often; those
   * that come faster are merged (the latest stands). Default 1 s.
   */
  updateIntervalMs?: number;
  /**
   * Webhooks: each notification (a detached call's end) POSTed as JSON to an endpoint, signed to
   * the Standard Webhooks spec, kept in the store until a 2xx or until its tries run out. Default: none.
   */
  webhooks?: WebhookOptions;
  /**
   * Where the failures the runtime catches and handles are logged (a store that is away, a claim,
   * a heartbeat), each with what was being done and its call: a pino logger or any with the same
   * methods. Default: quiet (`failures$` still tells of each).
   */
  logger?: Logger;
}

export type RuntimeRole = 'client' | 'worker' | 'both';

/** Where a notification goes, and the secret its deliveries are signed with. */
export interface WebhookEndpoint {
  /** An `http://` or `https://` URL. */
  url: string;
  /** `whsec_` and the base64 of 24 to 64 random bytes (Standard Webhooks). */
  secret: string;
  /**
   * How a call's or session's id appears in the body. Default: as the runtime keeps it; a server
   * with tenants shows a tenant its ids without the tenant's prefix.
   */
  showId?: (id: string) => string;
}

export interface WebhookOptions {
  /**
   * The endpoint of every session's notifications, or a function that gives a session's endpoint
   * (undefined: that session's notifications go to no webhook).
   */
  endpoint?: WebhookEndpoint | ((sessionId: string) => WebhookEndpoint | undefined);
  /**
   * The secret of the deliveries made for a destination of their own (`webhooks.deliver`), in
   * the endpoints' form. Default: the endpoint's, when it is one for every session.
   */
  secret?: string;
  /**
   * The waits between attempts, after the first (made at once); past the last wait's attempt a
   * delivery is failed. Default: Standard Webhooks' schedule, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h.
   */
  retryScheduleMs?: readonly number[];
  /** How long one attempt may take. Default 15 s. */
  timeoutMs?: number;
  /**
   * Destinations refused unless allowed here: on a loopback address, and on a private,
   * link-local (cloud metadata) or reserved one. Default: neither.
   */
  allow?: { loopback?: boolean; private?: boolean };
  /**
   * The setting that allows each kind of destination, as a refusal names it (a server names its
   * flag). Default `webhooks.allow.loopback` and `webhooks.allow.private`.
   */
  allowedBy?: { loopback?: string; private?: string };
  /** How often due deliveries are looked for, besides at once when one is made. Default 1 s. */
  pollMs?: number;
  /**
   * Attempts under way at once in this process (default 32), and to one destination, a
   * receiver's host (default 4): a receiver that hangs delays only its own deliveries.
   */
  concurrency?: { total?: number; perDestination?: number };
}

/** Past these a call waits in `queued`, or, where waiting makes no sense, ends with `limit_exceeded`. */
export interface RuntimeLimits {
  /** Calls running at once. Default 64. */
  concurrency?: number;
  /** Calls waiting for a slot. Default 10,000. */
  maxQueued?: number;
  /** The background runs: background runs alive at once in one session. Default 5. */
  backgroundPerSession?: number;
  /** The background runs: background runs alive at once in this runtime. Default 64. */
  backgroundPerWorker?: number;
  /** The background runs: active schedules per session. Default 10. */
  schedulesPerSession?: number;
  /**
   * Calls of one session running at once, of every mode; past it they wait their turn. Default:
   * `concurrency` less a quarter of it (48 of 64), so a session that floods leaves slots to others.
   */
  runningPerSession?: number;
  /** Calls of one tenant (see `tenantOf`) running at once, of every mode. Default as `runningPerSession`. */
  runningPerTenant?: number;
  /**
   * A client: calls it waits for workers to answer, at once (an answer at once, `background` mode
   * or an approval, holds nothing). Past it a new call is refused `overloaded`, and nothing is
   * kept: a client under more calls than its workers end answers promptly, or refuses. Default 10,000.
   */
  waitingForWorkers?: number;
  /** A client: calls of one tenant it waits for workers to answer. Default three quarters of `waitingForWorkers`. */
  waitingForWorkersPerTenant?: number;
}

export type BatchRequest = Omit<CallRequest, 'sessionId'>;

export interface BatchOptions {
  sessionId: string;
  messageId?: string;
  /** When false, the first failure cancels the calls of the batch that have not started. Default true. */
  continueOnFailure?: boolean;
}

export interface CallRequest {
  name: string;
  /** The arguments the model gave; omitted means `{}`. */
  args?: unknown;
  sessionId: string;
  /** The model's own tool-call id: the same id twice is the same call. Default: a new UUIDv7. */
  callId?: string;
  messageId?: string;
  /** Answers to what the tool's `prepare` asks (`ctx.input`), by name: see `input_required`. */
  inputs?: Readonly<Record<string, unknown>>;
  /**
   * When to tell the session that the call still runs, in ms after it is made (one time, or up to
   * 10): a notification by the tool's scheduling, if the call is in the background then, so that a
   * model is never left waiting in silence. A newer one, an update or the end replaces one not yet given.
   */
  notifyAfterMs?: number | readonly number[];
  /**
   * Who asks (see `Caller`): the runtime refuses a tool its scopes do not allow
   * (`insufficient_scope`) and a call past its quota (`quota_exceeded`), keeping nothing, and keeps
   * the caller with the call, so that what the call starts is decided by the same rights. Default
   * `TRUSTED_CALLER`: code that embeds the runtime may do everything.
   */
  caller?: Caller;
}

/** Who asks to touch a call (`cancel`, `steer`, `approve`, `reject`): refused `insufficient_scope` without its tool's scope. */
export interface AsCaller {
  caller?: Caller;
}

export interface SteerOptions extends AsCaller {
  /**
   * The sender's key for this message: sent again with the same key (a retry after an error, at
   * any process), it is stored once and answered with the same `messageSeq`. 1 to 255 characters.
   */
  idempotencyKey?: string;
}

/** What a caller's abort does to its call: cancels it, or hands it to the background. */
export type CallAbortChoice = 'cancel' | 'background';

export interface CallOptions {
  /** Cancels the call when it aborts, until the caller has its reply (see `onAbort`). */
  signal?: AbortSignal;
  /**
   * What an abort of `signal` does to the call, decided from the abort's reason when a function:
   * `cancel` (the default) cancels it; `background` hands it to the background at once, as its
   * inline budget would, so its end is kept for a later wait and told as a notification. For a
   * caller that gave up waiting (its own timeout, a client that went away), not one asked to stop
   * the work. A call whose mode does not let it go to the background is cancelled.
   */
  onAbort?: CallAbortChoice | ((reason: unknown) => CallAbortChoice);
  /**
   * The request's `callId` was made for this call just now, unique (a UUID): no call can have it
   * yet, so it is not looked up as a repeated id is (one store read saved, and on a shared store
   * the wait for its first write). Default false.
   */
  freshId?: boolean;
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
  /** A client: calls it waits for workers to answer (see `limits.waitingForWorkers`); 0 elsewhere. */
  waitingForWorkers: number;
}

export interface CloseOptions {
  /**
   * How long the live calls may go on to their end, in ms. Those still live then are handed over:
   * on a store that outlives the process, to another process or to the next start (a caller still
   * waiting hears that its call goes on in the background); in memory they end `interrupted`.
   * Default 0. Nothing is cancelled by a close.
   */
  drainMs?: number;
}

export interface WaitOptions {
  timeoutMs?: number;
  /** Stops the waiting (not the call): the reply is then the call's state at that moment. */
  signal?: AbortSignal;
}

/** A tool the runtime itself offers, registered when `builtins` names it. */
export type BuiltinTool = (typeof BUILTIN_TOOLS)[number];

/** A built-in tool as a typed `call` sees it: by its name, its arguments checked when called. */
export type BuiltinToolOf<B extends BuiltinTool> = Tool<Record<string, unknown>, unknown, unknown, B>;

/** What a call waits for from outside: its approval (the durable context's `needsApproval`), or an external event (`ctx.waitFor`). */
export interface RuntimeInputs {
  /**
   * Lets a call that waits for approval run; false when it does not wait for one. Deciding is
   * running: a `caller` without the tool's scope is refused (a `BatonError` `insufficient_scope`).
   */
  approve(callId: string, as?: AsCaller): Promise<boolean>;
  /** Ends a call that waits for approval `failed`, with the reason shown to the model (a `caller` as `approve`). */
  reject(callId: string, reason: string, as?: AsCaller): Promise<boolean>;
  /** The key of an external event of a call, as `ctx.eventKey(name)` gives it. */
  key(callId: string, name: string): string;
  /** Resolves an external event: the waiting call (now, or after a restart) gets the outcome. */
  resolve(key: string, outcome: EventOutcome): Promise<void>;
  /**
   * What a call that has not ended asks its caller for now (`ctx.input`) and has no answer to yet,
   * in the order it asked: each with its name and the key that answers it.
   */
  pending(callId: string): Promise<PendingInput[]>;
}

/** An input request of a call that waits for its answer. */
export interface PendingInput {
  key: string;
  name: string;
  request: InputRequest;
}

/** What to follow: one call's events (`after` a `seq`), or a session's (`after` a `position`). */
export interface FollowCall {
  callId: string;
  /** Resume a stream by passing the last `seq` it had. */
  after?: number;
}

export interface FollowSession {
  sessionId: string;
  /** Resume a stream by passing the last `position` it had. */
  after?: number;
}
