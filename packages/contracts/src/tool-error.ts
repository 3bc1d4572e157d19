const TOOL_ERROR = Symbol.for('baton.tool-error');

/**
 * Thrown by a tool for a failure the model should see and can act on ("no such file").
 * Its message reaches the model as it is; anything else a tool throws is an `internal_error`
 * whose details stay on the call's record.
 */
export class ToolError extends Error {
  readonly [TOOL_ERROR] = true;
  override readonly name = 'ToolError';
  /** A tool error is not retried unless the tool says it may be (a rate limit, a busy service). */
  readonly retryable: boolean;

  constructor(message: string, options?: { retryable?: boolean; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.retryable = options?.retryable ?? false;
  }
}

export function isToolError(value: unknown): value is ToolError {
  return (
    typeof value === 'object' && value !== null && (value as { [TOOL_ERROR]?: unknown })[TOOL_ERROR] === true
  );
}
