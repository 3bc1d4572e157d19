/**
 * The one way time enters the runtime: budgets and timeouts are armed on it, records are stamped
 * with it. Tests pass a simulated clock (xstate's `SimulatedClock` fits) and move time by hand.
 */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Wall time, on Node's timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** Housekeeping (heartbeats, retention) must not keep a process alive that has nothing else to do. */
export function unref(handle: unknown): void {
  (handle as { unref?: () => void } | null)?.unref?.();
}

/** Timers that do not keep the process alive (housekeeping, followers' polls), as the runtime's `Timers` keep them. */
export interface BackgroundTimers {
  background(fire: () => void, ms: number): unknown;
  cancelBackground(handle: unknown): void;
}
