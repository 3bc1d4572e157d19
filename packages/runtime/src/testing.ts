/**
 * `@baton/runtime/testing`: what a test of code built on Baton needs: a simulated clock to move
 * budgets and timeouts by hand, the in-memory store, and promises a test settles itself.
 */
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
