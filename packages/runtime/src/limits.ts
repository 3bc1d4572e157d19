/** Every default, limit and message text of the runtime, in one place (with the seed it comes from). */
import type { CallRecord, ErrorCode, TerminalStatus } from '@baton/contracts';

/** Seed 002: the resource record keeps the last 2048 characters of a run's output. */
export const OUTPUT_TAIL_CHARS = 2048;

/** Seed 002: MAX_BACKGROUND_OUTPUT_LOG_CHARS, the cap of a background run's `output.log`. */
export const OUTPUT_LOG_MAX_CHARS = 256 * 1024;

/** Seed 002's last line of a log that hit its cap. */
export const OUTPUT_LOG_TRUNCATED_LINE = `\n[system] background output truncated at ${OUTPUT_LOG_MAX_CHARS} characters\n`;

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

/** Seed 003's words for step ids that cannot be used. */
export const EMPTY_STEP_ID_MESSAGE = 'durable effect step id must be non-empty';
export function duplicateStepIdMessage(stepId: string): string {
  return `durable effect step id \`${stepId}\` was already used by this tool call`;
}

/** Seed 003: one key for every attempt of a call, for the services a tool calls. */
export function replayKey(sessionId: string, callId: string, toolName: string): string {
  return `baton:${sessionId}:${callId}:${toolName}`;
}

export const APPROVAL_PENDING_MESSAGE =
  'This tool call needs approval before it runs. Continue the conversation; a later notification will report the result.';

export function approvalRejectedMessage(reason: string): string {
  return `The tool call was rejected: ${reason}`;
}

/** The key of an external event of a call: the same every time for the same call and name. */
export function eventKey(callId: string, name: string): string {
  // encodeURIComponent throws on a lone surrogate: the name is made well-formed first.
  return `baton-event:${encodeURIComponent(callId)}:${encodeURIComponent(name.toWellFormed())}`;
}

/** The call an event key belongs to, or undefined for a string that is not an event key. */
export function callOfEventKey(key: string): string | undefined {
  const [prefix, callId, name, ...rest] = key.split(':');
  if (prefix !== 'baton-event' || !callId || name === undefined || rest.length > 0) return undefined;
  try {
    return decodeURIComponent(callId);
  } catch {
    // A malformed escape (`%E0%A4%A`) is not a key this runtime made.
    return undefined;
  }
}

export const EVENT_TIMEOUT_MESSAGE = 'the external event did not come in time';
export const EVENT_CANCELLED_MESSAGE = 'the wait for the external event was cancelled';

export const INTERRUPTED_MESSAGE = 'The process running the tool call stopped before the call finished';

/** A call's end that the store refused is written again after this, doubling up to the maximum. */
export const END_REWRITE_INITIAL_MS = 100;
export const END_REWRITE_MAX_MS = 5_000;

export function persistenceFailedMessage(cause: unknown): string {
  return `The call could not be saved: ${cause instanceof Error ? cause.message : String(cause)}`;
}

/** Calls running at once in one runtime. */
export const DEFAULT_CONCURRENCY = 64;

/**
 * The slots one session (or one tenant) may hold by default: all but a quarter, so that one that
 * floods with slow calls always leaves some to the others. Small pools are left whole.
 */
export function fairShareOf(concurrency: number): number {
  return concurrency - Math.floor(concurrency / 4);
}

/** Calls waiting for a slot; past it a call is refused with `limit_exceeded`. */
export const DEFAULT_MAX_QUEUED = 10_000;

/** Seed 002: MAX_ACTIVE_BACKGROUND_RUNS_PER_SESSION. */
export const DEFAULT_BACKGROUND_PER_SESSION = 5;

/** Seed 002: MAX_ACTIVE_BACKGROUND_RUNS_PER_WORKER (a worker is one runtime). */
export const DEFAULT_BACKGROUND_PER_WORKER = 64;

/** Seed 002: MAX_ACTIVE_SCHEDULES_PER_SESSION. */
export const DEFAULT_SCHEDULES_PER_SESSION = 10;

/** Seed 004: outputs longer than this are cut for the model; the record keeps them whole. */
export const DEFAULT_MAX_OUTPUT_CHARS = 32_000;

/** A write batch is flushed at once when it holds this many changes, not only at the end of the tick. */
export const WRITE_BATCH_MAX = 512;

export const CANCELLED_MESSAGE = 'The tool call was cancelled';

export function cancelledMessage(reason: string | undefined): string {
  return reason ? `${CANCELLED_MESSAGE}: ${reason}` : CANCELLED_MESSAGE;
}

export function batchFailedReason(callId: string, toolName: string): string {
  return `call ${callId} (${toolName}) of the same batch failed`;
}

/** Seed 002's words. */
export function backgroundPerSessionMessage(limit: number): string {
  return `Maximum ${limit} active background runs per session. Wait for an existing run to finish before starting another.`;
}

/** Seed 002's words. */
export function backgroundPerWorkerMessage(limit: number): string {
  return `Worker is already running the maximum ${limit} active background runs. Try again after an existing run finishes.`;
}

export function queueFullMessage(limit: number): string {
  return `Too many tool calls are waiting (the limit is ${limit}). Try again after some of them finish.`;
}

/** Seed 004: the model gets the start of a long output and a line that says how much is missing. */
export function truncatedOutput(text: string, maxChars: number): string {
  const cut = text.length - maxChars;
  return `${text.slice(0, maxChars)}\n[output truncated: ${cut} of ${text.length} characters cut]`;
}
export const CLOSED_REASON = 'the runtime was closed';

export function timedOutMessage(timeoutMs: number): string {
  return `The tool call timed out after ${timeoutMs} ms`;
}

export function toolNotFoundMessage(name: string, available: readonly string[]): string {
  const list = available.length > 0 ? available.join(', ') : 'none';
  return `Tool "${name}" not found. Available tools: ${list}`;
}

export function connectionRequiredMessage(provider: string): string {
  return `The tool needs a connection to ${provider} before it can run`;
}

const OUTCOME_WORDS: Record<TerminalStatus, string> = {
  succeeded: 'completed',
  failed: 'failed',
  timed_out: 'failed',
  cancelled: 'cancelled',
};

/** Seed 000: "Task completed: Background tool: NAME" (or failed / cancelled). */
export function notificationTitle(toolName: string, outcome: TerminalStatus): string {
  return `Task ${OUTCOME_WORDS[outcome]}: Background tool: ${toolName}`;
}

/** Seed 000's notification text: strings as they are, anything else as indented JSON. */
function formatValue(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 2) ?? String(value);
}

/** Seed 000: "Tool call:\nNAME(ARGS)\nReturn value:\nVALUE", or "...\nError:\nMESSAGE". */
export function notificationBody(
  record: CallRecord,
  outcome: { value: unknown } | { error: string },
): string {
  const call = `Tool call:\n${record.toolName}(${formatValue(record.args)})`;
  return 'value' in outcome
    ? `${call}\nReturn value:\n${formatValue(outcome.value)}`
    : `${call}\nError:\n${outcome.error}`;
}

/** Seed 000's words for a background call cancelled before it finished. */
export const CANCELLED_BEFORE_COMPLETION = 'tool execution was cancelled before completion';

/** On a shared store: how often workers look for work and lapsed leases, and clients for ends. */
export const DEFAULT_POLL_MS = 2_000;
/** On a shared store: at most one progress event per call this often. */
export const DEFAULT_PROGRESS_INTERVAL_MS = 100;
/** Retention removes this many ended calls per transaction. */
export const RETENTION_BATCH = 500;

/** A follower reads this many stored events at a time (a replay of a long history is paged). */
export const FOLLOW_PAGE_SIZE = 200;

/** How many calls a worker claims at once at most. */
export const CLAIM_BATCH_MAX = 64;
