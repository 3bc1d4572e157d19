/** Every default and limit of the runtime, in one place (with the seed it comes from). */
import type { ErrorCode } from '@baton/contracts';

/** The background runs: the resource record keeps the last 2048 characters of a run's output. */
export const OUTPUT_TAIL_CHARS = 2048;

/** The background runs: MAX_BACKGROUND_OUTPUT_LOG_CHARS, the cap of a background run's `output.log`. */
export const OUTPUT_LOG_MAX_CHARS = 256 * 1024;

/** How long an instance may go without a heartbeat before its calls are recovered. */
export const DEFAULT_LEASE_MS = 5_000;

/** A recovered idempotent call runs again while it has run fewer times than this. */
export const DEFAULT_MAX_ATTEMPTS = 3;

/** Codes a retry policy never retries unless it names its own (a retryable ToolError aside). */
export const DEFAULT_NON_RETRYABLE_CODES: readonly ErrorCode[] = [
  'tool_error',
  'invalid_arguments',
  'connection_required',
  'persistence_failed',
];

export const DEFAULT_RETRY_INITIAL_INTERVAL_MS = 1_000;
export const DEFAULT_RETRY_BACKOFF_COEFFICIENT = 2;

/** A call's end that the store refused is written again after this, doubling up to the maximum. */
export const END_REWRITE_INITIAL_MS = 100;
export const END_REWRITE_MAX_MS = 5_000;

/** Calls running at once in one runtime. */
export const DEFAULT_CONCURRENCY = 64;

/**
 * The slots one session (or one tenant) may hold by default: all but a quarter, so that one that
 * floods with slow calls always leaves some to the others. Small pools are left whole.
 */
export function fairShareOf(concurrency: number): number {
  return concurrency - Math.floor(concurrency / 4);
}

/**
 * Calls a client waits for workers to answer; past it a call is refused with `overloaded`. As many
 * as a runtime holds in its queue (`DEFAULT_MAX_QUEUED`): a burst of thousands at once is taken,
 * and the wait for a claim (`DEFAULT_CLAIM_WAIT_MS`) bounds how long each is held.
 */
export const DEFAULT_WAITING_FOR_WORKERS = 10_000;

/** How long a client's call waits for a worker to claim it before it goes to the background. */
export const DEFAULT_CLAIM_WAIT_MS = 10_000;

/** Calls waiting for a slot; past it a call is refused with `limit_exceeded`. */
export const DEFAULT_MAX_QUEUED = 10_000;

/** The background runs: MAX_ACTIVE_BACKGROUND_RUNS_PER_SESSION. */
export const DEFAULT_BACKGROUND_PER_SESSION = 5;

/** The background runs: MAX_ACTIVE_BACKGROUND_RUNS_PER_WORKER (a worker is one runtime). */
export const DEFAULT_BACKGROUND_PER_WORKER = 64;

/** The background runs: MAX_ACTIVE_SCHEDULES_PER_SESSION. */
export const DEFAULT_SCHEDULES_PER_SESSION = 10;

/** The batch rules: outputs longer than this are cut for the model; the record keeps them whole. */
export const DEFAULT_MAX_OUTPUT_CHARS = 32_000;

/**
 * A write batch is flushed at once when it holds this many changes, not only at the end of the
 * tick. Large on purpose: a call whose record went out in a batch cut mid-tick is written again
 * when it changes later in the same tick: a small bound wrote a call's record two or three times
 * in a busy tick, where this writes it once (`bench/RESULTS.md`, row 2).
 */
export const WRITE_BATCH_MAX = 8_192;

/**
 * Where the store asks for it (`writeBatchCalls`), a tick's writes are cut into batches of about
 * this share of the calls in flight, so that as many cohorts of calls take turns: one is written
 * while the next runs; on PostgreSQL, a quarter did more calls a second than smaller batches or
 * whole ticks (`bench/RESULTS.md`, row 8).
 */
export const WRITE_COHORTS = 4;

/** ...and of no fewer calls than this: smaller batches cost the store more per call than they gain. */
export const WRITE_BATCH_CALLS_MIN = 100;

/** On a shared store: how often workers look for work and lapsed leases, and clients for ends. */
export const DEFAULT_POLL_MS = 2_000;

/** On a shared store: at most one progress event per call this often. */
export const DEFAULT_PROGRESS_INTERVAL_MS = 100;

/** Intermediate results (`ctx.update`): at most one written per call this often; faster ones merge. */
export const DEFAULT_UPDATE_INTERVAL_MS = 1_000;

/** Retention removes this many ended calls per transaction. */
export const RETENTION_BATCH = 500;

/** A follower reads this many stored events at a time (a replay of a long history is paged). */
export const FOLLOW_PAGE_SIZE = 200;

/** How many calls a worker claims at once at most. */
export const CLAIM_BATCH_MAX = 64;

/** A client reads the records of at most this many of its waiting calls in one query. */
export const REPLY_READ_BATCH_MAX = 1_000;

/** Node's timers hold at most 2^31 - 1 ms (about 24.8 days); a later firing is re-armed on the way. */
export const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** The batch rules: a notification's one-line summary of a run is cut here. */
export const RUN_SUMMARY_CHARS = 300;

/**
 * The waits between a webhook delivery's attempts, after the first (made at once): Standard
 * Webhooks' reference schedule (Svix's), eight attempts over about 28 hours. The first retry comes
 * within 5 s.
 */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

/** One webhook attempt is given up past this. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 15_000;

/** How often due webhook deliveries are looked for, besides at once when one is made. */
export const DEFAULT_WEBHOOK_POLL_MS = 1_000;

/** Deliveries claimed at once by one process. */
export const WEBHOOK_BATCH = 16;

/**
 * Webhook attempts under way at once in one process, and to one destination (a receiver's host):
 * a receiver that hangs holds only its own share, and the others' deliveries leave on time.
 */
export const DEFAULT_WEBHOOK_CONCURRENCY = 32;
export const DEFAULT_WEBHOOK_PER_DESTINATION = 4;

/**
 * A repeated call id, at a process that does not run the call: an auto call no process has
 * claimed by the end of its budget is detached here this long after, so that the process of its
 * first caller, if it is up, does it first.
 */
export const REPEATED_DETACH_GRACE_MS = 250;

/** How long a stopping client waits for the detachments it asked for to come back as replies. */
export const HANDOVER_REPLY_WAIT_MS = 2_000;

/** How long the runtime rides out a store it cannot reach before a request's error goes on. */
export const DEFAULT_STORE_RETRY_MS = 15_000;

/** The first wait before a request to a store that was away is made again; it doubles up to the next. */
export const STORE_RETRY_FIRST_MS = 50;
export const STORE_RETRY_MAX_MS = 1_000;

/** How long `notifications.given` waits for the notification of an end it was asked about to be stored. */
export const GIVEN_END_WAIT_MS = 5_000;

/**
 * On a shared store, how soon a wait for an external event (a message, an input) reads its
 * resolution again, should the process that stored it fail to tell this one (it was draining, its
 * pool closed): the first time, then twice as long each time up to the most.
 */
export const EVENT_REREAD_FIRST_MS = 1_000;
export const EVENT_REREAD_MOST_MS = 30_000;
