import type { Caller } from './caller.js';
import type { ErrorCode } from './errors.js';
import type { InputRequest } from './input.js';
import type { ToolImage } from './results.js';

/** The states of a call: the wire vocabulary of records, events, the API and the inspector. */
export const CALL_STATUSES = [
  'queued',
  'inline',
  'backgrounded',
  'succeeded',
  'failed',
  'cancelled',
  'timed_out',
] as const;

export type CallStatus = (typeof CALL_STATUSES)[number];
export type TerminalStatus = 'succeeded' | 'failed' | 'cancelled' | 'timed_out';
export type ReplyStatus = TerminalStatus | 'backgrounded';

const TERMINAL: ReadonlySet<CallStatus> = new Set<CallStatus>([
  'succeeded',
  'failed',
  'cancelled',
  'timed_out',
]);

export function isTerminalStatus(status: CallStatus): status is TerminalStatus {
  return TERMINAL.has(status);
}

/** `inline` waits for the result; `auto` moves to the background past the inline budget; `background` acknowledges at once. */
export type ExecutionMode = 'inline' | 'auto' | 'background';
export type Concurrency = 'parallel' | 'exclusive';
/** How a model should take a background result (Gemini Live's function response scheduling, the result scheduling). */
export type Scheduling = 'interrupt' | 'when_idle' | 'silent';

export interface CallIssue {
  /** Where in the arguments, as a dotted path (`items.2.name`); empty for the arguments as a whole. */
  path: string;
  message: string;
}

export interface CallError {
  code: ErrorCode;
  /** What the model is told. */
  message: string;
  /** Each problem with the arguments, for `invalid_arguments`. */
  issues?: CallIssue[];
  /** For `input_required`: what the tool's `prepare` asks its caller for, by name. */
  inputs?: Record<string, InputRequest>;
  /** For `insufficient_scope`: the scope the caller's credential lacks. */
  scope?: string;
  /** For `quota_exceeded`: when one more call is let in, in seconds. */
  retryAfterSeconds?: number;
}

/** What the record keeps of an error, beyond what the model sees (an internal error's real cause). */
export interface RecordedError extends CallError {
  details?: { name?: string; message: string; stack?: string };
}

export interface Progress {
  current: number;
  total?: number;
  unit?: string;
  label?: string;
}

export type LogStream = 'stdout' | 'stderr';

/** What `runtime.call()` resolves with. A tool failure is a reply, never an exception. */
export interface CallReply {
  callId: string;
  status: ReplyStatus;
  /** What the model sees. */
  output: unknown;
  error?: CallError;
  images?: readonly ToolImage[];
}

/** A trace's context as W3C Trace Context headers carry it. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

/** An intermediate result of a running call (`ctx.update`): its number in the call, from 1. */
export interface CallUpdate {
  updateSeq: number;
  value: unknown;
  at: number;
}

/** Everything the store keeps of one call. */
export interface CallRecord {
  callId: string;
  sessionId: string;
  toolName: string;
  args: unknown;
  status: CallStatus;
  mode: ExecutionMode;
  /** True once the caller was answered `backgrounded`: the end of the call then queues a notification. */
  detached: boolean;
  attempt: number;
  /** What the tool's `prepare` returned: kept, so that a run after a crash gets it too. */
  prepared?: unknown;
  /** For a tool that needs approval: `pending` until `approve()` or `reject()`. */
  approval?: 'pending' | 'approved' | 'rejected';
  /** The external event key the call waits for now (`ctx.waitFor`), if any. */
  waitingFor?: string;
  /** Steering: how many of the messages sent to the call its tool has read (none: absent). */
  messagesRead?: number;
  /** The latest intermediate result (`ctx.update`) of the call, while it runs and after. */
  update?: CallUpdate;
  /**
   * When its session is told the call still runs, in ms after it was made (`notifyAfterMs`), if it
   * is in the background then: kept, so that a process that takes the call up tells the rest.
   */
  notifyAfterMs?: number[];
  /** A run started by `spawn_background` (the background runs): its label, and whether its session hears of its end. */
  run?: { title: string; signalOnCompletion: boolean };
  /** The runtime instance that runs it (the background continuation's runtime owner); recovery moves it when that instance is gone. */
  ownerId?: string;
  /**
   * The client instance that waits in a shared store for the call's reply: the store tells it, and
   * no other client, when the call is detached or ends.
   */
  replyTo?: string;
  /**
   * The caller's trace (W3C Trace Context), kept so that the process that runs the call continues
   * it: set when the caller had an OpenTelemetry span active.
   */
  trace?: TraceCarrier;
  /**
   * Who asked for the call, when a door named a caller other than the trusted one: kept, so that
   * what it starts (a `spawn_background` run) and what touches it later are decided by its rights.
   */
  caller?: Caller;
  messageId?: string;
  createdAt: number;
  startedAt?: number;
  endedAt?: number;
  durationMs?: number;
  /** When the tool last reported its progress or a status. */
  updatedAt?: number;
  progress?: Progress;
  statusText?: string;
  /** The last characters the tool logged (see `OUTPUT_TAIL_CHARS` in the runtime). */
  outputTail: string;
  /**
   * What the caller was answered at once when the call went on in the background: the runtime's
   * acknowledgement, as its formatter made it (a channel may add words of its own).
   */
  acknowledgement?: unknown;
  /** What the model was (or will be) shown. */
  output?: unknown;
  /** The tool's whole value, before any formatting or truncation. */
  result?: unknown;
  images?: readonly ToolImage[];
  rawOutput?: string;
  error?: RecordedError;
}

export type NotificationStatus = 'queued' | 'acknowledged';

/** How a notification's call stands: its end, or `running` for an update of a call that goes on. */
export type NotificationOutcome = TerminalStatus | 'running';

/**
 * Brings a backgrounded call's end back to its session (the background continuation), or tells it
 * the call goes on: an update, or a reminder that it still runs.
 */
export interface Notification {
  id: string;
  callId: string;
  sessionId: string;
  toolName: string;
  status: NotificationStatus;
  outcome: NotificationOutcome;
  /** An update (`outcome: 'running'`, `ctx.update`): its number in the call, from 1. */
  updateSeq?: number;
  /** A reminder that the call still runs (`notifyAfterMs`, `outcome: 'running'`): how long since it was made. */
  runningForMs?: number;
  title: string;
  body: string;
  /** The formatter's completed / error / cancelled reply: what the model is given. */
  output: unknown;
  scheduling: Scheduling;
  createdAt: number;
  acknowledgedAt?: number;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/**
 * A notification on its way to a webhook (Standard Webhooks): tried at once, then again on a
 * schedule, until an answer in 2xx or until its tries run out.
 */
export interface WebhookDelivery {
  /** The `webhook-id` of every attempt: the receiver's key to take a delivery once. */
  id: string;
  notificationId: string;
  callId: string;
  sessionId: string;
  status: DeliveryStatus;
  /** The JSON body every attempt sends, as it is signed. */
  body: string;
  /** Attempts made so far. */
  attempts: number;
  /** When the next attempt is due (ms since the epoch), while it is pending. */
  nextAt: number;
  createdAt: number;
  /**
   * Where it goes when it was made for a destination of its own (`webhooks.deliver`: an A2A push
   * notification config, say) rather than for its session's endpoint; the headers it carries
   * beside the signature's. Absent: its session's endpoint.
   */
  destination?: { url: string; headers?: Record<string, string> };
  /** How the last attempt went: where it went, and the HTTP status it got or why it got none. */
  lastAttempt?: { at: number; url: string; status?: number; error?: string };
  deliveredAt?: number;
}

/** A runtime process with a store: while its heartbeat is fresh, the calls it owns are its own. */
export interface RuntimeInstance {
  id: string;
  host: string;
  pid: number;
  /**
   * A random id of the process, new at each start: a process that reuses a dead one's PID (PID 1
   * in a restarted container) is never mistaken for it. Empty for rows written before it existed.
   */
  boot: string;
  startedAt: number;
  heartbeatAt: number;
  /**
   * Past `heartbeatAt + leaseMs` the instance is gone and its calls are recovered. A runtime
   * declares its lease and, on a store that can be away, its ride-out of the store on top.
   */
  leaseMs: number;
  /**
   * The version of what processes sharing a store say to each other through it (which of them
   * stores what, and when). A process serves an older peer in its words while it is live, and says
   * so (see the server's upgrade notes). 0 for a row written before versions were kept.
   */
  protocol: number;
}

/** A file a background run leaves (the background runs): `output.log`, `result.json`. */
export interface Artifact {
  callId: string;
  name: string;
  content: string;
}

/** How a failed run is tried again (Temporal's retry policy, the durable context). */
export interface RetryPolicy {
  /** Runs in all, the first included. */
  maxAttempts: number;
  /** Wait before the second run. Default 1,000 ms. */
  initialIntervalMs?: number;
  /** Each wait is this many times the one before. Default 2. */
  backoffCoefficient?: number;
  /** No wait is longer than this. Default 100 times the initial interval. */
  maximumIntervalMs?: number;
  /**
   * Codes never retried. Default: `tool_error` (unless the ToolError says `retryable`),
   * `invalid_arguments`, `connection_required`, `persistence_failed`.
   */
  nonRetryableCodes?: readonly ErrorCode[];
}

/** A finished durable step of a call, as the store keeps it. */
export interface StepResult {
  callId: string;
  stepId: string;
  value: unknown;
}

/** How an external event ended (the durable context), as given to `runtime.resolveEvent`. */
export type EventOutcome = { value: unknown } | { error: string } | { cancelled: true };

/** A resolved external event, kept until its call is removed. */
export interface EventResolution {
  key: string;
  callId: string;
  outcome: EventOutcome;
  at: number;
}

/** A background run started on a schedule (the background runs' scheduled monitor): recurring (cron) or one-shot. */
export interface Schedule {
  id: string;
  sessionId: string;
  toolName: string;
  args: unknown;
  title: string;
  signalOnCompletion: boolean;
  /** Five-field cron, for a recurring schedule. */
  cronExpression?: string;
  /** When a one-shot schedule fires (ms since the epoch). */
  scheduledAt?: number;
  /** IANA time zone the cron expression is read in. */
  timezone: string;
  /** When it fires next; unset once a one-shot has fired or the schedule was cancelled. */
  nextAt?: number;
  enabled: boolean;
  firings: number;
  createdAt: number;
  /** Who made it (see `CallRecord.caller`): each firing is a call of this caller's, checked as one. */
  caller?: Caller;
}
