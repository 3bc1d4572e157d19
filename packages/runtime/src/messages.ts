/** Every text the runtime shows a model, a caller or an operator, in one place (with the seed it comes from). */
import {
  type CallRecord,
  type FormattedCall,
  LATER_NOTIFICATION,
  type TerminalStatus,
} from '@baton/contracts';
import { OUTPUT_LOG_MAX_CHARS, RUN_SUMMARY_CHARS } from './defaults.js';
import { runPaths } from './keys.js';

/** The background runs' last line of a log that hit its cap. */
export const OUTPUT_LOG_TRUNCATED_LINE = `\n[system] background output truncated at ${OUTPUT_LOG_MAX_CHARS} characters\n`;

/** The durable context's words for step ids that cannot be used. */
export const EMPTY_STEP_ID_MESSAGE = 'durable effect step id must be non-empty';
export function duplicateStepIdMessage(stepId: string): string {
  return `durable effect step id \`${stepId}\` was already used by this tool call`;
}

export const APPROVAL_PENDING_MESSAGE = `This tool call needs approval before it runs. ${LATER_NOTIFICATION}`;

/** What a caller still waiting hears when its runtime stops (a deploy) and hands the call over. */
export const HANDOVER_MESSAGE = `The service running this tool is restarting, so the call is continuing in the background. ${LATER_NOTIFICATION}`;

export function approvalRejectedMessage(reason: string): string {
  return `The tool call was rejected: ${reason}`;
}

export const EVENT_TIMEOUT_MESSAGE = 'the external event did not come in time';
export const EVENT_CANCELLED_MESSAGE = 'the wait for the external event was cancelled';

export function notAnEventKeyMessage(key: unknown): string {
  return `${JSON.stringify(key)} is not an event key`;
}

export const INTERRUPTED_MESSAGE = 'The process running the tool call stopped before the call finished';

export function persistenceFailedMessage(cause: unknown): string {
  return `The call could not be saved: ${cause instanceof Error ? cause.message : String(cause)}`;
}

/** What a caller whose call could not be saved is shown (the record keeps why). */
export const NOT_SAVED_OUTPUT = 'The call could not be saved';

export function notJsonMessage(what: string, cause: unknown): string {
  return `${what} is not JSON: ${cause instanceof Error ? cause.message : String(cause)}`;
}

export const CANCELLED_MESSAGE = 'The tool call was cancelled';

export function cancelledMessage(reason: string | undefined): string {
  return reason ? `${CANCELLED_MESSAGE}: ${reason}` : CANCELLED_MESSAGE;
}

export const CANCELLED_BY_CALLER = 'cancelled by the caller';
export const CANCELLED_BY_SIGNAL = "the caller's signal aborted";
export const CLOSED_REASON = 'the runtime was closed';
export const CLOSED_MESSAGE = 'the runtime is closed';
/** A caller whose call this process could not hand over as it stopped (see `askAgainReply`). */
export const ASK_AGAIN_MESSAGE =
  'this process stopped before it could hand the call over; the call is kept and goes on: send the same request again, with the same call id, to hear of it';
export const SESSION_CANCELLED_REASON = 'the session was cancelled';
export const APPROVAL_REJECTED_REASON = 'rejected';

export function batchFailedReason(callId: string, toolName: string): string {
  return `call ${callId} (${toolName}) of the same batch failed`;
}

/** The background runs' words. */
export function backgroundPerSessionMessage(limit: number): string {
  return `Maximum ${limit} active background runs per session. Wait for an existing run to finish before starting another.`;
}

/** The background runs' words. */
export function backgroundPerWorkerMessage(limit: number): string {
  return `Worker is already running the maximum ${limit} active background runs. Try again after an existing run finishes.`;
}

/** The background runs' words. */
export function schedulesPerSessionMessage(limit: number): string {
  return `Maximum ${limit} active schedules per session. Cancel an existing schedule first.`;
}

/** A client past `limits.waitingForWorkers`, in all or for the call's tenant (`tenant` set). */
export function overloadedMessage(limit: number, tenant: string | undefined): string {
  const whose = tenant === undefined ? '' : ` of tenant ${tenant}`;
  return `Too many calls${whose} are waiting for a worker here (the limit is ${limit}): nothing was kept. Try again in a few seconds.`;
}

export function queueFullMessage(limit: number): string {
  return `Too many tool calls are waiting (the limit is ${limit}). Try again after some of them finish.`;
}

/** The batch rules: the model gets the start of a long output and a line that says how much is missing. */
export function truncatedOutput(text: string, maxChars: number): string {
  const cut = text.length - maxChars;
  return `${text.slice(0, maxChars)}\n[output truncated: ${cut} of ${text.length} characters cut]`;
}

export function timedOutMessage(timeoutMs: number): string {
  return `The tool call timed out after ${timeoutMs} ms`;
}

/** A run stopped for its silence (`heartbeatTimeoutMs`). */
export function stalledMessage(quietMs: number): string {
  return `The tool call stalled: it gave no sign of progress for ${quietMs} ms, so it was stopped`;
}

export function toolNotFoundMessage(name: string, available: readonly string[]): string {
  const list = available.length > 0 ? available.join(', ') : 'none';
  return `Tool "${name}" not found. Available tools: ${list}`;
}

export function connectionRequiredMessage(provider: string): string {
  return `The tool needs a connection to ${provider} before it can run`;
}

export function invalidRequestMessage(issues: ReadonlyArray<{ path: string; message: string }>): string {
  return `Invalid tool call: ${issues.map((issue) => `${issue.path} ${issue.message}`).join('; ')}`;
}

export function invalidArgumentsFor(toolName: string, issues: string): string {
  return `Invalid arguments for tool "${toolName}": ${issues}`;
}

export function outputRefusedMessage(toolName: string): string {
  return `tool "${toolName}" returned a value its output schema refuses`;
}

/** Why a string cannot be stored as it is (see storable.ts). */
export const UNSTORABLE_TEXT = {
  nul: 'contains a NUL character (\\u0000), which cannot be stored',
  loneSurrogate: 'contains a lone surrogate (text that is not well-formed UTF-16)',
} as const;

export const NOT_A_CALL_MESSAGE = 'a call must be an object with a `name` and a `sessionId`';

/** Why arguments are refused before the tool's own schema sees them. */
export const ARGUMENT_MESSAGES = {
  string: (why: string) => `the string ${why}`,
  key: (why: string) => `a key ${why}`,
  tooDeep: (maxDepth: number) => `arguments are nested more than ${maxDepth} levels deep (the limit)`,
  notObject: (kind: string) => `arguments must be a JSON object, not ${kind}`,
  notJson: (cause: string) => `arguments must be JSON: ${cause}`,
  notifyAfter: (max: number) =>
    `notifyAfterMs must be a number of milliseconds above 0, or a list of 1 to ${max} of them`,
  tooLarge: (bytes: number, limit: number) =>
    `arguments are ${bytes} bytes, more than the limit of ${limit} bytes`,
} as const;

export function invalidOptionMessage(name: string): string {
  return `createRuntime: ${name} must be a positive number`;
}

export function unknownBuiltinMessage(name: string, known: readonly string[]): string {
  return `createRuntime: ${JSON.stringify(name)} is not a built-in tool; the built-ins are ${known.join(', ')}`;
}

export function roleNeedsSharedStoreMessage(role: string): string {
  return `createRuntime: role '${role}' needs a store that processes share (such as PostgreSQL)`;
}

const OUTCOME_WORDS: Record<TerminalStatus, string> = {
  succeeded: 'completed',
  failed: 'failed',
  timed_out: 'failed',
  cancelled: 'cancelled',
};

/** The background continuation: "Task completed: Background tool: NAME" (or failed / cancelled). */
export function notificationTitle(toolName: string, outcome: TerminalStatus): string {
  return `Task ${OUTCOME_WORDS[outcome]}: Background tool: ${toolName}`;
}

/** The background continuation's notification text: strings as they are, anything else as indented JSON. */
function formatValue(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 2) ?? String(value);
}

/** The background continuation: "Tool call:\nNAME(ARGS)\nReturn value:\nVALUE", or "...\nError:\nMESSAGE". */
export function notificationBody(
  record: FormattedCall,
  outcome: { value: unknown } | { error: string },
): string {
  const call = `Tool call:\n${record.toolName}(${formatValue(record.args)})`;
  return 'value' in outcome
    ? `${call}\nReturn value:\n${formatValue(outcome.value)}`
    : `${call}\nError:\n${outcome.error}`;
}

/** An intermediate result's notification (`ctx.update`): the call goes on. */
export function updateTitle(toolName: string, updateSeq: number): string {
  return `Task update ${updateSeq}: Background tool: ${toolName} (still running)`;
}

export function updateBody(record: FormattedCall, updateSeq: number, value: unknown): string {
  const call = `Tool call:\n${record.toolName}(${formatValue(record.args)})`;
  return `${call}\nUpdate ${updateSeq} (call_id ${record.callId}, still running; its result comes later):\n${formatValue(value)}`;
}

/** A reminder that a call in the background still runs (`notifyAfterMs`). */
export function stillRunningTitle(toolName: string): string {
  return `Task still running: Background tool: ${toolName}`;
}

export function stillRunningBody(record: FormattedCall, runningForMs: number): string {
  const call = `Tool call:\n${record.toolName}(${formatValue(record.args)})`;
  return `${call}\nStill running after ${Math.round(runningForMs / 1_000)} s (call_id ${record.callId}); its result comes later.`;
}

/** The background continuation's words for a background call cancelled before it finished. */
export const CANCELLED_BEFORE_COMPLETION = 'tool execution was cancelled before completion';

/** The background runs: a run ends "completed" or "failed" (or "cancelled"). */
export function runStatusWord(outcome: TerminalStatus): string {
  return outcome === 'succeeded' ? 'completed' : outcome === 'cancelled' ? 'cancelled' : 'failed';
}

/** A line of what the run gave: its value, or its error, cut short. */
export function runSummary(text: { value: unknown } | { error: string }): string {
  const summary =
    'value' in text ? (typeof text.value === 'string' ? text.value : JSON.stringify(text.value)) : text.error;
  return summary.length > RUN_SUMMARY_CHARS ? `${summary.slice(0, RUN_SUMMARY_CHARS)}...` : summary;
}

/** The background runs' words for `spawn_background`'s arguments. */
export const SPAWN_MESSAGES = {
  missingTool: 'Missing required parameter: tool',
  recursive: 'spawn_background cannot target itself recursively',
  unknownTool: (name: string) => `Unknown tool: ${name}`,
  notBackground: (name: string) => `Tool does not support background execution: ${name}`,
  endedAtOnce: (status: string) => `The run ended at once: ${status}`,
} as const;

/** What the background-control tools tell a model. */
export const BACKGROUND_MESSAGES = {
  unknownCall: (callId: string) => `No background call ${JSON.stringify(callId)} in this session.`,
  unknownId: (callId: string) =>
    `No call ${JSON.stringify(callId)} is known: give the call_id its acknowledgement gave.`,
  stillRunning: (waitedMs: number) =>
    `Still running after ${waitedMs} ms. Continue the conversation; a later notification will report the result.`,
  waitAgain: (waitedMs: number, callId: string) =>
    `Still running after ${waitedMs} ms: call wait_background again with call_id ${JSON.stringify(callId)} to keep waiting, or continue the conversation and check later.`,
  alreadyEnded: (callId: string, status: string) =>
    `The call ${JSON.stringify(callId)} already ended: ${status}.`,
  cancelReason: 'cancelled by the model (cancel_background)',
  steered:
    'The message is stored; the call reads it while it runs. Its result still comes as before (check_background shows how far it got).',
} as const;

/** What a sender of a message to a running call (`runtime.steer`, `steer_background`) is told. */
export const STEERING_MESSAGES = {
  notFound: (callId: string) =>
    `No call ${JSON.stringify(callId)} is known: give the call_id its acknowledgement gave.`,
  notSteerable: (toolName: string) =>
    `The tool "${toolName}" takes no messages while it runs: to change what it does, cancel the call and start a new one.`,
  ended: (callId: string, status: string) =>
    `The call ${JSON.stringify(callId)} has already ended (${status}) and reads no more messages: its result is final. Start a new call to change it.`,
  invalid: (toolName: string, issues: string) =>
    `The message does not fit what "${toolName}" takes: ${issues}. Fix it and send it again.`,
  badKey: (max: number) => `idempotencyKey must be a string of 1 to ${max} characters.`,
  tooMany: (callId: string, max: number) =>
    `The call ${JSON.stringify(callId)} was sent ${max} messages, as many as one call takes: wait for its result, or cancel it and start a new one.`,
} as const;

/** The background runs' words for a `schedule` (and ours for what it leaves unchecked). */
export const SCHEDULE_MESSAGES = {
  notObject: 'schedule must be an object',
  notRfc3339: 'scheduled_at must be RFC3339',
  neither: 'schedule must include exactly one of cron_expression (recurring) or scheduled_at (one-shot)',
  both: 'schedule must not include both cron_expression and scheduled_at; provide exactly one',
  badTimezone: (timezone: string) => `timezone must be an IANA time zone, not ${JSON.stringify(timezone)}`,
  cronFields: 'cron_expression must have 5 fields: minute, hour, day of month, month, day of week',
  badCron: (cause: string) => `cron_expression is not valid: ${cause}`,
} as const;

/** The background runs: the message a session gets when a run it started ends. */
export function runEndedMessage(record: CallRecord, status: string, summary: string): string {
  const { logPath, resultPath } = runPaths(record.callId);
  return [
    `Background run ${status}.`,
    `- run_id: ${record.callId}`,
    `- title: ${record.run?.title ?? record.toolName}`,
    `- tool: ${record.toolName}`,
    `- summary: ${summary}`,
    `- result_path: ${resultPath}`,
    `- log_path: ${logPath}`,
  ].join('\n');
}

/** `prepare` asked for input the request did not carry. */
export function inputRequiredMessage(toolName: string, names: readonly string[]): string {
  return `Tool "${toolName}" needs input before it can begin: ${names.map((name) => JSON.stringify(name)).join(', ')}. Ask for it, then call again with the answers in "inputs".`;
}

/** What the webhook deliveries say: of a destination refused, a bad option, a delivery given up. */
export const WEBHOOK_MESSAGES = {
  refusedAddress: (host: string, address: string, kind: 'loopback' | 'private', setting: string) =>
    `the webhook destination ${host}${address === host ? '' : ` (${address})`} is a ${kind === 'loopback' ? 'loopback' : 'private, link-local or reserved'} address: refused unless ${setting} allows it`,
  noEndpoint: 'no webhook is configured for this session any more',
  noWebhooks:
    'webhooks.deliver: the runtime has no webhooks: give createRuntime a webhooks option with a secret',
  noSecret:
    'no secret signs deliveries to destinations of their own: set webhooks.secret (or one webhooks.endpoint for every session)',
  badUrl: (url: string) =>
    `createRuntime: webhooks: ${JSON.stringify(url)} is not an http:// or https:// URL`,
  badSecret:
    'createRuntime: webhooks: a secret is "whsec_" followed by the base64 of 24 to 64 random bytes (Standard Webhooks)',
  badSchedule: 'createRuntime: webhooks.retryScheduleMs must be a list of waits of 0 ms or more',
  attemptFailed: (url: string, failure: string, waitMs: number) =>
    `webhook attempt to ${url} failed (${failure}); tried again in ${waitMs >= 60_000 ? `${Math.round(waitMs / 60_000)} min` : `${Math.round(waitMs / 1_000)} s`}`,
  givenUp: (id: string, attempts: number, last: string) =>
    `webhook delivery ${id} failed after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${last}`,
} as const;

/** Logged when a call is found held here after an outage, that no claim's answer brought. */
export const LOST_CLAIM_MESSAGE =
  'the answer of a claim was lost in an outage: the call it left held here is taken up now';

/** A caller whose credential lacks the scope a tool needs (the server's 403 says the same). */
export function insufficientScopeMessage(toolName: string, scope: string): string {
  return `calling ${toolName} needs the scope ${scope}`;
}
