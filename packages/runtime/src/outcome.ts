import {
  type AnyTool,
  type CallError,
  type CallIssue,
  type ErrorCode,
  INTERNAL_ERROR_MESSAGE,
  isBatonError,
  isConnectionRequired,
  isToolError,
  isToolSuccess,
  type RecordedError,
  type ToolImage,
} from '@baton/contracts';
import {
  connectionRequiredMessage,
  invalidArgumentsFor,
  notJsonMessage,
  outputRefusedMessage,
  persistenceFailedMessage,
} from './messages.js';
import { storableText, storableValue } from './storable.js';

/** How one run of a tool ended, before the call machine decides what it means. */
export type Outcome =
  | { ok: true; value: unknown; images?: readonly ToolImage[]; rawOutput?: string }
  /** `retryable`: a ToolError that says a retry may succeed (other codes follow the retry policy). */
  | { ok: false; error: RecordedError; output: unknown; retryable?: boolean };

type Failure = Extract<Outcome, { ok: false }>;

function internalError(cause: unknown, why?: string): Failure {
  const message = storableText(cause instanceof Error ? String(cause.message) : String(cause));
  const details =
    cause instanceof Error
      ? {
          name: storableText(String(cause.name)),
          message: why ? `${why}: ${message}` : message,
          ...(cause.stack !== undefined ? { stack: storableText(String(cause.stack)) } : {}),
        }
      : { message: why ? `${why}: ${message}` : message };
  return {
    ok: false,
    error: { code: 'internal_error', message: INTERNAL_ERROR_MESSAGE, details },
    output: { error: INTERNAL_ERROR_MESSAGE },
  };
}

/** Anything a tool threw: a `ToolError` the model sees, or an internal error whose details it does not. */
/** Errors a tool may let through from its context: their own code and words reach the model. */
const VISIBLE_BATON_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'event_error',
  'event_timeout',
  'event_cancelled',
  'durable_effect_empty_step_id',
  'durable_effect_duplicate_step_id',
]);

export function thrownOutcome(thrown: unknown): Failure {
  if (isBatonError(thrown) && VISIBLE_BATON_CODES.has(thrown.code)) {
    const message = storableText(thrown.message);
    return { ok: false, error: { code: thrown.code, message }, output: { error: message } };
  }
  if (isToolError(thrown)) {
    const message = storableText(String(thrown.message));
    return {
      ok: false,
      error: { code: 'tool_error', message },
      output: { error: message },
      retryable: thrown.retryable === true,
    };
  }
  return internalError(thrown);
}

export function describeIssues(issues: readonly CallIssue[]): string {
  return issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join('; ');
}

/**
 * A tool's value as every store keeps it (see storable.ts); a value that is not JSON (a cycle, a
 * BigInt) cannot be kept at all, and fails its own call with `persistence_failed`, naming why.
 */
function storableOutcome(outcome: Outcome): Outcome {
  if (!outcome.ok) return outcome;
  try {
    const value = storableValue(outcome.value);
    const rawOutput = outcome.rawOutput === undefined ? undefined : storableText(outcome.rawOutput);
    if (value === outcome.value && rawOutput === outcome.rawOutput) return outcome;
    return { ...outcome, value, ...(rawOutput !== undefined ? { rawOutput } : {}) };
  } catch (cause) {
    const message = persistenceFailedMessage(
      new Error(
        notJsonMessage("the tool's result", storableText(String((cause as Error)?.message ?? cause))),
      ),
    );
    return { ok: false, error: { code: 'persistence_failed', message }, output: { error: message } };
  }
}

/** What a tool returned, checked against its output schema when it has one, as the store will keep it. */
export function returnedOutcome(tool: AnyTool, returned: unknown): Outcome | Promise<Outcome> {
  if (isConnectionRequired(returned)) {
    const message = connectionRequiredMessage(returned.provider);
    return {
      ok: false,
      error: { code: 'connection_required', message },
      output: { connection_required: returned.provider },
    };
  }
  const outcome: Outcome = isToolSuccess(returned)
    ? {
        ok: true,
        value: returned.value,
        ...(returned.images ? { images: returned.images } : {}),
        ...(returned.rawOutput !== undefined ? { rawOutput: returned.rawOutput } : {}),
      }
    : { ok: true, value: returned };
  if (!tool.validateOutput) return storableOutcome(outcome);
  const checked = tool.validateOutput(outcome.value);
  const decide = (result: Awaited<typeof checked>): Outcome =>
    result.ok
      ? storableOutcome({ ...outcome, value: result.value })
      : internalError(new Error(describeIssues(result.issues)), outputRefusedMessage(tool.name));
  return checked instanceof Promise ? checked.then(decide, (cause) => internalError(cause)) : decide(checked);
}

export function invalidArgumentsMessage(toolName: string, issues: readonly CallIssue[]): string {
  return invalidArgumentsFor(toolName, describeIssues(issues));
}

/** What the model may see of an error: never an internal error's details. */
export function modelVisible(error: RecordedError): CallError {
  const { details: _details, ...visible } = error;
  return visible;
}
