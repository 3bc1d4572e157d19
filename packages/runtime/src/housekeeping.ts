import { type Clock, unref } from './clock.js';
import type { Failures } from './log.js';

/**
 * The runtime's own timers (heartbeat, claims, recovery, retention, rewrites of refused ends): on
 * its clock, never keeping the process alive, all cleared by `close()`.
 */
export class Housekeeping {
  readonly #clock: Clock;
  readonly #failures: Failures;
  readonly #handles = new Set<unknown>();
  #closed = false;

  readonly #unavailable: (error: unknown) => boolean;

  constructor(clock: Clock, failures: Failures, unavailable: (error: unknown) => boolean = () => false) {
    this.#clock = clock;
    this.#failures = failures;
    this.#unavailable = unavailable;
  }

  /**
   * Runs `task` every `ms` until `close()`; a failure is reported and the task waits for its next
   * turn (a store away for a while is a fault ridden out so: a warn).
   */
  every(ms: number, op: string, task: () => Promise<unknown>): void {
    const tick = () => {
      this.#handles.delete(handle);
      if (this.#closed) return;
      void task()
        .catch(this.#failures.onRetried(op, this.#unavailable))
        .finally(() => {
          if (!this.#closed) handle = this.#arm(tick, ms);
        });
    };
    let handle = this.#arm(tick, ms);
  }

  /** Runs `task` once after `ms`, unless the runtime closes first. */
  readonly later = (ms: number, task: () => void): void => {
    const handle = this.#arm(() => {
      this.#handles.delete(handle);
      if (!this.#closed) task();
    }, ms);
  };

  close(): void {
    this.#closed = true;
    for (const handle of this.#handles) this.#clock.clearTimeout(handle);
    this.#handles.clear();
  }

  #arm(fire: () => void, ms: number): unknown {
    const handle = this.#clock.setTimeout(fire, ms);
    unref(handle);
    this.#handles.add(handle);
    return handle;
  }
}
