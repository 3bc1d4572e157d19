/**
 * PostgreSQL errors that mean the server could not be reached or is going away, not that it
 * refused the request: SQLSTATE class 08 (connection exception), 57P01-57P03 (shutdown, crash
 * recovery, not accepting connections yet), 53300 (too many connections); Node's socket errors;
 * and the errors `pg` raises itself when a connection ends under a query.
 */
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
const SOCKET_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
const PG_MESSAGES = [
  'Connection terminated',
  'connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Connection ended unexpectedly',
];

function unavailable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (code.startsWith('08') || SQLSTATES.has(code) || SOCKET_ERRORS.has(code))) {
    return true;
  }
  return typeof message === 'string' && PG_MESSAGES.some((words) => message.includes(words));
}

/** Whether an error, or any error that caused it, says the database could not be reached. */
export function isUnavailable(error: unknown): boolean {
  for (let cause = error, depth = 0; cause !== undefined && cause !== null && depth < 5; depth++) {
    if (unavailable(cause)) return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}
