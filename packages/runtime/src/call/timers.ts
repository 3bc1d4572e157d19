import { type Clock, unref } from '../clock.js';
import type { CallTimerKind, LiveCall } from './live-call.js';

/** Where a call keeps its timer of each kind (fields, not a map: a parked call holds thousands of them). */
const FIELDS = {
  budget: 'budgetTimer',
  timeout: 'timeoutTimer',
  retry: 'retryTimer',
  progress: 'progressTimer',
  stall: 'stallTimer',
  update: 'updateTimer',
  reminder: 'reminderTimer',
} as const satisfies Record<CallTimerKind, keyof LiveCall>;

const KINDS = Object.keys(FIELDS) as CallTimerKind[];

/**
 * Every timer of every call, armed on the runtime's clock and counted (`stats().timers`): arming,
 * clearing and counting down are written here once.
 */
export class Timers {
  readonly #clock: Clock;
  #armed = 0;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  get armed(): number {
    return this.#armed;
  }

  /** Fires once after `ms`; `clear` it if it need not. */
  arm(fire: () => void, ms: number): unknown {
    this.#armed++;
    return this.#clock.setTimeout(() => {
      this.#armed--;
      fire();
    }, ms);
  }

  /** Clears a timer `arm` gave; one that fired, or is undefined, is let be. Returns undefined, to store. */
  clear(handle: unknown): undefined {
    if (handle === undefined) return undefined;
    this.#clock.clearTimeout(handle);
    this.#armed--;
    return undefined;
  }

  /** Arms the call's timer of this kind (at most one each): it forgets itself when it fires. */
  armFor(call: LiveCall, kind: CallTimerKind, ms: number, fire: () => void): void {
    const field = FIELDS[kind];
    this.clear(call[field]);
    call[field] = this.arm(() => {
      call[field] = undefined;
      fire();
    }, ms);
  }

  clearFor(call: LiveCall, kind: CallTimerKind): void {
    const field = FIELDS[kind];
    call[field] = this.clear(call[field]);
  }

  clearAll(call: LiveCall): void {
    for (const kind of KINDS) if (call[FIELDS[kind]] !== undefined) this.clearFor(call, kind);
  }

  /** A timer that must not keep the process alive (housekeeping, followers' polls): not counted. */
  background(fire: () => void, ms: number): unknown {
    const handle = this.#clock.setTimeout(fire, ms);
    unref(handle);
    return handle;
  }

  cancelBackground(handle: unknown): void {
    this.#clock.clearTimeout(handle);
  }
}
