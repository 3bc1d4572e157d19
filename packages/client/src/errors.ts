/**
 * The codes a `BatonClientError` carries: the server's own (`error.code` of its answer, stable
 * strings), and two of the client's: `network_error` (no answer came) and `invalid_response` (an
 * answer that is not Baton's).
 */
export type ServerErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'forbidden_host'
  | 'cross_site_request'
  | 'invalid_host'
  | 'misdirected_request'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'too_many_streams'
  | 'headers_too_large'
  | 'request_timeout'
  | 'shutting_down'
  | 'store_unavailable';

export type ClientErrorCode = ServerErrorCode | 'network_error' | 'invalid_response';

/** One problem of a request the server refused, by where it is (`args.query`). */
export interface RequestIssue {
  path: string;
  message: string;
}

/**
 * Every failure of a request to Baton: the server's refusal (its status, code and message), or
 * no answer at all. A call that ran and failed is not one: it is a reply with `status: 'failed'`.
 */
export class BatonClientError extends Error {
  override readonly name = 'BatonClientError';
  readonly code: ClientErrorCode;
  /** The HTTP status, when the server answered. */
  readonly status: number | undefined;
  readonly issues: readonly RequestIssue[];
  /** Seconds to wait before trying again, when the server said (`Retry-After`). */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: ClientErrorCode,
    message: string,
    details: {
      status?: number;
      issues?: readonly RequestIssue[];
      retryAfterSeconds?: number;
      cause?: unknown;
    } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.status = details.status;
    this.issues = details.issues ?? [];
    this.retryAfterSeconds = details.retryAfterSeconds;
  }
}

/** Whether `error` is a `BatonClientError`, with `code` if given. */
export function isBatonClientError(error: unknown, code?: ClientErrorCode): error is BatonClientError {
  return error instanceof BatonClientError && (code === undefined || error.code === code);
}
