const TOOL_RESULT = Symbol.for('baton.tool-result');

export interface ToolImage {
  /** Base64-encoded image bytes. */
  base64: string;
  mediaType: string;
}

/** A success with more than a value: images for the model, and a raw output the model never sees. */
export interface ToolSuccess<T = unknown> {
  readonly [TOOL_RESULT]: 'success';
  readonly value: T;
  readonly images?: readonly ToolImage[];
  /** Kept on the call's record (and in a background run's log); never part of what the model sees. */
  readonly rawOutput?: string;
}

/** The tool cannot run until the user connects an account with `provider`. */
export interface ConnectionRequired {
  readonly [TOOL_RESULT]: 'connection_required';
  readonly provider: string;
}

export function success<T>(
  value: T,
  extras: { images?: ToolImage[]; rawOutput?: string } = {},
): ToolSuccess<T> {
  return { [TOOL_RESULT]: 'success', value, ...extras };
}

export function connectionRequired(provider: string): ConnectionRequired {
  return { [TOOL_RESULT]: 'connection_required', provider };
}

export function isToolSuccess(value: unknown): value is ToolSuccess {
  return typeof value === 'object' && value !== null && (value as ToolSuccess)[TOOL_RESULT] === 'success';
}

export function isConnectionRequired(value: unknown): value is ConnectionRequired {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as ConnectionRequired)[TOOL_RESULT] === 'connection_required'
  );
}
