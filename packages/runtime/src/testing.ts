/**
 * `@baton/runtime/testing`: what a test of code built on Baton needs: a simulated clock to move
 * budgets and timeouts by hand, the in-memory store, promises a test settles itself, and the events
 * a call has stored.
 */
import type { CallEvent } from '@baton/contracts';
import { filter, firstValueFrom, toArray } from 'rxjs';
import type { SimulatedClock } from 'xstate';
import type { Runtime } from './runtime-api.js';

export { memoryStore } from '@baton/store';
export { SimulatedClock } from 'xstate';

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

/** A promise with its resolve and reject (Node 20 lacks `Promise.withResolvers`). */
export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** The events of a call stored now, from `fromSeq` on: `follow` that completes once it has read them. */
export function storedEvents(runtime: Runtime, callId: string, fromSeq = 1): Promise<CallEvent[]> {
  return firstValueFrom(runtime.follow({ callId, after: fromSeq - 1 }, { live: false }).pipe(toArray()));
}

/** Resolves once the call `callId` has started (a test acts on it then: cancels it, promotes it). */
export function whenStarted(runtime: Pick<Runtime, 'events$'>, callId: string): Promise<unknown> {
  return firstValueFrom(
    runtime.events$.pipe(filter((event) => event.type === 'started' && event.callId === callId)),
  );
}

/**
 * Moves `clock` past the inline budget as soon as the call `callId` has started: it goes to the
 * background there and then. Resolves once the clock has moved.
 */
export function promoteWhenStarted(
  runtime: Pick<Runtime, 'events$'>,
  clock: SimulatedClock,
  callId: string,
  budgetMs: number,
): Promise<void> {
  return whenStarted(runtime, callId).then(() => clock.increment(budgetMs));
}
