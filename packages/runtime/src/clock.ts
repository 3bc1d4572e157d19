/**
 * The one way time enters the runtime: budgets and timeouts are armed on it, records are stamped
 * with it. Tests pass a simulated clock (xstate's `SimulatedClock` fits) and move time by hand.
 */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Wall time. Its timers do not keep the process alive by themselves: a running tool does that. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
