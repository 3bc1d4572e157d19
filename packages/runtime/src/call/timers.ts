import type { CallTimer } from '@baton/machine';
import { type BackgroundTimers, type Clock, unref } from '../clock.js';
import type { CallTimerKind, LiveCall } from './live-call.js';
import type { TalkState } from './talk-state.js';

/** Where a call keeps its timer of each kind (fields, not a map: a parked call holds thousands of them). */
const FIELDS = {
  budget: 'budgetTimer',
  timeout: 'timeoutTimer',
  retry: 'retryTimer',
  progress: 'progressTimer',
} as const satisfies Record<CallTimer | 'progress', keyof LiveCall>;

/** The timers of a call that talks back, kept with what it keeps for that (see talk-state.ts). */
const TALK_FIELDS = {
  stall: 'stallTimer',
  update: 'updateTimer',
  reminder: 'reminderTimer',
} as const satisfies Record<Exclude<CallTimerKind, keyof typeof FIELDS>, keyof TalkState>;

const KINDS = Object.keys(FIELDS) as Array<keyof typeof FIELDS>;
const TALK_KINDS = Object.keys(TALK_FIELDS) as Array<keyof typeof TALK_FIELDS>;

/** The object and the field that hold a call's timer of this kind. */
function slotOf(call: LiveCall, kind: CallTimerKind): { holder: Record<string, unknown>; field: string } {
  if (kind in TALK_FIELDS) {
    return {
      holder: call.talk as unknown as Record<string, unknown>,
      field: TALK_FIELDS[kind as keyof typeof TALK_FIELDS],
    };
  }
  return { holder: call as unknown as Record<string, unknown>, field: FIELDS[kind as keyof typeof FIELDS] };
}

/**
 * Every timer of every call, armed on the runtime's clock and counted (`stats().timers`): arming,
 * clearing and counting down are written here once.
 */
export class Timers implements BackgroundTimers {
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
    const { holder, field } = slotOf(call, kind);
    this.clear(holder[field]);
    holder[field] = this.arm(() => {
      holder[field] = undefined;
      fire();
    }, ms);
  }

  clearFor(call: LiveCall, kind: CallTimerKind): void {
    const { holder, field } = slotOf(call, kind);
    holder[field] = this.clear(holder[field]);
  }

  clearAll(call: LiveCall): void {
    for (const kind of KINDS) if (call[FIELDS[kind]] !== undefined) this.clearFor(call, kind);
    const talk = call.talking;
    if (!talk) return;
    for (const kind of TALK_KINDS) if (talk[TALK_FIELDS[kind]] !== undefined) this.clearFor(call, kind);
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
