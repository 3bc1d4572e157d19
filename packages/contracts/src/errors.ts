/**
 * The stable error codes of Baton. They appear on `reply.error.code`, in call events and records,
 * and on a thrown `BatonError`. Never rename one: agents and dashboards match on these strings.
 */
export const ERROR_CODES = {
  tool_not_found: 'tool_not_found',
  invalid_arguments: 'invalid_arguments',
  tool_error: 'tool_error',
  internal_error: 'internal_error',
  timed_out: 'timed_out',
  cancelled: 'cancelled',
  limit_exceeded: 'limit_exceeded',
  interrupted: 'interrupted',
  persistence_failed: 'persistence_failed',
  connection_required: 'connection_required',
  /** A tool definition or a runtime option is wrong; raised when it is made, never at call time. */
  invalid_definition: 'invalid_definition',
  /** The runtime was closed and takes no more calls. */
  closed: 'closed',
  /**
   * A client holds as many calls waiting for workers as it may (`limits.waitingForWorkers`, or a
   * tenant's share): nothing was kept; the same request later is taken (the server answers 429).
   */
  overloaded: 'overloaded',
  /** The call needed approval and was rejected; the reason is shown to the model. */
  approval_rejected: 'approval_rejected',
  /**
   * The tool's `prepare` asked for input (`ctx.input`) that the request did not carry: the call did
   * not begin and left no record. `error.inputs` names what to ask; call again with `inputs`.
   */
  input_required: 'input_required',
  /**
   * The caller's credential lacks the OAuth scope the tool needs (`error.scope` names it): nothing
   * was kept. A server answers 403 with the challenge that asks for it (step-up).
   */
  insufficient_scope: 'insufficient_scope',
  /**
   * The caller's tenant has used its quota (calls a minute, or notifications left unacknowledged):
   * nothing was kept; `error.retryAfterSeconds` says when one more is let in (a server answers 429).
   */
  quota_exceeded: 'quota_exceeded',
  /** Steering: no call has this id (or the caller may not reach it). */
  call_not_found: 'call_not_found',
  /** Steering: the call has ended, so it reads no more messages; its result is final. */
  call_ended: 'call_ended',
  /** Steering: the call's tool declares no `messages`, so it takes none while it runs. */
  not_steerable: 'not_steerable',
  /** The durable context: `ctx.waitFor()` ended with an error given from outside. */
  event_error: 'event_error',
  /** The durable context: `ctx.waitFor()` passed its `timeoutMs`. */
  event_timeout: 'event_timeout',
  /** The durable context: the wait was cancelled (the call, or the event, was). */
  event_cancelled: 'event_cancelled',
  /** The durable context: `ctx.step()` with an empty id, refused before the step runs. */
  durable_effect_empty_step_id: 'durable_effect_empty_step_id',
  /** The durable context: `ctx.step()` with an id this attempt already used, refused before the step runs. */
  durable_effect_duplicate_step_id: 'durable_effect_duplicate_step_id',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

const BATON_ERROR = Symbol.for('baton.error');

/** The one error class that Baton throws. Recognised across package copies by `isBatonError`. */
export class BatonError extends Error {
  readonly [BATON_ERROR] = true;
  override readonly name = 'BatonError';
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }

  /** Wraps anything thrown into a `BatonError`, keeping it as the `cause`. */
  static fromUnknown(cause: unknown, code: ErrorCode = 'internal_error'): BatonError {
    if (isBatonError(cause)) return cause;
    const message = cause instanceof Error ? cause.message : String(cause);
    return new BatonError(code, message, { cause });
  }
}

export function isBatonError(value: unknown): value is BatonError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { [BATON_ERROR]?: unknown })[BATON_ERROR] === true
  );
}
