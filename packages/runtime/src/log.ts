import type { RuntimeFailure } from '@baton/contracts';

type LogMethod = (fields: object, message?: string) => void;

/** The part of a pino logger the runtime uses (pino itself, Fastify's `app.log`, or any alike). */
export interface Logger {
  error: LogMethod;
  warn: LogMethod;
  info: LogMethod;
  debug: LogMethod;
}

const silent: LogMethod = () => {};

/** The default: a library says nothing unless asked; `runtime.failures$` still tells of every failure. */
export const quietLogger: Logger = { error: silent, warn: silent, info: silent, debug: silent };

/**
 * Where the runtime reports a failure it caught: to the logger, with what it was doing and the
 * call it concerned, and to the bus's `failures$`. No failure is swallowed without passing here.
 */
export class Failures {
  readonly #logger: Logger;
  readonly #publish: (failure: RuntimeFailure) => void;
  readonly #now: () => number;

  constructor(logger: Logger, publish: (failure: RuntimeFailure) => void, now: () => number) {
    this.#logger = logger;
    this.#publish = publish;
    this.#now = now;
  }

  report(op: string, error: unknown, callId?: string): void {
    const fields = callId === undefined ? { op, err: error } : { op, callId, err: error };
    this.#logger.error(fields, `baton: ${op} failed`);
    this.#publish({ op, error, at: this.#now(), ...(callId === undefined ? {} : { callId }) });
  }

  /** `report`, as a promise's rejection handler. */
  on(op: string, callId?: string): (error: unknown) => void {
    return (error) => this.report(op, error, callId);
  }
}
