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

  /** A failure that lost or refused something: logged at error, an operator's alert. */
  report(op: string, error: unknown, callId?: string): void {
    const fields = callId === undefined ? { op, err: error } : { op, callId, err: error };
    this.#logger.error(fields, `baton: ${op} failed`);
    this.#publish({ op, error, at: this.#now(), ...(callId === undefined ? {} : { callId }) });
  }

  /**
   * A fault the runtime rides out or tries again (a store away for a while), nothing lost by it:
   * logged at warn, so that an alert on error lines does not fire at every database restart.
   */
  retrying(op: string, error: unknown, callId?: string): void {
    const fields = callId === undefined ? { op, err: error } : { op, callId, err: error };
    this.#logger.warn(fields, `baton: ${op} failed; tried again`);
    this.#publish({ op, error, at: this.#now(), retried: true, ...(callId === undefined ? {} : { callId }) });
  }

  /** `report`, as a promise's rejection handler. */
  on(op: string, callId?: string): (error: unknown) => void {
    return (error) => this.report(op, error, callId);
  }

  /**
   * As a rejection handler of work that is tried again (the next heartbeat, the next claim): a
   * store that is away (`unavailable`) is a fault ridden out; anything else, a failure.
   */
  onRetried(op: string, unavailable: (error: unknown) => boolean, callId?: string): (error: unknown) => void {
    return (error) =>
      unavailable(error) ? this.retrying(op, error, callId) : this.report(op, error, callId);
  }
}
